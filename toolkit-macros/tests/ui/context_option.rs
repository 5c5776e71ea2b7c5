use toolkit_core::{CallContext, tool};

/// The id of the call.
#[tool]
async fn call_id(#[tool(context)] context: Option<CallContext>) -> String {
    context.map(|c| c.call_id().to_owned()).unwrap_or_default()
}

fn main() {}
