//! Who decides whether a call runs: the tool's declaration, the host's
//! rules, and the host's hook or a person, later.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use toolkit_core::{ToolCall, ToolDef, ToolResult};

use crate::session::{CallStatus, PendingCall};

/// A decision about one call that waits for one: a call of a tool that
/// needs approval, or a call that [may have run](CallStatus::MayHaveRun).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Decision {
    /// Run the call as made (or, for a call that may have run, run it
    /// again).
    Approve,
    /// Do not run it; the model is told it was denied, and why.
    Deny(String),
    /// Run this call instead (same id; the arguments, or even the tool,
    /// changed by the host).
    Edit(ToolCall),
    /// Do not run it: this is its result (what a call that may have run
    /// did, as the host found out).
    Answered(ToolResult),
    /// Decide later: the run stops with the call pending, to be
    /// [decided](crate::Session::decide) and
    /// [resumed](crate::Agent::resume), in this process or another.
    Defer,
}

impl Decision {
    /// The status the decision gives a waiting call; `None` for
    /// [`Defer`](Self::Defer).
    pub(crate) fn settle(self, call: &ToolCall, may_have_run: bool) -> Option<CallStatus> {
        Some(match self {
            Decision::Approve => CallStatus::Approved { call: call.clone() },
            Decision::Edit(mut edited) => {
                edited.id = call.id.clone();
                CallStatus::Approved { call: edited }
            }
            Decision::Deny(reason) => {
                let message = if may_have_run {
                    format!(
                        "The call was interrupted and may or may not have taken effect; \
                         it was not run again ({reason}). Check before repeating it."
                    )
                } else {
                    format!(
                        "The call was not run: the user denied it ({reason}). \
                         Do not repeat it unchanged."
                    )
                };
                CallStatus::Finished {
                    result: ToolResult::error(message),
                }
            }
            Decision::Answered(result) => CallStatus::Finished { result },
            Decision::Defer => return None,
        })
    }
}

/// The host's approval hook: given each call that waits for a decision
/// (its [`status`](PendingCall::status) says why), it decides, possibly
/// after asking a person.
pub(crate) type Approval = Arc<dyn Fn(PendingCall) -> BoxFuture<'static, Decision> + Send + Sync>;

/// Which tools need a decision before their calls run.
#[derive(Clone, Default)]
pub(crate) struct ApprovalRules {
    /// Tools the host marked as needing approval.
    pub(crate) marked: Vec<String>,
    /// Destructive tools the host trusts to run without approval.
    pub(crate) trusted: Vec<String>,
    /// Whether every tool needs approval.
    pub(crate) all: bool,
}

impl ApprovalRules {
    /// Whether a call of `def` waits for a decision: the tool declares it,
    /// the host marked it, or it is destructive and not trusted. A tool
    /// the registry no longer has needs none (its call is an error).
    pub(crate) fn needs(&self, def: Option<&ToolDef>) -> bool {
        let Some(def) = def else { return false };
        let name = def.name();
        if self.all || def.needs_approval() || self.marked.iter().any(|m| m == name) {
            return true;
        }
        def.annotations().destructive == Some(true) && !self.trusted.iter().any(|t| t == name)
    }
}
