//! A signal a host raises to stop running calls.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// A signal the host raises to ask running calls to stop.
///
/// Clones share the signal. Cancelling is a request: a tool that never looks
/// at it runs to the end (or to its timeout).
#[derive(Clone, Default)]
pub struct Cancellation(Arc<CancellationInner>);

#[derive(Default)]
struct CancellationInner {
    cancelled: AtomicBool,
    notify: Notify,
    /// The signal this one is raised with, for a [child](Cancellation::child).
    parent: Option<Cancellation>,
}

impl Cancellation {
    /// A signal not yet raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// A signal raised when this one is, or on its own: for one call among
    /// several that share this one, stopped alone (its time limit passed)
    /// or with the others.
    ///
    /// ```
    /// use toolkit_core::Cancellation;
    ///
    /// let turn = Cancellation::new();
    /// let (first, second) = (turn.child(), turn.child());
    /// first.cancel();
    /// assert!(first.is_cancelled() && !second.is_cancelled() && !turn.is_cancelled());
    /// turn.cancel();
    /// assert!(second.is_cancelled());
    /// ```
    pub fn child(&self) -> Self {
        Self(Arc::new(CancellationInner {
            parent: Some(self.clone()),
            ..CancellationInner::default()
        }))
    }

    /// Raises the signal, waking every task waiting on it.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Whether the signal was raised (or, for a child, its parent's).
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
            || self
                .0
                .parent
                .as_ref()
                .is_some_and(Cancellation::is_cancelled)
    }

    /// Completes when the signal is raised (at once if it already was).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.notify.notified();
            // Checked after creating the waiter, so a cancel between the
            // check and the wait cannot be missed.
            if self.is_cancelled() {
                return;
            }
            match &self.0.parent {
                None => notified.await,
                Some(parent) => {
                    // Whichever is raised first; boxed, as the parent may
                    // be a child too.
                    let mut notified = std::pin::pin!(notified);
                    let mut raised = Box::pin(parent.cancelled());
                    std::future::poll_fn(|cx| {
                        if notified.as_mut().poll(cx).is_ready()
                            || raised.as_mut().poll(cx).is_ready()
                        {
                            std::task::Poll::Ready(())
                        } else {
                            std::task::Poll::Pending
                        }
                    })
                    .await;
                }
            }
        }
    }
}

impl fmt::Debug for Cancellation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Cancellation")
            .field(&self.is_cancelled())
            .finish()
    }
}
