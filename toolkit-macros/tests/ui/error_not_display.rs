// A `Result` whose error type has no `Display`: reported on the error type
// with the fix, not as the whole `Result` failing to convert.
use toolkit_core::tool;

#[derive(Debug)]
struct LedgerDown;

/// Reads the balance.
#[tool]
fn balance(
    /// The account.
    account: String,
) -> Result<String, LedgerDown> {
    let _ = account;
    Err(LedgerDown)
}

fn main() {}
