//! Streamed responses: events in, the same [`Turn`] out.

use serde_json::Value;

use super::delta::{Delta, Marks};
use super::partial::PartialCall;
use super::turn::{ReadError, Turn};
use super::{Provider, anthropic, gemini, openai_chat, openai_responses};

/// Turns one provider's stream events into a [`Turn`].
///
/// Feed it each event's JSON (an SSE `data:` payload, or a streamed Gemini
/// chunk) with [`push`](Self::push) or [`push_data`](Self::push_data); read
/// the text and the calls so far at any point; [`finish`](Self::finish)
/// gives the turn the non-streamed response would have given.
/// [`deltas`](Self::deltas) tells what the last event added, for a host
/// that shows the turn as it arrives.
///
/// ```
/// use toolkit_core::Provider;
///
/// let mut stream = Provider::OpenAi.accumulator();
/// for data in [
///     r#"{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}"#,
///     r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}"#,
/// ] {
///     stream.push_data(data).unwrap();
/// }
/// assert_eq!(stream.partial_calls()[0].arguments, r#"{"city":"#);
/// stream.push_data(r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}"#).unwrap();
/// stream.push_data("[DONE]").unwrap();
/// let turn = stream.finish().unwrap();
/// assert_eq!(turn.calls[0].arguments()["city"], "Paris");
/// ```
#[derive(Debug, Clone)]
pub struct Accumulator {
    provider: Provider,
    state: State,
    /// The lengths before the last event, which its deltas are cut from.
    marks: Marks,
}

#[derive(Debug, Clone)]
enum State {
    Chat(openai_chat::Stream),
    Responses(openai_responses::Stream),
    Anthropic(anthropic::Stream),
    Gemini(gemini::Stream),
    /// A provider with no model API (MCP): every event is an error.
    None,
}

impl Accumulator {
    /// An empty accumulator for `provider`.
    pub fn new(provider: Provider) -> Self {
        let state = match provider {
            Provider::OpenAi | Provider::OpenAiStrict => State::Chat(Default::default()),
            Provider::OpenAiResponses => State::Responses(Default::default()),
            Provider::Anthropic => State::Anthropic(Default::default()),
            Provider::Gemini => State::Gemini(Default::default()),
            Provider::Mcp => State::None,
        };
        Self {
            provider,
            state,
            marks: Marks::default(),
        }
    }

    /// The provider of the events.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// Takes in one event.
    ///
    /// An error event, or an event whose shape the provider does not allow,
    /// is an error; events the turn does not depend on (pings, progress)
    /// are ignored.
    pub fn push(&mut self, event: &Value) -> Result<(), ReadError> {
        self.mark();
        match &mut self.state {
            State::Chat(stream) => stream.push(event),
            State::Responses(stream) => stream.push(event),
            State::Anthropic(stream) => stream.push(event),
            State::Gemini(stream) => stream.push(event),
            State::None => Err(ReadError::NotAModelApi {
                provider: self.provider,
            }),
        }
    }

    /// Takes in one SSE `data:` payload. OpenAI's closing `[DONE]` and
    /// blank payloads are ignored.
    pub fn push_data(&mut self, data: &str) -> Result<(), ReadError> {
        self.mark();
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(());
        }
        let event: Value = serde_json::from_str(data).map_err(|error| ReadError::Stream {
            provider: self.provider(),
            message: format!("an event is not JSON: {error}"),
        })?;
        self.push(&event)
    }

    /// The assistant's text so far.
    pub fn text(&self) -> &str {
        match &self.state {
            State::Chat(stream) => &stream.text,
            State::Responses(stream) => &stream.text,
            State::Anthropic(stream) => &stream.text,
            State::Gemini(stream) => &stream.text,
            State::None => "",
        }
    }

    /// The reasoning text so far (see [`Delta::Reasoning`]); empty where
    /// the provider streams none.
    pub fn reasoning(&self) -> &str {
        match &self.state {
            State::Chat(stream) => &stream.reasoning,
            State::Responses(stream) => &stream.reasoning,
            State::Anthropic(stream) => &stream.reasoning,
            State::Gemini(stream) => &stream.reasoning,
            State::None => "",
        }
    }

    /// What the last event pushed added: reasoning, then text, then each
    /// call's arguments in call order (a call that just started comes
    /// with an empty piece). An event that added nothing (a ping, a usage
    /// count, `[DONE]`) gives none.
    ///
    /// Only lengths are kept between events, so this costs a few
    /// comparisons per call, however long the turn has grown.
    ///
    /// ```
    /// use toolkit_core::Provider;
    /// use toolkit_core::response::Delta;
    ///
    /// let mut stream = Provider::Anthropic.accumulator();
    /// let mut text = String::new();
    /// for data in [
    ///     r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    ///     r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}"#,
    ///     r#"{"type":"ping"}"#,
    ///     r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}}"#,
    /// ] {
    ///     stream.push_data(data).unwrap();
    ///     for delta in stream.deltas() {
    ///         if let Delta::Text(piece) = delta {
    ///             text.push_str(piece);
    ///         }
    ///     }
    /// }
    /// assert_eq!(text, "Hello, world");
    /// assert_eq!(text, stream.text());
    /// ```
    pub fn deltas(&self) -> impl Iterator<Item = Delta<'_>> + '_ {
        self.marks
            .deltas(self.text(), self.reasoning(), self.partial_calls())
    }

    fn mark(&mut self) {
        let mut marks = std::mem::take(&mut self.marks);
        marks.set(self.text(), self.reasoning(), self.partial_calls());
        self.marks = marks;
    }

    /// The calls so far, in order, with the arguments received so far.
    pub fn partial_calls(&self) -> &[PartialCall] {
        match &self.state {
            State::Chat(stream) => &stream.calls,
            State::Responses(stream) => &stream.calls,
            State::Anthropic(stream) => &stream.calls,
            State::Gemini(stream) => &stream.calls,
            State::None => &[],
        }
    }

    /// The turn the events made.
    pub fn finish(self) -> Result<Turn, ReadError> {
        let provider = self.provider;
        match self.state {
            State::Chat(stream) => stream.finish().map(|turn| Turn { provider, ..turn }),
            State::Responses(stream) => stream.finish(),
            State::Anthropic(stream) => stream.finish(),
            State::Gemini(stream) => stream.finish(),
            State::None => Err(ReadError::NotAModelApi { provider }),
        }
    }
}
