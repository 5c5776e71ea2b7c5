use toolkit_core::{CallContext, tool};

/// Mixes up the options of hidden parameters.
#[tool]
fn hidden(
    #[tool(state, context)] both: u32,
    #[tool(state, rename = "s")] renamed: String,
    #[tool(context, undocumented)] call: CallContext,
    #[tool(context)] borrowed: &CallContext,
) {
    let _ = (both, renamed, call, borrowed);
}

fn main() {}
