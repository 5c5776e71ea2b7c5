//! Every feature of `#[tool]` at once, compiled and checked.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolkit_core::{CallContext, Tool, tool, tools};

/// Result ordering.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Order {
    /// Best match first.
    Relevance,
    /// Newest first.
    Newest,
}

/// A date range.
#[derive(Deserialize, JsonSchema)]
struct Range {
    /// First day, `YYYY-MM-DD`.
    from: String,
    /// Last day, `YYYY-MM-DD`.
    to: Option<String>,
}

/// A filter, nesting a range.
#[derive(Deserialize, JsonSchema)]
struct Filter {
    /// Only within this range.
    range: Option<Range>,
    /// Only these tags.
    tags: Vec<String>,
}

/// Host state, shared.
#[derive(Clone)]
struct Index {
    name: Arc<str>,
}

/// A search hit: serializes, but is not a tool result by itself.
#[derive(Serialize)]
struct Hit {
    title: String,
    score: f32,
}

/// Search the document index.
///
/// Returns matching titles.
///
/// # Arguments
///
/// * `query` - The full-text query.
/// * `limit` - Maximum number of hits.
/// * `index` - Not shown to the model: hidden parameters may be documented
///   for humans.
#[tool]
async fn search(
    query: String,
    limit: Option<u32>,
    /// Result ordering.
    order: Order,
    /// Narrows the search.
    filter: Filter,
    /// The kind of document.
    r#type: String,
    /// Whether to include drafts.
    #[tool(rename = "drafts")]
    include_drafts: bool,
    #[tool(state)] index: Index,
    #[tool(context)] call: CallContext,
) -> Vec<Hit> {
    let _ = (limit, order, filter, r#type, include_drafts, call.call_id());
    vec![Hit {
        title: format!("{query} in {}", index.name),
        score: 1.0,
    }]
}

/// Look up one document.
#[tool(name = "lookup-doc")]
fn lookup(
    /// The document's id.
    id: u64,
    #[tool(state)] index: Index,
) -> Result<Hit, std::io::Error> {
    Ok(Hit {
        title: format!("{id} in {}", index.name),
        score: 0.5,
    })
}

/// Plain text out.
#[tool(description = "Say hello.")]
fn hello(
    /// Whom to greet: `'static` borrows nothing, so `Cow<'static, str>` is
    /// read as an owned string.
    name: Cow<'static, str>,
) -> String {
    format!("hello, {name}")
}

/// No parameters and no return value.
#[tool]
fn ping() {}

/// `Result` of text, with a `String` error.
#[tool]
async fn fallible(
    /// Whether to fail.
    fail: bool,
) -> Result<String, String> {
    if fail { Err("failed".into()) } else { Ok("ok".into()) }
}

fn main() {
    let search = <search as Tool>::definition();
    assert_eq!(search.name(), "search");
    assert_eq!(search.description(), "Search the document index.\n\nReturns matching titles.");
    assert_eq!(
        search.params(),
        ["query", "limit", "order", "filter", "type", "drafts"]
    );
    assert_eq!(search.states().len(), 1);

    let lookup_def = <lookup as Tool>::definition();
    assert_eq!(lookup_def.name(), "lookup-doc");
    assert_eq!(lookup_def.params(), ["id"]);

    assert_eq!(<hello as Tool>::definition().description(), "Say hello.");

    let all = tools![search, lookup, hello, ping, fallible];
    assert_eq!(all.len(), 5);
    for def in all {
        def.schema().canonical().expect("a valid schema");
    }
}
