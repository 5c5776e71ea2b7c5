//! What a stream has carried of a turn so far, and reading its events.

use serde_json::Value;

use super::CallKind;

/// A call as far as the stream has carried it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartialCall {
    /// The call's id, once the stream has sent it.
    pub id: String,
    /// The tool's name, once the stream has sent it.
    pub name: String,
    /// The arguments' text received so far (for Gemini, whose parts arrive
    /// whole, the arguments object written out).
    pub arguments: String,
    /// A function call or a custom tool call.
    pub kind: CallKind,
    /// Whether the provider has said the call is complete.
    pub complete: bool,
}

impl PartialCall {
    pub(crate) fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: String::new(),
            kind: CallKind::Function,
            complete: false,
        }
    }
}

/// The string at `key`, or "".
pub(crate) fn str_at<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}
