//! The content blocks a tool result is made of.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::result::media::ByteSize;
use crate::{Audio, EmbeddedResource, Image, ResourceLink};

/// One piece of a tool's output. A result holds an ordered list of blocks,
/// and every provider receives them in that order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Block {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The image.
        image: Image,
    },
    /// Structured JSON. Providers that take JSON natively (Gemini's
    /// `response`, MCP's `structuredContent`) receive it as JSON; the others
    /// receive it serialized as text.
    Json {
        /// The value.
        value: Value,
    },
    /// Audio. MCP, OpenAI Chat (WAV and MP3, in the `user` message) and
    /// Gemini (in a `user` content after the function responses) receive
    /// it as audio; the others a line naming its type and size.
    Audio {
        /// The audio.
        audio: Audio,
    },
    /// A resource's contents, embedded. MCP receives it as an embedded
    /// `resource`, Anthropic a text resource or a PDF as a `document`; the
    /// others its text under a line naming its URI (a binary resource: a
    /// line naming its URI, type and size).
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// A link to a resource. MCP receives it as a `resource_link`; the
    /// others a line naming it.
    ResourceLink {
        /// The link.
        link: ResourceLink,
    },
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image block.
    pub fn image(image: Image) -> Self {
        Self::Image { image }
    }

    /// A structured JSON block.
    pub fn json(value: impl Into<Value>) -> Self {
        Self::Json {
            value: value.into(),
        }
    }

    /// An audio block.
    pub fn audio(audio: Audio) -> Self {
        Self::Audio { audio }
    }

    /// An embedded resource block.
    pub fn resource(resource: EmbeddedResource) -> Self {
        Self::Resource { resource }
    }

    /// A resource link block.
    pub fn resource_link(link: ResourceLink) -> Self {
        Self::ResourceLink { link }
    }

    /// The block's kind, as a word: `text`, `image`, `json`, `audio`,
    /// `resource` or `resource_link`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Image { .. } => "image",
            Self::Json { .. } => "json",
            Self::Audio { .. } => "audio",
            Self::Resource { .. } => "resource",
            Self::ResourceLink { .. } => "resource_link",
        }
    }
}

impl From<Image> for Block {
    fn from(image: Image) -> Self {
        Self::image(image)
    }
}

impl From<Audio> for Block {
    fn from(audio: Audio) -> Self {
        Self::audio(audio)
    }
}

impl From<EmbeddedResource> for Block {
    fn from(resource: EmbeddedResource) -> Self {
        Self::resource(resource)
    }
}

impl From<ResourceLink> for Block {
    fn from(link: ResourceLink) -> Self {
        Self::resource_link(link)
    }
}

/// The text a provider without a native form reads for audio, an embedded
/// resource or a resource link: `[audio: audio/wav, 12 KiB]`; a text
/// resource's text under `[resource: <uri>]`; `[resource: <uri>, <type>,
/// <size>]` for a binary one; `[resource link: <title or name>, <uri>,
/// <type>, <size>: <description>]`, each part after the URI only when
/// known. `None` for the other blocks.
pub(crate) fn fallback_text(block: &Block) -> Option<String> {
    match block {
        Block::Audio { audio } => Some(format!(
            "[audio: {}, {}]",
            audio.mime_type(),
            ByteSize(audio.byte_len())
        )),
        Block::Resource { resource } => Some(resource_text(resource)),
        Block::ResourceLink { link } => Some(link_text(link)),
        Block::Text { .. } | Block::Image { .. } | Block::Json { .. } => None,
    }
}

/// An embedded resource as text (see [`fallback_text`]).
pub(crate) fn resource_text(resource: &EmbeddedResource) -> String {
    match resource.text() {
        Some(text) => format!("[resource: {}]\n{text}", resource.uri()),
        None => format!(
            "[resource: {}, {}, {}]",
            resource.uri(),
            resource.mime_type().unwrap_or("binary"),
            ByteSize(resource.blob_len().unwrap_or_default())
        ),
    }
}

/// A resource link as text (see [`fallback_text`]).
pub(crate) fn link_text(link: &ResourceLink) -> String {
    let mut out = format!(
        "[resource link: {}, {}",
        link.title().unwrap_or(link.name()),
        link.uri()
    );
    if let Some(mime_type) = link.mime_type() {
        let _ = write!(out, ", {mime_type}");
    }
    if let Some(size) = link.size() {
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        let _ = write!(out, ", {}", ByteSize(size));
    }
    if let Some(description) = link.description() {
        let _ = write!(out, ": {description}");
    }
    out.push(']');
    out
}

/// Renders blocks as one text: text as is, JSON compact, images as a short
/// placeholder naming their type, the other blocks as [`fallback_text`].
/// Blocks are separated by a newline.
pub(crate) fn render_text<'a>(blocks: impl IntoIterator<Item = &'a Block>) -> String {
    let mut out = String::new();
    for (i, block) in blocks.into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match block {
            Block::Text { text } => out.push_str(text),
            Block::Json { value } => out.push_str(&value.to_string()),
            Block::Image { image } => {
                let _ = write!(out, "[image: {}]", image.mime_type());
            }
            other => out.push_str(&fallback_text(other).unwrap_or_default()),
        }
    }
    out
}
