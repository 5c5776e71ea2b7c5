//! A call's progress reports, sent to the client as
//! `notifications/progress` when its request carried a progress token.
//!
//! Many clients (rmcp's among them) put a token on every request, and most
//! tools never report: the forwarding task starts at the first report
//! (`forward.rs`), so that a call without reports pays for none.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use toolkit_core::{Progress, ProgressSink};

use super::forward::Forwarder;

/// Forwards one call's reports, in order, from the tool's task (where a
/// report must not wait) to the client.
pub(crate) struct Reporter {
    sink: ProgressSink,
    forwarder: Forwarder<Progress>,
}

impl Reporter {
    pub(crate) fn new(token: ProgressToken, peer: Peer<RoleServer>) -> Self {
        let forwarder = Forwarder::new(move |receiver| forward(token, peer, receiver));
        let into = forwarder.clone();
        let sink = ProgressSink::new(move |report| into.send(report));
        Self { sink, forwarder }
    }

    pub(crate) fn sink(&self) -> &ProgressSink {
        &self.sink
    }

    /// Sends the reports made so far and stops: later reports (from a tool
    /// that kept its context past its call) go nowhere.
    pub(crate) async fn finish(self) {
        self.forwarder.finish().await;
    }
}

async fn forward(
    token: ProgressToken,
    peer: Peer<RoleServer>,
    mut receiver: mpsc::UnboundedReceiver<Progress>,
) {
    let mut last = f64::NEG_INFINITY;
    while let Some(report) = receiver.recv().await {
        // MCP asks that progress increase with each notification; a report
        // that does not (or is not a number) says nothing new.
        if !report.done.is_finite() || report.done <= last {
            continue;
        }
        last = report.done;
        let mut params = ProgressNotificationParam::new(token.clone(), report.done);
        params.total = report.total.filter(|total| total.is_finite());
        params.message = report.message;
        if peer.notify_progress(params).await.is_err() {
            return;
        }
    }
}
