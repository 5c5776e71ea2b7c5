use toolkit_core::tool;

/// Reads a value unsafely.
#[tool]
unsafe fn read(
    /// The value.
    value: u32,
) -> u32 {
    value
}

fn main() {}
