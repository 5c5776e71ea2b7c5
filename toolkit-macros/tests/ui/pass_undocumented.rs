//! `#[tool(undocumented)]`: the author opts out of describing a parameter.

use toolkit_core::{Tool, tool};

/// Echoes a value.
#[tool]
fn echo(#[tool(undocumented)] value: String) -> String {
    value
}

fn main() {
    let def = <echo as Tool>::definition();
    assert_eq!(def.params(), ["value"]);
    def.schema().canonical().expect("a valid schema");
}
