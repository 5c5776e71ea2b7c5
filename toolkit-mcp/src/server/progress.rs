//! A call's progress reports, sent to the client as
//! `notifications/progress` when its request carried a progress token.
//!
//! Many clients (rmcp's among them) put a token on every request, and most
//! tools never report: the forwarding task starts at the first report, so
//! that a call without reports pays for none.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use toolkit_core::{Progress, ProgressSink};

/// Where reports go: nowhere yet, to the forwarding task, or (once the
/// call ended) nowhere any more.
enum State {
    Idle {
        token: ProgressToken,
        peer: Peer<RoleServer>,
    },
    Forwarding {
        sender: mpsc::UnboundedSender<Progress>,
        task: JoinHandle<()>,
    },
    Finished,
}

/// Forwards one call's reports, in order, from the tool's task (where a
/// report must not wait) to the client.
pub(crate) struct Reporter {
    sink: ProgressSink,
    state: Arc<Mutex<State>>,
}

impl Reporter {
    pub(crate) fn new(token: ProgressToken, peer: Peer<RoleServer>) -> Self {
        let state = Arc::new(Mutex::new(State::Idle { token, peer }));
        let shared = Arc::clone(&state);
        let sink = ProgressSink::new(move |report| {
            let mut state = shared.lock().unwrap_or_else(PoisonError::into_inner);
            if let State::Idle { token, peer } = &*state {
                let (sender, receiver) = mpsc::unbounded_channel();
                let task = tokio::spawn(forward(token.clone(), peer.clone(), receiver));
                *state = State::Forwarding { sender, task };
            }
            if let State::Forwarding { sender, .. } = &*state {
                let _ = sender.send(report);
            }
        });
        Self { sink, state }
    }

    pub(crate) fn sink(&self) -> &ProgressSink {
        &self.sink
    }

    /// Sends the reports made so far and stops: later reports (from a tool
    /// that kept its context past its call) go nowhere.
    pub(crate) async fn finish(self) {
        let state = std::mem::replace(
            &mut *self.state.lock().unwrap_or_else(PoisonError::into_inner),
            State::Finished,
        );
        if let State::Forwarding { sender, task } = state {
            drop(sender);
            let _ = task.await;
        }
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
