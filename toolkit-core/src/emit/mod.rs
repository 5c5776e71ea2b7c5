//! One assistant turn's results as each provider's messages.
//!
//! Each function takes the results of one turn, in the order the model made
//! the calls, and returns the exact JSON to append to the conversation for
//! that provider:
//!
//! | function | provider | returns |
//! |---|---|---|
//! | [`openai_chat`] | OpenAI Chat Completions | `tool` messages, then at most one `user` message |
//! | [`openai_responses`] | OpenAI Responses | `function_call_output` items |
//! | [`anthropic`] | Anthropic Messages | one `user` message of `tool_result` blocks |
//! | [`gemini`] | Gemini `generateContent` | one `user` content of `functionResponse` parts (and one of images, for models before Gemini 3) |
//! | [`mcp`] | Model Context Protocol | one `CallToolResult` per call |
//! | [`envelope`] | plain-string hosts | one `{"ok", "output"}` per call |
//!
//! Emission never fails: an image that cannot be sent (a file outside the
//! allowed folder, a type the provider refuses) is replaced, in place, by a
//! text block that tells the model what happened, and the host finds the
//! typed error in [`Emitted::problems`].
//!
//! ```
//! use toolkit_core::emit::{self, EmitOptions};
//! use toolkit_core::{ToolCallResult, ToolResult};
//!
//! let turn = [ToolCallResult::new("call_1", "search", ToolResult::text("3 hits"))];
//! let emitted = emit::openai_chat(&turn, &EmitOptions::default());
//! assert_eq!(
//!     emitted.items,
//!     [serde_json::json!({"role": "tool", "tool_call_id": "call_1", "content": "3 hits"})]
//! );
//! assert!(emitted.problems.is_empty());
//! ```

mod anthropic;
mod envelope;
mod gemini;
mod mcp;
mod openai_chat;
mod openai_responses;
mod options;
mod resolve;

pub use anthropic::anthropic;
pub use envelope::envelope;
pub use gemini::gemini;
pub use mcp::mcp;
pub use openai_chat::openai_chat;
pub use openai_responses::openai_responses;
pub use options::{EmitOptions, McpRevision};

use serde_json::Value;

use crate::ImageError;

/// What an emitter produced.
#[derive(Debug, Clone, PartialEq)]
#[must_use = "the items are what the provider must receive"]
#[non_exhaustive]
pub struct Emitted {
    /// The messages, items or results to append to the conversation, in
    /// order.
    pub items: Vec<Value>,
    /// Images that could not be sent; each was replaced by a text block
    /// explaining why.
    pub problems: Vec<EmitProblem>,
}

impl Emitted {
    /// The items, as one JSON array.
    pub fn to_json(&self) -> Value {
        Value::Array(self.items.clone())
    }
}

/// An image that could not be sent: where it was; why is the
/// [source](std::error::Error::source), [`error`](Self::error).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EmitProblem {
    /// The call whose result held the image.
    pub call_id: String,
    /// The image's position among the result's content blocks.
    pub block: usize,
    /// Why it could not be sent.
    pub error: ImageError,
}

impl std::fmt::Display for EmitProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the image of call {}, content block {}, cannot be sent",
            self.call_id, self.block
        )
    }
}

impl std::error::Error for EmitProblem {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
