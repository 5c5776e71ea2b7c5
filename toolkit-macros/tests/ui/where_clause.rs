use toolkit_core::tool;

/// Echoes a value.
#[tool]
fn echo(
    /// The value.
    value: String,
) -> String
where
    String: Clone,
{
    value
}

fn main() {}
