//! OpenAI Chat Completions: `choices[0].message`, and its chunk stream.

use serde_json::{Map, Value, json};

use super::partial::{PartialCall, str_at};
use super::turn::{CallInfo, ReadError, Turn, Usage, UsageFields, provider_error};
use super::{CallKind, Provider, arguments_problem};
use crate::ToolCall;

const PROVIDER: Provider = Provider::OpenAi;

const USAGE: UsageFields = UsageFields {
    input: "prompt_tokens",
    output: "completion_tokens",
    cache_read: Some("/prompt_tokens_details/cached_tokens"),
    cache_write: None,
    reasoning: Some("/completion_tokens_details/reasoning_tokens"),
};

pub(super) fn read(body: &Value) -> Result<Turn, ReadError> {
    if let Some(error) = provider_error(PROVIDER, body) {
        return Err(error);
    }
    let choice = body
        .get("choices")
        .and_then(|choices| choices.get(0))
        .ok_or_else(|| ReadError::shape(PROVIDER, "no `choices[0]`"))?;
    let message = choice
        .get("message")
        .filter(|message| message.is_object())
        .ok_or_else(|| ReadError::shape(PROVIDER, "no `choices[0].message` object"))?;
    let mut turn = Turn::new(PROVIDER, message.clone());
    turn.text = content_text(message.get("content"));
    if let Some(calls) = message.get("tool_calls") {
        let calls = calls
            .as_array()
            .ok_or_else(|| ReadError::shape(PROVIDER, "`tool_calls` is not an array"))?;
        for call in calls {
            let (call, info) = read_call(call)?;
            turn.push_call(call, info);
        }
    }
    turn.finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    turn.usage = body
        .get("usage")
        .and_then(|usage| Usage::read(usage, &USAGE));
    turn.identify(body, "id", "model");
    Ok(turn)
}

fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

fn read_call(call: &Value) -> Result<(ToolCall, CallInfo), ReadError> {
    let id = str_at(call, "id");
    if let Some(custom) = call
        .get("custom")
        .filter(|_| str_at(call, "type") == "custom")
    {
        let input = str_at(custom, "input");
        let info = CallInfo {
            kind: CallKind::Custom,
            malformed: None,
            generated_id: false,
        };
        let call = ToolCall::new(id, str_at(custom, "name"), Value::String(input.to_owned()));
        return Ok((call, info));
    }
    let function = call
        .get("function")
        .ok_or_else(|| ReadError::shape(PROVIDER, "a tool call has no `function`"))?;
    let name = str_at(function, "name");
    // The spec says a string; some compatible servers send the object.
    let (arguments, malformed) = match function.get("arguments") {
        Some(Value::String(text)) => (Value::String(text.clone()), arguments_problem(text)),
        Some(Value::Null) | None => (Value::String(String::new()), None),
        Some(other) => (other.clone(), None),
    };
    Ok((
        ToolCall::new(id, name, arguments),
        CallInfo::function(malformed),
    ))
}

/// The chunk stream's state.
#[derive(Debug, Clone, Default)]
pub(super) struct Stream {
    pub(super) text: String,
    /// `reasoning_content`, which some servers (llama.cpp, DeepSeek)
    /// stream beside the text; kept for the echo.
    pub(super) reasoning: String,
    pub(super) calls: Vec<PartialCall>,
    /// Provider index of each call, position for position.
    indices: Vec<u64>,
    finish_reason: Option<String>,
    /// The last usage object sent (the final chunk's, with
    /// `stream_options.include_usage`), whole.
    usage: Option<Value>,
    id: Option<Value>,
    model: Option<Value>,
}

impl Stream {
    pub(super) fn push(&mut self, chunk: &Value) -> Result<(), ReadError> {
        if let Some(error) = provider_error(PROVIDER, chunk) {
            return Err(error);
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            self.usage = Some(usage.clone());
        }
        for (key, kept) in [("id", &mut self.id), ("model", &mut self.model)] {
            // Every chunk repeats them: kept once, not cloned per chunk.
            if let Some(value) = chunk.get(key).filter(|value| value.is_string())
                && kept.as_ref() != Some(value)
            {
                *kept = Some(value.clone());
            }
        }
        let Some(choice) = chunk.get("choices").and_then(|choices| choices.get(0)) else {
            return Ok(());
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        let Some(delta) = choice.get("delta") else {
            return Ok(());
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.text.push_str(text);
        }
        if let Some(reasoning) = delta.get("reasoning_content").and_then(Value::as_str) {
            self.reasoning.push_str(reasoning);
        }
        let Some(calls) = delta.get("tool_calls") else {
            return Ok(());
        };
        let calls = calls.as_array().ok_or_else(|| ReadError::Stream {
            provider: PROVIDER,
            message: "`delta.tool_calls` is not an array".into(),
        })?;
        for call in calls {
            self.push_call(call);
        }
        Ok(())
    }

    fn push_call(&mut self, call: &Value) {
        let id = str_at(call, "id");
        // Servers that omit `index` start a call by sending its id.
        let index = call
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or_else(|| match self.calls.last() {
                Some(last) if id.is_empty() || last.id == id => *self.indices.last().unwrap_or(&0),
                _ => self.indices.last().map_or(0, |last| last + 1),
            });
        let position = match self.indices.iter().position(|&known| known == index) {
            Some(position) => position,
            None => {
                self.indices.push(index);
                self.calls.push(PartialCall::new("", ""));
                self.calls.len() - 1
            }
        };
        let partial = &mut self.calls[position];
        if !id.is_empty() {
            partial.id = id.to_owned();
        }
        if str_at(call, "type") == "custom" {
            partial.kind = CallKind::Custom;
        }
        let body = call.get("function").or_else(|| call.get("custom"));
        if let Some(body) = body {
            let name = str_at(body, "name");
            if !name.is_empty() {
                partial.name = name.to_owned();
            }
            let piece = body
                .get("arguments")
                .or_else(|| body.get("input"))
                .and_then(Value::as_str)
                .unwrap_or("");
            partial.arguments.push_str(piece);
        }
    }

    pub(super) fn finish(self) -> Result<Turn, ReadError> {
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert(
            "content".into(),
            if self.text.is_empty() && !self.calls.is_empty() {
                Value::Null
            } else {
                Value::String(self.text.clone())
            },
        );
        if !self.reasoning.is_empty() {
            message.insert(
                "reasoning_content".into(),
                Value::String(self.reasoning.clone()),
            );
        }
        if !self.calls.is_empty() {
            let calls = self
                .calls
                .iter()
                .map(|call| match call.kind {
                    CallKind::Custom => json!({
                        "id": call.id, "type": "custom",
                        "custom": {"name": call.name, "input": call.arguments},
                    }),
                    _ => json!({
                        "id": call.id, "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    }),
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        let mut body = json!({
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        });
        for (key, value) in [
            ("usage", self.usage),
            ("id", self.id),
            ("model", self.model),
        ] {
            if let Some(value) = value {
                body[key] = value;
            }
        }
        read(&body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // From OpenAI's function-calling guide.
    const DOC_BODY: &str = r#"{
      "id": "chatcmpl-abc123",
      "object": "chat.completion",
      "created": 1699896916,
      "model": "gpt-4o-mini",
      "choices": [{
        "index": 0,
        "message": {
          "role": "assistant",
          "content": null,
          "tool_calls": [
            {"id": "call_abc123", "type": "function",
             "function": {"name": "get_current_weather", "arguments": "{\n\"location\": \"Boston, MA\"\n}"}},
            {"id": "call_def456", "type": "function",
             "function": {"name": "get_current_weather", "arguments": "{\"location\": \"Paris"}}
          ]
        },
        "logprobs": null,
        "finish_reason": "tool_calls"
      }],
      "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99,
                "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 12, "audio_tokens": 0}}
    }"#;

    #[test]
    fn reads_calls_in_order_and_keeps_malformed_arguments() {
        let turn = PROVIDER.read_slice(DOC_BODY.as_bytes()).unwrap();
        assert_eq!(turn.calls.len(), 2);
        assert_eq!(turn.calls[0].id, "call_abc123");
        assert_eq!(turn.calls[0].name, "get_current_weather");
        assert_eq!(
            turn.calls[0].arguments_text(),
            Some("{\n\"location\": \"Boston, MA\"\n}")
        );
        assert_eq!(turn.calls[0].arguments()["location"], "Boston, MA");
        assert!(turn.call_info[0].malformed.is_none());
        assert_eq!(
            turn.calls[1].arguments_text(),
            Some("{\"location\": \"Paris")
        );
        assert!(turn.calls[1].is_malformed());
        assert!(
            turn.call_info[1]
                .malformed
                .as_deref()
                .unwrap()
                .contains("not valid JSON")
        );
        assert_eq!(turn.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            turn.usage,
            Some(
                Usage::new(82, 17)
                    .with_cache_read_tokens(64)
                    .with_reasoning_tokens(12)
            )
        );
        assert_eq!(turn.response_id.as_deref(), Some("chatcmpl-abc123"));
        assert_eq!(turn.response_model.as_deref(), Some("gpt-4o-mini"));
        let body: Value = serde_json::from_str(DOC_BODY).unwrap();
        assert_eq!(turn.echo, body["choices"][0]["message"]);
    }

    #[test]
    fn text_answer_and_custom_call() {
        let body = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "It is sunny.",
            "tool_calls": [{"id": "call_9", "type": "custom", "custom": {"name": "code_exec", "input": "print(1)"}}]
        }}]});
        let turn = PROVIDER.read(&body).unwrap();
        assert_eq!(turn.text, "It is sunny.");
        assert_eq!(turn.call_info[0].kind, CallKind::Custom);
        assert_eq!(turn.calls[0].arguments_text(), Some("print(1)"));
    }

    #[test]
    fn errors_are_typed() {
        let error = PROVIDER
            .read(
                &json!({"error": {"message": "Invalid API key", "type": "invalid_request_error"}}),
            )
            .unwrap_err();
        assert!(matches!(error, ReadError::Provider { .. }));
        assert!(matches!(
            PROVIDER.read(&json!({"choices": []})),
            Err(ReadError::Shape { .. })
        ));
        assert!(matches!(
            PROVIDER.read_slice(b"<html>"),
            Err(ReadError::NotJson { .. })
        ));
    }

    #[test]
    fn stream_gives_the_same_turn() {
        // Chunks shaped as in OpenAI's streaming guide, one call split
        // across deltas, then a second.
        let chunks = [
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc123","type":"function","function":{"name":"get_current_weather","arguments":""}}]},"finish_reason":null}]}"#,
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\n\"location\": "}}]},"finish_reason":null}]}"#,
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Boston, MA\"\n}"}}]},"finish_reason":null}]}"#,
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_def456","type":"function","function":{"name":"get_current_weather","arguments":"{\"location\": \"Paris"}}]},"finish_reason":null}]}"#,
            r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"id":"chatcmpl-abc123","model":"gpt-4o-mini","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":82,"completion_tokens":17,"total_tokens":99,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":12}}}"#,
            "[DONE]",
        ];
        let mut stream = PROVIDER.accumulator();
        for (n, chunk) in chunks.iter().enumerate() {
            stream.push_data(chunk).unwrap();
            if n == 1 {
                assert_eq!(stream.partial_calls()[0].arguments, "{\n\"location\": ");
            }
        }
        let streamed = stream.finish().unwrap();
        let read = PROVIDER.read_slice(DOC_BODY.as_bytes()).unwrap();
        assert_eq!(streamed.calls, read.calls);
        assert_eq!(streamed.call_info, read.call_info);
        assert_eq!(streamed.usage, read.usage);
        assert_eq!(streamed.response_id, read.response_id);
        assert_eq!(streamed.response_model, read.response_model);
        assert_eq!(streamed.finish_reason, read.finish_reason);
        assert_eq!(streamed.echo["tool_calls"], read.echo["tool_calls"]);
    }
}
