//! What happens during a run, for a host to show.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use tokio::sync::mpsc;
use toolkit_core::ToolCall;
use toolkit_core::response::Usage;

/// What happens during a run, for a host to show.
///
/// Its `Display` is one progress line, for a terminal; the deltas, which a
/// streaming run sends as the model writes, display as their bare text, to
/// be printed one after the other without line breaks:
///
/// ```
/// use toolkit_agent::Event;
///
/// assert_eq!(Event::StepStarted { step: 3 }.to_string(), "step 3");
/// let delta = Event::TextDelta { step: 3, text: "Par".into() };
/// assert_eq!(delta.to_string(), "Par");
/// ```
///
/// A step's events come in this order: [`StepStarted`](Self::StepStarted),
/// [`Observed`](Self::Observed); in a streaming run the deltas as they
/// arrive; then [`Usage`](Self::Usage), [`Text`](Self::Text) (the step's
/// whole text: in a streaming run, its text deltas concatenated), a
/// [`Call`](Self::Call) for each call in call order (the call complete, as
/// the turn holds it), then [`Denied`](Self::Denied) for each call the
/// approval hook denies, and a [`Result`](Self::Result) for each call as
/// it finishes (calls run concurrently; calls that do not run get theirs
/// when the step's results are recorded); last
/// [`StepEnded`](Self::StepEnded). A call's start in the stream is its
/// first [`ArgumentsDelta`](Self::ArgumentsDelta). A run resumed within a
/// step starts with that step's [`StepStarted`](Self::StepStarted); a
/// decision recorded with [`Session::decide`](crate::Session::decide)
/// sends no event (no run is going).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Event {
    /// A step (one model turn) begins.
    StepStarted {
        /// The step's number, from 1.
        step: usize,
    },
    /// The model made a call.
    Call {
        /// The step.
        step: usize,
        /// The call as made.
        call: ToolCall,
        /// Why its arguments cannot be used, if they cannot.
        malformed: Option<String>,
    },
    /// A call was denied by the approval hook.
    Denied {
        /// The step.
        step: usize,
        /// The call's id.
        call_id: String,
        /// The reason given.
        reason: String,
    },
    /// A call's result.
    Result {
        /// The step.
        step: usize,
        /// The call's id.
        call_id: String,
        /// The tool.
        tool: String,
        /// Whether the result is an error.
        is_error: bool,
        /// The result as text.
        text: String,
    },
    /// The provider's token counts for the step.
    Usage {
        /// The step.
        step: usize,
        /// The counts.
        usage: Usage,
    },
    /// The host's observation shown at the start of the step.
    Observed {
        /// The step.
        step: usize,
        /// The observation's text.
        text: String,
    },
    /// Outputs over the budget could not be saved to files; they were sent
    /// whole.
    Unsaved {
        /// The step.
        step: usize,
        /// Why, per call.
        error: String,
    },
    /// The model's text of the step.
    Text {
        /// The step.
        step: usize,
        /// The text.
        text: String,
    },
    /// A piece of the model's text, as the stream carried it (streaming
    /// runs only). In order, a step's pieces concatenate to its
    /// [`Text`](Self::Text).
    TextDelta {
        /// The step.
        step: usize,
        /// The piece.
        text: String,
    },
    /// A piece of the model's reasoning (thinking), as the stream carried
    /// it, where the provider streams it (streaming runs only). Reasoning
    /// is never part of the step's text.
    ReasoningDelta {
        /// The step.
        step: usize,
        /// The piece.
        text: String,
    },
    /// A piece of a call's arguments, as the stream carried it (streaming
    /// runs only). A call's first piece may be empty: it says the call
    /// started. In order, a call's pieces concatenate to the arguments'
    /// text the model wrote (Gemini sends each call whole, in one piece).
    ArgumentsDelta {
        /// The step.
        step: usize,
        /// The call's position in the step's turn, from 0 (the order of
        /// its [`Call`](Self::Call) events).
        index: usize,
        /// The call's id, once the stream has sent it (Gemini may send
        /// none: the call's id is then made when the turn is read, and
        /// [`Call`](Self::Call) carries it).
        call_id: Option<String>,
        /// The tool's name, once the stream has sent it.
        tool: Option<String>,
        /// The piece of the arguments' text.
        text: String,
    },
    /// The step is over: its calls were answered, or the run stops in it.
    StepEnded {
        /// The step.
        step: usize,
    },
}

/// A run's events as an async stream.
#[derive(Debug)]
pub struct Events(pub(crate) mpsc::UnboundedReceiver<Event>);

impl Events {
    /// The next event, or `None` once the run has ended and every event
    /// was received.
    pub async fn recv(&mut self) -> Option<Event> {
        self.0.recv().await
    }
}

impl Stream for Events {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.0.poll_recv(cx)
    }
}

/// How much of a result or observation a progress line shows.
const SHOWN_CHARS: usize = 120;

/// `text` on one line, cut to [`SHOWN_CHARS`] characters.
fn line(text: &str) -> String {
    let mut shown: String = text
        .chars()
        .take(SHOWN_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(SHOWN_CHARS).is_some() {
        shown.push('…');
    }
    shown
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::StepStarted { step } => write!(f, "step {step}"),
            Self::Observed { text, .. } => write!(
                f,
                "  observed: {} characters, {} lines",
                text.len(),
                text.lines().count()
            ),
            Self::Call {
                call, malformed, ..
            } => {
                write!(f, "  call {}({})", call.name, line(&call.arguments_json()))?;
                match malformed {
                    Some(problem) => write!(f, " (malformed: {problem})"),
                    None => Ok(()),
                }
            }
            Self::Denied {
                call_id, reason, ..
            } => write!(f, "  denied {call_id}: {reason}"),
            Self::Result {
                tool,
                is_error,
                text,
                ..
            } => {
                let mark = if *is_error { "error" } else { "ok" };
                write!(f, "  {tool} → {mark}: {}", line(text))
            }
            Self::Usage { usage, .. } => write!(
                f,
                "  tokens: {} in, {} out",
                usage.input_tokens, usage.output_tokens
            ),
            Self::Unsaved { error, .. } => write!(f, "  outputs not saved: {error}"),
            Self::Text { text, .. } => write!(f, "  says: {}", line(text)),
            Self::TextDelta { text, .. }
            | Self::ReasoningDelta { text, .. }
            | Self::ArgumentsDelta { text, .. } => f.write_str(text),
            Self::StepEnded { step } => write!(f, "step {step} ended"),
        }
    }
}
