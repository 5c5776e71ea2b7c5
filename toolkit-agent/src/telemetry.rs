//! The agent's spans, in the names of the OpenTelemetry GenAI semantic
//! conventions: `invoke_agent {gen_ai.agent.name}` around a run, and
//! `{gen_ai.operation.name} {gen_ai.request.model}` around each request
//! an [`HttpModel`](crate::HttpModel) sends (docs/observability.md).
//!
//! Every span and attribute name the crate records is written here, so
//! they change in one place. Content (messages, instructions, tool
//! definitions) is recorded only while
//! [`toolkit_core::telemetry::captures_content`] says so; nothing here ever
//! records a key, a header or a query parameter.
//!
//! Each request also records the conventions' client metrics, as events
//! `tracing-opentelemetry`'s `MetricsLayer` turns into histograms
//! ([`metrics`]).

use std::borrow::Cow;

use serde_json::{Map, Value, json};
use toolkit_core::Provider;
use toolkit_core::response::Turn;
use toolkit_core::telemetry::{SpanName, captures_content};
use tracing::Span;
use tracing::field::Empty;

use crate::agent::outcome::{Outcome, RunError, StopReason};
use crate::model::ModelError;
use crate::providers::Api;
use crate::providers::trace::tool_call;
use crate::session::{Decision, PendingCall};

pub mod metrics;

/// The operation of an agent run's span.
pub const INVOKE_AGENT: &str = "invoke_agent";

/// Attribute names the agent's spans record besides toolkit-core's
/// ([`toolkit_core::telemetry::attr`]).
pub mod attr {
    /// The agent's name (`AgentBuilder::name`).
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    /// The session's id.
    pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
    /// `openai`, `anthropic`, `gcp.gemini`.
    pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
    /// The model asked for.
    pub const REQUEST_MODEL: &str = "gen_ai.request.model";
    /// The output limit the request set.
    pub const REQUEST_MAX_TOKENS: &str = "gen_ai.request.max_tokens";
    /// The temperature the request set.
    pub const REQUEST_TEMPERATURE: &str = "gen_ai.request.temperature";
    /// The top-p the request set.
    pub const REQUEST_TOP_P: &str = "gen_ai.request.top_p";
    /// The top-k the request set.
    pub const REQUEST_TOP_K: &str = "gen_ai.request.top_k";
    /// The seed the request set.
    pub const REQUEST_SEED: &str = "gen_ai.request.seed";
    /// The frequency penalty the request set.
    pub const REQUEST_FREQUENCY_PENALTY: &str = "gen_ai.request.frequency_penalty";
    /// The presence penalty the request set.
    pub const REQUEST_PRESENCE_PENALTY: &str = "gen_ai.request.presence_penalty";
    /// The stop sequences the request set, as a JSON array.
    pub const REQUEST_STOP_SEQUENCES: &str = "gen_ai.request.stop_sequences";
    /// The number of choices asked for.
    pub const REQUEST_CHOICE_COUNT: &str = "gen_ai.request.choice.count";
    /// Whether the answer was streamed.
    pub const REQUEST_STREAM: &str = "gen_ai.request.stream";
    /// The response's id.
    pub const RESPONSE_ID: &str = "gen_ai.response.id";
    /// The model that answered.
    pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
    /// Why the turn ended, as a JSON array of the provider's words.
    pub const RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
    /// Tokens read.
    pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    /// Tokens written.
    pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    /// Input tokens served from the provider's cache.
    pub const USAGE_CACHE_READ_INPUT_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
    /// Input tokens written to the provider's cache.
    pub const USAGE_CACHE_CREATION_INPUT_TOKENS: &str = "gen_ai.usage.cache_creation.input_tokens";
    /// Output tokens spent reasoning.
    pub const USAGE_REASONING_OUTPUT_TOKENS: &str = "gen_ai.usage.reasoning.output_tokens";
    /// The endpoint's host.
    pub const SERVER_ADDRESS: &str = "server.address";
    /// The endpoint's port.
    pub const SERVER_PORT: &str = "server.port";
    /// The messages sent (captured content).
    pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
    /// The messages received (captured content).
    pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
    /// The system instructions sent apart from the messages (captured
    /// content).
    pub const SYSTEM_INSTRUCTIONS: &str = "gen_ai.system_instructions";
    /// The tools offered (captured content).
    pub const TOOL_DEFINITIONS: &str = "gen_ai.tool.definitions";
    /// A run's steps so far (the toolkit's own attribute).
    pub const RUN_STEPS: &str = "toolkit.run.steps";
    /// Why a run stopped (the toolkit's own attribute).
    pub const RUN_STOP_REASON: &str = "toolkit.run.stop_reason";
}

pub(crate) use crate::providers::provider_name;

/// The conventions' operation of a request to `provider`.
fn operation(provider: Provider) -> &'static str {
    Api::of(provider).dialect().operation()
}

/// The span of a run.
pub(crate) fn agent_span(name: Option<&str>, conversation: &str, provider: Provider) -> Span {
    tracing::info_span!(
        "invoke_agent",
        "otel.name" = %SpanName(INVOKE_AGENT, name.unwrap_or("")),
        "otel.kind" = "internal",
        "gen_ai.operation.name" = INVOKE_AGENT,
        "gen_ai.agent.name" = name,
        "gen_ai.conversation.id" = conversation,
        "gen_ai.provider.name" = provider_name(provider),
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "toolkit.run.steps" = Empty,
        "toolkit.run.stop_reason" = Empty,
        "error.type" = Empty,
    )
}

/// Records how a run ended.
pub(crate) fn record_run(span: &Span, result: Result<&Outcome, &RunError>) {
    if span.is_disabled() {
        return;
    }
    match result {
        Ok(outcome) => {
            span.record(attr::RUN_STEPS, outcome.steps as u64);
            span.record(attr::RUN_STOP_REASON, stop_kind(&outcome.stop));
            span.record(attr::USAGE_INPUT_TOKENS, outcome.usage.input_tokens);
            span.record(attr::USAGE_OUTPUT_TOKENS, outcome.usage.output_tokens);
        }
        Err(error) => {
            let kind = match error {
                RunError::Model(error) => model_error_kind(error),
                RunError::Tools(_) => Cow::Borrowed("tool_list"),
                RunError::Store(_) => Cow::Borrowed("store"),
                RunError::Session(_) => Cow::Borrowed("session"),
                RunError::AnswerSchema(_) | RunError::AnswerTool(_) | RunError::SchemaWithTools => {
                    Cow::Borrowed("answer_type")
                }
                RunError::Output { .. } => Cow::Borrowed("output"),
                RunError::Truncated { .. } => Cow::Borrowed("truncated"),
            };
            span.record("error.type", kind.as_ref());
        }
    }
}

/// Why a run stopped, one word.
fn stop_kind(stop: &StopReason) -> &'static str {
    match stop {
        StopReason::Done => "done",
        StopReason::StopAfter(_) => "stop_after",
        StopReason::Answered => "answered",
        StopReason::Truncated => "truncated",
        StopReason::StepLimit => "step_limit",
        StopReason::TokenBudget => "token_budget",
        StopReason::Cancelled => "cancelled",
        StopReason::Paused => "paused",
        StopReason::ToolFailures { .. } => "tool_failures",
    }
}

/// A failed request's `error.type`: the HTTP status code when the server
/// answered with one (as the conventions' HTTP spans do), else the kind.
pub(crate) fn model_error_kind(error: &ModelError) -> Cow<'static, str> {
    Cow::Borrowed(match error {
        ModelError::Status { status, .. } => return Cow::Owned(status.to_string()),
        ModelError::Timeout { .. } => "timeout",
        ModelError::Transport { .. } => "transport",
        ModelError::Read(_) => "invalid_response",
        ModelError::Config(_) => "config",
    })
}

/// A step begins (an event in the run's span).
pub(crate) fn step_started(step: usize) {
    tracing::info!(event.name = "toolkit.step", toolkit.run.step = step as u64,);
}

/// A run resumed a session (an event in the run's span).
pub(crate) fn resumed(step: Option<usize>) {
    tracing::info!(
        event.name = "toolkit.resume",
        toolkit.run.step = step.map(|step| step as u64),
    );
}

/// A decision on a call that waited for one; `None` when no hook was
/// asked (the call is deferred to the host).
pub(crate) fn decision(pending: &PendingCall, decision: &Decision) {
    let kind = match decision {
        Decision::Approve => "approve",
        Decision::Deny(_) => "deny",
        Decision::Edit(_) => "edit",
        Decision::Answered(_) => "answered",
        Decision::Defer => "defer",
    };
    tracing::info!(
        event.name = "toolkit.approval",
        gen_ai.tool.name = pending.call.name.as_str(),
        gen_ai.tool.call.id = pending.call.id.as_str(),
        toolkit.approval.decision = kind,
    );
}

/// The run paused with calls waiting for decisions.
pub(crate) fn paused(waiting: usize) {
    tracing::info!(
        event.name = "toolkit.pause",
        toolkit.run.waiting_calls = waiting as u64,
    );
}

/// The span of one request to a model over HTTP, with what the body
/// sets. `base_url` names the server (address and port only).
pub(crate) fn model_span(
    provider: Provider,
    model: &str,
    base_url: &str,
    body: &Value,
    stream: bool,
) -> Span {
    let operation = operation(provider);
    let span = tracing::info_span!(
        "chat",
        "otel.name" = %SpanName(operation, model),
        "otel.kind" = "client",
        "gen_ai.operation.name" = operation,
        "gen_ai.provider.name" = provider_name(provider),
        "gen_ai.request.model" = model,
        "gen_ai.request.stream" = stream,
        "gen_ai.request.max_tokens" = Empty,
        "gen_ai.request.temperature" = Empty,
        "gen_ai.request.top_p" = Empty,
        "gen_ai.request.top_k" = Empty,
        "gen_ai.request.seed" = Empty,
        "gen_ai.request.frequency_penalty" = Empty,
        "gen_ai.request.presence_penalty" = Empty,
        "gen_ai.request.stop_sequences" = Empty,
        "gen_ai.request.choice.count" = Empty,
        "server.address" = Empty,
        "server.port" = Empty,
        "gen_ai.response.id" = Empty,
        "gen_ai.response.model" = Empty,
        "gen_ai.response.finish_reasons" = Empty,
        "gen_ai.usage.input_tokens" = Empty,
        "gen_ai.usage.output_tokens" = Empty,
        "gen_ai.usage.cache_read.input_tokens" = Empty,
        "gen_ai.usage.cache_creation.input_tokens" = Empty,
        "gen_ai.usage.reasoning.output_tokens" = Empty,
        "error.type" = Empty,
        "gen_ai.input.messages" = Empty,
        "gen_ai.system_instructions" = Empty,
        "gen_ai.tool.definitions" = Empty,
        "gen_ai.output.messages" = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if let Ok(url) = reqwest::Url::parse(base_url) {
        if let Some(host) = url.host_str() {
            span.record(attr::SERVER_ADDRESS, host);
        }
        if let Some(port) = url.port_or_known_default() {
            span.record(attr::SERVER_PORT, u64::from(port));
        }
    }
    let dialect = Api::of(provider).dialect();
    record_settings(&span, dialect.settings_of(body));
    if captures_content() {
        let content = RequestContent::of(provider, body);
        if !content.messages.is_empty() {
            span.record(
                attr::INPUT_MESSAGES,
                Value::Array(content.messages).to_string(),
            );
        }
        if !content.system.is_empty() {
            span.record(
                attr::SYSTEM_INSTRUCTIONS,
                Value::Array(content.system).to_string(),
            );
        }
        if !content.tools.is_empty() {
            span.record(
                attr::TOOL_DEFINITIONS,
                Value::Array(content.tools).to_string(),
            );
        }
    }
    span
}

/// Each setting the conventions name, and the keys providers send it by
/// (Gemini's inside `generationConfig`).
const SETTINGS: [(&str, &[&str]); 9] = [
    (
        attr::REQUEST_MAX_TOKENS,
        &[
            "max_tokens",
            "max_completion_tokens",
            "max_output_tokens",
            "maxOutputTokens",
        ],
    ),
    (attr::REQUEST_TEMPERATURE, &["temperature"]),
    (attr::REQUEST_TOP_P, &["top_p", "topP"]),
    (attr::REQUEST_TOP_K, &["top_k", "topK"]),
    (attr::REQUEST_SEED, &["seed"]),
    (
        attr::REQUEST_FREQUENCY_PENALTY,
        &["frequency_penalty", "frequencyPenalty"],
    ),
    (
        attr::REQUEST_PRESENCE_PENALTY,
        &["presence_penalty", "presencePenalty"],
    ),
    (
        attr::REQUEST_STOP_SEQUENCES,
        &["stop", "stop_sequences", "stopSequences"],
    ),
    (attr::REQUEST_CHOICE_COUNT, &["n", "candidateCount"]),
];

/// Records the settings `settings`, the request's object holding them,
/// sets.
fn record_settings(span: &Span, settings: Option<&Value>) {
    let Some(settings) = settings.and_then(Value::as_object) else {
        return;
    };
    for (name, keys) in SETTINGS {
        let Some(value) = keys.iter().find_map(|key| settings.get(*key)) else {
            continue;
        };
        match value {
            Value::Number(number) => match (number.as_u64(), number.as_i64()) {
                (Some(n), _) => span.record(name, n),
                (None, Some(n)) => span.record(name, n),
                _ => span.record(name, number.as_f64().unwrap_or_default()),
            },
            // One stop sequence may be sent as a string: the attribute is
            // an array either way.
            Value::String(one) => span.record(name, json!([one]).to_string().as_str()),
            Value::Array(_) => span.record(name, value.to_string().as_str()),
            _ => continue,
        };
    }
}

/// Records the turn read from the response.
pub(crate) fn record_turn(span: &Span, turn: &Turn) {
    if span.is_disabled() {
        return;
    }
    if let Some(id) = &turn.response_id {
        span.record(attr::RESPONSE_ID, id.as_str());
    }
    if let Some(model) = &turn.response_model {
        span.record(attr::RESPONSE_MODEL, model.as_str());
    }
    if let Some(reason) = &turn.finish_reason {
        span.record(
            attr::RESPONSE_FINISH_REASONS,
            json!([reason]).to_string().as_str(),
        );
    }
    if let Some(usage) = turn.usage {
        span.record(attr::USAGE_INPUT_TOKENS, usage.input_tokens);
        span.record(attr::USAGE_OUTPUT_TOKENS, usage.output_tokens);
        let details = [
            (attr::USAGE_CACHE_READ_INPUT_TOKENS, usage.cache_read_tokens),
            (
                attr::USAGE_CACHE_CREATION_INPUT_TOKENS,
                usage.cache_write_tokens,
            ),
            (attr::USAGE_REASONING_OUTPUT_TOKENS, usage.reasoning_tokens),
        ];
        for (name, count) in details {
            if let Some(count) = count {
                span.record(name, count);
            }
        }
    }
    if captures_content() {
        let mut parts = Vec::new();
        if !turn.text.is_empty() {
            parts.push(json!({"type": "text", "content": turn.text}));
        }
        for call in &turn.calls {
            // The object, parsed once for the call; malformed text as the
            // model wrote it.
            let written = match call.arguments_text() {
                Some(text) if call.is_malformed() => Value::String(text.to_owned()),
                _ => call.arguments().clone(),
            };
            parts.push(tool_call(&call.id, &call.name, &written));
        }
        let mut message = json!({"role": "assistant", "parts": parts});
        if let Some(reason) = &turn.finish_reason {
            message["finish_reason"] = Value::String(reason.clone());
        }
        span.record(attr::OUTPUT_MESSAGES, json!([message]).to_string().as_str());
    }
}

/// Records why a request failed.
pub(crate) fn record_error(span: &Span, error: &ModelError) {
    span.record("error.type", model_error_kind(error).as_ref());
}

/// A retry, as an event in the request's span: the attempt that failed
/// and why (a status code or `transport`), never the body.
pub(crate) fn retry(attempt: u32, reason: &str, status: Option<u16>) {
    tracing::info!(
        event.name = "toolkit.retry",
        toolkit.retry.attempt = u64::from(attempt),
        toolkit.retry.reason = reason,
        http.response.status_code = status.map(u64::from),
    );
}

/// A request's content in the conventions' shapes.
#[derive(Default)]
struct RequestContent {
    messages: Vec<Value>,
    system: Vec<Value>,
    tools: Vec<Value>,
}

impl RequestContent {
    fn of(provider: Provider, body: &Value) -> Self {
        let dialect = Api::of(provider).dialect();
        let mut content = Self::default();
        dialect.trace_content(body, &mut content.messages, &mut content.system);
        content.tools = dialect
            .trace_tools(body)
            .into_iter()
            .map(|tool| {
                let mut definition = Map::new();
                definition.insert("type".into(), json!("function"));
                definition.insert("name".into(), json!(tool.name));
                if let Some(description) = tool.description {
                    definition.insert("description".into(), description.clone());
                }
                if let Some(parameters) = tool.parameters {
                    definition.insert("parameters".into(), parameters.clone());
                }
                Value::Object(definition)
            })
            .collect();
        content
    }
}
