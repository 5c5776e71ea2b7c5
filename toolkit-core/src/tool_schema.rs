//! A tool's parameter schemas: the canonical one, and its lowering for each
//! provider, each built once per process.

use std::sync::OnceLock;

use serde_json::Value;

use crate::Provider;
use crate::schema::{self, Json, LoweringError, SchemaError};

/// A tool's parameter schemas.
///
/// The canonical schema is built when the tool's definition is first asked
/// for its schema; each provider's lowering when first asked for. After
/// that, every access is a read of memory already computed.
pub struct ToolSchema {
    canonical: Result<Canonical, SchemaError>,
    strict: OnceLock<Result<Lowered, LoweringError>>,
    gemini: OnceLock<Result<Lowered, LoweringError>>,
}

struct Canonical {
    json: Json,
    text: String,
}

/// A lowered schema, as a tree for building definitions and as text.
pub(crate) struct Lowered {
    pub(crate) json: Json,
    pub(crate) text: String,
}

impl Lowered {
    fn new(json: Json) -> Self {
        let text = json.to_json_string();
        Self { json, text }
    }
}

impl ToolSchema {
    pub(crate) fn build(generated: &Value, params: &[&str]) -> Self {
        let canonical = schema::canonicalize(generated, params).map(|json| Canonical {
            text: json.to_json_string(),
            json,
        });
        Self {
            canonical,
            strict: OnceLock::new(),
            gemini: OnceLock::new(),
        }
    }

    /// The canonical schema, as JSON text: a JSON Schema 2020-12 object,
    /// parameters in declaration order, byte-identical in every build.
    pub fn canonical(&self) -> Result<&str, SchemaError> {
        self.canonical
            .as_ref()
            .map(|canonical| canonical.text.as_str())
            .map_err(Clone::clone)
    }

    /// The parameter schema as `provider` receives it, as JSON text.
    pub fn lowered(&self, provider: Provider) -> Result<&str, ToolSchemaError> {
        self.lowered_tree(provider).map(|json| json.1)
    }

    /// Whether the OpenAI strict-mode lowering succeeds, which decides the
    /// `strict` flag sent to the Responses API.
    pub fn is_strict_valid(&self) -> bool {
        self.canonical
            .as_ref()
            .is_ok_and(|canonical| self.strict(canonical).is_ok())
    }

    /// The lowered schema for `provider`, as a tree and as text.
    pub(crate) fn lowered_tree(
        &self,
        provider: Provider,
    ) -> Result<(&Json, &str), ToolSchemaError> {
        let canonical = self
            .canonical
            .as_ref()
            .map_err(|error| ToolSchemaError::Canonical(error.clone()))?;
        match provider {
            Provider::OpenAi | Provider::Anthropic | Provider::Mcp => {
                Ok((&canonical.json, canonical.text.as_str()))
            }
            Provider::OpenAiStrict => self
                .strict(canonical)
                .map(|l| (&l.json, l.text.as_str()))
                .map_err(ToolSchemaError::Lowering),
            Provider::OpenAiResponses => match self.strict(canonical) {
                Ok(lowered) => Ok((&lowered.json, lowered.text.as_str())),
                Err(_) => Ok((&canonical.json, canonical.text.as_str())),
            },
            Provider::Gemini => self
                .gemini
                .get_or_init(|| schema::gemini(&canonical.json).map(Lowered::new))
                .as_ref()
                .map(|l| (&l.json, l.text.as_str()))
                .map_err(|error| ToolSchemaError::Lowering(error.clone())),
        }
    }

    fn strict(&self, canonical: &Canonical) -> Result<&Lowered, LoweringError> {
        self.strict
            .get_or_init(|| schema::openai_strict(&canonical.json).map(Lowered::new))
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl std::fmt::Debug for ToolSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSchema")
            .field("canonical", &self.canonical())
            .finish_non_exhaustive()
    }
}

/// Why a tool's schema cannot be given for a provider.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSchemaError {
    /// The canonical schema could not be built.
    Canonical(SchemaError),
    /// The canonical schema cannot be expressed in the provider's dialect.
    Lowering(LoweringError),
}

impl std::fmt::Display for ToolSchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Canonical(error) => error.fmt(f),
            Self::Lowering(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ToolSchemaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Canonical(error) => Some(error),
            Self::Lowering(error) => Some(error),
        }
    }
}
