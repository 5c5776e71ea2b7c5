//! Tool search: deferred tools are left out of requests until the model
//! looks for them (the guide's "Tool search" chapter,
//! `docs/tool-search.md`).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolkit_core::{CallContext, Provider, Registry, ToolDef, ToolResult};

/// The name of the search tool offered where the provider has no tool
/// search of its own. A registry tool of this name is the host's, and
/// wins: the agent then offers no search tool.
pub const TOOL_SEARCH_TOOL: &str = "search_tools";

/// How many tools one search adds, unless [`ToolSearch::max_results`]
/// says otherwise.
pub const DEFAULT_MAX_RESULTS: usize = 5;

/// Which of a provider's own tool searches to use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NativeSearch {
    /// The provider's search by words: Anthropic's
    /// `tool_search_tool_bm25_20251119`, OpenAI Responses' hosted
    /// `tool_search`.
    #[default]
    Bm25,
    /// Anthropic's search by regular expression,
    /// `tool_search_tool_regex_20251119`; OpenAI Responses' hosted
    /// `tool_search` (it has one kind).
    Regex,
    /// None: the agent's own search tool,
    /// [`search_tools`](TOOL_SEARCH_TOOL), on every provider.
    Off,
}

/// Which tools are deferred, and how the model finds them.
///
/// A deferred tool's definition is left out of requests until the model
/// looks for it. Where the provider has a tool search of its own
/// (Anthropic Messages, OpenAI Responses), every definition is sent marked
/// `"defer_loading": true` beside the provider's search tool, and the
/// provider keeps the deferred ones out of the model's context. Elsewhere
/// the agent offers its own tool, [`search_tools`](TOOL_SEARCH_TOOL): a
/// BM25 search ([`toolkit_core::search::ToolIndex`]) over the deferred
/// tools' names, descriptions and parameters, whose matches are added to
/// every following request of the conversation, after the tools sent
/// from the start, in the order they were first found.
///
/// Tools are deferred on themselves ([`ToolBuilder::deferred`](toolkit_core::ToolBuilder::deferred)),
/// by name here, or all at once; an MCP server's tools are deferred by its
/// client (`McpClientBuilder::defer_tools`).
///
/// ```
/// use toolkit_agent::{Agent, HttpModel, ToolSearch};
///
/// # fn demo(registry: toolkit_core::Registry) -> Result<(), Box<dyn std::error::Error>> {
/// let model = HttpModel::anthropic("claude-sonnet-4-5").build()?;
/// let agent = Agent::builder(model, registry)
///     .tool_search(ToolSearch::new().defer_all().keep("word_count"))
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSearch {
    /// Tools deferred by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) defer: Vec<String>,
    /// Every tool deferred, but those kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) defer_all: bool,
    /// Tools sent from the start even when deferred otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) keep: Vec<String>,
    #[serde(default)]
    pub(crate) native: NativeSearch,
    /// How many tools one search of the agent's own adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_results: Option<usize>,
}

impl ToolSearch {
    /// Tool search with the provider's own search where it has one, five
    /// tools a search otherwise, and no tool deferred but those deferred
    /// on themselves.
    pub fn new() -> Self {
        Self::default()
    }

    /// Defers a tool, by the name models call it or its original name.
    pub fn defer(mut self, tool: impl Into<String>) -> Self {
        self.defer.push(tool.into());
        self
    }

    /// Defers every tool but those [kept](Self::keep).
    pub fn defer_all(mut self) -> Self {
        self.defer_all = true;
        self
    }

    /// Sends a tool from the start, however else it is deferred.
    pub fn keep(mut self, tool: impl Into<String>) -> Self {
        self.keep.push(tool.into());
        self
    }

    /// Which of the provider's own searches to use; [`NativeSearch::Off`]
    /// uses the agent's own on every provider.
    pub fn native(mut self, native: NativeSearch) -> Self {
        self.native = native;
        self
    }

    /// How many tools one search of the agent's own adds (at least one).
    pub fn max_results(mut self, max: usize) -> Self {
        self.max_results = Some(max.max(1));
        self
    }

    /// The provider search chosen.
    pub fn native_search(&self) -> NativeSearch {
        self.native
    }

    /// How many tools one search of the agent's own adds.
    pub fn results(&self) -> usize {
        self.max_results.unwrap_or(DEFAULT_MAX_RESULTS)
    }

    /// Whether the configuration defers the tool named `name` (or whose
    /// original name is `original`).
    pub(crate) fn defers(&self, names: &[&str]) -> Option<bool> {
        let named = |list: &[String]| list.iter().any(|given| names.contains(&given.as_str()));
        if named(&self.keep) {
            Some(false)
        } else if self.defer_all || named(&self.defer) {
            Some(true)
        } else {
            None
        }
    }

    /// Every name the configuration gives, with the rule giving it, for
    /// an agent to check against its registry.
    pub(crate) fn names_mut(&mut self) -> impl Iterator<Item = &mut String> {
        self.defer.iter_mut().chain(self.keep.iter_mut())
    }
}

/// The agent's own search tool, in `provider`'s form.
pub(crate) fn local_tool(provider: Provider) -> Option<Value> {
    static REGISTRY: OnceLock<Option<Registry>> = OnceLock::new();
    let registry = REGISTRY
        .get_or_init(|| Registry::builder().tool(local_def()).build().ok())
        .as_ref()?;
    let list = registry.tool_list(provider).ok()?.to_value();
    list.as_array()?.first().cloned()
}

/// The definition of [`TOOL_SEARCH_TOOL`]. The run answers its calls
/// itself; the handler only answers a registry that was given it.
fn local_def() -> ToolDef {
    ToolDef::builder(TOOL_SEARCH_TOOL)
        .description(
            "Search for more tools by what they do: give a few words that describe the \
             task. The best matching tools are returned, and can be called from the next \
             turn on.",
        )
        .input_schema(json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Words describing the task, such as `list open pull requests`."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }))
        .read_only(true)
        .handler(|_: Value, _: CallContext| async {
            ToolResult::error("`search_tools` is answered by an agent's conversation")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_tool_is_sent_in_every_form() {
        for provider in Provider::ALL {
            let tool = local_tool(provider).expect("every provider takes it");
            assert!(tool.to_string().contains(TOOL_SEARCH_TOOL), "{provider}");
        }
    }

    #[test]
    fn keep_wins_over_defer() {
        let search = ToolSearch::new().defer_all().keep("a").defer("a");
        assert_eq!(search.defers(&["a"]), Some(false));
        assert_eq!(search.defers(&["b"]), Some(true));
        assert_eq!(ToolSearch::new().defer("b").defers(&["x", "b"]), Some(true));
        assert_eq!(ToolSearch::new().defers(&["b"]), None);
    }
}
