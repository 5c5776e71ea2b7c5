//! A typed run's answer policy, without the answer's type: what each
//! request carries for it (the overlay), which answers are kept, and how
//! many are sent back for another try.

use std::sync::Arc;

use serde_json::Value;
use toolkit_core::Registry;

use super::outcome::RunError;
use crate::answer::{AnswerError, AnswerSchema, FINAL_ANSWER_TOOL};
use crate::conversation::{Conversation, Overlay, ToolChoice};

/// Reads an answer's text as the caller's type would, giving back the
/// JSON it holds.
pub(crate) type Check = Box<dyn Fn(&str) -> Result<Value, AnswerError> + Send + Sync>;

/// What the loop needs to know of a typed run, without its type.
pub(crate) struct AnswerPolicy {
    pub(crate) schema: AnswerSchema,
    pub(crate) check: Check,
    /// The final-answer tool, in [`AnswerMode::Tool`].
    pub(crate) tool: Option<Arc<Registry>>,
    /// Answers that may still be sent back for another try.
    pub(crate) retries: u32,
    /// The answer, once one fits.
    pub(crate) value: Option<Value>,
}

impl AnswerPolicy {
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

/// What became of an answer the policy read.
pub(crate) enum Verdict {
    /// It fits: the run may end with it.
    Kept,
    /// It does not fit and may be tried again: this goes back to the
    /// model.
    SendBack(String),
}

impl AnswerPolicy {
    /// Whether the answer is given by calling the final-answer tool.
    pub(crate) fn by_tool(&self) -> bool {
        self.tool.is_some()
    }

    /// The final-answer tool's own registry, when `name` calls it and the
    /// host's registry has no tool of that name (the host's then wins).
    pub(crate) fn own_tool(&self, name: &str, registry: &Registry) -> Option<&Arc<Registry>> {
        self.tool
            .as_ref()
            .filter(|_| name == FINAL_ANSWER_TOOL && registry.get(name).is_none())
    }

    /// Reads an answer: kept when it fits; sent back with its problems
    /// while retries remain; an error after.
    pub(crate) fn judge(&mut self, text: &str) -> Result<Verdict, RunError> {
        match (self.check)(text) {
            Ok(value) => {
                self.value = Some(value);
                Ok(Verdict::Kept)
            }
            Err(problems) => {
                self.spend_retry(&problems, text)?;
                let mut feedback = problems.prompt();
                if self.by_tool() {
                    feedback.push_str(&format!(
                        " Give it by calling `{FINAL_ANSWER_TOOL}` with the answer as its arguments."
                    ));
                }
                Ok(Verdict::SendBack(feedback))
            }
        }
    }

    /// Keeps an answer when it fits as it is; sends nothing back when it
    /// does not (an answer cut off would be cut off again).
    pub(crate) fn keep_if_whole(&mut self, text: &str) -> bool {
        match (self.check)(text) {
            Ok(value) => {
                self.value = Some(value);
                true
            }
            Err(_) => false,
        }
    }

    /// Takes one retry, for an answer that did not fit; the run's error
    /// once none is left.
    pub(crate) fn spend_retry(
        &mut self,
        problems: &AnswerError,
        answer: &str,
    ) -> Result<(), RunError> {
        if self.retries == 0 {
            return Err(RunError::output(problems, answer.to_owned()));
        }
        self.retries -= 1;
        Ok(())
    }

    /// Why the final-answer tool refused an answer: the check's problems
    /// with the answer as the model gave it, else the tool's own words.
    pub(crate) fn refusal(&self, arguments: Option<&str>, refused: String) -> AnswerError {
        arguments
            .and_then(|arguments| (self.check)(arguments).err())
            .unwrap_or_else(|| AnswerError::other(refused))
    }
}
