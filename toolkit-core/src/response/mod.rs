//! Reading a provider's response: the assistant turn it holds.
//!
//! A response body (or, streamed, its events) becomes a [`Turn`]: the
//! assistant's text, its calls in the order the model made them, ready for
//! [`Registry::run_turn`](crate::Registry::run_turn), and the part of the
//! response the provider requires back, verbatim, in the next request
//! ([`Turn::echo`]).
//!
//! | dialect | calls read from | echo |
//! |---|---|---|
//! | [`Dialect::OpenAiChat`] | `choices[0].message.tool_calls` | the assistant message |
//! | [`Dialect::OpenAiResponses`] | `output[]` `function_call` / `custom_tool_call` items | every output item, `reasoning` included |
//! | [`Dialect::Anthropic`] | `content[]` `tool_use` blocks | the whole `content`, `thinking` blocks and their signatures included |
//! | [`Dialect::Gemini`] | `candidates[0].content.parts[]` `functionCall` parts | the model's content, every `thoughtSignature` included |
//!
//! Reading never drops a call. Arguments that are not valid JSON (a model
//! cut off mid-call writes `{"city`) are kept as the text the model wrote;
//! the registry answers such a call with an error result saying so, and
//! [`CallInfo::malformed`] tells the host.
//!
//! ```
//! use serde_json::json;
//! use toolkit_core::response::Dialect;
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
//! let turn = Dialect::OpenAiChat.read(&body).unwrap();
//! assert_eq!(turn.calls[0].name, "get_weather");
//! assert_eq!(turn.calls[0].id, "call_abc");
//! assert!(turn.call_info[0].malformed.is_none());
//! ```

mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;
mod stream;
mod turn;

pub use stream::{Accumulator, PartialCall};
pub use turn::{CallInfo, CallKind, ReadError, Turn, Usage};

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

/// The response formats a turn can be read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// OpenAI Chat Completions, and every server that speaks it (vLLM,
    /// llama.cpp, Ollama, OpenRouter).
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini `generateContent`.
    Gemini,
}

impl Dialect {
    /// Every dialect, in a fixed order.
    pub const ALL: [Dialect; 4] = [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::Gemini,
    ];

    /// The dialect's short name: `openai`, `responses`, `anthropic` or
    /// `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "openai",
            Dialect::OpenAiResponses => "responses",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
        }
    }

    /// Reads the assistant turn from a complete (not streamed) response
    /// body.
    pub fn read(self, body: &Value) -> Result<Turn, ReadError> {
        match self {
            Dialect::OpenAiChat => openai_chat::read(body),
            Dialect::OpenAiResponses => openai_responses::read(body),
            Dialect::Anthropic => anthropic::read(body),
            Dialect::Gemini => gemini::read(body),
        }
    }

    /// Reads the assistant turn from a response body's bytes.
    pub fn read_slice(self, body: &[u8]) -> Result<Turn, ReadError> {
        let value: Value = serde_json::from_slice(body).map_err(|error| ReadError::NotJson {
            dialect: self,
            message: error.to_string(),
        })?;
        self.read(&value)
    }

    /// An accumulator for this dialect's stream events.
    pub fn accumulator(self) -> Accumulator {
        Accumulator::new(self)
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of [`Dialect::as_str`]'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDialect(pub String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown dialect `{}` (expected openai, responses, anthropic or gemini)",
            self.0
        )
    }
}

impl std::error::Error for UnknownDialect {}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|dialect| dialect.as_str() == name)
            .ok_or_else(|| UnknownDialect(name.to_owned()))
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
