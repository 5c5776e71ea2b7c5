//! Resources in a tool's output: embedded whole, or linked by URI.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use crate::result::media::{decoded_len, media_mime};

/// A resource's contents carried inside a result: its URI, its MIME type
/// if known, and either its text or its bytes (base64).
///
/// MCP clients receive it as an embedded `resource`, and Anthropic a text
/// resource or a PDF as a `document` titled with its URI; the other
/// providers read a text resource as its text under a line naming its URI,
/// and a binary one as a line naming its URI, type and size.
///
/// ```
/// use toolkit_core::{Block, EmbeddedResource, ToolResult};
///
/// let readme = EmbeddedResource::from_text("file:///project/README.md", "# Project")
///     .with_mime_type("text/markdown")?;
/// assert_eq!(readme.text(), Some("# Project"));
/// let result = ToolResult::blocks([Block::resource(readme)]);
/// assert_eq!(result.to_text(), "[resource: file:///project/README.md]\n# Project");
///
/// let logo = EmbeddedResource::from_bytes("file:///logo.bin", "application/octet-stream", &[0; 2048])?;
/// assert_eq!(
///     ToolResult::blocks([Block::resource(logo)]).to_text(),
///     "[resource: file:///logo.bin, application/octet-stream, 2 KiB]"
/// );
/// # Ok::<(), toolkit_core::EmbeddedResourceError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ResourceParts", into = "ResourceParts")]
pub struct EmbeddedResource(Box<Resource>);

// Behind a pointer: a block holds one of these, every result holds a block,
// and every call moves its result several times on its way out
// (docs/performance.md, "Dispatch"). Boxed, a rare resource costs one
// allocation; inline, it made every result twice as large.
#[derive(Clone, PartialEq, Eq)]
struct Resource {
    uri: String,
    mime_type: Option<String>,
    body: Body,
}

#[derive(Clone, PartialEq, Eq)]
enum Body {
    Text(String),
    // Shared: cloning a result copies no bytes.
    Blob(Arc<str>),
}

impl EmbeddedResource {
    /// A text resource. Its MIME type is unknown until
    /// [`with_mime_type`](Self::with_mime_type) sets it.
    pub fn from_text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self(Box::new(Resource {
            uri: uri.into(),
            mime_type: None,
            body: Body::Text(text.into()),
        }))
    }

    /// A binary resource from its bytes, encoded to base64 once, here.
    pub fn from_bytes(
        uri: impl Into<String>,
        mime_type: &str,
        bytes: &[u8],
    ) -> Result<Self, EmbeddedResourceError> {
        Ok(Self(Box::new(Resource {
            uri: uri.into(),
            mime_type: Some(checked_mime(mime_type)?),
            body: Body::Blob(STANDARD.encode(bytes).into()),
        })))
    }

    /// A binary resource from base64 data (standard alphabet, padded),
    /// decoded once to check it and kept as given.
    pub fn from_base64(
        uri: impl Into<String>,
        mime_type: &str,
        data: impl Into<String>,
    ) -> Result<Self, EmbeddedResourceError> {
        let data: String = data.into();
        STANDARD
            .decode(data.as_bytes())
            .map_err(|error| EmbeddedResourceError::InvalidBase64 {
                reason: error.to_string(),
            })?;
        Ok(Self(Box::new(Resource {
            uri: uri.into(),
            mime_type: Some(checked_mime(mime_type)?),
            body: Body::Blob(data.into()),
        })))
    }

    /// The same resource with its MIME type set.
    pub fn with_mime_type(mut self, mime_type: &str) -> Result<Self, EmbeddedResourceError> {
        self.0.mime_type = Some(checked_mime(mime_type)?);
        Ok(self)
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.0.uri
    }

    /// The MIME type, lower-case, if known.
    pub fn mime_type(&self) -> Option<&str> {
        self.0.mime_type.as_deref()
    }

    /// The text of a text resource.
    pub fn text(&self) -> Option<&str> {
        match &self.0.body {
            Body::Text(text) => Some(text),
            Body::Blob(_) => None,
        }
    }

    /// The base64 data of a binary resource.
    pub fn blob(&self) -> Option<&str> {
        match &self.0.body {
            Body::Blob(data) => Some(data),
            Body::Text(_) => None,
        }
    }

    /// The number of bytes a binary resource holds.
    pub fn blob_len(&self) -> Option<usize> {
        self.blob().map(decoded_len)
    }
}

impl fmt::Debug for EmbeddedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("EmbeddedResource");
        s.field("uri", &self.0.uri)
            .field("mime_type", &self.0.mime_type);
        match &self.0.body {
            Body::Text(text) => s.field("text", text),
            // Megabytes of base64 help nobody reading a log.
            Body::Blob(data) => s.field("base64_len", &data.len()),
        };
        s.finish()
    }
}

/// The serialized form of an [`EmbeddedResource`]: `{"uri", "mime_type"?,
/// "text" | "blob"}`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceParts {
    uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blob: Option<String>,
}

impl TryFrom<ResourceParts> for EmbeddedResource {
    type Error = EmbeddedResourceError;

    fn try_from(parts: ResourceParts) -> Result<Self, Self::Error> {
        let resource = match (parts.text, parts.blob, parts.mime_type) {
            (Some(text), None, mime_type) => {
                let resource = Self::from_text(parts.uri, text);
                match mime_type {
                    Some(mime_type) => resource.with_mime_type(&mime_type)?,
                    None => resource,
                }
            }
            (None, Some(blob), Some(mime_type)) => Self::from_base64(parts.uri, &mime_type, blob)?,
            (None, Some(blob), None) => {
                let mut resource = Self::from_base64(parts.uri, "application/octet-stream", blob)?;
                resource.0.mime_type = None;
                resource
            }
            (Some(_), Some(_), _) => return Err(EmbeddedResourceError::BothTextAndBlob),
            (None, None, _) => return Err(EmbeddedResourceError::NeitherTextNorBlob),
        };
        Ok(resource)
    }
}

impl From<EmbeddedResource> for ResourceParts {
    fn from(resource: EmbeddedResource) -> Self {
        let resource = *resource.0;
        let (text, blob) = match resource.body {
            Body::Text(text) => (Some(text), None),
            Body::Blob(data) => (None, Some(data.to_string())),
        };
        Self {
            uri: resource.uri,
            mime_type: resource.mime_type,
            text,
            blob,
        }
    }
}

/// A link to a resource the tool does not carry: the model (or the host)
/// may read it later by its URI.
///
/// MCP clients receive it as a `resource_link`; the other providers read a
/// line naming it.
///
/// ```
/// use toolkit_core::{Block, ResourceLink, ToolResult};
///
/// let link = ResourceLink::new("file:///logs/today.log", "today.log")
///     .with_description("Today's server log")
///     .with_mime_type("text/plain")
///     .with_size(52_000);
/// assert_eq!(link.size(), Some(52_000));
/// assert_eq!(
///     ToolResult::blocks([Block::resource_link(link)]).to_text(),
///     "[resource link: today.log, file:///logs/today.log, text/plain, 51 KiB: Today's server log]"
/// );
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ResourceLink(Box<Link>);

// Boxed for the same reason as `EmbeddedResource`'s parts: six fields
// inline made every block, and so every result, 136 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Link {
    uri: String,
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

impl ResourceLink {
    /// A link to the resource at `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self(Box::new(Link {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }))
    }

    /// A title for people.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.0.title = Some(title.into());
        self
    }

    /// What the resource holds.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.0.description = Some(description.into());
        self
    }

    /// The resource's MIME type, as the tool knows it (kept as given).
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.0.mime_type = Some(mime_type.into());
        self
    }

    /// The resource's size in bytes.
    pub fn with_size(mut self, size: u64) -> Self {
        self.0.size = Some(size);
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.0.uri
    }

    /// The resource's name.
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The title for people.
    pub fn title(&self) -> Option<&str> {
        self.0.title.as_deref()
    }

    /// What the resource holds.
    pub fn description(&self) -> Option<&str> {
        self.0.description.as_deref()
    }

    /// The resource's MIME type.
    pub fn mime_type(&self) -> Option<&str> {
        self.0.mime_type.as_deref()
    }

    /// The resource's size in bytes.
    pub fn size(&self) -> Option<u64> {
        self.0.size
    }
}

// As the derive printed it before the fields moved behind a pointer.
impl fmt::Debug for ResourceLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Link {
            uri,
            name,
            title,
            description,
            mime_type,
            size,
        } = &*self.0;
        f.debug_struct("ResourceLink")
            .field("uri", uri)
            .field("name", name)
            .field("title", title)
            .field("description", description)
            .field("mime_type", mime_type)
            .field("size", size)
            .finish()
    }
}

/// Why an embedded resource could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EmbeddedResourceError {
    /// The MIME type is not `type/subtype`.
    InvalidMimeType {
        /// The MIME type given.
        mime_type: String,
    },
    /// The data is not valid standard base64.
    InvalidBase64 {
        /// What the decoder reported.
        reason: String,
    },
    /// Both text and base64 data were given; a resource holds one.
    BothTextAndBlob,
    /// Neither text nor base64 data was given.
    NeitherTextNorBlob,
}

impl fmt::Display for EmbeddedResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidMimeType { mime_type } => {
                write!(f, "`{mime_type}` is not a MIME type (type/subtype)")
            }
            Self::InvalidBase64 { reason } => {
                write!(f, "resource data is not valid base64: {reason}")
            }
            Self::BothTextAndBlob => {
                f.write_str("a resource has both text and base64 data; give exactly one")
            }
            Self::NeitherTextNorBlob => {
                f.write_str("a resource has neither text nor base64 data; give exactly one")
            }
        }
    }
}

impl std::error::Error for EmbeddedResourceError {}

fn checked_mime(mime_type: &str) -> Result<String, EmbeddedResourceError> {
    media_mime(mime_type).ok_or_else(|| EmbeddedResourceError::InvalidMimeType {
        mime_type: mime_type.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_forms_round_trip() {
        let text = EmbeddedResource::from_text("test://a", "alpha")
            .with_mime_type("text/plain")
            .unwrap();
        let blob = EmbeddedResource::from_bytes("test://b", "application/pdf", b"%PDF-").unwrap();
        let bare_blob: EmbeddedResource =
            serde_json::from_value(serde_json::json!({"uri": "test://c", "blob": "AAAA"})).unwrap();
        assert_eq!(bare_blob.mime_type(), None);
        for resource in [text, blob, bare_blob] {
            let json = serde_json::to_value(&resource).unwrap();
            assert_eq!(
                serde_json::from_value::<EmbeddedResource>(json).unwrap(),
                resource
            );
        }
        let link = ResourceLink::new("test://d", "d")
            .with_title("D")
            .with_size(3);
        let json = serde_json::to_value(&link).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"uri": "test://d", "name": "d", "title": "D", "size": 3})
        );
        assert_eq!(serde_json::from_value::<ResourceLink>(json).unwrap(), link);
    }

    #[test]
    fn bad_input_is_an_error() {
        for bad in [
            serde_json::json!({"uri": "u", "text": "t", "blob": "AAAA"}),
            serde_json::json!({"uri": "u"}),
            serde_json::json!({"uri": "u", "blob": "%%"}),
            serde_json::json!({"uri": "u", "text": "t", "mime_type": "plain"}),
        ] {
            assert!(
                serde_json::from_value::<EmbeddedResource>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
