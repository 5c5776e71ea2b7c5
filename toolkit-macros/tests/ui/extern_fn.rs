use toolkit_core::tool;

/// Exported to C.
#[tool]
extern "C" fn exported(
    /// The value.
    value: u32,
) -> u32 {
    value
}

fn main() {}
