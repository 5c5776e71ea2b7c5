use toolkit_core::tool;

#[tool]
fn undescribed(
    /// The value.
    value: String,
) -> String {
    value
}

/// Not read: the option replaces the doc comment.
#[tool(description = "  ")]
fn blank(
    /// The value.
    value: String,
) -> String {
    value
}

fn main() {}
