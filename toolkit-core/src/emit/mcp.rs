//! Model Context Protocol: `CallToolResult`.

use serde_json::{Map, Value};

use super::resolve::{Part, Resolved, object, string};
use super::{EmitOptions, Emitted, McpRevision};
use crate::{Provider, ToolCallResult};

/// One turn's results as MCP `CallToolResult` objects, one per call, in call
/// order.
///
/// `content` holds text blocks, `image` and `audio` blocks (any type),
/// embedded `resource` blocks, `resource_link` blocks and, for a JSON
/// block, its serialized text; `isError` is always present. A result
/// whose content is exactly one JSON block also carries it as
/// `structuredContent` (for revision 2025-11-25 only when it is an object,
/// as that revision requires). The note is a last text block.
///
/// Unknown tools and malformed arguments are protocol errors in MCP, which
/// a server reports as JSON-RPC errors; this function only writes results.
///
/// ```
/// use toolkit_core::emit::{self, EmitOptions};
/// use toolkit_core::{ToolCallResult, ToolResult};
///
/// let result = ToolResult::json(serde_json::json!({"hits": 3}));
/// let items = emit::mcp(&[ToolCallResult::new("1", "search", result)], &EmitOptions::default()).items;
/// assert_eq!(
///     items[0],
///     serde_json::json!({
///         "content": [{"type": "text", "text": r#"{"hits":3}"#}],
///         "structuredContent": {"hits": 3},
///         "isError": false,
///     })
/// );
/// ```
pub fn mcp(turn: &[ToolCallResult], options: &EmitOptions) -> Emitted {
    let mut problems = Vec::new();
    let resolved = Resolved::turn(turn, options, Provider::Mcp, &mut problems);
    let revision = options.mcp_revision();
    let items = resolved
        .iter()
        .map(|call| call_tool_result(call, revision))
        .collect();
    Emitted { items, problems }
}

fn call_tool_result(call: &Resolved<'_>, revision: McpRevision) -> Value {
    let mut content: Vec<Value> = call.parts.iter().map(content_block).collect();
    if let Some(note) = call.note {
        content.push(object([("type", string("text")), ("text", string(note))]));
    }
    let mut result = Map::new();
    if revision == McpRevision::V2026_07_28 {
        result.insert("resultType".into(), Value::String("complete".into()));
    }
    result.insert("content".into(), Value::Array(content));
    if let [Part::Json(value)] = call.content_parts()
        && (value.is_object() || revision == McpRevision::V2026_07_28)
    {
        result.insert("structuredContent".into(), (*value).clone());
    }
    result.insert("isError".into(), Value::Bool(call.error.is_some()));
    Value::Object(result)
}

fn content_block(part: &Part<'_>) -> Value {
    match part {
        Part::Image { mime_type, data } => object([
            ("type", string("image")),
            ("data", string(&**data)),
            ("mimeType", string(*mime_type)),
        ]),
        Part::Audio { mime_type, data } => object([
            ("type", string("audio")),
            ("data", string(&**data)),
            ("mimeType", string(*mime_type)),
        ]),
        Part::Resource(resource) => {
            let mut contents = Map::new();
            contents.insert("uri".into(), string(resource.uri()));
            if let Some(mime_type) = resource.mime_type() {
                contents.insert("mimeType".into(), string(mime_type));
            }
            match (resource.text(), resource.blob()) {
                (Some(text), _) => contents.insert("text".into(), string(text)),
                (None, blob) => contents.insert("blob".into(), string(blob.unwrap_or_default())),
            };
            object([
                ("type", string("resource")),
                ("resource", Value::Object(contents)),
            ])
        }
        Part::Link(link) => {
            let mut fields = Map::new();
            fields.insert("type".into(), string("resource_link"));
            fields.insert("uri".into(), string(link.uri()));
            fields.insert("name".into(), string(link.name()));
            let optional = [
                ("title", link.title()),
                ("description", link.description()),
                ("mimeType", link.mime_type()),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    fields.insert(key.into(), string(value));
                }
            }
            if let Some(size) = link.size() {
                fields.insert("size".into(), Value::from(size));
            }
            Value::Object(fields)
        }
        text => object([("type", string("text")), ("text", text.text_value())]),
    }
}
