//! Typed request settings, written in each provider's own fields.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The output-token limit Anthropic gets when none is set: the API requires
/// one, and this is a generous default a host can lower.
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

/// How hard a reasoning model thinks before it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ReasoningEffort {
    /// Quick answers, few reasoning tokens.
    Low,
    /// The providers' usual default.
    Medium,
    /// The deepest reasoning.
    High,
}

impl ReasoningEffort {
    /// The value as every provider spells it (`low`, `medium`, `high`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// Sampling, length and reasoning settings of a request, each written in
/// the provider's own field by
/// [`Conversation::set_settings`](crate::Conversation::set_settings).
/// Unset settings are not sent: the provider's default holds.
///
/// | setting | Chat Completions | Responses | Anthropic | Gemini (`generationConfig`) |
/// |---|---|---|---|---|
/// | [`temperature`](Self::temperature) | `temperature` | `temperature` | `temperature` | `temperature` |
/// | [`top_p`](Self::top_p) | `top_p` | `top_p` | `top_p` | `topP` |
/// | [`max_output_tokens`](Self::max_output_tokens) | `max_completion_tokens` | `max_output_tokens` | `max_tokens` (4096 when unset) | `maxOutputTokens` |
/// | [`stop`](Self::stop) | `stop` | not sent | `stop_sequences` | `stopSequences` |
/// | [`seed`](Self::seed) | `seed` | not sent | not sent | `seed` |
/// | [`reasoning_effort`](Self::reasoning_effort) | `reasoning_effort` | `reasoning.effort` | `output_config.effort` | `thinkingConfig.thinkingLevel` |
/// | [`thinking_budget`](Self::thinking_budget) | not sent | not sent | `thinking: {type: enabled, budget_tokens}` | `thinkingConfig.thinkingBudget` |
/// | [`parallel_calls`](Self::parallel_calls) | `parallel_tool_calls` | `parallel_tool_calls` | `tool_choice.disable_parallel_tool_use` | not sent |
///
/// "Not sent" means the API has no such field: the setting is left out
/// rather than refused, so that one `Settings` serves every provider;
/// [`unsent`](Self::unsent) names what a provider would leave out, for a
/// host that prefers to refuse. Parallel calls are only sent with tools
/// (OpenAI refuses `parallel_tool_calls` without them). Gemini refuses a
/// thinking level and a thinking budget together: given both, it gets the
/// budget. Chat Completions gets `max_completion_tokens`, the current
/// field (OpenAI's reasoning models refuse `max_tokens`); a server that
/// only knows `max_tokens` gets it through
/// [`Conversation::set`](crate::Conversation::set).
///
/// Nothing here checks values against a provider's ranges (a temperature
/// of 2 is valid for OpenAI, not for Anthropic): the provider's refusal
/// names the field. [`problems`](Self::problems) finds the values no
/// provider takes.
///
/// ```
/// use toolkit_agent::{Conversation, ReasoningEffort, Settings};
/// use toolkit_core::Provider;
///
/// let settings = Settings::new()
///     .temperature(0.2)
///     .max_output_tokens(512)
///     .stop(["END"])
///     .reasoning_effort(ReasoningEffort::Low);
/// assert!(settings.problems().is_empty());
///
/// let mut conversation = Conversation::new(Provider::Gemini);
/// conversation.set_settings(settings.clone());
/// let body = conversation.request();
/// assert_eq!(body["generationConfig"]["maxOutputTokens"], 512);
/// assert_eq!(body["generationConfig"]["thinkingConfig"]["thinkingLevel"], "low");
///
/// // The Responses API has no stop sequences.
/// assert_eq!(settings.unsent(Provider::OpenAiResponses), ["stop"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Settings {
    /// Sampling temperature: lower is more deterministic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling: only tokens within this probability mass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// The most tokens the model may write (reasoning included where the
    /// provider counts it so).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Text at which the model stops writing (not included in the answer).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// A seed, for repeatable sampling where the provider offers it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// How hard a reasoning model thinks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// The most tokens a model may spend thinking (Anthropic's extended
    /// thinking, Gemini's thinking budget).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// Whether several calls may come in one turn (unset: the provider's
    /// default, which allows them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_calls: Option<bool>,
}

impl Settings {
    /// No settings: every provider's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets nucleus sampling.
    pub fn top_p(mut self, top_p: f64) -> Self {
        self.top_p = Some(top_p);
        self
    }

    /// Sets the most tokens the model may write.
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.max_output_tokens = Some(tokens);
        self
    }

    /// Sets the stop sequences.
    pub fn stop<S: Into<String>>(mut self, sequences: impl IntoIterator<Item = S>) -> Self {
        self.stop = sequences.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: i64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Sets the reasoning effort.
    pub fn reasoning_effort(mut self, effort: ReasoningEffort) -> Self {
        self.reasoning_effort = Some(effort);
        self
    }

    /// Sets the thinking budget, in tokens.
    pub fn thinking_budget(mut self, tokens: u32) -> Self {
        self.thinking_budget = Some(tokens);
        self
    }

    /// Allows or forbids several calls in one turn.
    pub fn parallel_calls(mut self, parallel: bool) -> Self {
        self.parallel_calls = Some(parallel);
        self
    }

    /// The values no provider takes, one sentence each: a temperature or
    /// `top_p` that is not a finite number at least 0, a `top_p` above 1,
    /// an empty stop sequence. Empty when there are none.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (name, value) in [("temperature", self.temperature), ("top_p", self.top_p)] {
            if let Some(value) = value
                && !(value.is_finite() && value >= 0.0)
            {
                problems.push(format!("{name} must be a number at least 0, not {value}"));
            }
        }
        if let Some(top_p) = self.top_p
            && top_p > 1.0
        {
            problems.push(format!("top_p must be at most 1, not {top_p}"));
        }
        if self.stop.iter().any(String::is_empty) {
            problems.push("a stop sequence is empty".to_owned());
        }
        problems
    }

    /// The stop sequences, when there are any.
    pub(crate) fn stop_sequences(&self) -> Option<Value> {
        (!self.stop.is_empty()).then(|| json!(self.stop))
    }
}

/// Sets `key` when there is a value.
pub(crate) fn put(body: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        body.insert(key.into(), value);
    }
}

/// Sets `key` inside the object at `object` (Gemini's `generationConfig`,
/// Anthropic's `output_config`), making the object when it is missing:
/// settings and the answer's schema share those objects.
pub(crate) fn member(body: &mut Map<String, Value>, object: &str, key: &str, value: Value) {
    let entry = body
        .entry(object)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Value::Object(members) = entry {
        members.insert(key.into(), value);
    }
}
