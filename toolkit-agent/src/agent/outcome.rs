//! What a run came to, and why a run failed.

use std::fmt;

use toolkit_core::response::Usage;
use toolkit_core::schema::SchemaError;
use toolkit_core::{RegistryError, ToolListError};

use crate::answer::{AnswerError, AnswerProblem};
use crate::model::ModelError;
use crate::session::PendingCall;
use crate::store::StoreError;

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StopReason {
    /// A tool returned done (`ToolResult::with_done`).
    Done,
    /// A tool marked stop-after ran.
    StopAfter(String),
    /// The model answered without calls.
    Answered,
    /// The model's answer, without calls, was cut off at its output limit
    /// (`length`, `max_tokens`): the answer may be incomplete. A larger
    /// output limit, or a task asking for less, may help.
    Truncated,
    /// The step limit was reached.
    StepLimit,
    /// The run's token budget was spent.
    TokenBudget,
    /// The host cancelled the run.
    Cancelled,
    /// Calls wait for the host's decision: the run is paused. Decide them
    /// ([`Session::decide`](crate::Session::decide)) and
    /// [resume](crate::Agent::resume).
    Paused,
    /// A tool failed more times in a row than the limit allows.
    ToolFailures {
        /// The tool.
        tool: String,
        /// Its last error, as the model saw it.
        last_error: String,
    },
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Done => f.write_str("a tool declared the task done"),
            Self::StopAfter(tool) => write!(f, "`{tool}` ran, which ends the run"),
            Self::Answered => f.write_str("the model answered"),
            Self::Truncated => f.write_str("the model's answer was cut off at its output limit"),
            Self::StepLimit => f.write_str("the step limit was reached"),
            Self::TokenBudget => f.write_str("the run's token budget was spent"),
            Self::Cancelled => f.write_str("the run was cancelled"),
            Self::Paused => f.write_str("calls wait for a decision"),
            Self::ToolFailures { tool, last_error } => {
                write!(f, "`{tool}` failed too many times in a row: {last_error}")
            }
        }
    }
}

/// What a run came to.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Outcome {
    /// The final answer: the model's last text, or the summary a tool
    /// returned with done.
    pub answer: Option<String>,
    /// Whether a tool declared the task done.
    pub done: bool,
    /// The success that tool reported.
    pub success: Option<bool>,
    /// Model turns taken in this run.
    pub steps: usize,
    /// Tokens over this run, as the provider reported them.
    pub usage: Usage,
    /// Why the run stopped.
    pub stop: StopReason,
    /// The calls waiting for a decision, when the run is
    /// [paused](StopReason::Paused).
    pub pending: Vec<PendingCall>,
    /// The session's id, under which a [store](crate::SessionStore) keeps
    /// it.
    pub session_id: String,
}

impl Outcome {
    /// Whether the run is paused, waiting for decisions.
    pub fn is_paused(&self) -> bool {
        self.stop == StopReason::Paused
    }
}

/// Why a run could not go on. The session keeps everything recorded up to
/// the failure: fix the cause and [resume](crate::Agent::resume), or send
/// the next message.
///
/// A variant that wraps another error says what failed and returns the
/// cause from [`source`](std::error::Error::source); print the chain (as
/// anyhow's `{:#}` does) to see both. The others say everything in their
/// message.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunError {
    /// The model endpoint failed.
    Model(ModelError),
    /// The registry's tools cannot be offered to the model's provider (a
    /// schema it refuses).
    Tools(ToolListError),
    /// The session could not be saved or loaded.
    Store(StoreError),
    /// A session that cannot continue as asked: a message sent while calls
    /// wait for decisions, a resume with nothing to resume.
    Session(SessionStateError),
    /// The answer type of a typed run has no schema a model can be given.
    AnswerSchema(SchemaError),
    /// The final-answer tool of a typed run
    /// ([`AnswerMode::Tool`](crate::AnswerMode::Tool)) cannot be made from
    /// the answer type's schema.
    AnswerTool(RegistryError),
    /// The model's final answer did not fit the output type within the
    /// retry budget; the last problems and answer are kept.
    Output {
        /// What is wrong with the answer: each problem, with where in the
        /// answer it is.
        problems: Vec<AnswerProblem>,
        /// The answer's text.
        answer: String,
        /// The problems as the retry prompt sent to the model put them.
        #[deprecated(note = "use `problems`, each with its place in the answer")]
        errors: String,
    },
    /// The model's final answer was cut off at its output limit (the
    /// provider's finish reason `length`, `max_tokens`...) before it was
    /// whole: asking again would be cut off again. A larger output limit
    /// ([`Settings::max_output_tokens`](crate::Settings::max_output_tokens)), or a task
    /// asking for less, may help.
    Truncated {
        /// What the model wrote before it was cut off.
        answer: String,
        /// The provider's finish reason, as it gave it.
        finish_reason: String,
    },
    /// A typed run asked for its answer as a response schema
    /// ([`AnswerMode::Schema`](crate::AnswerMode::Schema)) from a model
    /// that cannot take tools and a response schema in one request (a
    /// server that enforces the schema with a grammar, as llama.cpp's
    /// does): no tool could ever be called. Refused before any request;
    /// use [`AnswerMode::Tool`](crate::AnswerMode::Tool), or leave the
    /// mode unset.
    SchemaWithTools,
}

impl RunError {
    /// The answer problems of a typed run's answer that did not fit.
    #[allow(deprecated)]
    pub(crate) fn output(problems: &AnswerError, answer: String) -> Self {
        Self::Output {
            problems: problems.problems().to_vec(),
            errors: problems.prompt(),
            answer,
        }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Model(_) => f.write_str("the model endpoint failed"),
            Self::Tools(_) => f.write_str("the tools cannot be offered to the model"),
            Self::Store(_) => f.write_str("the session store failed"),
            Self::Session(_) => f.write_str("the session cannot be run as asked"),
            Self::AnswerSchema(_) => f.write_str("the answer type has no usable schema"),
            Self::AnswerTool(_) => f.write_str("the final-answer tool cannot be made"),
            Self::Output { problems, .. } => {
                f.write_str("the answer does not fit the output type")?;
                crate::answer::write_problems(f, problems)
            }
            Self::Truncated { finish_reason, .. } => write!(
                f,
                "the answer was cut off at the model's output limit (finish reason `{finish_reason}`)"
            ),
            Self::SchemaWithTools => f.write_str(
                "the answer was asked for as a response schema (AnswerMode::Schema), but this \
                 model cannot take tools and a response schema in one request: the schema would \
                 force every answer to be JSON, so no tool could ever be called; use \
                 AnswerMode::Tool, or leave the mode unset",
            ),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Model(error) => Some(error),
            Self::Tools(error) => Some(error),
            Self::Store(error) => Some(error),
            Self::Session(error) => Some(error),
            Self::AnswerSchema(error) => Some(error),
            Self::AnswerTool(error) => Some(error),
            Self::Output { .. } | Self::Truncated { .. } | Self::SchemaWithTools => None,
        }
    }
}

/// Why a session cannot be run as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionStateError {
    /// A message was sent while calls of the session's last turn wait for
    /// decisions: decide them and resume first.
    Unsettled,
    /// A resume of a session whose run has ended: there is nothing to
    /// resume; send a message to start the next run.
    Ended,
    /// The agent has no [store](crate::AgentBuilder::store) to load
    /// sessions from.
    NoStore,
    /// The store holds no session under this id.
    NotFound(String),
}

impl fmt::Display for SessionStateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsettled => f.write_str(
                "calls of the session's last turn are not settled: decide those that \
                 wait and resume the run before sending a message",
            ),
            Self::Ended => {
                f.write_str("the session's run has ended: send a message to start the next")
            }
            Self::NoStore => f.write_str("the agent has no store to load sessions from"),
            Self::NotFound(id) => write!(f, "the store holds no session `{id}`"),
        }
    }
}

impl std::error::Error for SessionStateError {}

impl From<SessionStateError> for RunError {
    fn from(error: SessionStateError) -> Self {
        Self::Session(error)
    }
}

impl From<ModelError> for RunError {
    fn from(error: ModelError) -> Self {
        Self::Model(error)
    }
}

impl From<ToolListError> for RunError {
    fn from(error: ToolListError) -> Self {
        Self::Tools(error)
    }
}

impl From<StoreError> for RunError {
    fn from(error: StoreError) -> Self {
        Self::Store(error)
    }
}
