use toolkit_core::tool;

/// Counts bytes.
#[tool]
fn count(
    /// The bytes.
    bytes: &[u8],
) -> usize {
    bytes.len()
}

fn main() {}
