//! Every feature of `#[tool]` at once, compiled and checked.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolkit_core::{CallContext, Registry, Tool, tool, tools};

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

/// The best hit: a `Serialize`-only struct, sent as JSON.
#[tool]
fn best(#[tool(state)] index: Index) -> Hit {
    Hit {
        title: format!("best of {}", index.name),
        score: 2.0,
    }
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
    if fail {
        Err("failed".into())
    } else {
        Ok("ok".into())
    }
}

fn main() {
    let search_def = <search as Tool>::definition();
    assert_eq!(search_def.name(), "search");
    assert_eq!(
        search_def.description(),
        "Search the document index.\n\nReturns matching titles."
    );
    assert_eq!(
        search_def.params(),
        ["query", "limit", "order", "filter", "type", "drafts"]
    );
    assert_eq!(search_def.states().len(), 1);
    assert_eq!(<lookup as Tool>::definition().name(), "lookup-doc");
    assert_eq!(<lookup as Tool>::definition().params(), ["id"]);
    assert_eq!(<hello as Tool>::definition().description(), "Say hello.");

    let registry = Registry::builder()
        .tools(tools![search, lookup, best, hello, ping, fallible])
        .state(Index {
            name: Arc::from("docs"),
        })
        .build()
        .expect("every state is provided");
    for def in registry.tools() {
        def.schema().canonical().expect("a valid schema");
    }

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let text = |outcome: toolkit_core::CallOutcome| {
            assert!(outcome.error.is_none(), "{:?}", outcome.error);
            outcome.result.to_text()
        };
        let json = |outcome| serde_json::from_str::<serde_json::Value>(&text(outcome)).unwrap();
        let arguments = r#"{"query": "rust", "order": "newest", "filter": {"tags": []},
            "type": "post", "drafts": false}"#;
        assert_eq!(
            json(registry.dispatch(("search", arguments)).await),
            serde_json::json!([{"title": "rust in docs", "score": 1.0}])
        );
        assert_eq!(
            json(registry.dispatch(("lookup-doc", r#"{"id": 7}"#)).await),
            serde_json::json!({"title": "7 in docs", "score": 0.5})
        );
        assert_eq!(
            json(registry.dispatch(("best", "{}")).await),
            serde_json::json!({"title": "best of docs", "score": 2.0})
        );
        assert_eq!(
            text(registry.dispatch(("hello", r#"{"name": "you"}"#)).await),
            "hello, you"
        );
        let failed = registry.dispatch(("fallible", r#"{"fail": true}"#)).await;
        assert_eq!(failed.result.error_message(), Some("failed"));
    });
}
