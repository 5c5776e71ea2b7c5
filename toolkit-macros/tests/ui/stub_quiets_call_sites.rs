// One mistake in a tool's signature is one error: the `tools![...]` that
// names the tool adds none of its own.
use toolkit_core::{Registry, tool, tools};

/// Counts words.
#[tool]
fn count(
    /// The text.
    text: &str,
) -> usize {
    text.split_whitespace().count()
}

fn main() {
    let _ = Registry::builder().tools(tools![count]).build();
}
