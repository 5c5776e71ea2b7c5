//! The providers: the APIs that tool lists, results and responses are
//! written for, and the schema dialects each takes.

use std::fmt;
use std::str::FromStr;

use crate::schema::Dialect;

/// An API that tool lists, results and responses are written for: a model
/// provider's, or MCP's.
///
/// Its JSON form is its [short name](Self::as_str), a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions, non-strict: `{"type": "function", "function": {…}}`.
    OpenAi,
    /// OpenAI Chat Completions in strict mode: every tool must lower to the
    /// strict subset, and is sent with `strict: true`.
    OpenAiStrict,
    /// OpenAI Responses: the flat tool shape, `strict` always explicit (true
    /// exactly when the tool lowers to the strict subset).
    OpenAiResponses,
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// Gemini function declarations, `parameters` in its OpenAPI subset.
    Gemini,
    /// MCP `Tool`s: `{name, description, inputSchema}`.
    Mcp,
}

impl Provider {
    /// Every provider, in a fixed order.
    pub const ALL: [Provider; 6] = [
        Provider::OpenAi,
        Provider::OpenAiStrict,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Mcp,
    ];

    /// The provider's short name: `openai`, `openai-strict`, `responses`,
    /// `anthropic`, `gemini` or `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::OpenAiStrict => "openai-strict",
            Provider::OpenAiResponses => "responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::Mcp => "mcp",
        }
    }
}

impl Provider {
    /// The schema dialects the provider takes, best first: a tool's
    /// parameters are sent in the first its schema can be lowered to, and a
    /// schema that lowers to none cannot be sent to the provider.
    ///
    /// This is the one place that decides which schema a provider gets.
    /// Responses takes strict mode when the schema allows it (the flag is
    /// then sent as `true`), else the canonical schema with `strict: false`:
    /// a schema that only almost fits would fail the whole request.
    pub fn schema_dialects(self) -> &'static [Dialect] {
        match self {
            Provider::OpenAi | Provider::Anthropic | Provider::Mcp => &[Dialect::Canonical],
            Provider::OpenAiStrict => &[Dialect::OpenAiStrict],
            Provider::OpenAiResponses => &[Dialect::OpenAiStrict, Dialect::Canonical],
            Provider::Gemini => &[Dialect::Gemini, Dialect::GeminiJsonSchema],
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Provider::ALL
            .into_iter()
            .find(|provider| provider.as_str() == name)
            .ok_or_else(|| UnknownProvider(name.to_owned()))
    }
}

/// A provider name that [`Provider::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProvider(String);

impl fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
        write!(
            f,
            "unknown provider `{}` (known: {})",
            self.0,
            known.join(", ")
        )
    }
}

impl std::error::Error for UnknownProvider {}

impl serde::Serialize for Provider {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Provider {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}
