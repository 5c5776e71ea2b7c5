//! What the client hears from a server between calls: tool-list changes,
//! and the progress of calls that asked for it.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, Implementation,
    NumberOrString, ProgressNotificationParam, ProgressToken,
};
#[allow(deprecated)] // sampling, roots: deprecated by SEP-2577, part of 2025-11-25
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, ListRootsResult};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::json;
use tokio::sync::Notify;
use toolkit_core::CallContext;

use super::questions::Questions;

/// Shared by every connection to one server (a restart makes a new
/// connection with the same handler).
#[derive(Clone, Default)]
pub(crate) struct Handler {
    pub(crate) list_changed: Arc<Notify>,
    /// How many times the tool list changed (or the server was started
    /// again): a tool list kept from before a change is stale.
    pub(crate) changes: Arc<std::sync::atomic::AtomicU64>,
    progress: Arc<Mutex<HashMap<String, Arc<Tracked>>>>,
    /// Who answers the server's questions, when the host said.
    questions: Option<Questions>,
}

/// A call whose progress is forwarded, with the last value forwarded.
struct Tracked {
    call: CallContext,
    /// rmcp hands each notification to a task of its own, so two reports
    /// can arrive out of order. MCP requires progress to increase; a
    /// report not ahead of the last one forwarded is stale and dropped,
    /// and the lock held while forwarding keeps the host's order the
    /// order of acceptance.
    last: Mutex<Option<f64>>,
}

impl Handler {
    /// Says the tool list changed: the list kept is stale, and the
    /// registry following it is synced again.
    pub(crate) fn tools_changed(&self) {
        self.changes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.list_changed.notify_one();
    }

    /// How many times the tool list changed so far.
    pub(crate) fn changes(&self) -> u64 {
        self.changes.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Who answers the server's questions, if anyone.
    pub(crate) fn questions(&self) -> Option<&Questions> {
        self.questions.as_ref()
    }

    /// A handler whose server's questions go to `questions`, when given.
    pub(crate) fn answering(questions: Option<Questions>) -> Self {
        Self {
            questions,
            ..Self::default()
        }
    }

    /// Sends the server's reports for `token` to `call` until the guard
    /// is dropped.
    pub(crate) fn track(&self, token: &ProgressToken, call: &CallContext) -> TrackGuard {
        let token = key(token);
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                token.clone(),
                Arc::new(Tracked {
                    call: call.clone(),
                    last: Mutex::new(None),
                }),
            );
        TrackGuard {
            progress: Arc::clone(&self.progress),
            token,
        }
    }
}

/// A token as a map key: a number and the same digits as a string are
/// different tokens.
fn key(token: &ProgressToken) -> String {
    match &token.0 {
        NumberOrString::String(text) => format!("s{text}"),
        NumberOrString::Number(number) => format!("n{number}"),
    }
}

/// Stops forwarding a call's progress when its call ends.
pub(crate) struct TrackGuard {
    progress: Arc<Mutex<HashMap<String, Arc<Tracked>>>>,
    token: String,
}

impl Drop for TrackGuard {
    fn drop(&mut self) {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The server may ask only what the host can answer.
        let capabilities = match &self.questions {
            Some(_) => serde_json::from_value(
                json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}}),
            )
            .unwrap_or_default(),
            None => ClientCapabilities::default(),
        };
        ClientConfig::new(
            capabilities,
            Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        match &self.questions {
            Some(questions) => questions.elicit(request).await,
            None => serde_json::from_value(json!({"action": "decline"}))
                .map_err(|error| ErrorData::internal_error(error.to_string(), None)),
        }
    }

    #[allow(deprecated)] // sampling: deprecated by SEP-2577, part of 2025-11-25
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        match &self.questions {
            Some(questions) => questions.sample(params).await,
            None => Err(ErrorData::method_not_found::<
                rmcp::model::CreateMessageRequestMethod,
            >()),
        }
    }

    #[allow(deprecated)] // roots: deprecated by SEP-2577, part of 2025-11-25
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        match &self.questions {
            Some(questions) => questions.roots().await,
            None => Err(ErrorData::method_not_found::<
                rmcp::model::ListRootsRequestMethod,
            >()),
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let tracked = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key(&params.progress_token))
            .cloned();
        let Some(tracked) = tracked else { return };
        let mut last = tracked.last.lock().unwrap_or_else(PoisonError::into_inner);
        if last.is_some_and(|last| params.progress.partial_cmp(&last) != Some(Ordering::Greater)) {
            return;
        }
        *last = Some(params.progress);
        tracked
            .call
            .report_progress(params.progress, params.total, params.message.as_deref());
    }
}
