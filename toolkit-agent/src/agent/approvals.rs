//! Who decides whether a call runs: the tool's declaration, the host's
//! rules, and the host's hook or a person, later.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use toolkit_core::{Cancellation, Origin, Registry, ToolCall, ToolDef, ToolResult};

use crate::session::{CallStatus, Decision, PendingCall};

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

    /// Whether the tool's own hints that it is read-only or idempotent may
    /// decide how its calls are recorded and retried: yes for the
    /// program's own tools; for a tool from elsewhere (an MCP server, a
    /// plugin: a run-time tool that names its source), only when the host
    /// trusts it.
    pub(crate) fn hints_trusted(&self, def: &ToolDef) -> bool {
        match def.origin() {
            Origin::Runtime { source: Some(_) } => self.trusted.iter().any(|t| t == def.name()),
            _ => true,
        }
    }
}

/// A turn's approval step: the first status of each call the model made,
/// and the hook's decisions on those that wait for one.
pub(crate) struct Approvals<'a> {
    pub(crate) registry: &'a Registry,
    pub(crate) rules: &'a ApprovalRules,
    pub(crate) hook: Option<&'a Approval>,
}

impl Approvals<'_> {
    /// Gives each new call its first status: answered at once (malformed,
    /// or a tool the registry does not have), waiting for a decision, or
    /// approved. A call that may have run, of a tool that says it is
    /// idempotent, is approved to run again. Gives the tools of those
    /// retried: running again is not another use.
    ///
    /// `own_tool` tells a typed run's final-answer tool, which is the
    /// run's own rather than the registry's.
    pub(crate) fn classify(
        &self,
        calls: &mut [PendingCall],
        own_tool: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let mut retried = Vec::new();
        for pending in calls {
            match &pending.status {
                CallStatus::New => {
                    let def = self.registry.get(&pending.call.name);
                    pending.status = if let Some(problem) = &pending.malformed {
                        CallStatus::Finished {
                            result: malformed_result(&pending.call, problem),
                        }
                    } else if def.is_none() && !own_tool(&pending.call.name) {
                        // Answered now: a tool that appears later (a list
                        // that changes while the run waits) must not run
                        // a call no rule looked at.
                        CallStatus::Finished {
                            result: ToolResult::error(format!(
                                "there is no tool named `{}`; call one of the tools you were given",
                                pending.call.name
                            )),
                        }
                    } else if self.rules.needs(def.as_ref()) {
                        CallStatus::AwaitingApproval
                    } else {
                        CallStatus::Approved {
                            call: pending.call.clone(),
                        }
                    };
                }
                CallStatus::MayHaveRun { call } => {
                    let idempotent = self.registry.get(&call.name).filter(|def| {
                        self.rules.hints_trusted(def) && def.annotations().idempotent == Some(true)
                    });
                    if let Some(def) = idempotent {
                        retried.push(def.name().to_owned());
                        pending.status = CallStatus::Approved { call: call.clone() };
                    }
                }
                _ => {}
            }
        }
        retried
    }

    /// The hook's decision on a call waiting for one: deferred when there
    /// is no hook, `None` when the run is cancelled while it decides.
    pub(crate) async fn ask(
        &self,
        pending: &PendingCall,
        cancellation: &Cancellation,
    ) -> Option<Decision> {
        match self.hook {
            Some(hook) => tokio::select! {
                decision = hook(pending.clone()) => Some(decision),
                () = cancellation.cancelled() => None,
            },
            None => Some(Decision::Defer),
        }
    }
}

/// The name a call's uses and failures are counted by: its tool's
/// registered name, else the name the model gave.
pub(crate) fn counted_as(registry: &Registry, name: &str) -> String {
    registry
        .get(name)
        .map_or_else(|| name.to_owned(), |def| def.name().to_owned())
}

/// The error result for a call whose arguments are not JSON: it quotes
/// what the model wrote, so the model can tell what to fix.
fn malformed_result(call: &ToolCall, problem: &str) -> ToolResult {
    let written = call.arguments_json();
    let shown = toolkit_core::text::cut(&written, 300);
    ToolResult::error(format!(
        "The call to `{}` was not run: {problem}. You wrote: {shown}. \
         Call the tool again with complete JSON arguments.",
        call.name
    ))
}
