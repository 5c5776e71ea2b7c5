use toolkit_core::tool;

/// Has a space in its name.
#[tool(name = "bad name")]
fn spaced() {}

/// Starts with a digit.
#[tool(name = "9start")]
fn digit() {}

fn main() {}
