//! Anthropic Messages: `content[]` blocks, and the event stream.

use serde_json::{Map, Value, json};

use super::partial::{PartialCall, str_at};
use super::turn::{CallInfo, ReadError, Turn, Usage, UsageFields, provider_error, text_at};
use super::{Provider, arguments_problem};
use crate::ToolCall;

const PROVIDER: Provider = Provider::Anthropic;

const USAGE: UsageFields = UsageFields {
    at: "usage",
    input: "input_tokens",
    output: "output_tokens",
    cache_read: Some("/cache_read_input_tokens"),
    cache_write: Some("/cache_creation_input_tokens"),
    reasoning: None,
};

pub(super) fn read(body: &Value) -> Result<Turn, ReadError> {
    if str_at(body, "type") == "error"
        && let Some(error) = provider_error(PROVIDER, body)
    {
        return Err(error);
    }
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ReadError::shape(PROVIDER, "no `content` array"))?;
    let mut turn = Turn::new(PROVIDER, Value::Array(content.clone()));
    for block in content {
        match str_at(block, "type") {
            "text" => turn.text.push_str(str_at(block, "text")),
            "tool_use" => {
                let input = block.get("input").cloned().unwrap_or(Value::Null);
                turn.push_call(
                    ToolCall::new(str_at(block, "id"), str_at(block, "name"), input),
                    CallInfo::function(None),
                );
            }
            // Thinking blocks only travel in the echo.
            _ => {}
        }
    }
    turn.finish_reason = text_at(body, "stop_reason");
    turn.account(body, &USAGE, "id", "model");
    Ok(turn)
}

/// The event stream's state.
#[derive(Debug, Clone, Default)]
pub(super) struct Stream {
    pub(super) text: String,
    /// Every thinking block's text, in order; the blocks themselves, with
    /// their signatures, are kept for the echo.
    pub(super) reasoning: String,
    pub(super) calls: Vec<PartialCall>,
    /// Blocks by their `index`, as started, then completed by deltas.
    blocks: Vec<(u64, Value)>,
    /// `index` of each call's block, position for position.
    call_indices: Vec<u64>,
    /// The input text of each server tool's block (a tool search's
    /// `server_tool_use`), by `index`: parsed into the block for the echo.
    server_inputs: Vec<(u64, String)>,
    stop_reason: Option<String>,
    usage: Usage,
    has_usage: bool,
    /// `message_start`'s message, for its id and model.
    message: Option<Value>,
}

impl Stream {
    pub(super) fn push(&mut self, event: &Value) -> Result<(), ReadError> {
        let index = event.get("index").and_then(Value::as_u64);
        match str_at(event, "type") {
            "error" => {
                return Err(ReadError::Provider {
                    provider: PROVIDER,
                    error: event.get("error").unwrap_or(event).clone(),
                });
            }
            "message_start" => {
                if let Some(usage) = event.pointer("/message/usage") {
                    self.add_usage(usage);
                }
                self.message = event.get("message").cloned();
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = event.get("usage") {
                    // The counts in `message_delta` are cumulative.
                    if let Some(output) = usage.get("output_tokens").and_then(Value::as_u64) {
                        self.usage.output_tokens = output;
                        self.has_usage = true;
                    }
                    if let Some(found) = Usage::read(usage, &USAGE) {
                        let cache = [
                            (&mut self.usage.cache_read_tokens, found.cache_read_tokens),
                            (&mut self.usage.cache_write_tokens, found.cache_write_tokens),
                        ];
                        for (kept, sent) in cache {
                            if sent.is_some() {
                                *kept = sent;
                            }
                        }
                        self.has_usage = true;
                    }
                }
            }
            "content_block_start" => {
                let index = self.require_index(index)?;
                let mut block = event.get("content_block").cloned().unwrap_or(Value::Null);
                if str_at(&block, "type") == "tool_use" {
                    self.call_indices.push(index);
                    self.calls.push(PartialCall::new(
                        str_at(&block, "id"),
                        str_at(&block, "name"),
                    ));
                    // The input arrives as JSON text; it replaces this.
                    block["input"] = json!({});
                }
                if str_at(&block, "type") == "server_tool_use" {
                    self.server_inputs.push((index, String::new()));
                }
                match str_at(&block, "type") {
                    "text" => self.text.push_str(str_at(&block, "text")),
                    "thinking" => self.reasoning.push_str(str_at(&block, "thinking")),
                    _ => {}
                }
                self.blocks.push((index, block));
            }
            "content_block_delta" => {
                let index = self.require_index(index)?;
                let delta = event.get("delta").unwrap_or(&Value::Null);
                match str_at(delta, "type") {
                    "input_json_delta" => {
                        let piece = str_at(delta, "partial_json");
                        if let Some((_, input)) = self
                            .server_inputs
                            .iter_mut()
                            .find(|(known, _)| *known == index)
                        {
                            input.push_str(piece);
                        } else {
                            let position = self.call_position(index)?;
                            self.calls[position].arguments.push_str(piece);
                        }
                    }
                    "text_delta" => {
                        let piece = str_at(delta, "text");
                        self.text.push_str(piece);
                        self.append(index, "text", piece)?;
                    }
                    "thinking_delta" => {
                        let piece = str_at(delta, "thinking");
                        self.reasoning.push_str(piece);
                        self.append(index, "thinking", piece)?
                    }
                    "signature_delta" => {
                        self.append(index, "signature", str_at(delta, "signature"))?
                    }
                    "citations_delta" => {
                        if let Some(citation) = delta.get("citation") {
                            let block = self.block(index)?;
                            match block.get_mut("citations") {
                                Some(Value::Array(citations)) => citations.push(citation.clone()),
                                _ => block["citations"] = json!([citation]),
                            }
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = self.require_index(index)?;
                if let Ok(position) = self.call_position(index) {
                    self.calls[position].complete = true;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn add_usage(&mut self, usage: &Value) {
        if let Some(found) = Usage::read(usage, &USAGE) {
            self.usage += found;
            self.has_usage = true;
        }
    }

    fn require_index(&self, index: Option<u64>) -> Result<u64, ReadError> {
        index.ok_or_else(|| ReadError::Stream {
            provider: PROVIDER,
            message: "a content block event without `index`".into(),
        })
    }

    fn call_position(&self, index: u64) -> Result<usize, ReadError> {
        self.call_indices
            .iter()
            .position(|&known| known == index)
            .ok_or_else(|| ReadError::Stream {
                provider: PROVIDER,
                message: format!("input for block {index}, which is not a `tool_use` block"),
            })
    }

    fn block(&mut self, index: u64) -> Result<&mut Value, ReadError> {
        self.blocks
            .iter_mut()
            .find(|(known, _)| *known == index)
            .map(|(_, block)| block)
            .ok_or_else(|| ReadError::Stream {
                provider: PROVIDER,
                message: format!("a delta for block {index}, which never started"),
            })
    }

    fn append(&mut self, index: u64, key: &str, piece: &str) -> Result<(), ReadError> {
        let block = self.block(index)?;
        let Some(object) = block.as_object_mut() else {
            return Ok(());
        };
        match object
            .entry(key)
            .or_insert_with(|| Value::String(String::new()))
        {
            Value::String(so_far) => so_far.push_str(piece),
            other => *other = Value::String(piece.to_owned()),
        }
        Ok(())
    }

    pub(super) fn finish(mut self) -> Result<Turn, ReadError> {
        self.blocks.sort_by_key(|(index, _)| *index);
        // Inputs parsed from their text; a malformed one is kept as text
        // for the call and as `{}` in the echo, the only form the API
        // takes back.
        let mut malformed = Vec::new();
        for (position, call) in self.calls.iter().enumerate() {
            let index = self.call_indices[position];
            let text = &call.arguments;
            let (input, problem) = match arguments_problem(text) {
                None if text.trim().is_empty() => (json!({}), None),
                None => (serde_json::from_str(text).unwrap_or(json!({})), None),
                Some(problem) => (Value::String(text.clone()), Some(problem)),
            };
            if let Some((_, block)) = self.blocks.iter_mut().find(|(known, _)| *known == index)
                && problem.is_none()
            {
                block["input"] = input.clone();
            }
            malformed.push((input, problem));
        }
        for (index, text) in &self.server_inputs {
            // Not the model's call to answer: an input that does not parse
            // is sent back as `{}`, the only form the API takes back.
            let Ok(input) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if let Some((_, block)) = self.blocks.iter_mut().find(|(known, _)| known == index) {
                block["input"] = input;
            }
        }
        let content: Vec<Value> = self.blocks.into_iter().map(|(_, block)| block).collect();
        let mut body = Map::new();
        body.insert("content".into(), Value::Array(content));
        if let Some(reason) = self.stop_reason {
            body.insert("stop_reason".into(), Value::String(reason));
        }
        let mut turn = read(&Value::Object(body))?;
        for ((call, info), (input, problem)) in turn
            .calls
            .iter_mut()
            .zip(turn.call_info.iter_mut())
            .zip(malformed)
        {
            call.set_arguments(input);
            info.malformed = problem;
        }
        if self.has_usage {
            turn.usage = Some(self.usage);
        }
        if let Some(message) = &self.message {
            turn.identify(message, "id", "model");
        }
        Ok(turn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // From Anthropic's tool-use and extended-thinking docs.
    fn doc_body() -> Value {
        json!({
          "id": "msg_01Aq9w938a90dw8q",
          "type": "message",
          "role": "assistant",
          "model": "claude-sonnet-4-5",
          "content": [
            {"type": "thinking", "thinking": "The user wants the weather.", "signature": "WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            {"type": "text", "text": "I'll check the weather."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
             "input": {"location": "San Francisco, CA", "unit": "celsius"}}
          ],
          "stop_reason": "tool_use",
          "stop_sequence": null,
          "usage": {"input_tokens": 472, "cache_creation_input_tokens": 248,
                    "cache_read_input_tokens": 2048, "output_tokens": 91}
        })
    }

    #[test]
    fn reads_tool_use_with_object_input_and_echoes_thinking() {
        let body = doc_body();
        let turn = PROVIDER.read(&body).unwrap();
        assert_eq!(turn.text, "I'll check the weather.");
        assert_eq!(turn.calls[0].id, "toolu_01A09q90qw90lq917835lq9");
        assert_eq!(
            turn.calls[0].arguments(),
            &json!({"location": "San Francisco, CA", "unit": "celsius"})
        );
        assert_eq!(turn.echo, body["content"]);
        assert_eq!(turn.finish_reason.as_deref(), Some("tool_use"));
        turn.assert_kept(
            Usage::new(472, 91)
                .with_cache_read_tokens(2048)
                .with_cache_write_tokens(248),
            "msg_01Aq9w938a90dw8q",
            "claude-sonnet-4-5",
        );
    }

    #[test]
    fn error_body_is_typed() {
        let body = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert!(matches!(
            PROVIDER.read(&body),
            Err(ReadError::Provider { .. })
        ));
    }

    fn events(input_pieces: &[&str]) -> Vec<Value> {
        let mut events = vec![
            json!({"type": "message_start", "message": {"id": "msg_01Aq9w938a90dw8q", "type": "message", "role": "assistant",
                   "model": "claude-sonnet-4-5", "content": [],
                   "usage": {"input_tokens": 472, "cache_creation_input_tokens": 248,
                             "cache_read_input_tokens": 2048, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "The user wants "}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "the weather."}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "I'll check the weather."}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "ping"}),
            json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use",
                   "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {}}}),
        ];
        for piece in input_pieces {
            events.push(json!({"type": "content_block_delta", "index": 3,
                               "delta": {"type": "input_json_delta", "partial_json": piece}}));
        }
        events.extend([
            json!({"type": "content_block_stop", "index": 3}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 91}}),
            json!({"type": "message_stop"}),
        ]);
        events
    }

    #[test]
    fn stream_gives_the_same_turn() {
        let mut stream = PROVIDER.accumulator();
        let pieces = [
            "{\"location\": \"San Fra",
            "ncisco, CA\", \"unit\": \"celsius\"}",
        ];
        for event in events(&pieces) {
            stream.push(&event).unwrap();
            if stream
                .partial_calls()
                .first()
                .is_some_and(|call| !call.arguments.is_empty())
            {
                assert!(
                    stream.partial_calls()[0]
                        .arguments
                        .starts_with("{\"location\"")
                );
            }
        }
        let turn = stream.finish().unwrap();
        assert_eq!(turn, PROVIDER.read(&doc_body()).unwrap());
    }

    #[test]
    fn truncated_stream_input_is_kept_and_echoed_as_an_object() {
        let mut stream = PROVIDER.accumulator();
        for event in events(&["{\"location"]) {
            stream.push(&event).unwrap();
        }
        let turn = stream.finish().unwrap();
        assert_eq!(turn.calls[0].arguments_text(), Some("{\"location"));
        assert!(turn.calls[0].is_malformed());
        assert!(turn.call_info[0].malformed.is_some());
        assert_eq!(turn.echo[3]["input"], json!({}));
    }

    /// A tool search the server ran streams its input as a call's does;
    /// it is no call, and goes back whole in the echo.
    #[test]
    fn stream_with_a_server_tool_search_echoes_it_whole() {
        let events = [
            json!({"type": "content_block_start", "index": 0, "content_block":
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta":
                {"type": "input_json_delta", "partial_json": "{\"query\": \"wea"}}),
            json!({"type": "content_block_delta", "index": 0, "delta":
                {"type": "input_json_delta", "partial_json": "ther\"}"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block":
                {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content":
                    {"type": "tool_search_tool_search_result",
                     "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block":
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}),
            json!({"type": "content_block_delta", "index": 2, "delta":
                {"type": "input_json_delta", "partial_json": "{\"city\": \"Oslo\"}"}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ];
        let mut stream = PROVIDER.accumulator();
        for event in &events {
            stream.push(event).unwrap();
        }
        let turn = stream.finish().unwrap();
        assert_eq!(turn.calls.len(), 1);
        assert_eq!(turn.calls[0].name, "get_weather");
        assert_eq!(*turn.calls[0].arguments(), json!({"city": "Oslo"}));
        assert_eq!(turn.echo[0]["input"], json!({"query": "weather"}));
        assert_eq!(turn.echo[1]["tool_use_id"], "srvtoolu_1");
        assert_eq!(turn.echo[2]["input"], json!({"city": "Oslo"}));
    }
}
