//! What one stream event added to a turn: pieces of reasoning, of text and
//! of calls' arguments, told apart from what came before by lengths.

use super::partial::PartialCall;

/// A piece of a streamed turn that one event added.
///
/// [`Accumulator::deltas`](super::Accumulator::deltas) gives the pieces of
/// the last event pushed. Every provider's text, reasoning and arguments
/// only grow as events arrive, so, event after event, the pieces of each
/// kind concatenate to what [`Accumulator::text`](super::Accumulator::text),
/// [`reasoning`](super::Accumulator::reasoning) and
/// [`partial_calls`](super::Accumulator::partial_calls) hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delta<'a> {
    /// Reasoning text (Chat's `reasoning_content`, Responses' reasoning
    /// text and summaries, Anthropic's thinking, Gemini's thought parts),
    /// where the provider streams it. It never counts as the turn's text.
    Reasoning(&'a str),
    /// A piece of the assistant's text.
    Text(&'a str),
    /// A piece of a call's arguments. A call's first piece may be empty:
    /// it says the call started (its id and name, if the provider sent
    /// them already, are on `call`).
    Arguments {
        /// The call's position in the turn, from 0.
        index: usize,
        /// The call as far as the stream has carried it.
        call: &'a PartialCall,
        /// The piece of the arguments' text.
        text: &'a str,
    },
}

/// How long each growing part of the turn was before the last event:
/// cheap to take (a length per call), and what [`Delta`]s are cut from.
#[derive(Debug, Clone, Default)]
pub(super) struct Marks {
    text: usize,
    reasoning: usize,
    /// Each call's arguments' length; calls past its end are new.
    arguments: Vec<usize>,
}

impl Marks {
    /// Remembers the lengths as they are now.
    pub(super) fn set(&mut self, text: &str, reasoning: &str, calls: &[PartialCall]) {
        self.text = text.len();
        self.reasoning = reasoning.len();
        self.arguments.clear();
        self.arguments
            .extend(calls.iter().map(|call| call.arguments.len()));
    }

    /// What grew since [`set`](Self::set): reasoning, then text, then each
    /// call in order.
    pub(super) fn deltas<'a>(
        &'a self,
        text: &'a str,
        reasoning: &'a str,
        calls: &'a [PartialCall],
    ) -> impl Iterator<Item = Delta<'a>> + 'a {
        let reasoning = after(reasoning, self.reasoning).map(Delta::Reasoning);
        let text = after(text, self.text).map(Delta::Text);
        let calls = calls.iter().enumerate().filter_map(|(index, call)| {
            let piece = match self.arguments.get(index) {
                Some(&mark) => after(&call.arguments, mark)?,
                // New: reported even with nothing written yet.
                None => call.arguments.as_str(),
            };
            Some(Delta::Arguments {
                index,
                call,
                text: piece,
            })
        });
        reasoning.into_iter().chain(text).chain(calls)
    }
}

/// What `whole` holds past `mark`, if anything.
fn after(whole: &str, mark: usize) -> Option<&str> {
    whole.get(mark..).filter(|piece| !piece.is_empty())
}
