//! Gemini (`/models/{model}:generateContent`, streamed
//! `:streamGenerateContent?alt=sse`).

use reqwest::RequestBuilder;
use serde_json::{Map, Value, json};
use toolkit_core::ToolCallResult;
use toolkit_core::emit::{self, EmitOptions, Emitted};

use super::trace::{message, text_part, tool_call, tool_response};
use super::{Dialect, Endpoint, TraceTool, Transcript, str_of, tools_of};
use crate::answer::AnswerSchema;
use crate::search::NativeSearch;
use crate::settings::{Settings, member};
use crate::tool_choice::ToolChoice;

pub(super) struct Gemini;

impl Dialect for Gemini {
    fn user_item(&self, text: String) -> Value {
        json!({"role": "user", "parts": [{"text": text}]})
    }

    fn push_echo(&self, items: &mut Vec<Value>, echo: Value, _malformed: &[&str]) {
        // The model's content, every `thoughtSignature` included; Gemini's
        // arguments are always an object.
        items.push(echo);
    }

    fn emit(
        &self,
        results: &[ToolCallResult],
        options: &EmitOptions,
        provider_ids: bool,
    ) -> Emitted {
        // An id the API never sent is not sent back: Gemini matches
        // responses to calls by position and name instead.
        let options = options
            .clone()
            .with_gemini_call_ids(options.gemini_call_ids() && provider_ids);
        emit::gemini(results, &options)
    }

    fn body(&self, transcript: Transcript<'_>) -> Map<String, Value> {
        let mut body = Map::new();
        if let Some(instructions) = transcript.instructions {
            body.insert(
                "systemInstruction".into(),
                json!({"parts": [{"text": instructions}]}),
            );
        }
        body.insert("contents".into(), Value::Array(transcript.items.to_vec()));
        if let Some(tools) = transcript.tools {
            body.insert("tools".into(), json!([{"functionDeclarations": tools}]));
            let config = match transcript.tool_choice {
                ToolChoice::Auto => json!({"mode": "AUTO"}),
                ToolChoice::None => json!({"mode": "NONE"}),
                ToolChoice::Required => json!({"mode": "ANY"}),
                ToolChoice::Tool(name) => {
                    json!({"mode": "ANY", "allowedFunctionNames": [name]})
                }
            };
            body.insert(
                "toolConfig".into(),
                json!({"functionCallingConfig": config}),
            );
        }
        body
    }

    fn tool_name<'v>(&self, tool: &'v Value) -> &'v str {
        str_of(tool, "name")
    }

    fn native_search(&self, _kind: NativeSearch) -> Option<Value> {
        None
    }

    fn body_headers(&self, _body: &Value) -> Vec<(&'static str, &'static str)> {
        Vec::new()
    }

    fn settings(&self, settings: &Settings, body: &mut Map<String, Value>) {
        let config = [
            ("temperature", settings.temperature.map(Value::from)),
            ("topP", settings.top_p.map(Value::from)),
            (
                "maxOutputTokens",
                settings.max_output_tokens.map(Value::from),
            ),
            ("stopSequences", settings.stop_sequences()),
            ("seed", settings.seed.map(Value::from)),
        ];
        for (key, value) in config {
            if let Some(value) = value {
                member(body, "generationConfig", key, value);
            }
        }
        // The API refuses a level and a budget together.
        let thinking = match (settings.thinking_budget, settings.reasoning_effort) {
            (Some(budget), _) => Some(json!({"thinkingBudget": budget})),
            (None, Some(effort)) => Some(json!({"thinkingLevel": effort.as_str()})),
            (None, None) => None,
        };
        if let Some(thinking) = thinking {
            member(body, "generationConfig", "thinkingConfig", thinking);
        }
    }

    fn unsent(&self) -> &'static [&'static str] {
        &["parallel_calls"]
    }

    fn answer(&self, answer: &AnswerSchema, body: &mut Map<String, Value>) {
        member(
            body,
            "generationConfig",
            "responseMimeType",
            json!("application/json"),
        );
        member(
            body,
            "generationConfig",
            "responseJsonSchema",
            answer.gemini_schema().clone(),
        );
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint {
            base_url: "https://generativelanguage.googleapis.com/v1beta",
            key_var: "GEMINI_API_KEY",
        }
    }

    fn url(&self, base: &str, model: &str, stream: bool) -> String {
        if stream {
            format!("{base}/models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("{base}/models/{model}:generateContent")
        }
    }

    fn prepare(&self, _body: &mut Map<String, Value>, _model: &str, _stream: bool) {
        // The model and the stream are in the URL.
    }

    fn headers(&self, request: RequestBuilder, key: Option<&str>) -> RequestBuilder {
        match key {
            Some(key) => request.header("x-goog-api-key", key),
            None => request,
        }
    }

    fn provider_name(&self) -> &'static str {
        "gcp.gemini"
    }

    fn operation(&self) -> &'static str {
        "generate_content"
    }

    fn settings_of<'b>(&self, body: &'b Value) -> Option<&'b Value> {
        body.get("generationConfig")
    }

    fn trace_content(&self, body: &Value, messages: &mut Vec<Value>, system: &mut Vec<Value>) {
        let instructions = &body["systemInstruction"]["parts"];
        for part in instructions.as_array().into_iter().flatten() {
            if let Some(text) = part["text"].as_str() {
                system.push(text_part(text));
            }
        }
        for item in body["contents"].as_array().into_iter().flatten() {
            let role = match str_of(item, "role") {
                "model" => "assistant",
                other => other,
            };
            let parts = item["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|part| {
                    if let Some(text) = part["text"].as_str() {
                        text_part(text)
                    } else if let Some(call) = part.get("functionCall") {
                        tool_call(str_of(call, "id"), str_of(call, "name"), &call["args"])
                    } else if let Some(response) = part.get("functionResponse") {
                        tool_response(str_of(response, "id"), &response["response"])
                    } else {
                        json!({"type": "unknown"})
                    }
                })
                .collect();
            messages.push(message(role, parts));
        }
    }

    fn trace_tools<'b>(&self, body: &'b Value) -> Vec<TraceTool<'b>> {
        tools_of(body)
            .flat_map(|tool| {
                tool["functionDeclarations"]
                    .as_array()
                    .into_iter()
                    .flatten()
            })
            .map(|function| TraceTool {
                // The JSON Schema form when the tool was sent in it.
                parameters: function
                    .get("parametersJsonSchema")
                    .or_else(|| function.get("parameters")),
                ..TraceTool::declared(function, "parameters")
            })
            .collect()
    }
}
