//! What a run came to, and why a run failed.

use std::fmt;

use toolkit_core::ToolListError;
use toolkit_core::response::Usage;

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
    Session(String),
    /// The model's final answer did not fit the output type within the
    /// retry budget; the last errors and answer are kept.
    Output {
        /// What was wrong, every error at once.
        errors: String,
        /// The answer's text.
        answer: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Model(error) => write!(f, "the model endpoint failed: {error}"),
            Self::Tools(error) => write!(f, "the tools cannot be offered to the model: {error}"),
            Self::Store(error) => write!(f, "the session store failed: {error}"),
            Self::Session(message) => f.write_str(message),
            Self::Output { errors, .. } => {
                write!(f, "the answer does not fit the output type: {errors}")
            }
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Model(error) => Some(error),
            Self::Tools(error) => Some(error),
            Self::Store(error) => Some(error),
            _ => None,
        }
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
