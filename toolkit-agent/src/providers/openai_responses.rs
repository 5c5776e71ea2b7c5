//! OpenAI Responses (`/responses`).

use reqwest::RequestBuilder;
use serde_json::{Map, Value, json};
use toolkit_core::ToolCallResult;
use toolkit_core::emit::{self, EmitOptions, Emitted};

use super::openai_chat::{OPENAI, bearer, parallel_calls, put_sampling, put_tools, text_parts};
use super::trace::{message, other_part, text_part, tool_call, tool_response};
use super::{Dialect, Endpoint, TraceTool, Transcript, str_of, tools_of, user_message};
use crate::answer::AnswerSchema;
use crate::search::NativeSearch;
use crate::settings::{Settings, member};

pub(super) struct OpenAiResponses;

impl Dialect for OpenAiResponses {
    fn user_item(&self, text: String) -> Value {
        user_message(text)
    }

    fn push_echo(&self, items: &mut Vec<Value>, echo: Value, malformed: &[&str]) {
        // Every output item goes back, reasoning items included.
        let Value::Array(output) = echo else {
            return;
        };
        for mut item in output {
            let id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
            if item.get("type").and_then(Value::as_str) == Some("function_call")
                && malformed.contains(&id)
            {
                item["arguments"] = json!("{}");
            }
            items.push(item);
        }
    }

    fn emit(&self, results: &[ToolCallResult], options: &EmitOptions, _: bool) -> Emitted {
        emit::openai_responses(results, options)
    }

    fn body(&self, transcript: Transcript<'_>) -> Map<String, Value> {
        let mut body = Map::new();
        if let Some(instructions) = transcript.instructions {
            body.insert("instructions".into(), json!(instructions));
        }
        body.insert("input".into(), Value::Array(transcript.items.to_vec()));
        put_tools(&mut body, &transcript, false);
        body
    }

    fn tool_name<'v>(&self, tool: &'v Value) -> &'v str {
        str_of(tool, "name")
    }

    fn native_search(&self, kind: NativeSearch) -> Option<Value> {
        // Hosted: the server searches the deferred definitions itself, and
        // its `tool_search_call` and `tool_search_output` items travel in
        // the echo.
        match kind {
            NativeSearch::Bm25 | NativeSearch::Regex => Some(json!({"type": "tool_search"})),
            NativeSearch::Off => None,
        }
    }

    fn body_headers(&self, _body: &Value) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }

    fn settings(&self, settings: &Settings, body: &mut Map<String, Value>) {
        put_sampling(body, settings, "max_output_tokens");
        if let Some(effort) = settings.reasoning_effort {
            member(body, "reasoning", "effort", json!(effort.as_str()));
        }
        parallel_calls(settings, body);
    }

    fn unsent(&self) -> &'static [&'static str] {
        &["stop", "seed", "thinking_budget"]
    }

    fn answer(&self, answer: &AnswerSchema, body: &mut Map<String, Value>) {
        let (schema, strict) = answer.sent();
        member(
            body,
            "text",
            "format",
            json!({"type": "json_schema", "name": answer.name(), "schema": schema, "strict": strict}),
        );
    }

    fn endpoint(&self) -> Endpoint {
        OPENAI
    }

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/responses")
    }

    fn prepare(&self, body: &mut Map<String, Value>, model: &str, stream: bool) {
        body.insert("model".into(), Value::String(model.to_owned()));
        if stream {
            body.insert("stream".into(), Value::Bool(true));
        }
    }

    fn headers(&self, request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
        bearer(request, key)
    }

    fn provider_name(&self) -> &'static str {
        "openai"
    }

    fn trace_content(&self, body: &Value, messages: &mut Vec<Value>, system: &mut Vec<Value>) {
        if let Some(instructions) = body["instructions"].as_str() {
            system.push(text_part(instructions));
        }
        let items = match &body["input"] {
            Value::String(text) => {
                messages.push(message("user", vec![text_part(text)]));
                return;
            }
            Value::Array(items) => items,
            _ => return,
        };
        for item in items {
            match str_of(item, "type") {
                "function_call" => messages.push(message(
                    "assistant",
                    vec![tool_call(
                        str_of(item, "call_id"),
                        str_of(item, "name"),
                        &item["arguments"],
                    )],
                )),
                "function_call_output" => messages.push(message(
                    "tool",
                    vec![tool_response(str_of(item, "call_id"), &item["output"])],
                )),
                "message" | "" => {
                    let role = str_of(item, "role");
                    let parts = text_parts(&item["content"]);
                    if matches!(role, "system" | "developer") {
                        system.extend(parts);
                    } else {
                        messages.push(message(role, parts));
                    }
                }
                _ => messages.push(message("assistant", vec![other_part(item)])),
            }
        }
    }

    fn trace_tools<'b>(&self, body: &'b Value) -> Vec<TraceTool<'b>> {
        tools_of(body)
            .map(|tool| TraceTool::declared(tool, "parameters"))
            .collect()
    }
}
