//! Prompts a server offers besides its tools: named message templates a
//! client fills in with arguments and shows the user or the model. A
//! prompt's function may ask the client while it makes the messages
//! (`prompt_context`).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::{AskError, Image, ImageSource};

use super::prompt_context::PromptContext;
use super::resources::ResourceContents;
use crate::role::Role;

type Rendering = Pin<Box<dyn Future<Output = Result<Vec<PromptMessage>, PromptError>> + Send>>;
type Renderer = Arc<dyn Fn(HashMap<String, String>, PromptContext) -> Rendering + Send + Sync>;

/// What one message of a prompt holds.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
#[non_exhaustive]
pub enum PromptContent {
    /// Text.
    Text(String),
    /// An image (given as bytes or base64: a file is not read for a
    /// prompt).
    Image(Image),
    /// A resource, embedded with its contents.
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its contents.
        contents: ResourceContents,
    },
}

impl From<String> for PromptContent {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for PromptContent {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

impl From<Image> for PromptContent {
    fn from(image: Image) -> Self {
        Self::Image(image)
    }
}

/// One message of a prompt.
///
/// ```
/// use toolkit_mcp::{PromptContent, PromptMessage, ResourceContents};
///
/// let messages = [
///     PromptMessage::user(PromptContent::Resource {
///         uri: "notes://today".into(),
///         contents: ResourceContents::text("text/plain", "Bought milk."),
///     }),
///     PromptMessage::user("Summarize the note above."),
/// ];
/// # let _ = messages;
/// ```
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
#[non_exhaustive]
pub struct PromptMessage {
    /// Who it is from.
    pub role: Role,
    /// What it holds.
    pub content: PromptContent,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<PromptContent>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the model.
    pub fn assistant(content: impl Into<PromptContent>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }

    fn to_wire(&self) -> Result<Value, PromptError> {
        let content = match &self.content {
            PromptContent::Text(text) => json!({"type": "text", "text": text}),
            PromptContent::Image(image) => match image.source() {
                ImageSource::Base64(data) => {
                    json!({"type": "image", "data": &**data, "mimeType": image.mime_type()})
                }
                ImageSource::Path(path) => {
                    return Err(PromptError::new(format!(
                        "the prompt's image {} is a file; a prompt takes images as bytes",
                        path.display()
                    )));
                }
                _ => {
                    return Err(PromptError::new(
                        "the prompt's image is not bytes; a prompt takes images as bytes",
                    ));
                }
            },
            PromptContent::Resource { uri, contents } => {
                json!({"type": "resource", "resource": contents.to_wire(uri)})
            }
        };
        let role = match self.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        Ok(json!({"role": role, "content": content}))
    }
}

/// Why a prompt could not be made: the client gets it as an error with
/// this message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct PromptError(String);

impl PromptError {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PromptError {}

impl From<String> for PromptError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for PromptError {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

/// A question the client did not answer; `?` on a
/// [`PromptContext`] question gives it.
impl From<AskError> for PromptError {
    fn from(error: AskError) -> Self {
        Self(error.to_string())
    }
}

#[derive(Debug, Clone)]
struct Argument {
    name: String,
    description: Option<String>,
    required: bool,
}

/// A prompt, for [`McpServer::with_prompt`](crate::McpServer::with_prompt):
/// its arguments (all strings, as MCP has them) and the function making
/// its messages from them. A required argument the client leaves out is
/// refused before the function runs (`-32602`, naming it).
///
/// ```
/// use toolkit_mcp::{Prompt, PromptMessage};
///
/// let review = Prompt::new("review", |arguments| async move {
///     let language = arguments.get("language").map_or("any language", String::as_str);
///     Ok(vec![PromptMessage::user(format!(
///         "Review this {language} code:\n{}",
///         arguments["code"]
///     ))])
/// })
/// .description("Asks for a code review.")
/// .argument("code", "The code to review.", true)
/// .argument("language", "Its programming language.", false);
///
/// let hello = Prompt::fixed("hello", [PromptMessage::user("Say hello.")]);
/// # let _ = (review, hello);
/// ```
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct Prompt {
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<Argument>,
    render: Renderer,
}

impl Prompt {
    /// A prompt whose messages `render` makes from the arguments given.
    pub fn new<F, Fut>(name: impl Into<String>, render: F) -> Self
    where
        F: Fn(HashMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, PromptError>> + Send + 'static,
    {
        Self::asking(name, move |arguments, _context| render(arguments))
    }

    /// A prompt whose messages `render` makes from the arguments given and
    /// what it asks the client through its [`PromptContext`]: the user, the
    /// client's model, the client's roots.
    ///
    /// On revision 2026-07-28 a question goes back to the client in the
    /// request's answer and `render` runs again with the answers
    /// (multi-round input): name each question
    /// ([`ElicitRequest::key`](toolkit_core::ElicitRequest::key)) so that
    /// it finds its answer, and let `render` stop at a question not yet
    /// answered (`?` on it does).
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use toolkit_core::ElicitRequest;
    /// use toolkit_mcp::{Prompt, PromptMessage};
    ///
    /// let standup = Prompt::asking("standup", |_arguments, context| async move {
    ///     let schema = json!({
    ///         "type": "object",
    ///         "properties": {"team": {"type": "string"}},
    ///         "required": ["team"]
    ///     });
    ///     let question = ElicitRequest::new("Which team?", schema).key("team");
    ///     let answer = context.elicit_with(question, Duration::from_secs(60)).await?;
    ///     let team = answer
    ///         .content
    ///         .as_ref()
    ///         .and_then(|content| content["team"].as_str())
    ///         .unwrap_or("the team")
    ///         .to_owned();
    ///     Ok(vec![PromptMessage::user(format!("Write {team}'s standup notes."))])
    /// });
    /// # let _ = standup;
    /// ```
    pub fn asking<F, Fut>(name: impl Into<String>, render: F) -> Self
    where
        F: Fn(HashMap<String, String>, PromptContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, PromptError>> + Send + 'static,
    {
        Self {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            render: Arc::new(move |arguments, context| Box::pin(render(arguments, context))),
        }
    }

    /// A prompt without arguments whose messages never change.
    pub fn fixed(
        name: impl Into<String>,
        messages: impl IntoIterator<Item = PromptMessage>,
    ) -> Self {
        let messages: Vec<PromptMessage> = messages.into_iter().collect();
        Self::new(name, move |_| std::future::ready(Ok(messages.clone())))
    }

    /// A title for people.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the prompt is for.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// An argument, in the order listed.
    pub fn argument(
        mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        required: bool,
    ) -> Self {
        self.arguments.push(Argument {
            name: name.into(),
            description: Some(description.into()),
            required,
        });
        self
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn to_wire(&self) -> Value {
        let mut value = json!({"name": self.name});
        if let Some(title) = &self.title {
            value["title"] = json!(title);
        }
        if let Some(description) = &self.description {
            value["description"] = json!(description);
        }
        if !self.arguments.is_empty() {
            let arguments: Vec<Value> = self
                .arguments
                .iter()
                .map(|argument| {
                    let mut value = json!({"name": argument.name, "required": argument.required});
                    if let Some(description) = &argument.description {
                        value["description"] = json!(description);
                    }
                    value
                })
                .collect();
            value["arguments"] = json!(arguments);
        }
        value
    }

    /// The prompt's messages for `arguments`, as MCP writes a
    /// `prompts/get` result; `Err(Missing)` names a required argument left
    /// out.
    pub(crate) async fn get(
        &self,
        arguments: HashMap<String, String>,
        context: PromptContext,
    ) -> Result<Value, GetError> {
        if let Some(missing) = self
            .arguments
            .iter()
            .find(|argument| argument.required && !arguments.contains_key(&argument.name))
        {
            return Err(GetError::Missing(missing.name.clone()));
        }
        let messages = (self.render)(arguments, context)
            .await
            .map_err(GetError::Failed)?;
        let messages = messages
            .iter()
            .map(PromptMessage::to_wire)
            .collect::<Result<Vec<_>, _>>()
            .map_err(GetError::Failed)?;
        let mut result = json!({"messages": messages});
        if let Some(description) = &self.description {
            result["description"] = json!(description);
        }
        Ok(result)
    }
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Why a prompt was not made.
pub(crate) enum GetError {
    /// A required argument is missing.
    Missing(String),
    /// The prompt's function failed.
    Failed(PromptError),
}
