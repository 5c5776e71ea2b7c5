//! Each model API's wire format, both ways, in one module per API: the
//! request body built from a conversation, the model's turn echoed back,
//! the typed settings and the answer schema in the API's fields, the
//! endpoint and its headers, and the trace view of a request.
//!
//! Core's [`Provider`] names what tool lists, results and responses are
//! written for, MCP and OpenAI's strict mode included; [`Api`] names the
//! four model APIs a request can be sent to. [`Api::of`] is the one place
//! a `Provider` is mapped, and every match on `Api` is exhaustive: a new
//! provider or API does not compile until each of its modules says what
//! it sends (docs/decisions/providers.md).
//!
//! Responses are read in core (`toolkit_core::response`), once: the turn
//! carries what the rest of the crate needs of them (usage details, the
//! response's id and model).

mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;
pub(crate) mod trace;

use reqwest::RequestBuilder;
use serde_json::{Map, Value, json};
use toolkit_core::emit::{EmitOptions, Emitted};
use toolkit_core::{Provider, ToolCallResult};

use crate::answer::AnswerSchema;
use crate::search::NativeSearch;
use crate::settings::Settings;
use crate::tool_choice::ToolChoice;

/// A model API: where a request goes and the form it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// OpenAI Chat Completions, and every compatible server; `strict` when
    /// tools are sent in strict mode.
    Chat {
        /// Whether tools are sent with `strict: true`.
        strict: bool,
    },
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini `generateContent`.
    Gemini,
}

impl Api {
    /// The API a conversation in `provider` is written in, and its model
    /// is asked through: the one place a [`Provider`] is mapped.
    ///
    /// MCP is not a model API: what is written for it is Chat Completions,
    /// the form every compatible server takes, as
    /// [`Conversation::new`](crate::Conversation::new) documents (reading
    /// a response for it is core's typed error,
    /// [`ReadError::NotAModelApi`](toolkit_core::response::ReadError::NotAModelApi)).
    pub(crate) fn of(provider: Provider) -> Api {
        match provider {
            Provider::OpenAi => Api::Chat { strict: false },
            Provider::OpenAiStrict => Api::Chat { strict: true },
            Provider::OpenAiResponses => Api::Responses,
            Provider::Anthropic => Api::Anthropic,
            Provider::Gemini => Api::Gemini,
            Provider::Mcp => Api::Chat { strict: false },
            // `Provider` is `#[non_exhaustive]`, so this crate cannot
            // match it exhaustively; the assertion on `Provider::ALL`
            // below stops the build when core adds a provider, so this arm
            // is never taken by a build that compiles.
            _ => Api::Chat { strict: false },
        }
    }

    /// The provider tool lists are read in for this API.
    pub(crate) fn provider(self) -> Provider {
        match self {
            Api::Chat { strict: false } => Provider::OpenAi,
            Api::Chat { strict: true } => Provider::OpenAiStrict,
            Api::Responses => Provider::OpenAiResponses,
            Api::Anthropic => Provider::Anthropic,
            Api::Gemini => Provider::Gemini,
        }
    }

    /// The API with tools sent in strict mode or not: Chat Completions
    /// only, where strict mode is a choice; `None` elsewhere (Responses
    /// marks each tool strict when it can be).
    pub(crate) fn with_strict(self, strict: bool) -> Option<Api> {
        match self {
            Api::Chat { .. } => Some(Api::Chat { strict }),
            Api::Responses | Api::Anthropic | Api::Gemini => None,
        }
    }

    /// Chat Completions in the other mode (strict or not), whose tool list
    /// a conversation keeps ready; `None` for the other APIs.
    pub(crate) fn other_mode(self) -> Option<Api> {
        match self {
            Api::Chat { strict } => Some(Api::Chat { strict: !strict }),
            Api::Responses | Api::Anthropic | Api::Gemini => None,
        }
    }

    /// The API of an endpoint: strict mode belongs to a conversation's
    /// tool list, not to where it is sent.
    pub(crate) fn endpoint(self) -> Api {
        self.with_strict(false).unwrap_or(self)
    }

    /// The API's wire format.
    pub(crate) fn dialect(self) -> &'static dyn Dialect {
        match self {
            Api::Chat { .. } => &openai_chat::OpenAiChat,
            Api::Responses => &openai_responses::OpenAiResponses,
            Api::Anthropic => &anthropic::Anthropic,
            Api::Gemini => &gemini::Gemini,
        }
    }
}

/// The build stops here when core adds a provider (`Provider::ALL` grows
/// with every variant: core reads names through it): map the new one in
/// [`Api::of`], then count it here.
const _: () = assert!(
    Provider::ALL.len() == 6,
    "a provider was added to toolkit-core: map it in Api::of"
);

/// The conventions' `gen_ai.provider.name` of `provider` (`mcp` for MCP,
/// which has no API of its own to name).
pub(crate) fn provider_name(provider: Provider) -> &'static str {
    match provider {
        Provider::Mcp => "mcp",
        model => Api::of(model).dialect().provider_name(),
    }
}

/// What a conversation holds for one request, in no API's form yet.
pub(crate) struct Transcript<'a> {
    /// The system instructions.
    pub(crate) instructions: Option<&'a str>,
    /// The items (messages, input items, contents), in order, each in the
    /// API's form already.
    pub(crate) items: &'a [Value],
    /// The tool list, in the API's form.
    pub(crate) tools: Option<&'a Value>,
    /// Which calls the model may make (sent with tools only).
    pub(crate) tool_choice: &'a ToolChoice,
}

/// Where an API is by default, and the variable its key is read from.
pub(crate) struct Endpoint {
    pub(crate) base_url: &'static str,
    pub(crate) key_var: &'static str,
}

/// One model API's wire format, both ways.
pub(crate) trait Dialect: Sync {
    // The transcript.

    /// A user message.
    fn user_item(&self, text: String) -> Value;

    /// Appends the model's turn as the API requires it back: `echo` is the
    /// part of the response the turn kept; calls whose ids are in
    /// `malformed` go back with empty arguments, the only form servers
    /// take back.
    fn push_echo(&self, items: &mut Vec<Value>, echo: Value, malformed: &[&str]);

    /// Results as the API's items. `provider_ids`: whether every call of
    /// the step had an id from the provider (an id it never sent is not
    /// sent back).
    fn emit(
        &self,
        results: &[ToolCallResult],
        options: &EmitOptions,
        provider_ids: bool,
    ) -> Emitted;

    /// The request body: instructions, items, tools and tool choice in the
    /// API's fields.
    fn body(&self, transcript: Transcript<'_>) -> Map<String, Value>;

    // Tool search (docs/tool-search.md).

    /// A tool definition's name, in the API's form.
    fn tool_name<'v>(&self, tool: &'v Value) -> &'v str;

    /// The API's own tool search tool of `kind`, when it has one: the
    /// deferred definitions sent beside it carry `"defer_loading": true`.
    fn native_search(&self, kind: NativeSearch) -> Option<Value>;

    /// The headers a request body needs besides the API's own: those of a
    /// beta feature it uses.
    fn body_headers(&self, body: &Value) -> Vec<(&'static str, &'static str)>;

    // Settings and structured output.

    /// Writes the typed settings into `body`, whose tools (if any) are in
    /// place.
    fn settings(&self, settings: &Settings, body: &mut Map<String, Value>);

    /// The [`Settings`] fields the API has no field for.
    fn unsent(&self) -> &'static [&'static str];

    /// Writes the answer schema into the API's structured-output field.
    fn answer(&self, answer: &AnswerSchema, body: &mut Map<String, Value>);

    // The endpoint.

    /// The API's own base URL and key variable.
    fn endpoint(&self) -> Endpoint;

    /// The URL a request to `model` goes to.
    fn url(&self, base: &str, model: &str, stream: bool) -> String;

    /// Completes the body as sent: the model's name, the stream switch.
    fn prepare(&self, body: &mut Map<String, Value>, model: &str, stream: bool);

    /// The API's own headers: its key's, its version.
    fn headers(&self, request: RequestBuilder, key: Option<&str>) -> RequestBuilder;

    // The trace view.

    /// The conventions' `gen_ai.provider.name`.
    fn provider_name(&self) -> &'static str;

    /// The conventions' `gen_ai.operation.name`: `chat`, unless the API
    /// names its operation otherwise.
    fn operation(&self) -> &'static str {
        "chat"
    }

    /// The object holding the request's sampling settings: the body
    /// itself, unless the API nests them.
    fn settings_of<'b>(&self, body: &'b Value) -> Option<&'b Value> {
        Some(body)
    }

    /// The request's messages and system instructions, in the
    /// conventions' shapes (`crate::telemetry::RequestContent`).
    fn trace_content(&self, body: &Value, messages: &mut Vec<Value>, system: &mut Vec<Value>);

    /// The tools the request offers, each as `(name, description,
    /// parameters)`.
    fn trace_tools<'b>(&self, body: &'b Value) -> Vec<TraceTool<'b>>;
}

/// A tool of a request, as the trace names it.
pub(crate) struct TraceTool<'b> {
    pub(crate) name: &'b str,
    pub(crate) description: Option<&'b Value>,
    pub(crate) parameters: Option<&'b Value>,
}

impl<'b> TraceTool<'b> {
    /// A tool declared as `{name, description, <parameters>}`, its
    /// parameters under `parameters`.
    fn declared(tool: &'b Value, parameters: &str) -> Self {
        Self {
            name: str_of(tool, "name"),
            description: tool.get("description"),
            parameters: tool.get(parameters),
        }
    }
}

/// Each entry of the request's `tools`.
fn tools_of(body: &Value) -> impl Iterator<Item = &Value> {
    body["tools"].as_array().into_iter().flatten()
}

/// `value[key]` as text, empty when absent.
fn str_of<'v>(value: &'v Value, key: &str) -> &'v str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The `{"role": "user", "content": text}` message Chat Completions,
/// Responses and Anthropic share.
fn user_message(text: String) -> Value {
    json!({"role": "user", "content": text})
}

// Here rather than in settings.rs: which settings an API takes is the
// API's to say, and the settings module stays below the providers.
impl Settings {
    /// The settings given here that `provider`'s API has no field for, by
    /// their names in this struct; they are left out of its requests.
    pub fn unsent(&self, provider: Provider) -> Vec<&'static str> {
        let set = [
            ("stop", !self.stop.is_empty()),
            ("seed", self.seed.is_some()),
            ("reasoning_effort", self.reasoning_effort.is_some()),
            ("thinking_budget", self.thinking_budget.is_some()),
            ("parallel_calls", self.parallel_calls.is_some()),
        ];
        let unsent = Api::of(provider).dialect().unsent();
        set.into_iter()
            .filter(|(name, given)| *given && unsent.contains(name))
            .map(|(name, _)| name)
            .collect()
    }
}

/// Whether `item` is a user message.
pub(crate) fn is_user(item: &Value) -> bool {
    item.get("role").and_then(Value::as_str) == Some("user")
}

#[cfg(test)]
mod tests {
    use super::*;

    const APIS: [Api; 5] = [
        Api::Chat { strict: false },
        Api::Chat { strict: true },
        Api::Responses,
        Api::Anthropic,
        Api::Gemini,
    ];

    #[test]
    fn each_api_is_the_one_its_provider_maps_to() {
        for api in APIS {
            assert_eq!(Api::of(api.provider()), api);
        }
        // Every provider but MCP names an API of its own.
        let named: Vec<Provider> = APIS.iter().map(|api| api.provider()).collect();
        for provider in Provider::ALL {
            assert_eq!(named.contains(&provider), provider != Provider::Mcp);
        }
        assert_eq!(Api::of(Provider::Mcp), Api::Chat { strict: false });
    }

    #[test]
    fn strict_mode_is_chat_completions_only_and_not_an_endpoint() {
        let chat = Api::Chat { strict: false };
        assert_eq!(chat.other_mode(), Some(Api::Chat { strict: true }));
        assert_eq!(chat.with_strict(true), Some(Api::Chat { strict: true }));
        assert_eq!(Api::Chat { strict: true }.endpoint(), chat);
        for api in [Api::Responses, Api::Anthropic, Api::Gemini] {
            assert_eq!(api.with_strict(true), None);
            assert_eq!(api.other_mode(), None);
            assert_eq!(api.endpoint(), api);
        }
    }

    #[test]
    fn names_in_traces() {
        let names: Vec<&str> = Provider::ALL.into_iter().map(provider_name).collect();
        assert_eq!(
            names,
            [
                "openai",
                "openai",
                "openai",
                "anthropic",
                "gcp.gemini",
                "mcp"
            ]
        );
    }
}
