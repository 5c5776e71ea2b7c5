//! An MCP `CallToolResult` as our result: what the model can see becomes
//! blocks, what it cannot (audio, binary resources) is described in text
//! and kept whole for the host in an attribute.

use serde_json::{Value, json};
use toolkit_core::{Block, Image, ToolResult};

/// The attribute holding the content blocks the model sees only described
/// (audio, binary resources), as the server sent them.
pub const UNSHOWN_CONTENT: &str = "mcp.unshownContent";

/// The attribute holding `structuredContent` when the blocks do not carry
/// it already.
pub const STRUCTURED_CONTENT: &str = "mcp.structuredContent";

/// Maps a `CallToolResult` (as JSON, any revision) to a result.
pub(crate) fn to_result(result: &Value) -> ToolResult {
    let content = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let structured = result.get("structuredContent");
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);

    let mut blocks = Vec::with_capacity(content.len());
    let mut unshown = Vec::new();
    for item in content {
        blocks.push(block(item, &mut unshown));
    }

    // The usual shape of a structured result: its JSON text and the value.
    // One JSON block says both, and our MCP emitter writes both back.
    let mut structured_kept = false;
    if let Some(value) = structured {
        let only_its_text = match content {
            [only] => {
                only.get("type") == Some(&json!("text"))
                    && only
                        .get("text")
                        .and_then(Value::as_str)
                        .and_then(|text| serde_json::from_str::<Value>(text).ok())
                        .as_ref()
                        == Some(value)
            }
            [] => true,
            _ => false,
        };
        if only_its_text && !is_error {
            blocks = vec![Block::json(value.clone())];
            structured_kept = true;
        }
    }

    let mut outcome = if is_error {
        // The error's text is the message; other blocks stay as content.
        let mut message = Vec::new();
        blocks.retain(|block| match block {
            Block::Text { text } => {
                message.push(text.clone());
                false
            }
            _ => true,
        });
        let message = if message.is_empty() {
            "the tool reported an error without a message".to_owned()
        } else {
            message.join("\n")
        };
        ToolResult::blocks(blocks).with_error(message)
    } else {
        ToolResult::blocks(blocks)
    };
    if !unshown.is_empty() {
        outcome = outcome.with_attribute(UNSHOWN_CONTENT, Value::Array(unshown));
    }
    if let (Some(value), false) = (structured, structured_kept) {
        outcome = outcome.with_attribute(STRUCTURED_CONTENT, value.clone());
    }
    outcome
}

fn text_of<'a>(item: &'a Value, key: &str) -> &'a str {
    item.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The decoded size of base64 text, for descriptions.
fn decoded_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

fn image(mime_type: &str, data: &str) -> Option<Block> {
    Image::from_base64(mime_type, data).ok().map(Block::image)
}

fn block(item: &Value, unshown: &mut Vec<Value>) -> Block {
    match text_of(item, "type") {
        "text" => Block::text(text_of(item, "text")),
        "image" => {
            let mime_type = text_of(item, "mimeType");
            image(mime_type, text_of(item, "data")).unwrap_or_else(|| {
                unshown.push(item.clone());
                Block::text(format!(
                    "[an image of type {mime_type} that could not be read]"
                ))
            })
        }
        "audio" => {
            unshown.push(item.clone());
            Block::text(format!(
                "[audio, {}, {} bytes]",
                text_of(item, "mimeType"),
                decoded_len(text_of(item, "data"))
            ))
        }
        "resource_link" => {
            let mut text = format!(
                "Resource link: {} <{}>",
                item.get("title")
                    .or_else(|| item.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                text_of(item, "uri")
            );
            if let Some(mime_type) = item.get("mimeType").and_then(Value::as_str) {
                text.push_str(&format!(" ({mime_type})"));
            }
            if let Some(description) = item.get("description").and_then(Value::as_str) {
                text.push_str(&format!(": {description}"));
            }
            Block::text(text)
        }
        "resource" => {
            let resource = item.get("resource").unwrap_or(&Value::Null);
            let uri = text_of(resource, "uri");
            let mime_type = resource.get("mimeType").and_then(Value::as_str);
            if let Some(text) = resource.get("text").and_then(Value::as_str) {
                return Block::text(format!("Resource <{uri}>:\n{text}"));
            }
            let blob = text_of(resource, "blob");
            if let Some(image) = mime_type
                .filter(|mime| mime.starts_with("image/"))
                .and_then(|mime| image(mime, blob))
            {
                return image;
            }
            unshown.push(item.clone());
            Block::text(format!(
                "[resource <{uri}>, {}, {} bytes]",
                mime_type.unwrap_or("binary"),
                decoded_len(blob)
            ))
        }
        other => {
            unshown.push(item.clone());
            Block::text(format!("[content of an unknown type: {other}]"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    #[test]
    fn every_kind_of_content() {
        let result = to_result(&json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "bee"}},
                {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "AAAA", "mimeType": "application/octet-stream"}},
            ]
        }));
        assert!(!result.is_error());
        let kinds: Vec<&str> = result.content().iter().map(Block::kind).collect();
        assert_eq!(kinds, ["text", "image", "text", "text", "text", "text"]);
        let text = result.to_text();
        assert!(text.contains("[audio, audio/wav, 3 bytes]"), "{text}");
        assert!(
            text.contains("Resource link: a.txt <file:///a.txt> (text/plain)"),
            "{text}"
        );
        assert!(text.contains("Resource <file:///b.txt>:\nbee"), "{text}");
        assert!(text.contains("[resource <file:///c.bin>, application/octet-stream, 3 bytes]"));
        let unshown = &result.attributes()[UNSHOWN_CONTENT];
        assert_eq!(unshown.as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn structured_content() {
        let value = json!({"sum": 3});
        let result = to_result(&json!({
            "content": [{"type": "text", "text": "{\"sum\": 3}"}],
            "structuredContent": value,
        }));
        assert!(matches!(result.content(), [Block::Json { value: v }] if *v == value));

        // Text that says something else is kept, the value set aside.
        let result = to_result(&json!({
            "content": [{"type": "text", "text": "three"}],
            "structuredContent": value,
        }));
        assert_eq!(result.to_text(), "three");
        assert_eq!(result.attributes()[STRUCTURED_CONTENT], value);
    }

    #[test]
    fn sizes_of_any_base64() {
        assert_eq!(decoded_len("AAAA"), 3);
        assert_eq!(decoded_len("AA=="), 1);
        assert_eq!(decoded_len("="), 0);
        assert_eq!(decoded_len(""), 0);
    }

    #[test]
    fn errors() {
        let result = to_result(&json!({
            "content": [{"type": "text", "text": "no such file"}],
            "isError": true,
        }));
        assert_eq!(result.error_message(), Some("no such file"));
        assert!(result.content().is_empty());
        let bare = to_result(&json!({"content": [], "isError": true}));
        assert!(bare.is_error());
    }
}
