//! The one entry point from a canonical schema to any dialect.

use super::error::{Dialect, LoweringError};
use super::gemini::gemini;
use super::gemini_json_schema::gemini_json_schema;
use super::openai_strict::openai_strict;
use super::ordered_json::OrderedJson;

/// The canonical schema in `dialect`.
///
/// [`Dialect::Canonical`] never fails: the canonical schema is already what
/// OpenAI (without strict mode), Anthropic and MCP take, its root always an
/// object with `properties`. Nor does [`Dialect::Written`]: a schema known
/// only by its canonical form is written as that form.
pub fn lower(canonical: &OrderedJson, dialect: Dialect) -> Result<OrderedJson, LoweringError> {
    match dialect {
        Dialect::Canonical | Dialect::Written => Ok(canonical.clone()),
        Dialect::OpenAiStrict => openai_strict(canonical),
        Dialect::Gemini => gemini(canonical),
        Dialect::GeminiJsonSchema => gemini_json_schema(canonical),
    }
}
