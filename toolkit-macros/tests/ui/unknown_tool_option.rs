use toolkit_core::tool;

/// Has a typo.
#[tool(descripton = "x")]
fn typo() {}

/// Has an option that does not exist.
#[tool(timeout = 5)]
fn made_up() {}

fn main() {}
