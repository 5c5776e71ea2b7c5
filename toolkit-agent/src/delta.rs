//! The pieces a streamed answer arrives in, as events.

use toolkit_core::response::{Accumulator, Delta};

use crate::event::Event;

impl Event {
    /// The events for what the last event pushed into `stream` added,
    /// in step `step`: [`ReasoningDelta`](Event::ReasoningDelta),
    /// [`TextDelta`](Event::TextDelta) and
    /// [`ArgumentsDelta`](Event::ArgumentsDelta), in that order.
    ///
    /// A streaming [`Agent`](crate::Agent) sends these from its
    /// [`Model::stream`](crate::Model::stream) progress; a host that calls
    /// `stream` itself can do the same.
    ///
    /// ```
    /// use toolkit_agent::{Event, Provider};
    ///
    /// let mut stream = Provider::OpenAi.accumulator();
    /// let mut shown = String::new();
    /// for data in [
    ///     r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"It is "}}]}"#,
    ///     r#"{"choices":[{"index":0,"delta":{"content":"sunny."},"finish_reason":"stop"}]}"#,
    ///     "[DONE]",
    /// ] {
    ///     stream.push_data(data).unwrap();
    ///     for event in Event::deltas(1, &stream) {
    ///         shown.push_str(&event.to_string());
    ///     }
    /// }
    /// assert_eq!(shown, "It is sunny.");
    /// assert_eq!(stream.finish().unwrap().text, shown);
    /// ```
    pub fn deltas(step: usize, stream: &Accumulator) -> impl Iterator<Item = Event> + '_ {
        stream.deltas().filter_map(move |delta| match delta {
            Delta::Reasoning(text) => Some(Event::ReasoningDelta {
                step,
                text: text.to_owned(),
            }),
            Delta::Text(text) => Some(Event::TextDelta {
                step,
                text: text.to_owned(),
            }),
            Delta::Arguments { index, call, text } => Some(Event::ArgumentsDelta {
                step,
                index,
                call_id: known(&call.id),
                tool: known(&call.name),
                text: text.to_owned(),
            }),
            // A kind of piece this crate does not know yet is left out.
            _ => None,
        })
    }
}

/// `Some` once the stream has sent it.
fn known(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_owned())
}
