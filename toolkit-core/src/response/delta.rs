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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Provider;

    /// The pieces of each event, written as `kind:index:text`.
    fn pieces(stream: &super::super::Accumulator) -> Vec<String> {
        stream
            .deltas()
            .map(|delta| match delta {
                Delta::Reasoning(text) => format!("reasoning:{text}"),
                Delta::Text(text) => format!("text:{text}"),
                Delta::Arguments { index, call, text } => {
                    format!("arguments:{index}:{}:{text}", call.name)
                }
            })
            .collect()
    }

    #[test]
    fn one_chunk_may_add_to_text_and_to_several_calls() {
        let mut stream = Provider::OpenAi.accumulator();
        stream
            .push(
                &json!({"choices": [{"index": 0, "delta": {"content": "Two calls:",
                "tool_calls": [
                    {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{\"x\":"}},
                    {"index": 1, "id": "b", "function": {"name": "g", "arguments": ""}}]}}]}),
            )
            .unwrap();
        assert_eq!(
            pieces(&stream),
            ["text:Two calls:", "arguments:0:f:{\"x\":", "arguments:1:g:"]
        );
        stream
            .push(&json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"index": 1, "function": {"arguments": "{}"}},
                {"index": 0, "function": {"arguments": "1}"}}]}}]}))
            .unwrap();
        // Call order, whatever order the chunk names them in.
        assert_eq!(pieces(&stream), ["arguments:0:f:1}", "arguments:1:g:{}"]);
        stream.push_data("[DONE]").unwrap();
        assert!(pieces(&stream).is_empty());
    }

    #[test]
    fn a_closing_event_that_repeats_the_arguments_adds_nothing() {
        let mut stream = Provider::OpenAiResponses.accumulator();
        for event in [
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{\"a\":"}),
        ] {
            stream.push(&event).unwrap();
        }
        stream
            .push(
                &json!({"type": "response.function_call_arguments.done", "output_index": 0,
                "arguments": "{\"a\":1}"}),
            )
            .unwrap();
        // What the closing text adds past the deltas is a piece too.
        assert_eq!(pieces(&stream), ["arguments:0:f:1}"]);
        stream
            .push(
                &json!({"type": "response.function_call_arguments.done", "output_index": 0,
                "arguments": "{\"a\":1}"}),
            )
            .unwrap();
        assert!(pieces(&stream).is_empty());
        assert_eq!(stream.finish().unwrap().calls[0].arguments()["a"], 1);
    }

    #[test]
    fn reasoning_is_read_in_every_provider_and_is_not_text() {
        let cases = [
            (
                Provider::OpenAi,
                json!({"choices": [{"index": 0, "delta": {"reasoning_content": "hm"}}]}),
            ),
            (
                Provider::OpenAiResponses,
                json!({"type": "response.reasoning_text.delta", "output_index": 0, "delta": "hm"}),
            ),
            (
                Provider::Gemini,
                json!({"candidates": [{"content": {"parts": [{"text": "hm", "thought": true}]}}]}),
            ),
        ];
        for (provider, event) in cases {
            let mut stream = provider.accumulator();
            stream.push(&event).unwrap();
            assert_eq!(pieces(&stream), ["reasoning:hm"], "{provider}");
            assert_eq!(stream.reasoning(), "hm");
            assert_eq!(stream.text(), "");
        }
        let mut stream = Provider::Anthropic.accumulator();
        stream
            .push(&json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
            .unwrap();
        assert!(pieces(&stream).is_empty());
        stream
            .push(&json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "hm"}}))
            .unwrap();
        assert_eq!(pieces(&stream), ["reasoning:hm"]);
    }

    #[test]
    fn chat_reasoning_is_echoed() {
        let mut stream = Provider::OpenAi.accumulator();
        for data in [
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"Let me "}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"4"},"finish_reason":"stop"}]}"#,
        ] {
            stream.push_data(data).unwrap();
        }
        let turn = stream.finish().unwrap();
        assert_eq!(turn.text, "4");
        assert_eq!(turn.echo["reasoning_content"], "Let me think.");
    }
}
