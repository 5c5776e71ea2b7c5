//! Anthropic Messages (`/messages`).

use reqwest::RequestBuilder;
use serde_json::{Map, Value, json};
use toolkit_core::emit::{self, EmitOptions, Emitted};
use toolkit_core::{ToolCallResult, schema};

use super::openai_chat::text_parts;
use super::trace::{message, other_part, text_part, tool_call, tool_response};
use super::{Dialect, Endpoint, TraceTool, Transcript, is_user, str_of, tools_of, user_message};
use crate::answer::AnswerSchema;
use crate::search::NativeSearch;
use crate::settings::{ANTHROPIC_DEFAULT_MAX_TOKENS, Settings, member, put};
use crate::tool_choice::ToolChoice;

pub(super) struct Anthropic;

/// The tool search tools' types, in the version this crate targets
/// (docs/tool-search.md).
const TOOL_SEARCH_BM25: &str = "tool_search_tool_bm25_20251119";
const TOOL_SEARCH_REGEX: &str = "tool_search_tool_regex_20251119";
/// The beta that tool search belongs to, sent as `anthropic-beta`.
const ADVANCED_TOOL_USE: &str = "advanced-tool-use-2025-11-20";

impl Dialect for Anthropic {
    fn user_item(&self, text: String) -> Value {
        user_message(text)
    }

    fn push_echo(&self, items: &mut Vec<Value>, echo: Value, _malformed: &[&str]) {
        // The content blocks, thinking and its signatures included; a
        // malformed input is already `{}` in them (core's reader).
        items.push(json!({"role": "assistant", "content": echo}));
    }

    fn emit(&self, results: &[ToolCallResult], options: &EmitOptions, _: bool) -> Emitted {
        emit::anthropic(results, options)
    }

    fn body(&self, transcript: Transcript<'_>) -> Map<String, Value> {
        let mut body = Map::new();
        if let Some(instructions) = transcript.instructions {
            body.insert("system".into(), json!(instructions));
        }
        body.insert("messages".into(), Value::Array(merged(transcript.items)));
        if let Some(tools) = transcript.tools {
            body.insert("tools".into(), tools.clone());
            let choice = match transcript.tool_choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            };
            body.insert("tool_choice".into(), choice);
        }
        body
    }

    fn tool_name<'v>(&self, tool: &'v Value) -> &'v str {
        str_of(tool, "name")
    }

    fn native_search(&self, kind: NativeSearch) -> Option<Value> {
        let (kind, name) = match kind {
            NativeSearch::Bm25 => (TOOL_SEARCH_BM25, "tool_search_tool_bm25"),
            NativeSearch::Regex => (TOOL_SEARCH_REGEX, "tool_search_tool_regex"),
            NativeSearch::Off => return None,
        };
        Some(json!({"type": kind, "name": name}))
    }

    fn body_headers(&self, body: &Value) -> Vec<(&'static str, &'static str)> {
        let searches = tools_of(body)
            .any(|tool| matches!(str_of(tool, "type"), TOOL_SEARCH_BM25 | TOOL_SEARCH_REGEX));
        if searches {
            vec![("anthropic-beta", ADVANCED_TOOL_USE)]
        } else {
            Vec::new()
        }
    }

    fn settings(&self, settings: &Settings, body: &mut Map<String, Value>) {
        let max_tokens = settings
            .max_output_tokens
            .unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS);
        body.insert("max_tokens".into(), json!(max_tokens));
        put(body, "temperature", settings.temperature.map(Value::from));
        put(body, "top_p", settings.top_p.map(Value::from));
        put(body, "stop_sequences", settings.stop_sequences());
        if let Some(budget) = settings.thinking_budget {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
        if let Some(effort) = settings.reasoning_effort {
            member(body, "output_config", "effort", json!(effort.as_str()));
        }
        if settings.parallel_calls == Some(false)
            && let Some(choice) = body.get_mut("tool_choice").and_then(Value::as_object_mut)
            && choice.get("type").and_then(Value::as_str) != Some("none")
        {
            // Anthropic takes it on every choice but `none`.
            choice.insert("disable_parallel_tool_use".into(), json!(true));
        }
    }

    fn unsent(&self) -> &'static [&'static str] {
        &["seed"]
    }

    fn answer(&self, answer: &AnswerSchema, body: &mut Map<String, Value>) {
        let (schema, _) = answer.sent();
        member(
            body,
            "output_config",
            "format",
            json!({"type": "json_schema", "schema": schema::anthropic_output(schema)}),
        );
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint {
            base_url: "https://api.anthropic.com/v1",
            key_var: "ANTHROPIC_API_KEY",
        }
    }

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/messages")
    }

    fn prepare(&self, body: &mut Map<String, Value>, model: &str, stream: bool) {
        body.insert("model".into(), Value::String(model.to_owned()));
        if stream {
            body.insert("stream".into(), Value::Bool(true));
        }
    }

    fn headers(&self, mut request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        request.header("anthropic-version", "2023-06-01")
    }

    fn provider_name(&self) -> &'static str {
        "anthropic"
    }

    fn trace_content(&self, body: &Value, messages: &mut Vec<Value>, system: &mut Vec<Value>) {
        system.extend(text_parts(&body["system"]));
        for item in body["messages"].as_array().into_iter().flatten() {
            let parts = match &item["content"] {
                Value::Array(blocks) => blocks
                    .iter()
                    .map(|block| match str_of(block, "type") {
                        "text" => text_part(str_of(block, "text")),
                        "tool_use" => {
                            tool_call(str_of(block, "id"), str_of(block, "name"), &block["input"])
                        }
                        "tool_result" => {
                            tool_response(str_of(block, "tool_use_id"), &block["content"])
                        }
                        _ => other_part(block),
                    })
                    .collect(),
                other => text_parts(other),
            };
            messages.push(message(str_of(item, "role"), parts));
        }
    }

    fn trace_tools<'b>(&self, body: &'b Value) -> Vec<TraceTool<'b>> {
        tools_of(body)
            .map(|tool| TraceTool::declared(tool, "input_schema"))
            .collect()
    }
}

/// The items as sent: consecutive user messages as one (the API would
/// combine them; this is the documented form: tool results first, then
/// text).
fn merged(items: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(items.len());
    for item in items {
        match out.last_mut() {
            Some(last) if is_user(last) && is_user(item) => {
                let more = match &item["content"] {
                    Value::String(text) => vec![json!({"type": "text", "text": text})],
                    Value::Array(blocks) => blocks.clone(),
                    _ => Vec::new(),
                };
                append_blocks(&mut last["content"], more);
            }
            _ => out.push(item.clone()),
        }
    }
    out
}

/// Appends blocks to a message's content (a string becomes one text block
/// first).
fn append_blocks(content: &mut Value, more: Vec<Value>) {
    let mut blocks = match content.take() {
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        Value::Array(blocks) => blocks,
        _ => Vec::new(),
    };
    blocks.extend(more);
    *content = Value::Array(blocks);
}
