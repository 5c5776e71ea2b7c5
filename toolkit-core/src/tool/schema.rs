//! A tool's parameter schemas: the canonical one, and its lowering for each
//! provider, each built once per process.

use std::sync::OnceLock;

use serde_json::Value;

use super::enforcement;
use super::shape::Shape;
use crate::Provider;
use crate::schema::{self, Dialect, LoweringError, OrderedJson, SchemaError, Source};

/// A tool's parameter schemas.
///
/// The canonical schema is built when the tool's definition is first asked
/// for its schema; each provider's lowering when first asked for. After
/// that, every access is a read of memory already computed.
///
/// A schema given as JSON (a run-time tool's, an MCP server's) is kept as
/// written too, and MCP receives that form ([`Dialect::Written`]): JSON
/// Schema 2020-12 is MCP's own dialect, so `$schema`, `$defs`, `$anchor`
/// and `$ref` reach its clients as the author wrote them. Every other
/// provider receives the canonical schema or its lowering.
pub struct ToolSchema {
    canonical: Result<Canonical, SchemaError>,
    // The schema as given, for a tool whose schema is not derived.
    written: Option<Lowered>,
    // Whether serde, reading the arguments into their Rust types, refuses
    // by itself everything the canonical schema refuses; when not, the
    // arguments are checked against the schema too.
    serde_enforces: bool,
    // The canonical schema as a `Value`, for checking refused arguments.
    canonical_value: OnceLock<Value>,
    // The canonical schema compiled into a checker of argument text, when
    // it can be (see `shape.rs`).
    shape: OnceLock<Option<Shape>>,
    strict: OnceLock<Result<Lowered, LoweringError>>,
    gemini: OnceLock<Result<Lowered, LoweringError>>,
    gemini_json_schema: OnceLock<Result<Lowered, LoweringError>>,
}

struct Canonical {
    json: OrderedJson,
    text: String,
}

/// A tool's schema as a provider receives it.
pub(crate) struct LoweredRef<'a> {
    pub(crate) json: &'a OrderedJson,
    pub(crate) text: &'a str,
    pub(crate) dialect: Dialect,
}

/// A lowered schema, as a tree for building definitions and as text.
pub(crate) struct Lowered {
    pub(crate) json: OrderedJson,
    pub(crate) text: String,
}

impl Lowered {
    fn new(json: OrderedJson) -> Self {
        let text = json.to_json_string();
        Self { json, text }
    }
}

impl ToolSchema {
    /// The schemas of a tool whose argument struct is `T`, its parameters in
    /// declaration order.
    pub(crate) fn of<T: schemars::JsonSchema>(params: &[&str]) -> Self {
        Self::build(&schema::generate::<T>(), params, Source::Derived)
    }

    pub(crate) fn build(generated: &Value, params: &[&str], source: Source) -> Self {
        let canonical =
            schema::canonicalize_from(generated, params, source).map(|json| Canonical {
                text: json.to_json_string(),
                json,
            });
        Self {
            serde_enforces: source == Source::Derived && enforcement::serde_enforces(generated),
            // MCP requires an object root; a schema without one is sent in
            // its canonical form, which has it.
            written: (source == Source::Given
                && generated.get("type").and_then(Value::as_str) == Some("object"))
            .then(|| Lowered::new(OrderedJson::from(generated))),
            canonical,
            canonical_value: OnceLock::new(),
            shape: OnceLock::new(),
            strict: OnceLock::new(),
            gemini: OnceLock::new(),
            gemini_json_schema: OnceLock::new(),
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

    /// The canonical schema as an ordered tree.
    pub(crate) fn canonical_tree(&self) -> Option<&OrderedJson> {
        self.canonical
            .as_ref()
            .ok()
            .map(|canonical| &canonical.json)
    }

    /// Whether reading the arguments with serde alone refuses everything
    /// the canonical schema refuses (see [`enforcement`]).
    #[inline]
    pub(crate) fn serde_enforces(&self) -> bool {
        self.serde_enforces
    }

    /// The canonical schema as a `Value`, built on first use (when a call's
    /// arguments are checked, or refused and the refusal explained).
    pub(crate) fn canonical_value(&self) -> Option<&Value> {
        let canonical = self.canonical.as_ref().ok()?;
        Some(
            self.canonical_value
                .get_or_init(|| canonical.json.to_value()),
        )
    }

    /// The canonical schema compiled into a checker that takes the
    /// arguments' text as it is when the slow way would (see `shape.rs`),
    /// built on first use; `None` when it cannot be compiled.
    #[inline]
    pub(crate) fn shape(&self) -> Option<&Shape> {
        self.shape
            .get_or_init(|| self.canonical_value().and_then(Shape::compile))
            .as_ref()
    }

    /// The schema as written, as JSON text, for a tool whose schema was
    /// given as JSON; `None` for a tool whose schema is derived from its
    /// Rust types.
    pub fn written(&self) -> Option<&str> {
        self.written.as_ref().map(|written| written.text.as_str())
    }

    /// The parameter schema as `provider` receives it, as JSON text.
    pub fn lowered(&self, provider: Provider) -> Result<&str, ToolSchemaError> {
        self.lowered_tree(provider).map(|lowered| lowered.text)
    }

    /// The schema dialect `provider` receives this schema in: for Gemini,
    /// [`Dialect::GeminiJsonSchema`] (sent as `parametersJsonSchema`) when
    /// `parameters` cannot express it; for MCP, [`Dialect::Written`] when
    /// the schema was given as JSON.
    pub fn dialect(&self, provider: Provider) -> Result<Dialect, ToolSchemaError> {
        self.lowered_tree(provider).map(|lowered| lowered.dialect)
    }

    /// Whether the OpenAI strict-mode lowering succeeds, which decides the
    /// `strict` flag sent to the Responses API.
    pub fn is_strict_valid(&self) -> bool {
        self.canonical
            .as_ref()
            .is_ok_and(|canonical| self.in_dialect(canonical, Dialect::OpenAiStrict).is_ok())
    }

    /// The lowered schema for `provider`, as a tree and as text: for MCP
    /// the schema as written when there is one, else the first of the
    /// provider's [schema dialects](Provider::schema_dialects) the schema
    /// lowers to.
    pub(crate) fn lowered_tree(
        &self,
        provider: Provider,
    ) -> Result<LoweredRef<'_>, ToolSchemaError> {
        // A written schema that does not canonicalize is refused for MCP
        // too: it is the one the arguments are checked against.
        let canonical = self
            .canonical
            .as_ref()
            .map_err(|error| ToolSchemaError::Canonical(error.clone()))?;
        if provider == Provider::Mcp
            && let Some(written) = &self.written
        {
            return Ok(LoweredRef {
                json: &written.json,
                text: &written.text,
                dialect: Dialect::Written,
            });
        }
        let mut refusal = None;
        for &dialect in provider.schema_dialects() {
            match self.in_dialect(canonical, dialect) {
                Ok((json, text)) => {
                    return Ok(LoweredRef {
                        json,
                        text,
                        dialect,
                    });
                }
                Err(error) => refusal = Some(error),
            }
        }
        Err(ToolSchemaError::Lowering(
            refusal.expect("every provider takes at least one dialect"),
        ))
    }

    fn in_dialect<'a>(
        &'a self,
        canonical: &'a Canonical,
        dialect: Dialect,
    ) -> Result<(&'a OrderedJson, &'a str), LoweringError> {
        let cache = match dialect {
            Dialect::Canonical | Dialect::Written => {
                return Ok((&canonical.json, canonical.text.as_str()));
            }
            Dialect::OpenAiStrict => &self.strict,
            Dialect::Gemini => &self.gemini,
            Dialect::GeminiJsonSchema => &self.gemini_json_schema,
        };
        cache
            .get_or_init(|| schema::lower(&canonical.json, dialect).map(Lowered::new))
            .as_ref()
            .map(|lowered| (&lowered.json, lowered.text.as_str()))
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

/// Says what its error says and nothing more: the wrapped error's message
/// is this one's, so it is not returned again as the source (the variant
/// holds it, for a host that wants it).
impl std::error::Error for ToolSchemaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Canonical(error) => error.source(),
            Self::Lowering(error) => error.source(),
        }
    }
}
