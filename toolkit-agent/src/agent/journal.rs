//! The run's journal over the host's store: a call with side effects is
//! recorded as started before it runs and as finished after, so that a
//! run resumed after a crash never runs a call twice unasked, and never
//! loses one.

use std::sync::Arc;

use toolkit_core::{ToolCall, ToolResult};

use super::outcome::RunError;
use crate::session::{CallStatus, Session};
use crate::store::SessionStore;

/// Writes the session to the agent's store, when it has one, at the
/// points a resumed run reads back.
#[derive(Clone, Copy)]
pub(crate) struct Journal<'a> {
    store: Option<&'a Arc<dyn SessionStore>>,
}

impl<'a> Journal<'a> {
    pub(crate) fn new(store: Option<&'a Arc<dyn SessionStore>>) -> Self {
        Self { store }
    }

    /// Saves the session as it is: what changed since the last save, for
    /// a store that keeps a journal.
    pub(crate) async fn save(&self, session: &mut Session) -> Result<(), RunError> {
        if let Some(store) = self.store {
            let changes = session.changes();
            store.save_changes(&changes).await?;
            let mark = changes.mark();
            // Changes are counted from what the store now holds. After a
            // failed save they still count from the save before, so the
            // next one carries them too.
            session.mark_saved(mark);
        }
        Ok(())
    }

    /// Records the calls at `indices` (of the pending turn) as started,
    /// before any of them runs, in one write for the turn. When it cannot
    /// be saved, nothing ran: they are approved still, and the error is
    /// the run's.
    pub(crate) async fn start(
        &self,
        session: &mut Session,
        calls: &[(usize, &ToolCall)],
    ) -> Result<(), RunError> {
        if calls.is_empty() {
            return Ok(());
        }
        for (index, call) in calls {
            set(
                session,
                *index,
                CallStatus::Started {
                    call: (*call).clone(),
                },
            );
        }
        let saved = self.save(session).await;
        if saved.is_err() {
            self.roll_back(session, calls.iter().copied());
        }
        saved
    }

    /// Records a call's result, saved at once when `save` (a call with
    /// side effects whose result is not the turn's last: that one is saved
    /// with the step's end).
    pub(crate) async fn finish(
        &self,
        session: &mut Session,
        index: usize,
        result: ToolResult,
        save: bool,
    ) -> Result<(), RunError> {
        set(session, index, CallStatus::Finished { result });
        if save {
            self.save(session).await?;
        }
        Ok(())
    }

    /// Puts calls that never started back to approved, after a save that
    /// stopped the run: a resumed run starts them. Calls that started stay
    /// recorded as started: they may have run.
    pub(crate) fn roll_back<'c>(
        &self,
        session: &mut Session,
        calls: impl IntoIterator<Item = (usize, &'c ToolCall)>,
    ) {
        for (index, call) in calls {
            set(session, index, CallStatus::Approved { call: call.clone() });
        }
    }
}

fn set(session: &mut Session, index: usize, status: CallStatus) {
    if let Some(pending) = session
        .turn
        .as_mut()
        .and_then(|turn| turn.calls.get_mut(index))
    {
        pending.status = status;
    }
}
