//! A result together with the call it answers.

use serde::{Deserialize, Serialize};

use crate::ToolResult;

/// The result of one tool call, with the call's id and the tool's name, as
/// the emitters need them to answer the call.
///
/// One assistant turn's calls are answered by a slice of these, in the order
/// the model made the calls.
///
/// Its JSON form is `{"call_id", "tool_name", "result"}`, the result in
/// [its own form](ToolResult#json-form).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ToolCallResult {
    /// The id the provider gave the call (`tool_call_id`, `call_id`,
    /// `tool_use_id`, Gemini's `functionCall.id`).
    pub call_id: String,
    /// The tool's name, as the model called it.
    pub tool_name: String,
    /// What the tool returned.
    pub result: ToolResult,
}

impl ToolCallResult {
    /// Pairs a result with the call it answers.
    pub fn new(
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        result: ToolResult,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            tool_name: tool_name.into(),
            result,
        }
    }
}
