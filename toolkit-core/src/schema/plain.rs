//! The dialects that take the canonical schema as it is, and the choice of
//! strict mode for OpenAI.

use super::json::Json;
use super::openai_strict::openai_strict;

/// The schema for OpenAI without strict mode (Chat, or Responses with
/// `"strict": false`): the canonical schema.
pub fn openai(canonical: &Json) -> Json {
    canonical.clone()
}

/// The schema for Anthropic's `input_schema` without strict mode: the
/// canonical schema.
pub fn anthropic(canonical: &Json) -> Json {
    canonical.clone()
}

/// The schema for an MCP tool's `inputSchema`: the canonical schema, whose
/// root is always `"type": "object"` with `properties`, as MCP requires
/// (and some clients check).
pub fn mcp(canonical: &Json) -> Json {
    let mut schema = canonical.clone();
    if schema.as_object().is_some() {
        schema.insert("type", Json::from("object"));
        if !schema.contains_key("properties") {
            schema.insert("properties", Json::object());
        }
    }
    schema
}

/// The `parameters` and `strict` flag to send to OpenAI.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiParameters {
    /// The schema: strict-lowered when `strict`, else canonical.
    pub schema: Json,
    /// Whether to send `"strict": true`. Responses defaults to `true`, so
    /// send this flag either way.
    pub strict: bool,
}

/// Strict mode when the schema can be expressed in it, else the canonical
/// schema with `strict: false`: a schema that only almost fits would be
/// rejected with a 400 for the whole request.
pub fn openai_parameters(canonical: &Json) -> OpenAiParameters {
    match openai_strict(canonical) {
        Ok(schema) => OpenAiParameters {
            schema,
            strict: true,
        },
        Err(_) => OpenAiParameters {
            schema: openai(canonical),
            strict: false,
        },
    }
}

/// Whether [`openai_strict`] accepts the schema, i.e. whether a tool with
/// it may be sent with `"strict": true`.
pub fn is_strict_valid(canonical: &Json) -> bool {
    openai_strict(canonical).is_ok()
}
