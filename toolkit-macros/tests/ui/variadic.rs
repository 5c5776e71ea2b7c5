// `...` parses in any function's signature (rustc rejects it later, outside
// `extern` blocks), so a variadic definition does reach `#[tool]`.
use toolkit_core::tool;

/// Sums numbers.
#[tool]
unsafe extern "C" fn sum(
    /// How many follow.
    count: u32,
    args: ...
) -> u32 {
    count
}

fn main() {}
