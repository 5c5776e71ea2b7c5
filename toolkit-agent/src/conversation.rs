//! The transcript of a run, rendered as each provider's request body.

use serde_json::{Map, Value, json};
use toolkit_core::emit::{self, EmitOptions, EmitProblem};
use toolkit_core::response::Turn;
use toolkit_core::{DefinitionsError, Provider, Registry, ToolCallResult};

/// Which calls the model may make.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the providers' default).
    #[default]
    Auto,
    /// No calls: the model answers in text.
    None,
    /// At least one call (`required`, Anthropic's `any`, Gemini's `ANY`).
    Required,
    /// A call of this tool.
    Tool(String),
}

/// A conversation in one provider: system instructions, user messages,
/// assistant turns echoed as the provider requires, and tool results,
/// each rendered once when added and kept.
///
/// [`request`](Self::request) gives the complete request body (without the
/// model's name, which the [`Model`](crate::Model) adds).
///
/// One form is changed on the way back: a call whose arguments are not
/// valid JSON is echoed with empty arguments (`{}`), since servers refuse
/// the broken text in an assistant message (llama.cpp answers HTTP 500);
/// the call's error result, which quotes what the model wrote, tells the
/// model what went wrong.
#[derive(Debug, Clone)]
pub struct Conversation {
    provider: Provider,
    instructions: Option<String>,
    items: Vec<Value>,
    tools: Option<Value>,
    tool_choice: ToolChoice,
    parallel_calls: Option<bool>,
    options: EmitOptions,
    settings: Map<String, Value>,
}

impl Conversation {
    /// An empty conversation in `provider`.
    ///
    /// [`Provider::OpenAiStrict`] is Chat Completions with tools sent in
    /// strict mode. [`Provider::Mcp`] is not a model API; a conversation
    /// given it is written as Chat Completions.
    pub fn new(provider: Provider) -> Self {
        let mut settings = Map::new();
        if provider == Provider::Anthropic {
            // Anthropic requires it; a generous default a host can lower.
            settings.insert("max_tokens".into(), json!(4096));
        }
        Self {
            provider,
            instructions: None,
            items: Vec::new(),
            tools: None,
            tool_choice: ToolChoice::Auto,
            parallel_calls: None,
            options: EmitOptions::default(),
            settings,
        }
    }

    /// The provider.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// Sets the system instructions.
    pub fn set_instructions(&mut self, instructions: impl Into<String>) {
        self.instructions = Some(instructions.into());
    }

    /// Sets the tool list to the registry's enabled tools.
    pub fn set_tools(&mut self, registry: &Registry) -> Result<(), DefinitionsError> {
        let provider = match self.provider {
            Provider::Mcp => Provider::OpenAi,
            provider => provider,
        };
        let definitions = registry.definitions(provider)?;
        self.tools = (!definitions.is_empty()).then(|| definitions.to_value());
        Ok(())
    }

    /// Whether Chat Completions tools are sent in strict mode (call before
    /// [`set_tools`](Self::set_tools)): switches between
    /// [`Provider::OpenAi`] and [`Provider::OpenAiStrict`]; other providers
    /// are left as they are.
    pub fn set_strict(&mut self, strict: bool) {
        self.provider = match (self.provider, strict) {
            (Provider::OpenAi, true) => Provider::OpenAiStrict,
            (Provider::OpenAiStrict, false) => Provider::OpenAi,
            (provider, _) => provider,
        };
    }

    /// Sets which calls the model may make.
    pub fn set_tool_choice(&mut self, choice: ToolChoice) {
        self.tool_choice = choice;
    }

    /// Allows or forbids several calls in one turn (unset: the provider's
    /// default, which allows them).
    pub fn set_parallel_calls(&mut self, parallel: bool) {
        self.parallel_calls = Some(parallel);
    }

    /// How results are emitted.
    pub fn set_emit_options(&mut self, options: EmitOptions) {
        self.options = options;
    }

    /// Sets a top-level request field (`max_tokens`, `temperature`,
    /// Gemini's `generationConfig`).
    pub fn set(&mut self, key: impl Into<String>, value: Value) {
        self.settings.insert(key.into(), value);
    }

    /// The items so far (messages, input items or contents), in order.
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// Adds a user message.
    pub fn push_user(&mut self, text: impl Into<String>) {
        let text = text.into();
        let item = match self.provider {
            Provider::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
            _ => json!({"role": "user", "content": text}),
        };
        self.items.push(item);
    }

    /// Adds the model's turn, as the provider requires it back.
    pub fn push_turn(&mut self, turn: &Turn) {
        let mut echo = turn.echo.clone();
        let malformed: Vec<&str> = turn
            .calls
            .iter()
            .zip(&turn.call_info)
            .filter(|(_, info)| info.malformed.is_some())
            .map(|(call, _)| call.id.as_str())
            .collect();
        match self.provider {
            Provider::OpenAiResponses => {
                for mut item in echo.as_array().cloned().unwrap_or_default() {
                    let id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
                    if item.get("type").and_then(Value::as_str) == Some("function_call")
                        && malformed.contains(&id)
                    {
                        item["arguments"] = json!("{}");
                    }
                    self.items.push(item);
                }
            }
            Provider::Anthropic => {
                self.items
                    .push(json!({"role": "assistant", "content": echo}));
            }
            Provider::Gemini => self.items.push(echo),
            _ => {
                if let Some(calls) = echo.get_mut("tool_calls").and_then(Value::as_array_mut) {
                    for call in calls {
                        let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                        if malformed.contains(&id) {
                            call["function"]["arguments"] = json!("{}");
                        }
                    }
                }
                self.items.push(echo);
            }
        }
    }

    /// Adds the results answering `turn`'s calls, emitted once, here.
    /// Returns the images that could not be sent (each replaced, for the
    /// model, by a sentence saying why).
    pub fn push_results(&mut self, turn: &Turn, results: &[ToolCallResult]) -> Vec<EmitProblem> {
        let emitted = match self.provider {
            Provider::OpenAiResponses => emit::openai_responses(results, &self.options),
            Provider::Anthropic => emit::anthropic(results, &self.options),
            Provider::Gemini => {
                // An id the API never sent is not sent back: it matches
                // responses to calls by position and name instead.
                let generated = turn.call_info.iter().any(|info| info.generated_id);
                let options = self
                    .options
                    .clone()
                    .with_gemini_call_ids(self.options.gemini_call_ids() && !generated);
                emit::gemini(results, &options)
            }
            _ => emit::openai_chat(results, &self.options),
        };
        self.items.extend(emitted.items);
        emitted.problems
    }

    /// The complete request body.
    pub fn request(&self) -> Value {
        let mut body = Map::new();
        let tools = self.tools.as_ref();
        match self.provider {
            Provider::OpenAiResponses => {
                if let Some(instructions) = &self.instructions {
                    body.insert("instructions".into(), json!(instructions));
                }
                body.insert("input".into(), Value::Array(self.items.clone()));
                if let Some(tools) = tools {
                    body.insert("tools".into(), tools.clone());
                    body.insert("tool_choice".into(), self.openai_choice(false));
                    if let Some(parallel) = self.parallel_calls {
                        body.insert("parallel_tool_calls".into(), json!(parallel));
                    }
                }
            }
            Provider::Anthropic => {
                if let Some(instructions) = &self.instructions {
                    body.insert("system".into(), json!(instructions));
                }
                body.insert("messages".into(), Value::Array(self.items.clone()));
                if let Some(tools) = tools {
                    body.insert("tools".into(), tools.clone());
                    let mut choice = match &self.tool_choice {
                        ToolChoice::Auto => json!({"type": "auto"}),
                        ToolChoice::None => json!({"type": "none"}),
                        ToolChoice::Required => json!({"type": "any"}),
                        ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
                    };
                    if self.parallel_calls == Some(false) && self.tool_choice != ToolChoice::None {
                        choice["disable_parallel_tool_use"] = json!(true);
                    }
                    body.insert("tool_choice".into(), choice);
                }
            }
            Provider::Gemini => {
                if let Some(instructions) = &self.instructions {
                    body.insert(
                        "systemInstruction".into(),
                        json!({"parts": [{"text": instructions}]}),
                    );
                }
                body.insert("contents".into(), Value::Array(self.items.clone()));
                if let Some(tools) = tools {
                    body.insert("tools".into(), json!([{"functionDeclarations": tools}]));
                    let config = match &self.tool_choice {
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
            }
            _ => {
                let mut messages = Vec::with_capacity(self.items.len() + 1);
                if let Some(instructions) = &self.instructions {
                    messages.push(json!({"role": "system", "content": instructions}));
                }
                messages.extend(self.items.iter().cloned());
                body.insert("messages".into(), Value::Array(messages));
                if let Some(tools) = tools {
                    body.insert("tools".into(), tools.clone());
                    body.insert("tool_choice".into(), self.openai_choice(true));
                    if let Some(parallel) = self.parallel_calls {
                        body.insert("parallel_tool_calls".into(), json!(parallel));
                    }
                }
            }
        }
        for (key, value) in &self.settings {
            body.insert(key.clone(), value.clone());
        }
        Value::Object(body)
    }

    fn openai_choice(&self, chat: bool) -> Value {
        match &self.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) if chat => {
                json!({"type": "function", "function": {"name": name}})
            }
            ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
        }
    }
}
