//! A lease per session: who may drive it, until when by the database's
//! clock, and the fencing token its writes carry.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::PgError;
use crate::held::LeaseState;
use crate::store::PgStore;

/// The right to drive one session, held by one worker until it is dropped
/// or [released](Self::release), or until it expires: it is renewed in
/// the background while it lives, every third of its time to live; a
/// worker that dies (or stops, or loses the database for longer than the
/// time to live) loses it, and another worker may take the session over.
///
/// While it lives, the store's saves of its session carry its fencing
/// token, and the database writes them only if the token is still the
/// session's: once another worker has taken the session, a save by this
/// one is refused with [`PgError::LeaseLost`], and the new owner's record
/// stands.
///
/// Made by [`PgStore::lease`].
#[derive(Debug)]
pub struct Lease {
    store: PgStore,
    state: Arc<LeaseState>,
    renewal: JoinHandle<()>,
    released: AtomicBool,
}

impl PgStore {
    /// Takes the lease on session `id` for `worker` (a name for queries
    /// and logs), for `ttl` at a time; `None` while a live lease is held
    /// (by another worker, or already by this one). The session need not
    /// exist yet.
    ///
    /// Whether a lease has expired is decided by the database's clock,
    /// never the worker's. Must be called within a tokio runtime (the
    /// renewal is a task of its own).
    pub async fn lease(
        &self,
        id: &str,
        worker: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, PgError> {
        let seconds = ttl.as_secs_f64();
        let row = self
            .query_opt(|s| &s.acquire, &[&id, &worker, &seconds])
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (lost, _) = watch::channel(false);
        let state = Arc::new(LeaseState::new(id.to_owned(), row.get(0), lost));
        self.leases().insert(id.to_owned(), Arc::clone(&state));
        let renewal = tokio::spawn(renew(self.clone(), Arc::clone(&state), ttl));
        Ok(Some(Lease {
            store: self.clone(),
            state,
            renewal,
            released: AtomicBool::new(false),
        }))
    }
}

/// Renews the lease every third of `ttl` until it is found lost. A
/// database that cannot be reached is tried again at the next beat: the
/// lease may expire meanwhile, and the renewal that reaches the database
/// next learns from the token whether another worker took it.
async fn renew(store: PgStore, state: Arc<LeaseState>, ttl: Duration) {
    let beat = (ttl / 3).max(Duration::from_millis(10));
    let seconds = ttl.as_secs_f64();
    loop {
        tokio::time::sleep(beat).await;
        let renewed = store
            .execute(|s| &s.renew, &[&state.session, &state.token, &seconds])
            .await;
        if let Ok(0) = renewed {
            state.mark_lost();
            return;
        }
    }
}

impl Lease {
    /// The session it is a lease on.
    pub fn session(&self) -> &str {
        &self.state.session
    }

    /// The fencing token: larger for each worker that takes the session.
    pub fn token(&self) -> i64 {
        self.state.token
    }

    /// Whether this worker still has it, as far as it knows: `false` once
    /// a renewal or a save found another worker's token. (A lease that
    /// expired and was taken since is found out at the next renewal or
    /// save.)
    pub fn is_held(&self) -> bool {
        !self.state.is_lost()
    }

    /// Waits until the lease is found lost: a host races its run against
    /// it to stop driving a session another worker took.
    pub async fn lost(&self) {
        let mut lost = self.state.watch_lost();
        let _ = lost.wait_for(|lost| *lost).await;
    }

    /// Gives the lease back at once, so that another worker may take the
    /// session now rather than after its time to live.
    pub async fn release(self) -> Result<(), PgError> {
        self.renewal.abort();
        self.forget();
        self.released.store(true, Ordering::Relaxed);
        let written = self
            .store
            .execute(|s| &s.release, &[&self.state.session, &self.state.token])
            .await?;
        if written == 0 {
            self.state.mark_lost();
        }
        Ok(())
    }

    /// Stops the store's saves of the session from carrying this lease.
    fn forget(&self) {
        let mut leases = self.store.leases();
        if leases
            .get(&self.state.session)
            .is_some_and(|held| Arc::ptr_eq(held, &self.state))
        {
            leases.remove(&self.state.session);
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.renewal.abort();
        if self.released.load(Ordering::Relaxed) {
            return;
        }
        self.forget();
        // Given back in the background when a runtime is there; otherwise
        // it expires after its time to live.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let store = self.store.clone();
            let state = Arc::clone(&self.state);
            runtime.spawn(async move {
                let _ = store
                    .execute(|s| &s.release, &[&state.session, &state.token])
                    .await;
            });
        }
    }
}
