//! The content blocks a tool result is made of.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Image;

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

    /// The block's kind, as a word: `text`, `image` or `json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Image { .. } => "image",
            Self::Json { .. } => "json",
        }
    }
}

impl From<Image> for Block {
    fn from(image: Image) -> Self {
        Self::image(image)
    }
}

/// Renders blocks as one text: text as is, JSON compact, images as a short
/// placeholder naming their type. Blocks are separated by a newline.
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
        }
    }
    out
}
