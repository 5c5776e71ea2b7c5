//! Who decides whether a call runs: the tool's declaration, the host's
//! rules, and the host's hook or a person, later.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use toolkit_core::{Origin, ToolDef};

use crate::session::{Decision, PendingCall};

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
