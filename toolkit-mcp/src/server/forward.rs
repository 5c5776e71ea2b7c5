//! Items a running call makes (progress reports, log messages), sent on to
//! the client in order, from the tool's task (where making one must not
//! wait) to a forwarding task. Most calls make none: the task starts at the
//! first item, so that a call without any pays for none.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

type Start<T> = Box<dyn FnOnce(mpsc::UnboundedReceiver<T>) -> BoxFuture<'static, ()> + Send>;

/// Where items go: nowhere yet, to the forwarding task, or (once the call
/// ended) nowhere any more.
enum State<T> {
    Idle(Start<T>),
    Forwarding {
        sender: mpsc::UnboundedSender<T>,
        task: JoinHandle<()>,
    },
    Finished,
}

/// One call's forwarder: cheap to clone into the sink the tool reports to.
pub(crate) struct Forwarder<T>(Arc<Mutex<State<T>>>);

impl<T> Clone for Forwarder<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T: Send + 'static> Forwarder<T> {
    /// A forwarder whose task, once started, runs `forward` over the items.
    pub(crate) fn new<F, Fut>(forward: F) -> Self
    where
        F: FnOnce(mpsc::UnboundedReceiver<T>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let start: Start<T> = Box::new(move |receiver| Box::pin(forward(receiver)));
        Self(Arc::new(Mutex::new(State::Idle(start))))
    }

    /// Sends `item` on, starting the task at the first.
    pub(crate) fn send(&self, item: T) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(*state, State::Idle(_))
            && let State::Idle(start) = std::mem::replace(&mut *state, State::Finished)
        {
            let (sender, receiver) = mpsc::unbounded_channel();
            let task = tokio::spawn(start(receiver));
            *state = State::Forwarding { sender, task };
        }
        if let State::Forwarding { sender, .. } = &*state {
            let _ = sender.send(item);
        }
    }

    /// Sends the items made so far and stops: later items (from a tool
    /// that kept its context past its call) go nowhere.
    pub(crate) async fn finish(self) {
        let state = std::mem::replace(
            &mut *self.0.lock().unwrap_or_else(PoisonError::into_inner),
            State::Finished,
        );
        if let State::Forwarding { sender, task } = state {
            drop(sender);
            let _ = task.await;
        }
    }
}
