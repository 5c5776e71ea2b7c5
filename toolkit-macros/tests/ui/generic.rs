use toolkit_core::tool;

/// Echoes a value.
#[tool]
fn echo<T>(
    /// The value.
    value: String,
) -> String {
    value
}

fn main() {}
