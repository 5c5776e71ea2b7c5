//! What every emitter needs from a result: its parts, ready to write.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use super::{EmitOptions, EmitProblem};
use crate::result::block::{fallback_text, link_text, resource_text};
use crate::{Block, EmbeddedResource, ImageError, Provider, ResourceLink, ToolCallResult};

/// What the model reads when a call's result has no content at all.
pub(crate) const NO_OUTPUT: &str = "(no output)";

/// The image types `provider` accepts in results (`None`: any type).
fn accepted_images(provider: Provider) -> Option<&'static [&'static str]> {
    match provider {
        Provider::OpenAi | Provider::OpenAiStrict | Provider::OpenAiResponses => {
            Some(&["image/png", "image/jpeg", "image/webp", "image/gif"])
        }
        Provider::Anthropic => Some(&["image/jpeg", "image/png", "image/gif", "image/webp"]),
        Provider::Gemini => Some(&["image/png", "image/jpeg", "image/webp"]),
        Provider::Mcp => None,
    }
}

/// Whether `provider` takes audio of `mime_type` in what it is sent for a
/// result: MCP any audio, Gemini the types its `inlineData` reads, OpenAI
/// Chat WAV and MP3 (`input_audio`, in the `user` message); OpenAI
/// Responses and Anthropic take no audio.
fn takes_audio(provider: Provider, mime_type: &str) -> bool {
    match provider {
        Provider::Mcp => true,
        Provider::Gemini => GEMINI_AUDIO.contains(&mime_type),
        Provider::OpenAi | Provider::OpenAiStrict => openai_audio_format(mime_type).is_some(),
        Provider::OpenAiResponses | Provider::Anthropic => false,
    }
}

/// Whether `provider` takes `resource` as a resource: MCP every one,
/// Anthropic a text resource (a `text` document) and a PDF (a `base64`
/// document); the others read it as text.
fn takes_resource(provider: Provider, resource: &EmbeddedResource) -> bool {
    match provider {
        Provider::Mcp => true,
        // A blank document says nothing; its text fallback names the URI.
        Provider::Anthropic => match resource.text() {
            Some(text) => !text.trim().is_empty(),
            None => resource.mime_type() == Some("application/pdf"),
        },
        _ => false,
    }
}

/// The audio types Gemini reads inline.
const GEMINI_AUDIO: &[&str] = &[
    "audio/wav",
    "audio/mp3",
    "audio/mpeg",
    "audio/aiff",
    "audio/aac",
    "audio/ogg",
    "audio/flac",
];

/// OpenAI Chat's `input_audio.format` for a MIME type: `wav` or `mp3`.
pub(crate) fn openai_audio_format(mime_type: &str) -> Option<&'static str> {
    match mime_type {
        "audio/wav" | "audio/wave" | "audio/x-wav" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    }
}

/// One piece of a result, resolved for emission.
pub(crate) enum Part<'a> {
    Text(Cow<'a, str>),
    Json(&'a Value),
    Image {
        mime_type: &'a str,
        data: Arc<str>,
    },
    /// Audio, for a provider that takes its type.
    Audio {
        mime_type: &'a str,
        data: Arc<str>,
    },
    /// An embedded resource, for a provider that takes it (see
    /// `takes_resource`); the others read its text.
    Resource(&'a EmbeddedResource),
    /// A resource link, for MCP; the others read its text.
    Link(&'a ResourceLink),
}

impl Part<'_> {
    /// The part as a JSON string, for text parts and JSON blocks.
    pub(crate) fn text_value(&self) -> Value {
        Value::String(self.as_text().map(Cow::into_owned).unwrap_or_default())
    }

    /// The part as text, for providers that take text only.
    pub(crate) fn as_text(&self) -> Option<Cow<'_, str>> {
        match self {
            Part::Text(text) => Some(Cow::Borrowed(text)),
            Part::Json(value) => Some(Cow::Owned(value.to_string())),
            Part::Resource(resource) => Some(Cow::Owned(resource_text(resource))),
            Part::Link(link) => Some(Cow::Owned(link_text(link))),
            Part::Image { .. } | Part::Audio { .. } => None,
        }
    }
}

/// A call's result as parts: the error line first when the tool failed, then
/// the content in order, with `(no output)` standing in for empty content.
pub(crate) struct Resolved<'a> {
    pub(crate) call: &'a ToolCallResult,
    pub(crate) error: Option<&'a str>,
    pub(crate) parts: Vec<Part<'a>>,
    pub(crate) note: Option<&'a str>,
    /// Whether `parts` holds anything besides the error line and the
    /// `(no output)` stand-in.
    pub(crate) has_content: bool,
}

impl<'a> Resolved<'a> {
    /// Resolves one call, loading images and checking them against what the
    /// provider accepts (`None`: any image type).
    pub(crate) fn new(
        call: &'a ToolCallResult,
        options: &EmitOptions,
        provider: Provider,
        problems: &mut Vec<EmitProblem>,
    ) -> Self {
        let result = &call.result;
        // Content first: computing a lazy body may turn the result into an error.
        let content = result.content();
        let error = result.error_message();
        let mut parts = Vec::with_capacity(content.len() + 1);
        if let Some(error) = error {
            parts.push(Part::Text(Cow::Owned(format!("Error: {error}"))));
        }
        for (index, block) in content.iter().enumerate() {
            let part = match block {
                // Blank text carries nothing, and Anthropic rejects it.
                Block::Text { text } if text.trim().is_empty() => continue,
                Block::Text { text } => Part::Text(Cow::Borrowed(text)),
                Block::Json { value } => Part::Json(value),
                Block::Audio { audio } if takes_audio(provider, audio.mime_type()) => Part::Audio {
                    mime_type: audio.mime_type(),
                    data: audio.shared_data(),
                },
                Block::Resource { resource } if takes_resource(provider, resource) => {
                    Part::Resource(resource)
                }
                Block::ResourceLink { link } if provider == Provider::Mcp => Part::Link(link),
                Block::Audio { .. } | Block::Resource { .. } | Block::ResourceLink { .. } => {
                    Part::Text(Cow::Owned(fallback_text(block).unwrap_or_default()))
                }
                Block::Image { image } => {
                    let loaded = match accepted_images(provider) {
                        Some(list) if !list.contains(&image.mime_type()) => {
                            Err(ImageError::Unsupported {
                                mime_type: image.mime_type().to_owned(),
                                provider,
                                accepted: list,
                            })
                        }
                        _ => image.load_base64(options.image_dir()),
                    };
                    match loaded {
                        Ok(data) => Part::Image {
                            mime_type: image.mime_type(),
                            data,
                        },
                        Err(error) => {
                            let text = format!("[image not available: {error}]");
                            problems.push(EmitProblem {
                                call_id: call.call_id.clone(),
                                block: index,
                                error,
                            });
                            Part::Text(Cow::Owned(text))
                        }
                    }
                }
            };
            parts.push(part);
        }
        let has_content = parts.len() > usize::from(error.is_some());
        if parts.is_empty() {
            parts.push(Part::Text(Cow::Borrowed(NO_OUTPUT)));
        }
        Self {
            call,
            error,
            parts,
            note: result.note(),
            has_content,
        }
    }

    /// Resolves every call of a turn.
    pub(crate) fn turn(
        turn: &'a [ToolCallResult],
        options: &EmitOptions,
        provider: Provider,
        problems: &mut Vec<EmitProblem>,
    ) -> Vec<Self> {
        turn.iter()
            .map(|call| Self::new(call, options, provider, problems))
            .collect()
    }

    /// The content parts, without the error line.
    pub(crate) fn content_parts(&self) -> &[Part<'a>] {
        &self.parts[usize::from(self.error.is_some())..]
    }

    pub(crate) fn has_images(&self) -> bool {
        self.parts
            .iter()
            .any(|part| matches!(part, Part::Image { .. }))
    }

    /// Whether the parts hold an image or audio.
    pub(crate) fn has_media(&self) -> bool {
        self.parts
            .iter()
            .any(|part| matches!(part, Part::Image { .. } | Part::Audio { .. }))
    }

    /// The text parts joined by newlines, images and audio left out.
    pub(crate) fn joined_text(&self) -> String {
        let texts: Vec<Cow<'_, str>> = self.parts.iter().filter_map(Part::as_text).collect();
        texts.join("\n")
    }
}

/// A JSON object from its entries, the values moved in. (`json!` copies
/// every value it interpolates, megabytes of image data included.)
pub(crate) fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

/// A JSON string.
pub(crate) fn string(text: impl Into<String>) -> Value {
    Value::String(text.into())
}

/// `data:<mime>;base64,<data>`.
pub(crate) fn data_url(mime_type: &str, data: &str) -> String {
    let mut url = String::with_capacity(mime_type.len() + data.len() + 13);
    url.push_str("data:");
    url.push_str(mime_type);
    url.push_str(";base64,");
    url.push_str(data);
    url
}
