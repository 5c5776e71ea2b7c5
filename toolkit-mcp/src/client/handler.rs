//! What the client hears from a server between calls: tool-list changes,
//! and the progress of calls that asked for it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, NumberOrString, ProgressNotificationParam,
    ProgressToken,
};
use rmcp::service::{NotificationContext, RoleClient};
use tokio::sync::Notify;
use toolkit_core::CallContext;

/// Shared by every connection to one server (a restart makes a new
/// connection with the same handler).
#[derive(Clone, Default)]
pub(crate) struct Handler {
    pub(crate) list_changed: Arc<Notify>,
    progress: Arc<Mutex<HashMap<String, CallContext>>>,
}

impl Handler {
    /// Sends the server's reports for `token` to `call` until the guard
    /// is dropped.
    pub(crate) fn track(&self, token: &ProgressToken, call: &CallContext) -> TrackGuard {
        let token = key(token);
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), call.clone());
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
    progress: Arc<Mutex<HashMap<String, CallContext>>>,
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
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new(env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let call = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key(&params.progress_token))
            .cloned();
        if let Some(call) = call {
            call.report_progress(params.progress, params.total, params.message.as_deref());
        }
    }
}
