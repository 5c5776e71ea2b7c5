//! The host's choices for emission.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How results are emitted. The defaults suit the providers' current APIs;
/// the builder methods adapt to older models and stricter hosts.
///
/// ```
/// use toolkit_core::emit::EmitOptions;
///
/// let options = EmitOptions::default()
///     .with_image_dir("/var/lib/agent/screenshots")
///     .with_gemini_inline_images(false);
/// assert_eq!(options.envelope_limit(), 200);
/// assert!(!options.gemini_inline_images());
/// ```
///
/// Its JSON form names each option as its getter does (`image_dir`,
/// `placeholder`, `gemini_inline_images`, `gemini_call_ids`,
/// `mcp_revision`, `envelope_limit`); an option left out takes its
/// default, and `image_dir` is left out when unset.
///
/// ```
/// use toolkit_core::emit::EmitOptions;
///
/// let options: EmitOptions = serde_json::from_str(r#"{"gemini_call_ids": false}"#)?;
/// assert_eq!(options, EmitOptions::default().with_gemini_call_ids(false));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmitOptions {
    #[serde(skip_serializing_if = "Option::is_none")]
    image_dir: Option<PathBuf>,
    placeholder: String,
    gemini_inline_images: bool,
    gemini_call_ids: bool,
    mcp_revision: McpRevision,
    envelope_limit: usize,
}

/// The MCP protocol revision results are written for.
///
/// Its JSON form is the revision's date, as MCP names it (`"2025-11-25"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub enum McpRevision {
    /// 2025-11-25: `structuredContent` only for a JSON object.
    #[default]
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// 2026-07-28: every result carries `resultType`, and `structuredContent`
    /// may be any JSON value.
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

impl EmitOptions {
    /// The sentence that answers a call whose content travels in a later
    /// message: an OpenAI Chat `tool` message without a note, a Gemini
    /// response whose images are sent apart.
    pub const DEFAULT_PLACEHOLDER: &'static str =
        "Tool execution completed successfully. Content in next message.";

    /// The folder image files must lie in to be sent. Without one, every
    /// image given by path is refused: a tool cannot make the host read an
    /// arbitrary file and hand it to a model.
    pub fn with_image_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.image_dir = Some(dir.into());
        self
    }

    /// Replaces [`DEFAULT_PLACEHOLDER`](Self::DEFAULT_PLACEHOLDER).
    pub fn with_placeholder(mut self, sentence: impl Into<String>) -> Self {
        self.placeholder = sentence.into();
        self
    }

    /// Whether Gemini images travel inside `functionResponse.parts` (Gemini 3
    /// and later; the default) or in a separate `user` content after the
    /// function responses (earlier models, which reject the former).
    pub fn with_gemini_inline_images(mut self, inline: bool) -> Self {
        self.gemini_inline_images = inline;
        self
    }

    /// Whether Gemini function responses echo the call's `id` (the Gemini
    /// API; the default) or leave it out (Vertex AI, which rejects it).
    pub fn with_gemini_call_ids(mut self, echo: bool) -> Self {
        self.gemini_call_ids = echo;
        self
    }

    /// The MCP revision results are written for.
    pub fn with_mcp_revision(mut self, revision: McpRevision) -> Self {
        self.mcp_revision = revision;
        self
    }

    /// The limit on an envelope's `output`, in characters.
    pub fn with_envelope_limit(mut self, chars: usize) -> Self {
        self.envelope_limit = chars;
        self
    }

    /// The folder image files must lie in, if any.
    pub fn image_dir(&self) -> Option<&Path> {
        self.image_dir.as_deref()
    }

    /// The sentence that answers a call whose content travels in a later message.
    pub fn placeholder(&self) -> &str {
        &self.placeholder
    }

    /// Whether Gemini images travel inside the function response.
    pub fn gemini_inline_images(&self) -> bool {
        self.gemini_inline_images
    }

    /// Whether Gemini function responses echo call ids.
    pub fn gemini_call_ids(&self) -> bool {
        self.gemini_call_ids
    }

    /// The MCP revision.
    pub fn mcp_revision(&self) -> McpRevision {
        self.mcp_revision
    }

    /// The envelope limit, in characters.
    pub fn envelope_limit(&self) -> usize {
        self.envelope_limit
    }
}

impl Default for EmitOptions {
    fn default() -> Self {
        Self {
            image_dir: None,
            placeholder: Self::DEFAULT_PLACEHOLDER.to_owned(),
            gemini_inline_images: true,
            gemini_call_ids: true,
            mcp_revision: McpRevision::default(),
            envelope_limit: crate::Envelope::DEFAULT_LIMIT,
        }
    }
}
