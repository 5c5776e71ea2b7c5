// A module named like a tool sits beside it: no clash with the macro's
// hidden items, and the tool is still reachable.
use toolkit_core::{Registry, tool, tools};

/// Searches the index.
#[tool]
fn search(
    /// The query.
    query: String,
) -> String {
    search::run(&query)
}

mod search {
    pub fn run(query: &str) -> String {
        format!("results for {query}")
    }
}

fn main() {
    let registry = Registry::builder()
        .tools(tools![__toolkit_tool_search::search])
        .build()
        .unwrap();
    assert_eq!(registry.names().collect::<Vec<_>>(), ["search"]);
    assert_eq!(search("x".into()), "results for x");
}
