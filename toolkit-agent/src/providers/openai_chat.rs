//! OpenAI Chat Completions (`/chat/completions`), and every compatible
//! server (llama.cpp, vLLM, Ollama).

use reqwest::RequestBuilder;
use serde_json::{Map, Value, json};
use toolkit_core::ToolCallResult;
use toolkit_core::emit::{self, EmitOptions, Emitted};

use super::trace::{message, tool_call, tool_response};
use super::{Dialect, Endpoint, TraceTool, Transcript, str_of, tools_of, user_message};
use crate::answer::AnswerSchema;
use crate::search::NativeSearch;
use crate::settings::{Settings, put};
use crate::tool_choice::ToolChoice;

pub(super) struct OpenAiChat;

impl Dialect for OpenAiChat {
    fn user_item(&self, text: String) -> Value {
        user_message(text)
    }

    fn push_echo(&self, items: &mut Vec<Value>, mut echo: Value, malformed: &[&str]) {
        if let Some(calls) = echo.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for call in calls {
                let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                if malformed.contains(&id) {
                    call["function"]["arguments"] = json!("{}");
                }
            }
        }
        items.push(echo);
    }

    fn emit(&self, results: &[ToolCallResult], options: &EmitOptions, _: bool) -> Emitted {
        emit::openai_chat(results, options)
    }

    fn body(&self, transcript: Transcript<'_>) -> Map<String, Value> {
        let mut body = Map::new();
        let mut messages = Vec::with_capacity(transcript.items.len() + 1);
        if let Some(instructions) = transcript.instructions {
            messages.push(json!({"role": "system", "content": instructions}));
        }
        messages.extend(transcript.items.iter().cloned());
        body.insert("messages".into(), Value::Array(messages));
        put_tools(&mut body, &transcript, true);
        body
    }

    fn tool_name<'v>(&self, tool: &'v Value) -> &'v str {
        tool.get("function")
            .map_or("", |function| str_of(function, "name"))
    }

    fn native_search(&self, _kind: NativeSearch) -> Option<Value> {
        None
    }

    fn body_headers(&self, _body: &Value) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }

    fn settings(&self, settings: &Settings, body: &mut Map<String, Value>) {
        put_sampling(body, settings, "max_completion_tokens");
        put(body, "stop", settings.stop_sequences());
        put(body, "seed", settings.seed.map(Value::from));
        put(
            body,
            "reasoning_effort",
            settings
                .reasoning_effort
                .map(|effort| json!(effort.as_str())),
        );
        parallel_calls(settings, body);
    }

    fn unsent(&self) -> &'static [&'static str] {
        &["thinking_budget"]
    }

    fn answer(&self, answer: &AnswerSchema, body: &mut Map<String, Value>) {
        let (schema, strict) = answer.sent();
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": answer.name(), "schema": schema, "strict": strict}}),
        );
    }

    fn endpoint(&self) -> Endpoint {
        OPENAI
    }

    fn url(&self, base: &str, _model: &str, _stream: bool) -> String {
        format!("{base}/chat/completions")
    }

    fn prepare(&self, body: &mut Map<String, Value>, model: &str, stream: bool) {
        body.insert("model".into(), Value::String(model.to_owned()));
        if stream {
            body.insert("stream".into(), Value::Bool(true));
            // Without it the stream carries no token counts.
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
    }

    fn headers(&self, request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
        bearer(request, key)
    }

    fn provider_name(&self) -> &'static str {
        "openai"
    }

    fn trace_content(&self, body: &Value, messages: &mut Vec<Value>, system: &mut Vec<Value>) {
        for item in body["messages"].as_array().into_iter().flatten() {
            let role = str_of(item, "role");
            match role {
                "system" | "developer" => system.extend(text_parts(&item["content"])),
                "tool" => messages.push(message(
                    "tool",
                    vec![tool_response(
                        str_of(item, "tool_call_id"),
                        &item["content"],
                    )],
                )),
                _ => {
                    let mut parts = text_parts(&item["content"]);
                    for call in item["tool_calls"].as_array().into_iter().flatten() {
                        let function = &call["function"];
                        parts.push(tool_call(
                            str_of(call, "id"),
                            str_of(function, "name"),
                            &function["arguments"],
                        ));
                    }
                    messages.push(message(role, parts));
                }
            }
        }
    }

    fn trace_tools<'b>(&self, body: &'b Value) -> Vec<TraceTool<'b>> {
        tools_of(body)
            .map(|tool| TraceTool::declared(&tool["function"], "parameters"))
            .collect()
    }
}

/// OpenAI's endpoint and key, which Responses shares.
pub(super) const OPENAI: Endpoint = Endpoint {
    base_url: "https://api.openai.com/v1",
    key_var: "OPENAI_API_KEY",
};

/// The key as a bearer token, as OpenAI takes it.
pub(super) fn bearer(request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
    match key {
        Some(key) => request.bearer_auth(key),
        None => request,
    }
}

/// A tool choice in OpenAI's form: Chat names a function inside
/// `function`, Responses beside `type`.
/// The tools and the tool choice, when the request has tools: the same
/// fields in OpenAI's two APIs, the choice nested one level less in
/// Responses.
pub(super) fn put_tools(body: &mut Map<String, Value>, transcript: &Transcript<'_>, chat: bool) {
    if let Some(tools) = transcript.tools {
        body.insert("tools".into(), tools.clone());
        body.insert("tool_choice".into(), choice(transcript.tool_choice, chat));
    }
}

/// The sampling settings OpenAI's two APIs share, the output limit under
/// the API's own name.
pub(super) fn put_sampling(body: &mut Map<String, Value>, settings: &Settings, max_tokens: &str) {
    put(body, "temperature", settings.temperature.map(Value::from));
    put(body, "top_p", settings.top_p.map(Value::from));
    put(
        body,
        max_tokens,
        settings.max_output_tokens.map(Value::from),
    );
}

fn choice(tool_choice: &ToolChoice, chat: bool) -> Value {
    match tool_choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) if chat => {
            json!({"type": "function", "function": {"name": name}})
        }
        ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
    }
}

/// `parallel_tool_calls`, sent with tools only: OpenAI refuses it
/// without them.
pub(super) fn parallel_calls(settings: &Settings, body: &mut Map<String, Value>) {
    if let Some(parallel) = settings.parallel_calls
        && body.contains_key("tools")
    {
        body.insert("parallel_tool_calls".into(), json!(parallel));
    }
}

/// Text or blocks with `text` (Chat, Responses, Anthropic), as the
/// conventions' parts.
pub(super) fn text_parts(value: &Value) -> Vec<Value> {
    use super::trace::{other_part, text_part};
    match value {
        Value::String(text) => vec![text_part(text)],
        Value::Array(blocks) => blocks
            .iter()
            .map(|block| match block.get("text").and_then(Value::as_str) {
                Some(text) => text_part(text),
                None => other_part(block),
            })
            .collect(),
        _ => Vec::new(),
    }
}
