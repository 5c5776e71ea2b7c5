//! The guide's `search` tool, shared by the dispatch and schema benchmarks.

// Each benchmark uses part of this module.
#![allow(dead_code)]

use std::fmt;

use schemars::JsonSchema;
use serde::Deserialize;
use toolkit_core::tool;

/// Result ordering.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Best match first.
    Relevance,
    /// Newest first.
    Newest,
}

/// The search failed.
#[derive(Debug)]
pub struct SearchError;

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the query is empty")
    }
}

impl std::error::Error for SearchError {}

/// Search the document index.
///
/// Returns matching titles, one per line.
#[tool]
pub async fn search(
    /// The full-text query.
    query: String,
    /// Maximum number of hits.
    limit: Option<u32>,
    /// Tags to filter by.
    tags: Vec<String>,
    /// Result ordering.
    order: Order,
) -> Result<String, SearchError> {
    if query.is_empty() {
        return Err(SearchError);
    }
    let order = match order {
        Order::Relevance => "relevance",
        Order::Newest => "newest",
    };
    Ok(format!(
        "{query}: {} hits at most, {} tags, by {order}",
        limit.unwrap_or(10),
        tags.len()
    ))
}

/// The hand-written path's arguments: what one would write by hand, with
/// the same serde attributes as the struct `#[tool]` generates.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArguments {
    query: String,
    limit: Option<u32>,
    tags: Vec<String>,
    order: Order,
}

/// The arguments of every call, as OpenAI sends them: JSON text.
pub const ARGUMENTS: &str = r#"{"query": "rust async runtimes", "limit": 5, "tags": ["lang", "systems"], "order": "newest"}"#;

/// What `search` answers to [`ARGUMENTS`].
pub const ANSWER: &str = "rust async runtimes: 5 hits at most, 2 tags, by newest";

/// A current-thread runtime, as both paths use.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
}

/// A registry holding `search` alone.
pub fn registry() -> toolkit_core::Registry {
    toolkit_core::Registry::builder()
        .tools(toolkit_core::tools![search])
        .build()
        .expect("the registry builds")
}

/// The hand-written path: `serde_json::from_str` into a struct, a direct
/// call of the same function, the outcome as a `String`.
pub fn hand_written(runtime: &tokio::runtime::Runtime, arguments: &str) -> String {
    runtime.block_on(hand_written_body(arguments))
}

/// The hand-written path inside a running runtime: parse, call, convert.
pub async fn hand_written_body(arguments: &str) -> String {
    match serde_json::from_str::<SearchArguments>(arguments) {
        Ok(SearchArguments {
            query,
            limit,
            tags,
            order,
        }) => match search(query, limit, tags, order).await {
            Ok(text) => text,
            Err(error) => error.to_string(),
        },
        Err(error) => error.to_string(),
    }
}

/// The `#[tool]` path: the registry parses, dispatches and converts.
pub fn registry_call(
    runtime: &tokio::runtime::Runtime,
    registry: &toolkit_core::Registry,
    arguments: &str,
) -> toolkit_core::CallOutcome {
    runtime.block_on(registry.dispatch(("search", arguments)))
}

/// Both paths give [`ANSWER`].
pub fn assert_both_answer(runtime: &tokio::runtime::Runtime, registry: &toolkit_core::Registry) {
    assert_eq!(hand_written(runtime, ARGUMENTS), ANSWER);
    let outcome = registry_call(runtime, registry, ARGUMENTS);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(outcome.result.as_text(), Ok(ANSWER));
}
