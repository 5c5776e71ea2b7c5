use toolkit_core::tool;

/// Echoes a value.
#[tool]
fn echo(
    /// The value.
    value: &str,
) -> String {
    value.to_owned()
}

fn main() {}
