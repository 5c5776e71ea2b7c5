//! What the loop knows of a typed run, without its type: the answer's
//! schema, how to check an answer, and the final-answer tool.

use std::sync::Arc;

use serde_json::Value;
use toolkit_core::Registry;

use super::outcome::RunError;
use crate::answer::{AnswerError, AnswerSchema};
use crate::conversation::{Conversation, ToolChoice};

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
    /// Asks for the answer in the conversation: the schema the provider's
    /// way, or the final-answer tool among the tools (and a call required
    /// at each step, unless the host chose the calls).
    pub(crate) fn prepare(&self, conversation: &mut Conversation) -> Result<(), RunError> {
        match &self.tool {
            None => conversation.set_answer_schema(Some(self.schema.clone())),
            Some(tool) => {
                conversation.add_tools(tool)?;
                if conversation.tool_choice() == &ToolChoice::Auto {
                    conversation.set_tool_choice(ToolChoice::Required);
                }
            }
        }
        Ok(())
    }
}
