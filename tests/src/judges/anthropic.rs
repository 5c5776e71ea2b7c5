//! Judge for one entry of an Anthropic Messages API request's `messages`.
//!
//! Sources:
//! - <https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls>
//!   (`tool_result` shape, `is_error`, results first in the user message);
//! - <https://docs.anthropic.com/en/api/messages-examples> (image sources
//!   `base64` and `url`; media types jpeg, png, gif, webp);
//! - <https://platform.claude.com/docs/en/build-with-claude/pdf-support> and
//!   the SDK's `DocumentBlockParam` (a `document` block: a `text` source,
//!   `text/plain` only, or a `base64` source, `application/pdf` only; an
//!   optional `title` and `context`);
//! - API errors quoted in public issues for rules the pages leave implicit:
//!   "text content blocks must contain non-whitespace text", "all messages
//!   must have non-empty content except for the optional final assistant
//!   message", "Image does not match the provided media type".
//!
//! Only the blocks a tool-calling client sends are modelled (thinking
//! blocks included: a client echoes them back, with their signatures, in
//! assistant messages, and documents inside a `tool_result`); documents
//! elsewhere and server-tool blocks other than tool search's are rejected
//! as unknown on purpose, so an emitter that starts writing them has to
//! extend this judge first. Tool search's blocks (a `server_tool_use` of a
//! tool search tool, then its `tool_search_tool_result` holding
//! `tool_reference` blocks) come from
//! <https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-search-tool>:
//! a client echoes them back in the assistant message as it got them.

use super::check_base64_payload;
use serde::Deserialize;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::marker::PhantomData;

/// One message of the conversation, as the client sends it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageParam {
    /// Who speaks; tool results travel in `user` messages.
    pub role: Role,
    /// The message body.
    pub content: TextOrBlocks<ContentBlockParam>,
}

/// The two roles the Messages API accepts inside `messages`; the system
/// prompt has its own top-level field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human side, which also carries tool results.
    User,
    /// Claude's side, which carries `tool_use` requests.
    Assistant,
}

/// A field that holds either a plain string or a list of blocks.
///
/// Anthropic accepts both forms for message and `tool_result` content. A
/// hand-written impl instead of `#[serde(untagged)]` keeps the inner error
/// (say, an unknown field in the third block) instead of "did not match any
/// variant", which is what makes a failing judge useful.
#[derive(Debug, Clone, PartialEq)]
pub enum TextOrBlocks<B> {
    /// The shorthand form, equivalent to a single text block.
    Text(String),
    /// The explicit list of blocks.
    Blocks(Vec<B>),
}

impl<'de, B: Deserialize<'de>> Deserialize<'de> for TextOrBlocks<B> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextOrBlocksVisitor<B>(PhantomData<B>);

        impl<'de, B: Deserialize<'de>> Visitor<'de> for TextOrBlocksVisitor<B> {
            type Value = TextOrBlocks<B>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(TextOrBlocks::Text(text.to_owned()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(TextOrBlocks::Blocks)
            }
        }

        deserializer.deserialize_any(TextOrBlocksVisitor(PhantomData))
    }
}

/// A block of message content, discriminated by its `type` field.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ContentBlockParam {
    /// `{"type":"text"}`.
    Text(TextBlockParam),
    /// `{"type":"image"}`.
    Image(ImageBlockParam),
    /// `{"type":"tool_use"}`, echoed back in assistant history.
    ToolUse(ToolUseBlockParam),
    /// `{"type":"tool_result"}`, the answer to a `tool_use`.
    ToolResult(ToolResultBlockParam),
    /// `{"type":"thinking"}`, Claude's reasoning, echoed back unchanged
    /// with its signature.
    Thinking(ThinkingBlockParam),
    /// `{"type":"redacted_thinking"}`, encrypted reasoning echoed back
    /// unchanged.
    RedactedThinking(RedactedThinkingBlockParam),
    /// `{"type":"server_tool_use"}`: a search the server ran, echoed back.
    ServerToolUse(ServerToolUseBlockParam),
    /// `{"type":"tool_search_tool_result"}`: what that search found.
    ToolSearchToolResult(ToolSearchResultBlockParam),
}

/// A server tool's use, echoed back: only tool search's is modelled.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerToolUseBlockParam {
    /// The id its result refers to.
    pub id: String,
    /// `tool_search_tool_bm25` or `tool_search_tool_regex`.
    pub name: String,
    /// The search's input.
    pub input: Map<String, Value>,
    /// Prompt-caching breakpoint.
    pub cache_control: Option<CacheControl>,
}

/// A tool search's result, echoed back.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchResultBlockParam {
    /// The `server_tool_use` it answers.
    pub tool_use_id: String,
    /// `{"type":"tool_search_tool_search_result","tool_references":[...]}`
    /// or an error.
    pub content: ToolSearchContent,
    /// Prompt-caching breakpoint.
    pub cache_control: Option<CacheControl>,
}

/// What a tool search gave.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolSearchContent {
    /// The tools found.
    ToolSearchToolSearchResult {
        /// Each `{"type":"tool_reference","tool_name"}`.
        tool_references: Vec<ToolReference>,
    },
    /// The search failed.
    ToolSearchToolResultError {
        /// Why.
        error_code: String,
    },
}

/// A tool the search found, by name.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolReference {
    /// `{"type":"tool_reference","tool_name"}`.
    ToolReference {
        /// A deferred tool of the request.
        tool_name: String,
    },
}

/// Reasoning Claude wrote, as a client sends it back
/// (<https://platform.claude.com/docs/en/build-with-claude/extended-thinking>).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThinkingBlockParam {
    /// The reasoning text.
    pub thinking: String,
    /// Proves the block is Claude's own; required.
    pub signature: String,
}

/// Reasoning the safety system encrypted.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedactedThinkingBlockParam {
    /// The encrypted reasoning, opaque.
    pub data: String,
}

/// Plain text. Citations are left out: we never send them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextBlockParam {
    /// Must contain something besides whitespace.
    pub text: String,
    /// Prompt-caching breakpoint.
    pub cache_control: Option<CacheControl>,
}

/// An image, inline or by reference.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageBlockParam {
    /// Where the image bytes come from.
    pub source: ImageSource,
    /// Prompt-caching breakpoint.
    pub cache_control: Option<CacheControl>,
}

/// Where an image's bytes come from.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ImageSource {
    /// Bytes inline, as standard base64 without a `data:` prefix.
    Base64 {
        /// Must match what the bytes actually are.
        media_type: ImageMediaType,
        /// Standard base64.
        data: String,
    },
    /// An image the API fetches itself.
    Url {
        /// Public address of the image.
        url: String,
    },
}

/// The only image formats the API accepts; anything else is a 400.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum ImageMediaType {
    /// `image/jpeg`.
    #[serde(rename = "image/jpeg")]
    Jpeg,
    /// `image/png`.
    #[serde(rename = "image/png")]
    Png,
    /// `image/gif`.
    #[serde(rename = "image/gif")]
    Gif,
    /// `image/webp`.
    #[serde(rename = "image/webp")]
    Webp,
}

impl ImageMediaType {
    /// The MIME string as written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }
}

/// A tool call Claude made, replayed as conversation history.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolUseBlockParam {
    /// The id a later `tool_result` refers to.
    pub id: String,
    /// Name of the called tool.
    pub name: String,
    /// Arguments; always a JSON object, never a serialized string.
    pub input: Map<String, Value>,
    /// Prompt-caching breakpoint.
    pub cache_control: Option<CacheControl>,
}

/// The outcome of one `tool_use`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResultBlockParam {
    /// The `id` of the `tool_use` this answers.
    pub tool_use_id: String,
    /// What the tool produced; may be omitted for a result with no output.
    pub content: Option<TextOrBlocks<ToolResultContentBlock>>,
    /// Tells Claude the content describes a failure.
    pub is_error: Option<bool>,
    /// Prompt-caching breakpoint.
    pub cache_control: Option<CacheControl>,
}

/// What a `tool_result` may contain: images go here, not in a separate
/// message, so the model sees them as the tool's output.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolResultContentBlock {
    /// `{"type":"text"}`.
    Text(TextBlockParam),
    /// `{"type":"image"}`.
    Image(ImageBlockParam),
    /// `{"type":"document"}`: a text or PDF document.
    Document(DocumentBlockParam),
}

/// A document: plain text or a PDF, with an optional title and context.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentBlockParam {
    /// Where the document comes from.
    pub source: DocumentSource,
    /// A title the model sees with the document.
    pub title: Option<String>,
    /// Context about the document, for the model.
    pub context: Option<String>,
    /// Prompt-caching breakpoint.
    pub cache_control: Option<CacheControl>,
}

/// Where a document comes from; only the two inline sources are modelled.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum DocumentSource {
    /// Plain text inline.
    Text {
        /// Must be `text/plain`.
        media_type: String,
        /// The text.
        data: String,
    },
    /// A PDF inline, as standard base64.
    Base64 {
        /// Must be `application/pdf`.
        media_type: String,
        /// Standard base64.
        data: String,
    },
}

/// A prompt-caching breakpoint; `ephemeral` is the only kind.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum CacheControl {
    /// Cache the prefix up to and including this block.
    Ephemeral {
        /// Lifetime; the API defaults to five minutes.
        ttl: Option<CacheTtl>,
    },
}

/// The cache lifetimes the API offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum CacheTtl {
    /// `"5m"`.
    #[serde(rename = "5m")]
    FiveMinutes,
    /// `"1h"`.
    #[serde(rename = "1h")]
    OneHour,
}

/// Checks a message that must be a `user` turn, typically the one carrying
/// tool results.
///
/// On top of [`check_message`], the role must be `user`: an emitter that put
/// tool results under `assistant` would otherwise pass with a misleading
/// error about block placement.
pub fn check_user_message(value: &Value) -> Result<MessageParam, String> {
    let message = check_message(value)?;
    match message.role {
        Role::User => Ok(message),
        Role::Assistant => Err("role: expected \"user\", found \"assistant\"".to_owned()),
    }
}

/// Checks one message of either role against the documented shape and the
/// rules the types cannot express:
///
/// - content is not empty, and no text is empty or whitespace only;
/// - `tool_result` blocks appear only in `user` messages, and all of them
///   before any other block;
/// - base64 image data is canonical standard base64 and matches its
///   `media_type`.
///
/// The judge sees a single message, so it cannot allow the empty final
/// assistant prefill the API tolerates; emitters never write one.
pub fn check_message(value: &Value) -> Result<MessageParam, String> {
    let message =
        MessageParam::deserialize(value).map_err(|e| format!("not a Messages API message: {e}"))?;
    let blocks = match &message.content {
        TextOrBlocks::Text(text) => {
            check_text(text, "content")?;
            return Ok(message);
        }
        TextOrBlocks::Blocks(blocks) => blocks,
    };
    if blocks.is_empty() {
        return Err("content: no blocks; only a final assistant prefill may be empty".to_owned());
    }
    let mut after_other_block = false;
    for (i, block) in blocks.iter().enumerate() {
        let path = format!("content[{i}]");
        match block {
            ContentBlockParam::ToolResult(result) => {
                if message.role != Role::User {
                    return Err(format!("{path}: tool_result belongs in a user message"));
                }
                if after_other_block {
                    return Err(format!(
                        "{path}: tool_result after another block; tool results must come first"
                    ));
                }
                check_tool_result(result, &path)?;
            }
            ContentBlockParam::Text(text) => check_text(&text.text, &path)?,
            ContentBlockParam::Image(image) => check_image(image, &path)?,
            ContentBlockParam::ToolUse(_) => {}
            ContentBlockParam::ServerToolUse(_) | ContentBlockParam::ToolSearchToolResult(_) => {
                if message.role != Role::Assistant {
                    return Err(format!(
                        "{path}: server tool blocks belong in an assistant message"
                    ));
                }
            }
            ContentBlockParam::Thinking(_) | ContentBlockParam::RedactedThinking(_) => {
                if message.role != Role::Assistant {
                    return Err(format!("{path}: thinking belongs in an assistant message"));
                }
            }
        }
        after_other_block |= !matches!(block, ContentBlockParam::ToolResult(_));
    }
    Ok(message)
}

fn check_tool_result(result: &ToolResultBlockParam, path: &str) -> Result<(), String> {
    let Some(TextOrBlocks::Blocks(blocks)) = &result.content else {
        return Ok(());
    };
    for (i, block) in blocks.iter().enumerate() {
        let path = format!("{path}.content[{i}]");
        match block {
            ToolResultContentBlock::Text(text) => check_text(&text.text, &path)?,
            ToolResultContentBlock::Image(image) => check_image(image, &path)?,
            ToolResultContentBlock::Document(document) => check_document(document, &path)?,
        }
    }
    Ok(())
}

fn check_document(document: &DocumentBlockParam, path: &str) -> Result<(), String> {
    let path = format!("{path}.source");
    match &document.source {
        DocumentSource::Text { media_type, data } => {
            if media_type != "text/plain" {
                return Err(format!(
                    "{path}: a text document is text/plain, not {media_type}"
                ));
            }
            check_text(data, &path)
        }
        DocumentSource::Base64 { media_type, data } => {
            if media_type != "application/pdf" {
                return Err(format!(
                    "{path}: a base64 document is application/pdf, not {media_type}"
                ));
            }
            check_base64_payload(media_type, data, &path)
        }
    }
}

fn check_text(text: &str, path: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        Err(format!("{path}: text is empty or whitespace only"))
    } else {
        Ok(())
    }
}

fn check_image(image: &ImageBlockParam, path: &str) -> Result<(), String> {
    match &image.source {
        ImageSource::Base64 { media_type, data } => {
            check_base64_payload(media_type.as_str(), data, &format!("{path}.source"))
        }
        ImageSource::Url { .. } => Ok(()),
    }
}
