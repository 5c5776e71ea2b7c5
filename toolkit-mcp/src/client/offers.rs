//! What a server offers besides tools, as the client reads it: its
//! resources, resource templates and prompts, and a prompt filled in.

use serde_json::Value;
use toolkit_core::{Block, ResourceLink};

use crate::server::prompts::Role;

/// A resource template a server lists (`resources/templates/list`): URIs
/// of this shape can be read with
/// [`read_resource`](super::McpClient::read_resource).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedTemplate {
    /// The URI template (RFC 6570), such as `notes://{day}`.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A title for people, if given.
    pub title: Option<String>,
    /// What it holds, if said.
    pub description: Option<String>,
    /// The MIME type of what it reads, if known.
    pub mime_type: Option<String>,
}

/// A prompt a server lists (`prompts/list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPrompt {
    /// Its name, for [`get_prompt`](super::McpClient::get_prompt).
    pub name: String,
    /// A title for people, if given.
    pub title: Option<String>,
    /// What it is for, if said.
    pub description: Option<String>,
    /// The arguments it takes.
    pub arguments: Vec<ListedArgument>,
}

/// One argument of a [`ListedPrompt`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedArgument {
    /// Its name.
    pub name: String,
    /// What it means, if said.
    pub description: Option<String>,
    /// Whether the prompt needs it.
    pub required: bool,
}

/// A prompt filled in by its server (`prompts/get`).
#[derive(Debug, Clone, PartialEq)]
pub struct FilledPrompt {
    /// What the filled prompt is, if the server said.
    pub description: Option<String>,
    /// Its messages, in order.
    pub messages: Vec<FilledMessage>,
}

/// One message of a [`FilledPrompt`]: its content is the block of the same
/// kind, as in a tool's result (what cannot be read is described in text).
#[derive(Debug, Clone, PartialEq)]
pub struct FilledMessage {
    /// Who it is from.
    pub role: Role,
    /// What it holds.
    pub content: Block,
}

fn text(item: &Value, key: &str) -> Option<String> {
    item.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A listed resource (as JSON) as a link to it.
pub(crate) fn resource(item: &Value) -> ResourceLink {
    let mut link = ResourceLink::new(
        text(item, "uri").unwrap_or_default(),
        text(item, "name").unwrap_or_default(),
    );
    if let Some(title) = text(item, "title") {
        link = link.with_title(title);
    }
    if let Some(description) = text(item, "description") {
        link = link.with_description(description);
    }
    if let Some(mime_type) = text(item, "mimeType") {
        link = link.with_mime_type(mime_type);
    }
    if let Some(size) = item.get("size").and_then(Value::as_u64) {
        link = link.with_size(size);
    }
    link
}

pub(crate) fn template(item: &Value) -> ListedTemplate {
    ListedTemplate {
        uri_template: text(item, "uriTemplate").unwrap_or_default(),
        name: text(item, "name").unwrap_or_default(),
        title: text(item, "title"),
        description: text(item, "description"),
        mime_type: text(item, "mimeType"),
    }
}

pub(crate) fn prompt(item: &Value) -> ListedPrompt {
    let arguments = item
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|argument| ListedArgument {
            name: text(argument, "name").unwrap_or_default(),
            description: text(argument, "description"),
            required: argument.get("required").and_then(Value::as_bool) == Some(true),
        })
        .collect();
    ListedPrompt {
        name: text(item, "name").unwrap_or_default(),
        title: text(item, "title"),
        description: text(item, "description"),
        arguments,
    }
}

/// A `GetPromptResult` (as JSON) as a filled prompt.
pub(crate) fn filled(result: &Value) -> FilledPrompt {
    // What cannot be read is described in the block itself; a prompt has
    // no attributes to keep the raw block in.
    let mut unshown = Vec::new();
    let messages = result
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|message| FilledMessage {
            role: if message.get("role").and_then(Value::as_str) == Some("assistant") {
                Role::Assistant
            } else {
                Role::User
            },
            content: super::content::block(
                message.get("content").unwrap_or(&Value::Null),
                &mut unshown,
            ),
        })
        .collect();
    FilledPrompt {
        description: text(result, "description"),
        messages,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn prompt_messages_become_blocks() {
        let filled = filled(&json!({
            "description": "a greeting",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": {"type": "resource", "resource": {"uri": "a://b", "text": "bee"}}},
                {"role": "user", "content": {"type": "hologram"}},
            ]
        }));
        assert_eq!(filled.description.as_deref(), Some("a greeting"));
        let kinds: Vec<(Role, &str)> = filled
            .messages
            .iter()
            .map(|message| (message.role, message.content.kind()))
            .collect();
        assert_eq!(
            kinds,
            [
                (Role::User, "text"),
                (Role::Assistant, "resource"),
                (Role::User, "text")
            ]
        );
    }

    #[test]
    fn listings() {
        let listed = prompt(
            &json!({"name": "greet", "arguments": [{"name": "who", "required": true}, {"name": "tone"}]}),
        );
        assert_eq!(listed.arguments.len(), 2);
        assert!(listed.arguments[0].required && !listed.arguments[1].required);
        let link =
            resource(&json!({"uri": "a://b", "name": "b", "mimeType": "text/plain", "size": 3}));
        assert_eq!((link.uri(), link.size()), ("a://b", Some(3)));
        let shape = template(&json!({"uriTemplate": "a://{x}", "name": "x"}));
        assert_eq!(shape.uri_template, "a://{x}");
    }
}
