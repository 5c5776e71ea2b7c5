//! Judge for a whole Gemini `generateContent` request body (REST,
//! camelCase).
//!
//! Sources:
//! - <https://ai.google.dev/api/generate-content#request-body> (`contents`
//!   required; `tools`, `toolConfig`, `systemInstruction`,
//!   `generationConfig`, `safetySettings`, `cachedContent`);
//! - <https://ai.google.dev/api/generate-content#generationconfig>
//!   (`generationConfig`: sampling, `maxOutputTokens`, `stopSequences` (at
//!   most 5), `seed`, `responseMimeType`, `responseSchema` or
//!   `responseJsonSchema` (exclusive; the latter with
//!   `responseMimeType: application/json`), `thinkingConfig`);
//! - <https://ai.google.dev/gemini-api/docs/thinking> (`thinkingBudget` or
//!   `thinkingLevel`, not both);
//! - <https://ai.google.dev/api/caching#Tool> and `#FunctionDeclaration`
//!   (`functionDeclarations`: `name`, `description`, `parameters` or
//!   `parametersJsonSchema`, `response` or `responseJsonSchema`,
//!   `behavior`); names start with a letter or `_` and hold letters,
//!   digits, `_`, `.`, `:` and `-`, at most 64;
//! - <https://ai.google.dev/api/caching#FunctionCallingConfig> (`mode`
//!   `AUTO`, `ANY`, `NONE`, `VALIDATED`; `allowedFunctionNames` only with
//!   `ANY` or `VALIDATED`);
//! - <https://ai.google.dev/gemini-api/docs/function-calling> (the model
//!   turn with calls is followed by a user turn holding one
//!   `functionResponse` per call; ids echoed);
//! - API errors quoted in public issues: "Please ensure that function call
//!   turn comes immediately after a user turn or after a function response
//!   turn", "Please ensure that the number of function response parts is
//!   equal to the number of function call parts of the function call turn".
//!
//! Each content is judged by [`super::gemini::check_content`], and
//! `parameters` schemas by [`super::gemini_schema::problems`].

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::Value;

use super::gemini::{Content, PartData, Role, check_content};
use super::gemini_schema;

/// The request body.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GenerateContentRequest {
    /// The conversation; judged one by one, then as a sequence.
    pub contents: Vec<Value>,
    /// The tools the model may use.
    pub tools: Option<Vec<Tool>>,
    /// How the model may use them.
    pub tool_config: Option<ToolConfig>,
    /// The system instruction: a content of text parts.
    pub system_instruction: Option<Value>,
    /// Sampling and output settings.
    pub generation_config: Option<GenerationConfig>,
    /// Safety thresholds.
    pub safety_settings: Option<Vec<Value>>,
    /// A cached context's name.
    pub cached_content: Option<String>,
}

/// `generationConfig`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GenerationConfig {
    /// Text at which generation stops; at most 5.
    pub stop_sequences: Option<Vec<String>>,
    /// The answer's media type (`text/plain`, `application/json`, `text/x.enum`).
    pub response_mime_type: Option<String>,
    /// The answer's schema, in the OpenAPI subset.
    pub response_schema: Option<Value>,
    /// The answer's schema, in JSON Schema (exclusive with `responseSchema`).
    pub response_json_schema: Option<Value>,
    /// Output modalities.
    pub response_modalities: Option<Vec<String>>,
    /// How many candidates.
    pub candidate_count: Option<u32>,
    /// The most tokens a candidate may hold.
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature, 0 to 2.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Top-k sampling.
    pub top_k: Option<u32>,
    /// A seed for decoding.
    pub seed: Option<i64>,
    /// Presence penalty.
    pub presence_penalty: Option<f64>,
    /// Frequency penalty.
    pub frequency_penalty: Option<f64>,
    /// Whether to return log probabilities.
    pub response_logprobs: Option<bool>,
    /// How many top log probabilities.
    pub logprobs: Option<u32>,
    /// Speech output.
    pub speech_config: Option<Value>,
    /// Thinking.
    pub thinking_config: Option<ThinkingConfig>,
    /// Media resolution.
    pub media_resolution: Option<String>,
}

/// `generationConfig.thinkingConfig`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThinkingConfig {
    /// Whether thought summaries come back.
    pub include_thoughts: Option<bool>,
    /// Tokens for thinking (`-1` dynamic, `0` off).
    pub thinking_budget: Option<i64>,
    /// Gemini 3's level.
    pub thinking_level: Option<ThinkingLevel>,
}

/// `thinkingConfig.thinkingLevel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// Least thinking (some models).
    Minimal,
    /// Low.
    Low,
    /// Medium (some models).
    Medium,
    /// High, the default.
    High,
}

/// One entry of `tools`. Only function declarations are modelled; the
/// built-in tools (search, code execution, ...) are rejected as unknown.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Tool {
    /// The functions.
    pub function_declarations: Vec<FunctionDeclaration>,
}

/// One function the model may call.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FunctionDeclaration {
    /// The function's name.
    pub name: String,
    /// What it does.
    pub description: Option<String>,
    /// Its parameters, in the OpenAPI subset.
    pub parameters: Option<Value>,
    /// Its parameters, in JSON Schema (exclusive with `parameters`).
    pub parameters_json_schema: Option<Value>,
    /// Its output, in the OpenAPI subset.
    pub response: Option<Value>,
    /// Its output, in JSON Schema (exclusive with `response`).
    pub response_json_schema: Option<Value>,
    /// `BLOCKING` or `NON_BLOCKING`.
    pub behavior: Option<String>,
}

/// `toolConfig`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolConfig {
    /// How functions may be called.
    pub function_calling_config: Option<FunctionCallingConfig>,
}

/// `toolConfig.functionCallingConfig`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FunctionCallingConfig {
    /// The mode.
    pub mode: Option<Mode>,
    /// The functions the model may call, with `ANY` or `VALIDATED`.
    pub allowed_function_names: Option<Vec<String>>,
}

/// The function-calling modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Mode {
    /// The model decides.
    Auto,
    /// The model must call a function.
    Any,
    /// No calls.
    None,
    /// Calls or text, calls checked against their schemas.
    Validated,
}

/// Checks a whole request body: its fields against the documented shape,
/// each content with [`check_content`], and the rules across contents:
///
/// - `contents` is not empty; function names are valid and unique; each
///   declaration has at most one of `parameters`/`parametersJsonSchema`
///   and of `response`/`responseJsonSchema`; `parameters` passes the
///   OpenAPI-subset judge;
/// - `allowedFunctionNames` comes only with `ANY` or `VALIDATED`, and
///   names declared functions;
/// - the system instruction holds text parts only;
/// - a model turn with calls comes right after a user turn, and is
///   followed by a user turn with exactly as many function responses,
///   the same names in the same order, and the same ids where the calls
///   had them.
pub fn check_request(value: &Value) -> Result<GenerateContentRequest, String> {
    let request = GenerateContentRequest::deserialize(value)
        .map_err(|e| format!("not a generateContent request: {e}"))?;
    let names = check_tools(request.tools.as_deref().unwrap_or_default())?;
    if let Some(config) = &request.generation_config {
        check_generation_config(config)?;
    }
    if let Some(config) = request
        .tool_config
        .as_ref()
        .and_then(|config| config.function_calling_config.as_ref())
        && let Some(allowed) = &config.allowed_function_names
    {
        if !matches!(config.mode, Some(Mode::Any | Mode::Validated)) {
            return Err(
                "toolConfig.functionCallingConfig.allowedFunctionNames: only with mode ANY or VALIDATED"
                    .into(),
            );
        }
        if let Some(name) = allowed.iter().find(|name| !names.contains(name.as_str())) {
            return Err(format!(
                "toolConfig.functionCallingConfig.allowedFunctionNames: no function named {name:?}"
            ));
        }
    }
    if let Some(system) = &request.system_instruction {
        check_system(system)?;
    }
    let contents = request
        .contents
        .iter()
        .enumerate()
        .map(|(i, content)| check_content(content).map_err(|e| format!("contents[{i}]: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    check_sequence(&contents)?;
    Ok(request)
}

fn check_generation_config(config: &GenerationConfig) -> Result<(), String> {
    if config
        .stop_sequences
        .as_ref()
        .is_some_and(|stop| stop.len() > 5)
    {
        return Err("generationConfig.stopSequences: at most 5".into());
    }
    if config.response_schema.is_some() && config.response_json_schema.is_some() {
        return Err("generationConfig: responseSchema and responseJsonSchema are exclusive".into());
    }
    if let Some(schema) = &config.response_json_schema {
        if config.response_mime_type.as_deref() != Some("application/json") {
            return Err(
                "generationConfig.responseJsonSchema: needs responseMimeType application/json"
                    .into(),
            );
        }
        if !schema.is_object() && !schema.is_boolean() {
            return Err("generationConfig.responseJsonSchema: not a JSON Schema".into());
        }
    }
    if let Some(thinking) = &config.thinking_config
        && thinking.thinking_budget.is_some()
        && thinking.thinking_level.is_some()
    {
        return Err(
            "generationConfig.thinkingConfig: thinkingBudget and thinkingLevel are exclusive"
                .into(),
        );
    }
    Ok(())
}

fn check_tools(tools: &[Tool]) -> Result<HashSet<&str>, String> {
    let mut names = HashSet::new();
    for (t, tool) in tools.iter().enumerate() {
        for (i, function) in tool.function_declarations.iter().enumerate() {
            let path = format!("tools[{t}].functionDeclarations[{i}]");
            let name = function.name.as_str();
            let valid = name.len() <= 64
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c));
            if !valid {
                return Err(format!(
                    "{path}.name: {name:?} is not a valid function name"
                ));
            }
            if !names.insert(name) {
                return Err(format!("{path}.name: {name:?} declared twice"));
            }
            if function.parameters.is_some() && function.parameters_json_schema.is_some() {
                return Err(format!(
                    "{path}: parameters and parametersJsonSchema are exclusive"
                ));
            }
            if function.response.is_some() && function.response_json_schema.is_some() {
                return Err(format!(
                    "{path}: response and responseJsonSchema are exclusive"
                ));
            }
            if let Some(parameters) = &function.parameters {
                let problems = gemini_schema::problems(parameters);
                if !problems.is_empty() {
                    return Err(format!("{path}.parameters: {}", problems.join("; ")));
                }
            }
        }
    }
    Ok(names)
}

fn check_system(system: &Value) -> Result<(), String> {
    let Some(parts) = system.get("parts").and_then(Value::as_array) else {
        return Err("systemInstruction: a content with parts".into());
    };
    if let Some(role) = system.get("role")
        && role != "user"
        && role != "system"
    {
        return Err(format!("systemInstruction.role: {role}"));
    }
    let all_text = !parts.is_empty()
        && parts.iter().all(|part| {
            part.as_object().is_some_and(|part| {
                part.len() == 1 && part.get("text").is_some_and(Value::is_string)
            })
        });
    if all_text {
        Ok(())
    } else {
        Err("systemInstruction.parts: text parts only".into())
    }
}

/// The calls of a model turn, as (name, id).
fn calls(content: &Content) -> Vec<(&str, Option<&str>)> {
    content
        .parts
        .iter()
        .filter_map(|part| match &part.data {
            PartData::FunctionCall(call) => Some((call.name.as_str(), call.id.as_deref())),
            _ => None,
        })
        .collect()
}

/// The function responses of a user turn, as (name, id).
fn responses(content: &Content) -> Vec<(&str, Option<&str>)> {
    content
        .parts
        .iter()
        .filter_map(|part| match &part.data {
            PartData::FunctionResponse(response) => {
                Some((response.name.as_str(), response.id.as_deref()))
            }
            _ => None,
        })
        .collect()
}

fn check_sequence(contents: &[Content]) -> Result<(), String> {
    if contents.is_empty() {
        return Err("contents: empty".into());
    }
    for (i, content) in contents.iter().enumerate() {
        let made = calls(content);
        let answered = responses(content);
        if !answered.is_empty() {
            let before = i.checked_sub(1).map(|j| calls(&contents[j]));
            if before.as_ref().is_none_or(Vec::is_empty) {
                return Err(format!(
                    "contents[{i}]: function responses with no function call turn before them"
                ));
            }
        }
        if made.is_empty() {
            continue;
        }
        if i == 0 || contents[i - 1].role != Role::User {
            return Err(format!(
                "contents[{i}]: a function call turn must come immediately after a user turn or after a function response turn"
            ));
        }
        let Some(next) = contents.get(i + 1) else {
            return Err(format!(
                "contents[{i}]: the request ends on function calls with no responses"
            ));
        };
        let given = responses(next);
        if given.len() != made.len() {
            return Err(format!(
                "contents[{}]: {} function response parts for {} function call parts",
                i + 1,
                given.len(),
                made.len()
            ));
        }
        for (n, ((name, id), (answer_name, answer_id))) in made.iter().zip(&given).enumerate() {
            if name != answer_name {
                return Err(format!(
                    "contents[{}]: response {n} is named {answer_name:?}, its call {name:?}",
                    i + 1
                ));
            }
            if let (Some(id), Some(answer_id)) = (id, answer_id)
                && id != answer_id
            {
                return Err(format!(
                    "contents[{}]: response {n} has id {answer_id:?}, its call {id:?}",
                    i + 1
                ));
            }
            if id.is_none() && answer_id.is_some() {
                return Err(format!(
                    "contents[{}]: response {n} has id {answer_id:?}, but its call had none",
                    i + 1
                ));
            }
        }
    }
    Ok(())
}
