//! One canonical parameter schema per tool, and its lowering for each
//! provider.
//!
//! Schemas are held as an ordered JSON tree ([`OrderedJson`]) rather than
//! `serde_json::Value`, whose key order depends on whether some crate in the
//! build enabled serde_json's `preserve_order`: the same code must yield
//! byte-identical schemas in every build.
//!
//! The pipeline, once per tool:
//!
//! 1. [`canonicalize`] turns the schema generated for the arguments struct
//!    into the canonical schema: JSON Schema 2020-12, with no `title` or
//!    `$schema`, root properties in declaration order, optional parameters
//!    absent from `required` (an `Option` keeps its `null`, so that absent
//!    and `null` stay distinct), unit enums as flat string
//!    `enum`s, sub-schemas inlined except recursive ones, and every schema
//!    object's keywords in [`KEYWORD_ORDER`].
//! 2. [`lower`] derives a [`Dialect`] from it; which dialects a provider
//!    takes is decided in one place, [`Provider::schema_dialects`]:
//!
//! | dialect | function | taken by | can fail |
//! |---|---|---|---|
//! | [`Dialect::Canonical`] | none: the canonical schema | OpenAI without strict mode, Anthropic, MCP | no |
//! | [`Dialect::OpenAiStrict`] | [`openai_strict()`] | OpenAI strict mode; Responses when it lowers | yes |
//! | [`Dialect::Gemini`] | [`gemini()`] | Gemini `parameters` (OpenAPI 3.0 subset) | yes |
//!
//! Gemini's `parametersJsonSchema` ([`Dialect::GeminiJsonSchema`],
//! [`gemini_json_schema()`]) takes the canonical schema with two rules of its
//! own (a `$ref` stands alone; parameter names follow Gemini's rule), for
//! the tools `parameters` cannot express.
//!
//! A model's final answer is sent in each provider's structured-output
//! field; Anthropic's takes the canonical schema without its bounds
//! ([`anthropic_output`]).
//!
//! [`Provider::schema_dialects`]: crate::Provider::schema_dialects
//!
//! The same pipeline serves schemas that are not a tool's parameters:
//! [`canonical_of`] gives the canonical schema of any object-like type
//! (the form a model's final answer must take), and [`violations`] checks
//! a value against a schema with the checker arguments go through.
//!
//! ```
//! use serde_json::json;
//! use toolkit_core::schema::{canonicalize, openai_strict};
//!
//! let generated = json!({
//!     "title": "SearchArgs",
//!     "type": "object",
//!     "properties": {
//!         "limit": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255},
//!         "query": {"type": "string", "description": "Free-text query."}
//!     },
//!     "required": ["query"],
//!     "additionalProperties": false
//! });
//! let canonical = canonicalize(&generated, &["query", "limit"])?;
//! assert_eq!(
//!     canonical.to_json_string(),
//!     r#"{"type":"object","properties":{"query":{"type":"string","description":"Free-text query."},"limit":{"type":["integer","null"],"minimum":0,"maximum":255}},"required":["query"],"additionalProperties":false}"#
//! );
//! let strict = openai_strict(&canonical)?;
//! assert_eq!(
//!     strict.to_json_string(),
//!     r#"{"type":"object","properties":{"query":{"type":"string","description":"Free-text query."},"limit":{"type":["integer","null"],"minimum":0,"maximum":255}},"required":["query","limit"],"additionalProperties":false}"#
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod anthropic;
mod canonical;
mod defs;
mod enums;
mod error;
pub(crate) mod formats;
mod gemini;
mod gemini_json_schema;
mod keywords;
mod limits;
mod lower;
mod nulls;
mod of_type;
mod openai_strict;
mod ordered_json;

pub use anthropic::anthropic_output;
pub use canonical::{MAX_JSON_DEPTH, canonicalize};
pub(crate) use canonical::{Source, canonicalize_from};
pub use error::{Dialect, LoweringError, LoweringErrorKind, SchemaError, rust_path};
pub use gemini::gemini;
pub use gemini_json_schema::gemini_json_schema;
pub use keywords::KEYWORD_ORDER;
pub(crate) use keywords::order_schema;
pub use limits::{
    LARGE_ENUM, MAX_CHARACTERS, MAX_ENUM_VALUES, MAX_LARGE_ENUM_CHARACTERS, MAX_OBJECT_DEPTH,
    MAX_PROPERTIES,
};
pub use lower::lower;
pub(crate) use of_type::generate;
pub use of_type::{Violation, canonical_of, violations, violations_at};
pub use openai_strict::openai_strict;
pub use ordered_json::OrderedJson;

/// The earlier name of [`OrderedJson`], kept for one release.
#[deprecated(since = "0.2.0", note = "renamed to `OrderedJson`")]
pub type Json = OrderedJson;
