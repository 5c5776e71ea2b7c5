//! A call's progress reports, sent to the client as
//! `notifications/progress` when its request carried a progress token.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolkit_core::{Progress, ProgressSink};

type Sender = Arc<Mutex<Option<mpsc::UnboundedSender<Progress>>>>;

/// Forwards one call's reports, in order, from the tool's task (where a
/// report must not wait) to the client.
pub(crate) struct Reporter {
    sink: ProgressSink,
    sender: Sender,
    forwarding: JoinHandle<()>,
}

impl Reporter {
    pub(crate) fn start(token: ProgressToken, peer: Peer<RoleServer>) -> Self {
        let (sender, mut receiver) = mpsc::unbounded_channel::<Progress>();
        let sender: Sender = Arc::new(Mutex::new(Some(sender)));
        let shared = Arc::clone(&sender);
        let sink = ProgressSink::new(move |report| {
            if let Some(sender) = &*shared.lock().unwrap_or_else(PoisonError::into_inner) {
                let _ = sender.send(report);
            }
        });
        let forwarding = tokio::spawn(async move {
            let mut last = f64::NEG_INFINITY;
            while let Some(report) = receiver.recv().await {
                // MCP asks that progress increase with each notification; a
                // report that does not (or is not a number) says nothing new.
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
        });
        Self {
            sink,
            sender,
            forwarding,
        }
    }

    pub(crate) fn sink(&self) -> &ProgressSink {
        &self.sink
    }

    /// Sends the reports made so far and stops: later reports (from a tool
    /// that kept its context past its call) go nowhere.
    pub(crate) async fn finish(self) {
        drop(
            self.sender
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let _ = self.forwarding.await;
    }
}
