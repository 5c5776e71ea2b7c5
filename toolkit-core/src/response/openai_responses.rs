//! OpenAI Responses: `output[]` items, and the event stream.

use serde_json::{Value, json};

use super::partial::{PartialCall, str_at};
use super::turn::{CallInfo, ReadError, Turn, Usage, UsageFields, provider_error};
use super::{CallKind, Provider, arguments_problem};
use crate::ToolCall;

const PROVIDER: Provider = Provider::OpenAiResponses;

const USAGE: UsageFields = UsageFields {
    input: "input_tokens",
    output: "output_tokens",
    cache_read: Some("/input_tokens_details/cached_tokens"),
    cache_write: None,
    reasoning: Some("/output_tokens_details/reasoning_tokens"),
};

pub(super) fn read(body: &Value) -> Result<Turn, ReadError> {
    if let Some(error) = provider_error(PROVIDER, body) {
        return Err(error);
    }
    let output = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| ReadError::shape(PROVIDER, "no `output` array"))?;
    let mut turn = Turn::new(PROVIDER, Value::Array(output.clone()));
    for item in output {
        match str_at(item, "type") {
            "message" => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if str_at(part, "type") == "output_text" {
                        turn.text.push_str(str_at(part, "text"));
                    }
                }
            }
            "function_call" => {
                let arguments = str_at(item, "arguments");
                turn.push_call(
                    ToolCall::new(
                        call_id(item),
                        str_at(item, "name"),
                        Value::String(arguments.to_owned()),
                    ),
                    CallInfo::function(arguments_problem(arguments)),
                );
            }
            "custom_tool_call" => {
                turn.push_call(
                    ToolCall::new(
                        call_id(item),
                        str_at(item, "name"),
                        Value::String(str_at(item, "input").to_owned()),
                    ),
                    CallInfo {
                        kind: CallKind::Custom,
                        malformed: None,
                        generated_id: false,
                    },
                );
            }
            // Reasoning and built-in tool items only travel in the echo.
            _ => {}
        }
    }
    turn.finish_reason = body
        .get("incomplete_details")
        .and_then(|details| details.get("reason"))
        .and_then(Value::as_str)
        .or_else(|| body.get("status").and_then(Value::as_str))
        .map(|reason| match reason {
            // One word for "cut off at the output limit" across providers.
            "max_output_tokens" => "max_tokens".to_owned(),
            other => other.to_owned(),
        });
    turn.usage = body
        .get("usage")
        .and_then(|usage| Usage::read(usage, &USAGE));
    turn.identify(body, "id", "model");
    Ok(turn)
}

/// The id results answer: `call_id`, not the item's `id`.
fn call_id(item: &Value) -> &str {
    match str_at(item, "call_id") {
        "" => str_at(item, "id"),
        id => id,
    }
}

/// The event stream's state.
#[derive(Debug, Clone, Default)]
pub(super) struct Stream {
    pub(super) text: String,
    /// Reasoning text and reasoning summaries, as streamed; the reasoning
    /// items themselves come whole in `response.output_item.done`.
    pub(super) reasoning: String,
    pub(super) calls: Vec<PartialCall>,
    /// `output_index` of each call, position for position.
    call_indices: Vec<u64>,
    /// Finished output items by `output_index`.
    items: Vec<(u64, Value)>,
    /// The final response, once `response.completed` (or `.incomplete`)
    /// has carried it.
    response: Option<Value>,
    /// The response as the last event that carried one had it
    /// (`response.created`, `.in_progress`), for its id and model when no
    /// final response comes.
    latest: Option<Value>,
}

impl Stream {
    pub(super) fn push(&mut self, event: &Value) -> Result<(), ReadError> {
        let index = event.get("output_index").and_then(Value::as_u64);
        if let Some(response) = event.get("response").filter(|r| r.is_object()) {
            self.latest = Some(response.clone());
        }
        match str_at(event, "type") {
            "error" => {
                return Err(ReadError::Provider {
                    provider: PROVIDER,
                    error: event.clone(),
                });
            }
            "response.failed" => {
                let error = event
                    .get("response")
                    .and_then(|response| response.get("error"))
                    .unwrap_or(event);
                return Err(ReadError::Provider {
                    provider: PROVIDER,
                    error: error.clone(),
                });
            }
            "response.completed" | "response.incomplete" => {
                self.response = event.get("response").cloned();
            }
            "response.output_text.delta" => self.text.push_str(str_at(event, "delta")),
            "response.reasoning_text.delta" | "response.reasoning_summary_text.delta" => {
                self.reasoning.push_str(str_at(event, "delta"))
            }
            "response.output_item.added" => {
                let item = event.get("item").unwrap_or(&Value::Null);
                let kind = match str_at(item, "type") {
                    "function_call" => CallKind::Function,
                    "custom_tool_call" => CallKind::Custom,
                    _ => return Ok(()),
                };
                let mut call = PartialCall::new(call_id(item), str_at(item, "name"));
                call.kind = kind;
                call.arguments = item
                    .get("arguments")
                    .or_else(|| item.get("input"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                self.call_indices
                    .push(index.unwrap_or(self.call_indices.len() as u64));
                self.calls.push(call);
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                let call = self.call_at(index)?;
                call.arguments.push_str(str_at(event, "delta"));
            }
            "response.function_call_arguments.done" | "response.custom_tool_call_input.done" => {
                let whole = event
                    .get("arguments")
                    .or_else(|| event.get("input"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                let call = self.call_at(index)?;
                // The whole text normally repeats the deltas: only what it
                // adds is appended, so that the arguments only ever grow
                // (what the accumulator's deltas rely on).
                match whole {
                    Some(whole) if whole.starts_with(call.arguments.as_str()) => {
                        call.arguments.push_str(&whole[call.arguments.len()..]);
                    }
                    Some(whole) => call.arguments = whole,
                    None => {}
                }
                call.complete = true;
            }
            "response.output_item.done" => {
                if let Some(item) = event.get("item") {
                    let index = index.unwrap_or(self.items.len() as u64);
                    if let Ok(call) = self.call_at(Some(index)) {
                        call.complete = true;
                    }
                    self.items.push((index, item.clone()));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn call_at(&mut self, index: Option<u64>) -> Result<&mut PartialCall, ReadError> {
        let position = match index {
            Some(index) => self.call_indices.iter().position(|&known| known == index),
            None => self.calls.len().checked_sub(1),
        };
        match position {
            Some(position) => Ok(&mut self.calls[position]),
            None => Err(ReadError::Stream {
                provider: PROVIDER,
                message: format!("arguments for output item {index:?}, which is not a call"),
            }),
        }
    }

    pub(super) fn finish(mut self) -> Result<Turn, ReadError> {
        if let Some(response) = &self.response
            && response.get("output").is_some_and(Value::is_array)
        {
            return read(response);
        }
        // No final response: rebuild the output from the finished items,
        // and from what arrived of calls whose items never finished.
        for (position, call) in self.calls.iter().enumerate() {
            let index = self.call_indices[position];
            if self.items.iter().any(|(known, _)| *known == index) {
                continue;
            }
            let item = match call.kind {
                CallKind::Custom => json!({
                    "type": "custom_tool_call", "call_id": call.id,
                    "name": call.name, "input": call.arguments,
                }),
                _ => json!({
                    "type": "function_call", "call_id": call.id,
                    "name": call.name, "arguments": call.arguments,
                }),
            };
            self.items.push((index, item));
        }
        self.items.sort_by_key(|(index, _)| *index);
        let output: Vec<Value> = self.items.into_iter().map(|(_, item)| item).collect();
        let mut turn = read(&json!({ "output": output }))?;
        if let Some(latest) = &self.latest {
            turn.identify(latest, "id", "model");
        }
        if turn.text.is_empty() {
            turn.text = self.text;
        }
        Ok(turn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shaped as in OpenAI's Responses reference: a reasoning item, a
    // function call, a custom tool call.
    fn doc_body() -> Value {
        json!({
          "id": "resp_67ccd2bed1ec8190b14f964abc054267",
          "object": "response",
          "status": "completed",
          "output": [
            {"type": "reasoning", "id": "rs_6890", "summary": [], "encrypted_content": "gAAAAABo..."},
            {"type": "function_call", "id": "fc_12345xyz", "call_id": "call_12345xyz",
             "name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}", "status": "completed"},
            {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_777",
             "name": "code_exec", "input": "print(\"hello world\")"}
          ],
          "model": "gpt-5-mini-2025-08-07",
          "usage": {"input_tokens": 36, "input_tokens_details": {"cached_tokens": 16},
                    "output_tokens": 87, "output_tokens_details": {"reasoning_tokens": 64},
                    "total_tokens": 123}
        })
    }

    #[test]
    fn reads_function_and_custom_calls_by_call_id() {
        let body = doc_body();
        let turn = PROVIDER.read(&body).unwrap();
        assert_eq!(turn.calls.len(), 2);
        assert_eq!(turn.calls[0].id, "call_12345xyz");
        assert_eq!(turn.calls[0].arguments()["location"], "Paris, France");
        assert_eq!(
            turn.calls[0].arguments_text(),
            Some("{\"location\":\"Paris, France\"}")
        );
        assert_eq!(turn.calls[1].id, "call_777");
        assert_eq!(turn.call_info[1].kind, CallKind::Custom);
        // Reasoning items come back with the calls, in order.
        assert_eq!(turn.echo, body["output"]);
        assert_eq!(
            turn.usage,
            Some(
                Usage::new(36, 87)
                    .with_cache_read_tokens(16)
                    .with_reasoning_tokens(64)
            )
        );
        assert_eq!(
            turn.response_id.as_deref(),
            Some("resp_67ccd2bed1ec8190b14f964abc054267")
        );
        assert_eq!(
            turn.response_model.as_deref(),
            Some("gpt-5-mini-2025-08-07")
        );
        assert_eq!(turn.finish_reason.as_deref(), Some("completed"));
    }

    #[test]
    fn incomplete_response_is_truncated() {
        let body = json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"a"}]});
        let turn = PROVIDER.read(&body).unwrap();
        assert!(turn.truncated());
        assert!(turn.has_malformed_calls());
    }

    #[test]
    fn stream_without_final_response_gives_the_same_calls() {
        let events = [
            json!({"type": "response.created", "response": {"id": "resp_67ccd2bed1ec8190b14f964abc054267",
                   "model": "gpt-5-mini-2025-08-07", "status": "in_progress", "output": []}}),
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "reasoning", "id": "rs_6890", "summary": []}}),
            json!({"type": "response.output_item.done", "output_index": 0,
                   "item": {"type": "reasoning", "id": "rs_6890", "summary": [], "encrypted_content": "gAAAAABo..."}}),
            json!({"type": "response.output_item.added", "output_index": 1,
                   "item": {"type": "function_call", "id": "fc_12345xyz", "call_id": "call_12345xyz",
                            "name": "get_weather", "arguments": ""}}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": "fc_12345xyz", "delta": "{\"location\":"}),
            json!({"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": "fc_12345xyz", "delta": "\"Paris, France\"}"}),
            json!({"type": "response.function_call_arguments.done", "output_index": 1, "item_id": "fc_12345xyz",
                   "arguments": "{\"location\":\"Paris, France\"}"}),
            json!({"type": "response.output_item.added", "output_index": 2,
                   "item": {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_777", "name": "code_exec", "input": ""}}),
            json!({"type": "response.custom_tool_call_input.delta", "output_index": 2, "delta": "print(\"hello world\")"}),
        ];
        let mut stream = PROVIDER.accumulator();
        for (n, event) in events.iter().enumerate() {
            stream.push(event).unwrap();
            if n == 4 {
                assert_eq!(stream.partial_calls()[0].arguments, "{\"location\":");
            }
        }
        let turn = stream.finish().unwrap();
        let read = PROVIDER.read(&doc_body()).unwrap();
        assert_eq!(turn.calls, read.calls);
        assert_eq!(turn.echo[0]["encrypted_content"], "gAAAAABo...");
        assert_eq!(turn.response_id, read.response_id);
        assert_eq!(turn.response_model, read.response_model);
    }

    #[test]
    fn stream_prefers_the_completed_response() {
        let mut stream = PROVIDER.accumulator();
        stream
            .push(&json!({"type": "response.completed", "response": doc_body()}))
            .unwrap();
        assert_eq!(
            stream.finish().unwrap(),
            PROVIDER.read(&doc_body()).unwrap()
        );
        let mut failing = PROVIDER.accumulator();
        let error = failing
            .push(&json!({"type": "response.failed", "response": {"error": {"code": "server_error"}}}))
            .unwrap_err();
        assert!(matches!(error, ReadError::Provider { .. }));
    }
}
