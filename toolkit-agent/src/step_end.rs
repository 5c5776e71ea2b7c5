//! Telling the host that a step is over, however it ended.

use tokio::sync::mpsc;

use crate::event::Event;

/// Sends [`Event::StepEnded`] when dropped: at the end of the step's turn
/// of the loop, and at every early return (cancellation, a stop
/// condition, a failed request) alike.
pub(crate) struct StepEnd<'a> {
    step: usize,
    events: Option<&'a mpsc::UnboundedSender<Event>>,
}

impl<'a> StepEnd<'a> {
    pub(crate) fn new(step: usize, events: Option<&'a mpsc::UnboundedSender<Event>>) -> Self {
        Self { step, events }
    }
}

impl Drop for StepEnd<'_> {
    fn drop(&mut self) {
        if let Some(events) = self.events {
            // A host that stopped listening misses nothing it wanted.
            let _ = events.send(Event::StepEnded { step: self.step });
        }
    }
}
