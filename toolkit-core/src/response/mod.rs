//! Reading a provider's response: the assistant turn it holds.
//!
//! A response body (or, streamed, its events) becomes a [`Turn`]: the
//! assistant's text, its calls in the order the model made them, ready for
//! [`Registry::run_turn`](crate::Registry::run_turn), and the part of the
//! response the provider requires back, verbatim, in the next request
//! ([`Turn::echo`]).
//!
//! | provider | calls read from | echo |
//! |---|---|---|
//! | [`Provider::OpenAi`] | `choices[0].message.tool_calls` | the assistant message |
//! | [`Provider::OpenAiResponses`] | `output[]` `function_call` / `custom_tool_call` items | every output item, `reasoning` included |
//! | [`Provider::Anthropic`] | `content[]` `tool_use` blocks | the whole `content`, `thinking` blocks and their signatures included |
//! | [`Provider::Gemini`] | `candidates[0].content.parts[]` `functionCall` parts | the model's content, every `thoughtSignature` included |
//!
//! Reading never drops a call. Arguments that are not valid JSON (a model
//! cut off mid-call writes `{"city`) are kept as the text the model wrote;
//! the registry answers such a call with an error result saying so, and
//! [`CallInfo::malformed`] tells the host.
//!
//! ```
//! use serde_json::json;
//! use toolkit_core::Provider;
//!
//! let body = json!({
//!     "choices": [{
//!         "index": 0,
//!         "message": {
//!             "role": "assistant",
//!             "content": null,
//!             "tool_calls": [{
//!                 "id": "call_abc",
//!                 "type": "function",
//!                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}
//!             }]
//!         },
//!         "finish_reason": "tool_calls"
//!     }]
//! });
//! let turn = Provider::OpenAi.read(&body).unwrap();
//! assert_eq!(turn.calls[0].name, "get_weather");
//! assert_eq!(turn.calls[0].id, "call_abc");
//! assert!(turn.call_info[0].malformed.is_none());
//! ```

mod anthropic;
mod delta;
mod gemini;
mod openai_chat;
mod openai_responses;
mod partial;
mod stream;
mod turn;

pub use delta::Delta;
pub use partial::PartialCall;
pub use stream::Accumulator;
pub use turn::{CallInfo, CallKind, ReadError, Turn, Usage};

use serde_json::Value;

use crate::Provider;

impl Provider {
    /// Reads the assistant turn from a complete (not streamed) response
    /// body of this provider's API.
    ///
    /// [`OpenAi`](Provider::OpenAi) and [`OpenAiStrict`](Provider::OpenAiStrict)
    /// read Chat Completions; [`Mcp`](Provider::Mcp) is not a model API, so
    /// reading from it is an error.
    pub fn read(self, body: &Value) -> Result<Turn, ReadError> {
        match self {
            Provider::OpenAi | Provider::OpenAiStrict => openai_chat::read(body).map(|turn| Turn {
                provider: self,
                ..turn
            }),
            Provider::OpenAiResponses => openai_responses::read(body),
            Provider::Anthropic => anthropic::read(body),
            Provider::Gemini => gemini::read(body),
            Provider::Mcp => Err(ReadError::NotAModelApi { provider: self }),
        }
    }

    /// Reads the assistant turn from a response body's bytes.
    pub fn read_slice(self, body: &[u8]) -> Result<Turn, ReadError> {
        let value: Value = serde_json::from_slice(body).map_err(|error| ReadError::NotJson {
            provider: self,
            message: error.to_string(),
        })?;
        self.read(&value)
    }

    /// An accumulator for this provider's stream events.
    pub fn accumulator(self) -> Accumulator {
        Accumulator::new(self)
    }
}

/// Why a call's text arguments cannot be used, or `None` when they parse.
///
/// Blank arguments count as none at all, as the registry treats them.
pub(crate) fn arguments_problem(text: &str) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => None,
        Err(error) => Some(format!("the arguments are not valid JSON: {error}")),
    }
}
