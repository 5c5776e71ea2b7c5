//! The one entry point from a canonical schema to any dialect.

use super::error::{Dialect, LoweringError};
use super::gemini::gemini;
use super::json::Json;
use super::openai_strict::openai_strict;

/// The canonical schema in `dialect`.
///
/// [`Dialect::Canonical`] never fails: the canonical schema is already what
/// OpenAI (without strict mode), Anthropic and MCP take, its root always an
/// object with `properties`.
pub fn lower(canonical: &Json, dialect: Dialect) -> Result<Json, LoweringError> {
    match dialect {
        Dialect::Canonical => Ok(canonical.clone()),
        Dialect::OpenAiStrict => openai_strict(canonical),
        Dialect::Gemini => gemini(canonical),
        Dialect::GeminiJsonSchema => Ok(canonical.clone()),
    }
}
