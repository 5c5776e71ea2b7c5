//! The assistant turn read from a response, and what can go wrong reading it.

use std::fmt;

use serde_json::Value;

use super::Provider;
use crate::ToolCall;

/// One assistant turn: its text, its calls, and what must be sent back.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Turn {
    /// The provider the turn was read from.
    pub provider: Provider,
    /// The assistant's text, its parts joined in order (thinking excluded).
    pub text: String,
    /// The calls, in the order the model made them. Their arguments read
    /// as an object on every provider ([`ToolCall::arguments`]); the text
    /// the model wrote, where it wrote text, is kept as it came, even when
    /// it is not valid JSON ([`ToolCall::arguments_text`]).
    pub calls: Vec<ToolCall>,
    /// What the reader learned about each call, index for index with
    /// [`calls`](Self::calls).
    pub call_info: Vec<CallInfo>,
    /// The part of the response the provider requires back in the next
    /// request, exactly as received: the assistant message (Chat), the
    /// output items (Responses), the content blocks (Anthropic), the model
    /// content (Gemini).
    pub echo: Value,
    /// The provider's own word for why the turn ended (`finish_reason`,
    /// `stop_reason`, `finishReason`, `status`), when it gave one.
    pub finish_reason: Option<String>,
    /// Token counts, when the provider reported them.
    pub usage: Option<Usage>,
    /// The response's id (`id`, Gemini's `responseId`), when it gave one.
    pub response_id: Option<String>,
    /// The model that answered (`model`, Gemini's `modelVersion`), when the
    /// response named it: it may differ from the model asked for (a dated
    /// version, a gateway's choice).
    pub response_model: Option<String>,
}

impl Turn {
    pub(crate) fn new(provider: Provider, echo: Value) -> Self {
        Self {
            provider,
            text: String::new(),
            calls: Vec::new(),
            call_info: Vec::new(),
            echo,
            finish_reason: None,
            usage: None,
            response_id: None,
            response_model: None,
        }
    }

    /// Takes the response's id and model from the fields named.
    pub(crate) fn identify(&mut self, body: &Value, id: &str, model: &str) {
        let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_owned);
        self.response_id = text(id);
        self.response_model = text(model);
    }

    pub(crate) fn push_call(&mut self, call: ToolCall, info: CallInfo) {
        self.calls.push(call);
        self.call_info.push(info);
    }

    /// Whether the model made any call (otherwise the turn is its answer).
    pub fn has_calls(&self) -> bool {
        !self.calls.is_empty()
    }

    /// Whether the provider cut the turn off at its output limit
    /// (`length`, `max_tokens`, `MAX_TOKENS`, an `incomplete` response),
    /// the usual cause of truncated arguments.
    pub fn truncated(&self) -> bool {
        matches!(
            self.finish_reason.as_deref(),
            Some("length" | "max_tokens" | "MAX_TOKENS" | "incomplete")
        )
    }

    /// Whether any call's arguments are not valid JSON.
    pub fn has_malformed_calls(&self) -> bool {
        self.call_info.iter().any(|info| info.malformed.is_some())
    }
}

/// What the reader learned about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallInfo {
    /// A function call (JSON arguments) or a custom tool call (free text).
    pub kind: CallKind,
    /// Why the arguments cannot be parsed, when they cannot. The registry
    /// answers such a call with an error result; a transcript must not echo
    /// the broken text where the provider expects JSON.
    pub malformed: Option<String>,
    /// Whether the id was generated because the provider sent none (Gemini
    /// calls without `id`). Generated ids are stable: the same response
    /// always yields the same ids.
    pub generated_id: bool,
}

impl CallInfo {
    pub(crate) fn function(malformed: Option<String>) -> Self {
        Self {
            kind: CallKind::Function,
            malformed,
            generated_id: false,
        }
    }
}

/// The kind of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallKind {
    /// A function call whose arguments are JSON.
    Function,
    /// A custom tool call (OpenAI `custom` tools) whose input is free text,
    /// kept as the [`ToolCall`]'s text
    /// ([`arguments_text`](ToolCall::arguments_text)).
    Custom,
}

/// Token counts of one response.
///
/// The cache and reasoning counts are the provider's own, when it reports
/// them, and are parts of the totals as the provider counts them: OpenAI's
/// and Gemini's cached tokens are among the input tokens, Anthropic's
/// cache reads and writes are not (its `input_tokens` are the uncached
/// rest); reasoning tokens are among the output tokens.
///
/// ```
/// use toolkit_core::response::Usage;
///
/// let usage = Usage::new(1200, 80).with_cache_read_tokens(1024);
/// let total = usage + Usage::new(300, 20);
/// assert_eq!((total.input_tokens, total.output_tokens), (1500, 100));
/// assert_eq!(total.cache_read_tokens, Some(1024));
/// assert_eq!(total.reasoning_tokens, None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens read (the prompt).
    pub input_tokens: u64,
    /// Tokens written (the turn).
    pub output_tokens: u64,
    /// Input tokens served from the provider's prompt cache (OpenAI's
    /// `cached_tokens`, Anthropic's `cache_read_input_tokens`, Gemini's
    /// `cachedContentTokenCount`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Input tokens written to the provider's prompt cache (Anthropic's
    /// `cache_creation_input_tokens`; the others do not report it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Output tokens spent reasoning (OpenAI's `reasoning_tokens`, Gemini's
    /// `thoughtsTokenCount`; Anthropic does not report it apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// Where one provider's usage object keeps each count: the totals by key,
/// the details by JSON Pointer.
pub(crate) struct UsageFields {
    pub(crate) input: &'static str,
    pub(crate) output: &'static str,
    pub(crate) cache_read: Option<&'static str>,
    pub(crate) cache_write: Option<&'static str>,
    pub(crate) reasoning: Option<&'static str>,
}

impl Usage {
    /// Input and output counts, with no cache or reasoning counts.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            ..Self::default()
        }
    }

    /// With this many input tokens read from the prompt cache.
    pub fn with_cache_read_tokens(mut self, tokens: u64) -> Self {
        self.cache_read_tokens = Some(tokens);
        self
    }

    /// With this many input tokens written to the prompt cache.
    pub fn with_cache_write_tokens(mut self, tokens: u64) -> Self {
        self.cache_write_tokens = Some(tokens);
        self
    }

    /// With this many output tokens spent reasoning.
    pub fn with_reasoning_tokens(mut self, tokens: u64) -> Self {
        self.reasoning_tokens = Some(tokens);
        self
    }

    /// The counts `usage` holds where `fields` says, or `None` when it
    /// holds none of them.
    pub(crate) fn read(usage: &Value, fields: &UsageFields) -> Option<Self> {
        let count = |pointer: Option<&str>| {
            pointer
                .and_then(|pointer| usage.pointer(pointer))
                .and_then(Value::as_u64)
        };
        let input_tokens = usage.get(fields.input).and_then(Value::as_u64);
        let output_tokens = usage.get(fields.output).and_then(Value::as_u64);
        let found = Self {
            input_tokens: input_tokens.unwrap_or(0),
            output_tokens: output_tokens.unwrap_or(0),
            cache_read_tokens: count(fields.cache_read),
            cache_write_tokens: count(fields.cache_write),
            reasoning_tokens: count(fields.reasoning),
        };
        let any = input_tokens.is_some()
            || output_tokens.is_some()
            || found.cache_read_tokens.is_some()
            || found.cache_write_tokens.is_some()
            || found.reasoning_tokens.is_some();
        any.then_some(found)
    }
}

/// A sum of counts where either was reported; `None` where neither was.
fn add_reported(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    /// Saturating: counts come from the provider's response, and an
    /// absurd one must not wrap (or panic) a run's total under its budget.
    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cache_read_tokens: add_reported(self.cache_read_tokens, other.cache_read_tokens),
            cache_write_tokens: add_reported(self.cache_write_tokens, other.cache_write_tokens),
            reasoning_tokens: add_reported(self.reasoning_tokens, other.reasoning_tokens),
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// A response that holds no readable turn.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// The body is not JSON.
    NotJson {
        /// The provider expected.
        provider: Provider,
        /// The parser's message.
        message: String,
    },
    /// The body is JSON but lacks what the provider puts there.
    Shape {
        /// The provider expected.
        provider: Provider,
        /// What is missing or of the wrong type.
        message: String,
    },
    /// The provider answered with an error object instead of a turn.
    Provider {
        /// The provider expected.
        provider: Provider,
        /// The error object, as sent.
        error: Value,
    },
    /// The provider is not a model API ([`Provider::Mcp`]): there is no
    /// turn to read.
    NotAModelApi {
        /// The provider given.
        provider: Provider,
    },
    /// A stream event out of order or of the wrong shape.
    Stream {
        /// The provider expected.
        provider: Provider,
        /// What was wrong.
        message: String,
    },
}

impl ReadError {
    pub(crate) fn shape(provider: Provider, message: impl Into<String>) -> Self {
        ReadError::Shape {
            provider,
            message: message.into(),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotJson { provider, message } => {
                write!(f, "the {provider} response is not JSON: {message}")
            }
            ReadError::Shape { provider, message } => {
                write!(f, "the {provider} response has no readable turn: {message}")
            }
            ReadError::Provider { provider, error } => {
                write!(f, "the {provider} provider answered with an error: {error}")
            }
            ReadError::NotAModelApi { provider } => {
                write!(
                    f,
                    "{provider} is not a model API: it has no responses to read"
                )
            }
            ReadError::Stream { provider, message } => {
                write!(f, "the {provider} stream is malformed: {message}")
            }
        }
    }
}

impl std::error::Error for ReadError {}

/// The error object of a body that carries one instead of a turn.
pub(crate) fn provider_error(provider: Provider, body: &Value) -> Option<ReadError> {
    let error = body.get("error").filter(|error| !error.is_null())?;
    Some(ReadError::Provider {
        provider,
        error: error.clone(),
    })
}
