//! One call of a tool, and what the call knows: its arguments, its context
//! (id, cancellation, host state, progress), and why it failed.
//!
//! Tools (`tool/`) and the registry (`registry/`) both build on the types
//! here; this module knows nothing of either.

pub(crate) mod arguments;
pub(crate) mod ask;
pub(crate) mod cancellation;
pub(crate) mod context;
pub(crate) mod error;
pub(crate) mod host;
pub(crate) mod log;
pub(crate) mod progress;
mod questions;
pub(crate) mod state;

use serde::Deserialize;
use serde_json::Value;

use crate::Arguments;

/// One call the model made: its id, the tool's name and the arguments.
///
/// Deserializes from `{"id", "name", "arguments"}` and nothing else, where
/// `arguments` is an object or, as OpenAI sends it, a string of JSON (a
/// call without `arguments` has none). Any other key is an error, so that a
/// provider's own shape (an Anthropic `tool_use` block, a Responses
/// `function_call` item) is refused rather than read wrong: without its
/// `input`, or with its item `id` for the call's. Read those with
/// [`Provider::read`](crate::Provider::read).
///
/// ```
/// use toolkit_core::ToolCall;
///
/// let call: ToolCall =
///     serde_json::from_str(r#"{"id": "call_1", "name": "search", "arguments": "{}"}"#)?;
/// assert_eq!(call.name, "search");
///
/// let tool_use = r#"{"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}"#;
/// assert!(serde_json::from_str::<ToolCall>(tool_use).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The id the provider gave the call.
    pub id: String,
    /// The tool the model called.
    pub name: String,
    /// The arguments: an object, or a string holding JSON.
    #[serde(default)]
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }

    pub(crate) fn arguments(&self) -> Arguments<'_> {
        match &self.arguments {
            Value::String(text) => Arguments::Text(text),
            value => Arguments::Value(value),
        }
    }
}
