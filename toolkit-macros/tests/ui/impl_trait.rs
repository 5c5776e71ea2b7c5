use toolkit_core::tool;

/// Echoes a value.
#[tool]
fn echo(
    /// The value.
    value: impl Into<String>,
) -> String {
    value.into()
}

fn main() {}
