//! Resources a server offers besides its tools: fixed texts and files,
//! contents read on each request, and URI templates (`test://items/{id}`)
//! whose variables reach the reader.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::broadcast;

type Reading = Pin<Box<dyn Future<Output = Result<ResourceContents, ResourceError>> + Send>>;
type Reader = Arc<dyn Fn(String, HashMap<String, String>) -> Reading + Send + Sync>;

/// What reading a resource gives: text or bytes, with its MIME type when
/// known.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
// Exhaustive on purpose: a resource's contents are text or bytes, MCP's two forms.
pub enum ResourceContents {
    /// Text (`text` on the wire).
    Text {
        /// The MIME type, such as `text/markdown`.
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Bytes (`blob`, base64, on the wire).
    Binary {
        /// The MIME type, such as `image/png`.
        mime_type: Option<String>,
        /// The bytes.
        bytes: Vec<u8>,
    },
}

impl ResourceContents {
    /// Text of the given MIME type.
    pub fn text(mime_type: impl Into<String>, text: impl Into<String>) -> Self {
        Self::Text {
            mime_type: Some(mime_type.into()),
            text: text.into(),
        }
    }

    /// Bytes of the given MIME type.
    pub fn binary(mime_type: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        Self::Binary {
            mime_type: Some(mime_type.into()),
            bytes: bytes.into(),
        }
    }

    /// The contents as MCP writes them, for the resource at `uri`.
    pub(crate) fn to_wire(&self, uri: &str) -> Value {
        let (mime_type, mut value) = match self {
            Self::Text { mime_type, text } => (mime_type, json!({"uri": uri, "text": text})),
            Self::Binary { mime_type, bytes } => (
                mime_type,
                json!({"uri": uri, "blob": STANDARD.encode(bytes)}),
            ),
        };
        if let Some(mime_type) = mime_type {
            value["mimeType"] = json!(mime_type);
        }
        value
    }
}

/// Why a resource could not be read: the client gets it as an internal
/// error with this message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct ResourceError(String);

impl ResourceError {
    /// An error saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ResourceError {}

impl From<String> for ResourceError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for ResourceError {
    fn from(message: &str) -> Self {
        Self(message.to_owned())
    }
}

/// What every listed resource and template says of itself.
#[derive(Debug, Clone)]
struct Description {
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
}

impl Description {
    fn new(name: String) -> Self {
        Self {
            name,
            title: None,
            description: None,
            mime_type: None,
        }
    }

    fn write(&self, into: &mut Value) {
        into["name"] = json!(self.name);
        for (key, value) in [
            ("title", &self.title),
            ("description", &self.description),
            ("mimeType", &self.mime_type),
        ] {
            if let Some(value) = value {
                into[key] = json!(value);
            }
        }
    }
}

/// The builder methods that fill a [`Description`], alike for a resource
/// and a template: only what their documentation says of the described
/// differs.
macro_rules! describing {
    ($described:ty, $what_it_holds:literal, $mime_type:literal) => {
        impl $described {
            /// A title for people.
            pub fn title(mut self, title: impl Into<String>) -> Self {
                self.about.title = Some(title.into());
                self
            }

            #[doc = $what_it_holds]
            pub fn description(mut self, description: impl Into<String>) -> Self {
                self.about.description = Some(description.into());
                self
            }

            #[doc = $mime_type]
            pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
                self.about.mime_type = Some(mime_type.into());
                self
            }
        }
    };
}

describing!(
    Resource,
    "What the resource holds.",
    "The MIME type listed (a fixed resource lists its contents' own)."
);
describing!(
    ResourceTemplate,
    "What the resources hold.",
    "The MIME type of every resource of the template."
);

/// One resource at a fixed URI, for
/// [`McpServer::with_resource`](crate::McpServer::with_resource).
///
/// ```
/// use toolkit_mcp::{Resource, ResourceContents};
///
/// let readme = Resource::text("docs://readme", "readme", "text/markdown", "# Notes\n")
///     .description("How the notes are kept.");
/// let logo = Resource::binary("docs://logo", "logo", "image/png", vec![0x89, b'P', b'N', b'G']);
/// let now = Resource::new("clock://now", "now", || async {
///     Ok(ResourceContents::text("text/plain", "12:00"))
/// });
/// # let _ = (readme, logo, now);
/// ```
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct Resource {
    uri: String,
    about: Description,
    read: Reader,
}

impl Resource {
    /// A resource read by `read` at each request.
    pub fn new<F, Fut>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ResourceContents, ResourceError>> + Send + 'static,
    {
        Self {
            uri: uri.into(),
            about: Description::new(name.into()),
            read: Arc::new(move |_, _| Box::pin(read())),
        }
    }

    /// A resource whose contents never change.
    pub fn fixed(
        uri: impl Into<String>,
        name: impl Into<String>,
        contents: ResourceContents,
    ) -> Self {
        let mime_type = match &contents {
            ResourceContents::Text { mime_type, .. }
            | ResourceContents::Binary { mime_type, .. } => mime_type.clone(),
        };
        let mut resource = Self::new(uri, name, move || std::future::ready(Ok(contents.clone())));
        resource.about.mime_type = mime_type;
        resource
    }

    /// A fixed text.
    pub fn text(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::fixed(uri, name, ResourceContents::text(mime_type, text))
    }

    /// Fixed bytes.
    pub fn binary(
        uri: impl Into<String>,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Self {
        Self::fixed(uri, name, ResourceContents::binary(mime_type, bytes))
    }

    fn to_wire(&self) -> Value {
        let mut value = json!({"uri": self.uri});
        self.about.write(&mut value);
        value
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.uri)
            .field("name", &self.about.name)
            .finish_non_exhaustive()
    }
}

/// Resources whose URIs follow a template with `{variable}` parts (RFC 6570,
/// simple expansion), for
/// [`McpServer::with_resource_template`](crate::McpServer::with_resource_template).
/// A variable matches one or more characters other than `/`; the reader
/// gets the URI asked for and the variables' values.
///
/// ```
/// use toolkit_mcp::{ResourceContents, ResourceTemplate};
///
/// let notes = ResourceTemplate::new("notes://{day}/summary", "summary", |_uri, variables| async move {
///     let day = &variables["day"];
///     Ok(ResourceContents::text("text/plain", format!("Nothing happened on {day}.")))
/// })
/// .description("The summary of one day's notes.");
/// # let _ = notes;
/// ```
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct ResourceTemplate {
    template: String,
    parts: Vec<Part>,
    about: Description,
    read: Reader,
}

/// A piece of a URI template: literal text, or a variable's name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Variable(String),
}

fn parse_template(template: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        if open > 0 {
            parts.push(Part::Literal(rest[..open].to_owned()));
        }
        parts.push(Part::Variable(rest[open + 1..open + close].to_owned()));
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest.to_owned()));
    }
    parts
}

/// The variables of `uri` when it follows the template's parts.
fn match_template(parts: &[Part], uri: &str) -> Option<HashMap<String, String>> {
    let mut variables = HashMap::new();
    let mut rest = uri;
    let mut parts = parts.iter().peekable();
    while let Some(part) = parts.next() {
        match part {
            Part::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
            Part::Variable(name) => {
                let end = match parts.peek() {
                    Some(Part::Literal(next)) => rest.find(next.as_str())?,
                    _ => rest.len(),
                };
                let value = &rest[..end];
                if value.is_empty() || value.contains('/') {
                    return None;
                }
                variables.insert(name.clone(), value.to_owned());
                rest = &rest[end..];
            }
        }
    }
    rest.is_empty().then_some(variables)
}

impl ResourceTemplate {
    /// Resources at the URIs `template` describes, read by `read` with the
    /// URI asked for and its variables.
    pub fn new<F, Fut>(template: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(String, HashMap<String, String>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ResourceContents, ResourceError>> + Send + 'static,
    {
        let template = template.into();
        Self {
            parts: parse_template(&template),
            template,
            about: Description::new(name.into()),
            read: Arc::new(move |uri, variables| Box::pin(read(uri, variables))),
        }
    }

    fn to_wire(&self) -> Value {
        let mut value = json!({"uriTemplate": self.template});
        self.about.write(&mut value);
        value
    }
}

impl fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("template", &self.template)
            .field("name", &self.about.name)
            .finish_non_exhaustive()
    }
}

/// The resources and templates a server offers, and the announcements of
/// their changes.
#[derive(Clone)]
pub(crate) struct Resources {
    fixed: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    updates: ResourceUpdates,
}

impl Default for Resources {
    fn default() -> Self {
        Self {
            fixed: Vec::new(),
            templates: Vec::new(),
            updates: ResourceUpdates(broadcast::channel(UPDATES_KEPT).0),
        }
    }
}

/// How many unsent announcements a slow session may fall behind by before
/// it misses some.
const UPDATES_KEPT: usize = 64;

/// Why a read found nothing to read.
pub(crate) enum ReadError {
    /// No resource or template has the URI.
    NotFound,
    /// The reader failed.
    Failed(ResourceError),
}

impl Resources {
    pub(crate) fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.templates.is_empty()
    }

    pub(crate) fn add(&mut self, resource: Resource) {
        self.fixed.push(resource);
    }

    pub(crate) fn add_template(&mut self, template: ResourceTemplate) {
        self.templates.push(template);
    }

    pub(crate) fn updates(&self) -> &ResourceUpdates {
        &self.updates
    }

    pub(crate) fn list(&self) -> Vec<Value> {
        self.fixed.iter().map(Resource::to_wire).collect()
    }

    pub(crate) fn list_templates(&self) -> Vec<Value> {
        self.templates
            .iter()
            .map(ResourceTemplate::to_wire)
            .collect()
    }

    /// Reads `uri`: a fixed resource first, else the first template it
    /// follows.
    pub(crate) async fn read(&self, uri: &str) -> Result<Value, ReadError> {
        let reading = if let Some(resource) = self.fixed.iter().find(|r| r.uri == uri) {
            (resource.read)(uri.to_owned(), HashMap::new())
        } else {
            let (template, variables) = self
                .templates
                .iter()
                .find_map(|t| match_template(&t.parts, uri).map(|variables| (t, variables)))
                .ok_or(ReadError::NotFound)?;
            (template.read)(uri.to_owned(), variables)
        };
        let contents = reading.await.map_err(ReadError::Failed)?;
        Ok(json!({"contents": [contents.to_wire(uri)]}))
    }
}

/// Announces changes of a server's resources to the clients that
/// subscribed to them (`resources/subscribe`, 2025-11-25): they receive
/// `notifications/resources/updated` and read the resource again. Get it
/// from [`McpServer::resource_updates`](crate::McpServer::resource_updates);
/// clones announce to the same clients.
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct ResourceUpdates(broadcast::Sender<Arc<str>>);

impl ResourceUpdates {
    /// Tells every client subscribed to `uri` that it changed.
    pub fn updated(&self, uri: &str) {
        // No session listening is no error.
        let _ = self.0.send(Arc::from(uri));
    }
}

impl fmt::Debug for ResourceUpdates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResourceUpdates")
    }
}

/// The URIs one session's client subscribed to.
#[derive(Default)]
pub(crate) struct Subscriptions {
    uris: Mutex<HashSet<String>>,
    /// Whether the task announcing updates to this session runs.
    announcing: Mutex<bool>,
}

impl Subscriptions {
    /// Subscribes to `uri`, and starts announcing updates to `peer` at the
    /// first subscription.
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        uri: String,
        updates: &ResourceUpdates,
        peer: Peer<RoleServer>,
    ) {
        self.uris
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(uri);
        let mut announcing = self
            .announcing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !*announcing {
            *announcing = true;
            tokio::spawn(announce(Arc::clone(self), updates.0.subscribe(), peer));
        }
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.uris
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(uri);
    }

    fn has(&self, uri: &str) -> bool {
        self.uris
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(uri)
    }
}

/// Sends `notifications/resources/updated` for each change of a subscribed
/// resource, until the client goes away.
async fn announce(
    subscriptions: Arc<Subscriptions>,
    mut updates: broadcast::Receiver<Arc<str>>,
    peer: Peer<RoleServer>,
) {
    loop {
        match updates.recv().await {
            Ok(uri) => {
                if subscriptions.has(&uri) {
                    let params =
                        rmcp::model::ResourceUpdatedNotificationParam::new(uri.to_string());
                    if peer.notify_resource_updated(params).await.is_err() {
                        return;
                    }
                }
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_their_variables() {
        let parts = parse_template("test://template/{id}/data");
        let variables = match_template(&parts, "test://template/123/data").expect("a match");
        assert_eq!(variables["id"], "123");
        assert!(match_template(&parts, "test://template//data").is_none());
        assert!(match_template(&parts, "test://template/1/2/data").is_none());
        assert!(match_template(&parts, "test://template/1/data/more").is_none());
        let tail = parse_template("notes://{day}");
        assert_eq!(
            match_template(&tail, "notes://monday").expect("a match")["day"],
            "monday"
        );
    }
}
