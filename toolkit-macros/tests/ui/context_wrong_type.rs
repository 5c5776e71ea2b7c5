use toolkit_core::tool;

/// Reads the call's id.
#[tool]
fn call_id(#[tool(context)] context: String) -> String {
    context
}

fn main() {}
