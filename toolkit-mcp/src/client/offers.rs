//! What a server offers besides tools, as the client reads it: its
//! resources, resource templates and prompts, and a prompt filled in.

use rmcp::model::{
    ClientRequest, GetPromptRequest, GetPromptRequestParams, ReadResourceRequest,
    ReadResourceRequestParams, ServerResult,
};
use serde_json::Value;
use toolkit_core::{Block, EmbeddedResource, ResourceLink};

use super::connection::Offer;
use super::error::ClientError;
use super::requests::{list_prompts, list_resource_templates, list_resources};
use super::{McpClient, content};
use crate::role::Role;

impl McpClient {
    /// The server's resources (`resources/list`, every page), each as a
    /// link to it, in the server's order. A server that does not offer
    /// resources gives an error saying so.
    pub async fn resources(&self) -> Result<Vec<ResourceLink>, ClientError> {
        let peer = self.shared.offering(Offer::Resources).await?;
        let listed = self
            .shared
            .asked(
                peer.1,
                "listing its resources",
                self.shared
                    .list_all(&peer.0, list_resources, |answer| match answer {
                        ServerResult::ListResourcesResult(page) => {
                            Some((page.resources, page.next_cursor))
                        }
                        _ => None,
                    }),
            )
            .await?;
        Ok(self.shared.each(&listed, resource))
    }

    /// The server's resource templates (`resources/templates/list`, every
    /// page), in the server's order.
    pub async fn resource_templates(&self) -> Result<Vec<ListedTemplate>, ClientError> {
        let peer = self.shared.offering(Offer::Resources).await?;
        let listed = self
            .shared
            .asked(
                peer.1,
                "listing its resource templates",
                self.shared
                    .list_all(&peer.0, list_resource_templates, |answer| match answer {
                        ServerResult::ListResourceTemplatesResult(page) => {
                            Some((page.resource_templates, page.next_cursor))
                        }
                        _ => None,
                    }),
            )
            .await?;
        Ok(self.shared.each(&listed, template))
    }

    /// Reads the resource at `uri` (`resources/read`): its contents, one or
    /// more (a folder's files, say), each with its own URI. Contents that
    /// are neither text nor base64 bytes make an error.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<EmbeddedResource>, ClientError> {
        let peer = self.shared.offering(Offer::Resources).await?;
        let read = self
            .shared
            .asked(
                peer.1,
                &format!("reading <{uri}>"),
                self.shared.send(
                    &peer.0,
                    ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
                        ReadResourceRequestParams::new(uri),
                    )),
                ),
            )
            .await?;
        let ServerResult::ReadResourceResult(read) = read else {
            return Err(self
                .shared
                .error(format!("reading <{uri}> gave another answer")));
        };
        let read = serde_json::to_value(read)
            .map_err(|error| self.shared.error(format!("reading <{uri}>: {error}")))?;
        read.get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|contents| {
                content::embedded(contents).ok_or_else(|| {
                    self.shared
                        .error(format!("reading <{uri}> gave contents that cannot be read"))
                })
            })
            .collect()
    }

    /// The server's prompts (`prompts/list`, every page), in the server's
    /// order. A server that does not offer prompts gives an error saying
    /// so.
    pub async fn prompts(&self) -> Result<Vec<ListedPrompt>, ClientError> {
        let peer = self.shared.offering(Offer::Prompts).await?;
        let listed = self
            .shared
            .asked(
                peer.1,
                "listing its prompts",
                self.shared
                    .list_all(&peer.0, list_prompts, |answer| match answer {
                        ServerResult::ListPromptsResult(page) => {
                            Some((page.prompts, page.next_cursor))
                        }
                        _ => None,
                    }),
            )
            .await?;
        Ok(self.shared.each(&listed, prompt))
    }

    /// Fills in the prompt `name` with `arguments` (`prompts/get`): its
    /// messages, each content block the block of the same kind, as in a
    /// tool's result.
    pub async fn get_prompt<K, V>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<FilledPrompt, ClientError>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let arguments: serde_json::Map<String, Value> = arguments
            .into_iter()
            .map(|(key, value)| (key.into(), Value::String(value.into())))
            .collect();
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        let peer = self.shared.offering(Offer::Prompts).await?;
        let answer = self
            .shared
            .asked(
                peer.1,
                &format!("filling in the prompt `{name}`"),
                self.shared.send(
                    &peer.0,
                    ClientRequest::GetPromptRequest(GetPromptRequest::new(params)),
                ),
            )
            .await?;
        let ServerResult::GetPromptResult(answer) = answer else {
            return Err(self.shared.error(format!(
                "filling in the prompt `{name}` gave another answer"
            )));
        };
        let answer = serde_json::to_value(answer).map_err(|error| {
            self.shared
                .error(format!("filling in the prompt `{name}`: {error}"))
        })?;
        Ok(filled(&answer))
    }
}

/// A resource template a server lists (`resources/templates/list`): URIs
/// of this shape can be read with
/// [`read_resource`](super::McpClient::read_resource).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[non_exhaustive]
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
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[non_exhaustive]
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
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[non_exhaustive]
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
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[non_exhaustive]
pub struct FilledPrompt {
    /// What the filled prompt is, if the server said.
    pub description: Option<String>,
    /// Its messages, in order.
    pub messages: Vec<FilledMessage>,
}

/// One message of a [`FilledPrompt`]: its content is the block of the same
/// kind, as in a tool's result (what cannot be read is described in text).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[non_exhaustive]
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
