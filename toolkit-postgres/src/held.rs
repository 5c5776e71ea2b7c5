//! What a store and its leases share: which sessions this store holds,
//! with the fencing token of each, in a module of its own so that the
//! store and the lease each use it without using each other's internals.

use tokio::sync::watch;

/// What the store and the lease's renewal share.
#[derive(Debug)]
pub(crate) struct LeaseState {
    pub(crate) session: String,
    pub(crate) token: i64,
    lost: watch::Sender<bool>,
}

impl LeaseState {
    pub(crate) fn new(session: String, token: i64, lost: watch::Sender<bool>) -> Self {
        Self {
            session,
            token,
            lost,
        }
    }

    pub(crate) fn mark_lost(&self) {
        self.lost.send_replace(true);
    }

    /// A watch that turns true when the lease is lost.
    pub(crate) fn watch_lost(&self) -> watch::Receiver<bool> {
        self.lost.subscribe()
    }

    pub(crate) fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }
}
