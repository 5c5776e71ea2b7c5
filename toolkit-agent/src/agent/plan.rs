//! What the loop knows of a typed run, without its type: the answer's
//! schema, how to check an answer, and the final-answer tool.

use std::sync::Arc;

use serde_json::Value;
use toolkit_core::Registry;

use super::outcome::RunError;
use crate::answer::{AnswerError, AnswerSchema};
use crate::conversation::{Conversation, Overlay, ToolChoice};

/// Reads an answer's text as the caller's type would, giving back the
/// JSON it holds.
pub(crate) type Check = Box<dyn Fn(&str) -> Result<Value, AnswerError> + Send + Sync>;

/// What the loop needs to know of a typed run, without its type.
pub(crate) struct AnswerPlan {
    pub(crate) schema: AnswerSchema,
    pub(crate) check: Check,
    /// The final-answer tool, in [`AnswerMode::Tool`].
    pub(crate) tool: Option<Arc<Registry>>,
    /// Answers that may still be sent back for another try.
    pub(crate) retries: u32,
    /// The answer, once one fits.
    pub(crate) value: Option<Value>,
}

impl AnswerPlan {
    /// What the run adds to each of its requests: the schema the
    /// provider's way, or the final-answer tool among the tools (and a call
    /// required at each step, unless the host chose the calls). The
    /// conversation keeps none of it, so a saved session carries nothing of
    /// a typed run into the next message.
    pub(crate) fn overlay(&self, conversation: &Conversation) -> Result<Overlay, RunError> {
        Ok(match &self.tool {
            None => Overlay {
                answer: Some(self.schema.clone()),
                ..Overlay::default()
            },
            Some(tool) => {
                let list = tool.tool_list(conversation.tool_provider())?.to_value();
                let tools = match list {
                    Value::Array(items) => items,
                    other => vec![other],
                };
                let tool_choice = (conversation.tool_choice() == &ToolChoice::Auto)
                    .then_some(ToolChoice::Required);
                Overlay {
                    tools: Some(tools),
                    tool_choice,
                    answer: None,
                }
            }
        })
    }
}
