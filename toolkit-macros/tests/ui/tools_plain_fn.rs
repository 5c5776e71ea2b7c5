// A function without `#[tool]` named in `tools![...]`.
use toolkit_core::{Registry, tools};

/// Counts words.
fn count(text: String) -> usize {
    text.split_whitespace().count()
}

fn main() {
    let _ = Registry::builder().tools(tools![count]).build();
}
