//! Anthropic Messages: `tool_result` blocks in one `user` message.

use serde_json::Value;

use super::resolve::{Part, Resolved, object, string};
use super::{EmitOptions, Emitted};
use crate::{Provider, ToolCallResult};

/// One turn's results as one Anthropic `user` message whose content is the
/// `tool_result` blocks, in call order.
///
/// Each block's `content` holds the result's text and base64 `image` blocks
/// in order (`Error: …` first, and `is_error: true`, when the tool failed),
/// the note as a last text block. An embedded text resource is a `text`
/// document and an embedded PDF a `base64` one, each titled with its URI;
/// audio, other resources and resource links are text. An empty turn emits
/// nothing.
///
/// ```
/// use toolkit_core::emit::{self, EmitOptions};
/// use toolkit_core::{ToolCallResult, ToolResult};
///
/// let turn = [ToolCallResult::new("toolu_1", "search", ToolResult::text("3 hits"))];
/// let items = emit::anthropic(&turn, &EmitOptions::default()).items;
/// assert_eq!(
///     items[0],
///     serde_json::json!({"role": "user", "content": [{
///         "type": "tool_result",
///         "tool_use_id": "toolu_1",
///         "content": [{"type": "text", "text": "3 hits"}],
///     }]})
/// );
/// ```
pub fn anthropic(turn: &[ToolCallResult], options: &EmitOptions) -> Emitted {
    let mut problems = Vec::new();
    let resolved = Resolved::turn(turn, options, Provider::Anthropic, &mut problems);
    let blocks: Vec<Value> = resolved.iter().map(tool_result).collect();
    let items = if blocks.is_empty() {
        Vec::new()
    } else {
        vec![object([
            ("role", string("user")),
            ("content", Value::Array(blocks)),
        ])]
    };
    Emitted { items, problems }
}

fn tool_result(call: &Resolved<'_>) -> Value {
    let mut content: Vec<Value> = call.parts.iter().map(content_block).collect();
    if let Some(note) = call.note.filter(|note| !note.is_empty()) {
        content.push(object([("type", string("text")), ("text", string(note))]));
    }
    let mut block = object([
        ("type", string("tool_result")),
        ("tool_use_id", string(&call.call.call_id)),
        ("content", Value::Array(content)),
    ]);
    if call.error.is_some() {
        block["is_error"] = Value::Bool(true);
    }
    block
}

fn content_block(part: &Part<'_>) -> Value {
    match part {
        Part::Image { mime_type, data } => object([
            ("type", string("image")),
            (
                "source",
                object([
                    ("type", string("base64")),
                    ("media_type", string(*mime_type)),
                    ("data", string(&**data)),
                ]),
            ),
        ]),
        Part::Resource(resource) => {
            let source = match (resource.text(), resource.blob()) {
                (Some(text), _) => object([
                    ("type", string("text")),
                    ("media_type", string("text/plain")),
                    ("data", string(text)),
                ]),
                (None, blob) => object([
                    ("type", string("base64")),
                    ("media_type", string("application/pdf")),
                    ("data", string(blob.unwrap_or_default())),
                ]),
            };
            object([
                ("type", string("document")),
                ("source", source),
                ("title", string(resource.uri())),
            ])
        }
        text => object([("type", string("text")), ("text", text.text_value())]),
    }
}
