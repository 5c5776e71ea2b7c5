use toolkit_core::tool;

/// Has a typo on a parameter.
#[tool]
fn typo(
    /// The value.
    #[tool(stat)]
    value: u32,
) -> u32 {
    value
}

fn main() {}
