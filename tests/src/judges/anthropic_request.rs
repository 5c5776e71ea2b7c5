//! Judge for a whole Anthropic Messages API request body (`POST /v1/messages`).
//!
//! Sources:
//! - <https://docs.anthropic.com/en/api/messages> (the request's fields:
//!   `model`, `max_tokens` and `messages` required; `system` a string or
//!   text blocks; `tools`, `tool_choice`, sampling settings);
//! - <https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use>
//!   (tool definitions: `name` matching `^[a-zA-Z0-9_-]{1,128}$`,
//!   `input_schema` an object schema; `tool_choice` `auto`, `any`, `tool`
//!   with `name`, `none`; `disable_parallel_tool_use` on the first three);
//! - <https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls>
//!   (every `tool_use` is answered by a `tool_result` in the message right
//!   after it; results come first in that message);
//! - <https://platform.claude.com/docs/en/build-with-claude/structured-outputs>
//!   (`output_config.format`: `{"type":"json_schema","schema"}`; the
//!   schema's limits: every object closed with `additionalProperties:
//!   false`, no numeric or length bounds, `minItems` 0 or 1 only);
//! - <https://platform.claude.com/docs/en/build-with-claude/effort>
//!   (`output_config.effort`: `low`, `medium`, `high`);
//! - <https://platform.claude.com/docs/en/build-with-claude/extended-thinking>
//!   (`thinking`: `{"type":"enabled","budget_tokens"}`, at least 1024 and
//!   below `max_tokens`, or `{"type":"disabled"}`);
//! - <https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool>
//!   (the tool search tools `{"type":"tool_search_tool_bm25_20251119",
//!   "name":"tool_search_tool_bm25"}` and the `_regex_` one; `defer_loading`
//!   on client tools; the search tool itself never deferred, and at least
//!   one tool not deferred);
//! - API errors quoted in public issues: "`tool_use` ids were found without
//!   `tool_result` blocks immediately after", "unexpected `tool_use_id`
//!   found in `tool_result` blocks", "messages: first message must use the
//!   \"user\" role".
//!
//! Each message is judged by [`super::anthropic::check_message`]; this
//! judge adds the request's own fields and the rules that span messages.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::anthropic::{ContentBlockParam, MessageParam, Role, TextOrBlocks, check_message};

/// The request body, as a client sends it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessagesRequest {
    /// The model's name.
    pub model: String,
    /// The most tokens to generate; at least 1.
    pub max_tokens: u32,
    /// The conversation; judged one by one, then as a sequence.
    pub messages: Vec<Value>,
    /// The system prompt: a string or text blocks.
    pub system: Option<SystemPrompt>,
    /// The tools the model may call.
    pub tools: Option<Vec<ToolParam>>,
    /// Which calls the model may make.
    pub tool_choice: Option<ToolChoice>,
    /// Sampling temperature, 0 to 1.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Top-k sampling.
    pub top_k: Option<u32>,
    /// Custom stop sequences.
    pub stop_sequences: Option<Vec<String>>,
    /// Server-sent events instead of one body.
    pub stream: Option<bool>,
    /// `{"user_id"}` for abuse detection.
    pub metadata: Option<Map<String, Value>>,
    /// Extended thinking.
    pub thinking: Option<Thinking>,
    /// Structured output and effort.
    pub output_config: Option<OutputConfig>,
}

/// The `thinking` field.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Thinking {
    /// Extended thinking on.
    Enabled {
        /// The most tokens spent thinking: at least 1024, below `max_tokens`.
        budget_tokens: u32,
    },
    /// Extended thinking off.
    Disabled {},
}

/// The `output_config` field.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    /// How eagerly the model spends tokens.
    pub effort: Option<Effort>,
    /// The form of the answer.
    pub format: Option<OutputFormat>,
}

/// `output_config.effort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// Fewest tokens.
    Low,
    /// Balanced.
    Medium,
    /// Most thorough (the default).
    High,
}

/// `output_config.format`.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum OutputFormat {
    /// An answer that keeps a JSON Schema.
    JsonSchema {
        /// The schema: an object at the root.
        schema: Map<String, Value>,
    },
}

// Written from Anthropic's documentation, apart from the crates' own
// lists (toolkit-core's keyword order and `BOUNDS`, which its Anthropic
// lowering drops) on purpose: a judge does not read the code it judges.
/// Keywords the structured-output schema may not hold.
const UNSUPPORTED_SCHEMA_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "minProperties",
    "maxProperties",
];

/// The `system` field.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum SystemPrompt {
    /// A plain string.
    Text(String),
    /// Text blocks.
    Blocks(Vec<SystemBlock>),
}

/// One block of a block-form system prompt: text only.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SystemBlock {
    /// `{"type":"text","text"}`.
    Text {
        /// The text.
        text: String,
        /// Prompt-caching breakpoint.
        cache_control: Option<Value>,
    },
}

/// A client tool's definition, or a tool search tool.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolParam {
    /// `custom` when given, for a client tool; a tool search tool's type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `^[a-zA-Z0-9_-]{1,128}$`.
    pub name: String,
    /// What the tool does.
    pub description: Option<String>,
    /// A JSON Schema whose root is `{"type":"object"}` (client tools only).
    pub input_schema: Option<Map<String, Value>>,
    /// Left out of the context until a tool search finds it.
    pub defer_loading: Option<bool>,
    /// Strict tool use.
    pub strict: Option<bool>,
    /// Prompt-caching breakpoint.
    pub cache_control: Option<Value>,
}

/// The `tool_choice` field.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolChoice {
    /// The model decides.
    Auto {
        /// At most one call per turn.
        disable_parallel_tool_use: Option<bool>,
    },
    /// Some tool must be called.
    Any {
        /// Exactly one call per turn.
        disable_parallel_tool_use: Option<bool>,
    },
    /// This tool must be called.
    Tool {
        /// The tool.
        name: String,
        /// Exactly one call per turn.
        disable_parallel_tool_use: Option<bool>,
    },
    /// No calls.
    None {},
}

/// Checks a whole request body: its fields against the documented shape,
/// each message with [`check_message`], and the rules across messages:
///
/// - `max_tokens` is at least 1 and `messages` is not empty, its first
///   message from the user;
/// - tool names are valid and unique, each `input_schema` has
///   `"type":"object"`, and a `tool` choice names a defined tool;
/// - every `tool_use` id is unique and answered by a `tool_result` in the
///   next message (a user message), and every `tool_result` answers a
///   `tool_use` of the message right before it, exactly once.
pub fn check_request(value: &Value) -> Result<MessagesRequest, String> {
    let request = MessagesRequest::deserialize(value)
        .map_err(|e| format!("not a Messages API request: {e}"))?;
    if request.max_tokens == 0 {
        return Err("max_tokens: must be at least 1".into());
    }
    if let Some(temperature) = request.temperature
        && !(0.0..=1.0).contains(&temperature)
    {
        return Err(format!("temperature: {temperature} is not within 0..=1"));
    }
    if let Some(Thinking::Enabled { budget_tokens }) = request.thinking
        && !(1024..request.max_tokens).contains(&budget_tokens)
    {
        return Err(format!(
            "thinking.budget_tokens: {budget_tokens} must be at least 1024 and below max_tokens ({})",
            request.max_tokens
        ));
    }
    if let Some(OutputFormat::JsonSchema { schema }) = request
        .output_config
        .as_ref()
        .and_then(|config| config.format.as_ref())
    {
        check_output_schema(schema)?;
    }
    if let Some(SystemPrompt::Text(text)) = &request.system
        && text.trim().is_empty()
    {
        return Err("system: empty".into());
    }
    let names = check_tools(request.tools.as_deref().unwrap_or_default())?;
    if let Some(ToolChoice::Tool { name, .. }) = &request.tool_choice
        && !names.contains(name.as_str())
    {
        return Err(format!("tool_choice.name: no tool named {name:?}"));
    }
    let messages = request
        .messages
        .iter()
        .enumerate()
        .map(|(i, message)| check_message(message).map_err(|e| format!("messages[{i}]: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    check_sequence(&messages)?;
    Ok(request)
}

/// The structured-output schema: an object root, and in every sub-schema
/// no unsupported keyword and every object closed.
fn check_output_schema(schema: &Map<String, Value>) -> Result<(), String> {
    if schema.get("type") != Some(&Value::String("object".into())) {
        return Err("output_config.format.schema: the root must be {\"type\":\"object\"}".into());
    }
    let mut problem = None;
    super::walk_schemas(&Value::Object(schema.clone()), "", &mut |path, sub| {
        if problem.is_some() {
            return;
        }
        let path = if path.is_empty() { "root" } else { path };
        if let Some(keyword) = UNSUPPORTED_SCHEMA_KEYWORDS
            .iter()
            .find(|keyword| sub.contains_key(**keyword))
        {
            problem = Some(format!(
                "output_config.format.schema {path}: `{keyword}` is not supported"
            ));
        } else if sub
            .get("minItems")
            .and_then(Value::as_u64)
            .is_some_and(|min| min > 1)
        {
            problem = Some(format!(
                "output_config.format.schema {path}: minItems above 1"
            ));
        } else if sub.get("type").and_then(Value::as_str) == Some("object")
            && sub.get("additionalProperties") != Some(&Value::Bool(false))
        {
            problem = Some(format!(
                "output_config.format.schema {path}: objects need additionalProperties: false"
            ));
        }
    });
    problem.map_or(Ok(()), Err)
}

fn check_tools(tools: &[ToolParam]) -> Result<HashSet<&str>, String> {
    let mut names = HashSet::new();
    for (i, tool) in tools.iter().enumerate() {
        let valid = (1..=128).contains(&tool.name.len())
            && tool
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(format!(
                "tools[{i}].name: {:?} does not match ^[a-zA-Z0-9_-]{{1,128}}$",
                tool.name
            ));
        }
        if !names.insert(tool.name.as_str()) {
            return Err(format!("tools[{i}].name: {:?} defined twice", tool.name));
        }
        if let Some(search) = tool.kind.as_deref().and_then(search_tool_name) {
            if tool.name != search {
                return Err(format!(
                    "tools[{i}].name: this tool search tool is named {search:?}"
                ));
            }
            if tool.input_schema.is_some() || tool.defer_loading.is_some() {
                return Err(format!(
                    "tools[{i}]: a tool search tool takes no input_schema and is never deferred"
                ));
            }
            continue;
        }
        if tool.kind.as_deref().is_some_and(|kind| kind != "custom") {
            return Err(format!("tools[{i}].type: client tools are \"custom\""));
        }
        let object = tool
            .input_schema
            .as_ref()
            .is_some_and(|schema| schema.get("type") == Some(&Value::String("object".into())));
        if !object {
            return Err(format!(
                "tools[{i}].input_schema: the root must be {{\"type\":\"object\"}}"
            ));
        }
    }
    let deferred = tools
        .iter()
        .filter(|tool| tool.defer_loading == Some(true))
        .count();
    let searches = tools
        .iter()
        .any(|tool| tool.kind.as_deref().and_then(search_tool_name).is_some());
    if deferred > 0 && !searches {
        return Err("tools: deferred tools need a tool search tool".into());
    }
    if deferred > 0 && deferred == tools.len() {
        return Err("tools: every tool is deferred; at least one must not be".into());
    }
    Ok(names)
}

/// The name a tool search tool of type `kind` must have.
fn search_tool_name(kind: &str) -> Option<&'static str> {
    match kind {
        "tool_search_tool_bm25_20251119" => Some("tool_search_tool_bm25"),
        "tool_search_tool_regex_20251119" => Some("tool_search_tool_regex"),
        _ => None,
    }
}

fn blocks(message: &MessageParam) -> &[ContentBlockParam] {
    match &message.content {
        TextOrBlocks::Blocks(blocks) => blocks,
        TextOrBlocks::Text(_) => &[],
    }
}

fn check_sequence(messages: &[MessageParam]) -> Result<(), String> {
    match messages.first() {
        None => return Err("messages: empty".into()),
        Some(first) if first.role != Role::User => {
            return Err("messages[0]: the first message must use the \"user\" role".into());
        }
        Some(_) => {}
    }
    let mut seen_ids = HashSet::new();
    for (i, message) in messages.iter().enumerate() {
        let uses: Vec<&str> = blocks(message)
            .iter()
            .filter_map(|block| match block {
                ContentBlockParam::ToolUse(call) => Some(call.id.as_str()),
                _ => None,
            })
            .collect();
        if message.role == Role::User && !uses.is_empty() {
            return Err(format!("messages[{i}]: tool_use in a user message"));
        }
        for id in &uses {
            if !seen_ids.insert(*id) {
                return Err(format!("messages[{i}]: tool_use id {id:?} used twice"));
            }
        }
        let answered: Vec<&str> = messages
            .get(i + 1)
            .map(|next| {
                blocks(next)
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlockParam::ToolResult(result) => Some(result.tool_use_id.as_str()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if message.role == Role::Assistant {
            for id in &uses {
                match answered.iter().filter(|answer| *answer == id).count() {
                    1 => {}
                    0 if i + 1 == messages.len() => {
                        return Err(format!(
                            "messages[{i}]: the request ends on tool_use {id:?} with no tool_result"
                        ));
                    }
                    0 => {
                        return Err(format!(
                            "messages[{}]: tool_use ids were found without tool_result blocks immediately after: {id:?}",
                            i + 1
                        ));
                    }
                    n => {
                        return Err(format!(
                            "messages[{}]: tool_use {id:?} answered {n} times",
                            i + 1
                        ));
                    }
                }
            }
            for answer in &answered {
                if !uses.contains(answer) {
                    return Err(format!(
                        "messages[{}]: unexpected tool_use_id {answer:?} in tool_result blocks",
                        i + 1
                    ));
                }
            }
        } else if i + 1 < messages.len() && !answered.is_empty() {
            return Err(format!(
                "messages[{}]: tool_result in a message that does not follow a tool_use",
                i + 1
            ));
        }
    }
    // A `tool_result` in the first message answers nothing.
    if blocks(&messages[0])
        .iter()
        .any(|block| matches!(block, ContentBlockParam::ToolResult(_)))
    {
        return Err("messages[0]: tool_result with no tool_use before it".into());
    }
    Ok(())
}
