//! An MCP `CallToolResult` as our result: every content block becomes the
//! block of the same kind (text, image, audio, embedded resource, resource
//! link); what cannot be read (malformed data, a kind MCP does not define)
//! is described in text and kept whole for the host in an attribute.

use serde_json::{Value, json};
use toolkit_core::{Audio, Block, EmbeddedResource, Image, ResourceLink, ToolResult};

/// The attribute holding the content blocks the model sees only described
/// (malformed, or of a kind MCP does not define), as the server sent them.
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub const UNSHOWN_CONTENT: &str = "mcp.unshownContent";

/// The attribute holding `structuredContent` when the blocks do not carry
/// it already.
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
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

/// An embedded resource's contents (`{uri, mimeType?, text | blob}`), if
/// well formed.
pub(crate) fn embedded(resource: &Value) -> Option<EmbeddedResource> {
    // Our JSON form of a resource is MCP's with `mime_type` for
    // `mimeType`; reading it checks every field as a saved result's are.
    let mut fields = resource.as_object()?.clone();
    if let Some(mime_type) = fields.remove("mimeType") {
        fields.insert("mime_type".into(), mime_type);
    }
    fields.retain(|key, _| matches!(key.as_str(), "uri" | "mime_type" | "text" | "blob"));
    serde_json::from_value(Value::Object(fields)).ok()
}

fn image(mime_type: &str, data: &str) -> Option<Block> {
    Image::from_base64(mime_type, data).ok().map(Block::image)
}

pub(crate) fn block(item: &Value, unshown: &mut Vec<Value>) -> Block {
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
            let mime_type = text_of(item, "mimeType");
            match Audio::from_base64(mime_type, text_of(item, "data")) {
                Ok(audio) => Block::audio(audio),
                Err(_) => {
                    unshown.push(item.clone());
                    Block::text(format!(
                        "[audio of type {mime_type} that could not be read]"
                    ))
                }
            }
        }
        "resource_link" => {
            let uri = text_of(item, "uri");
            let mut link = ResourceLink::new(uri, text_of(item, "name"));
            let optional = |key: &str| item.get(key).and_then(Value::as_str);
            if let Some(title) = optional("title") {
                link = link.with_title(title);
            }
            if let Some(description) = optional("description") {
                link = link.with_description(description);
            }
            if let Some(mime_type) = optional("mimeType") {
                link = link.with_mime_type(mime_type);
            }
            if let Some(size) = item.get("size").and_then(Value::as_u64) {
                link = link.with_size(size);
            }
            Block::resource_link(link)
        }
        "resource" => {
            let resource = item.get("resource").unwrap_or(&Value::Null);
            match embedded(resource) {
                Some(embedded) => Block::resource(embedded),
                None => {
                    unshown.push(item.clone());
                    Block::text(format!(
                        "[resource <{}> that could not be read]",
                        text_of(resource, "uri")
                    ))
                }
            }
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
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain", "size": 3},
                {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "bee"}},
                {"type": "resource", "resource": {"uri": "file:///c.bin", "blob": "AAAA", "mimeType": "application/octet-stream"}},
                {"type": "audio", "data": "%%", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///d.bin"}},
                {"type": "hologram"},
            ]
        }));
        assert!(!result.is_error());
        let kinds: Vec<&str> = result.content().iter().map(Block::kind).collect();
        assert_eq!(
            kinds,
            [
                "text",
                "image",
                "audio",
                "resource_link",
                "resource",
                "resource",
                "text",
                "text",
                "text"
            ]
        );
        let [
            _,
            _,
            Block::Audio { audio },
            Block::ResourceLink { link },
            Block::Resource { resource: text },
            Block::Resource { resource: blob },
            ..,
        ] = result.content()
        else {
            panic!("{:?}", result.content());
        };
        assert_eq!((audio.mime_type(), audio.data()), ("audio/wav", "AAAA"));
        assert_eq!(
            (link.uri(), link.name(), link.size()),
            ("file:///a.txt", "a.txt", Some(3))
        );
        assert_eq!(link.mime_type(), Some("text/plain"));
        assert_eq!(
            (text.uri(), text.text(), text.mime_type()),
            ("file:///b.txt", Some("bee"), None)
        );
        assert_eq!(blob.blob(), Some("AAAA"));
        assert_eq!(blob.mime_type(), Some("application/octet-stream"));
        let unshown = &result.attributes()[UNSHOWN_CONTENT];
        assert_eq!(unshown.as_array().map(Vec::len), Some(3));
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
