//! Judges built on third-party SDK types: what we emit must deserialize into
//! them and serialize back to the very same JSON, so that no field is
//! misnamed, mistyped or unknown to the SDK.

use async_openai::types::chat::ChatCompletionRequestMessage;
use async_openai::types::responses::{FunctionCallOutputItemParam, InputItem, Item};
use rmcp::model::CallToolResult;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Deserializes `value` as `T` and checks that `T` serializes back to it.
fn round_trip<T: DeserializeOwned + Serialize>(value: &Value) -> Result<T, String> {
    let typed: T =
        serde_json::from_value(value.clone()).map_err(|error| format!("{error} in {value}"))?;
    let back = serde_json::to_value(&typed).map_err(|error| error.to_string())?;
    if &back == value {
        Ok(typed)
    } else {
        Err(format!(
            "round trip changed the JSON:\n ours: {value}\n sdk:  {back}"
        ))
    }
}

/// An OpenAI Chat Completions request message, judged by `async-openai`.
pub fn openai_chat_message(value: &Value) -> Result<ChatCompletionRequestMessage, String> {
    round_trip(value)
}

/// An OpenAI Responses input item that must be a `function_call_output`,
/// judged by `async-openai`.
pub fn openai_function_call_output(value: &Value) -> Result<FunctionCallOutputItemParam, String> {
    match round_trip::<InputItem>(value)? {
        InputItem::Item(Item::FunctionCallOutput(output)) => Ok(output),
        other => Err(format!("not a function_call_output item: {other:?}")),
    }
}

/// An MCP `CallToolResult`, judged by `rmcp`.
pub fn mcp_call_tool_result(value: &Value) -> Result<CallToolResult, String> {
    round_trip(value)
}
