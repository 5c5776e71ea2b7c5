//! OpenAI Chat Completions: `tool` messages, and the two-message rule.

use serde_json::Value;

use super::resolve::{Part, Resolved, data_url, object, openai_audio_format, string};
use super::{EmitOptions, Emitted};
use crate::{Provider, ToolCallResult};

/// One turn's results as OpenAI Chat Completions messages.
///
/// A `tool` message can carry text only, and nothing may stand between the
/// `tool` messages that answer one assistant turn. So:
///
/// - a result without images and without a note is one `tool` message
///   holding its text (`Error: …` first when the tool failed);
/// - a result with images or audio, or with a note and content, gets a
///   `tool` message
///   holding the note, or [`EmitOptions::DEFAULT_PLACEHOLDER`], after
///   its error line if any; its content travels in the `user` message (a
///   note on a result without content stays in the `tool` message);
/// - all `tool` messages come first, in call order, followed by at most one
///   `user` message holding, in call order, each such result's content:
///   a text part naming the call id and tool it came from, then its text,
///   `image_url` (data URL) and `input_audio` (WAV and MP3; other audio,
///   embedded resources and resource links are text) parts.
///
/// ```
/// use toolkit_core::emit::{self, EmitOptions};
/// use toolkit_core::{Block, Image, ToolCallResult, ToolResult};
///
/// let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// let shot = ToolResult::blocks([Block::image(Image::from_base64("image/png", png)?)]);
/// let turn = [
///     ToolCallResult::new("call_1", "screenshot", shot),
///     ToolCallResult::new("call_2", "search", ToolResult::text("3 hits")),
/// ];
/// let items = emit::openai_chat(&turn, &EmitOptions::default()).items;
/// let roles: Vec<_> = items.iter().map(|m| m["role"].as_str().unwrap()).collect();
/// assert_eq!(roles, ["tool", "tool", "user"]);
/// # Ok::<(), toolkit_core::ImageError>(())
/// ```
pub fn openai_chat(turn: &[ToolCallResult], options: &EmitOptions) -> Emitted {
    let mut problems = Vec::new();
    let resolved = Resolved::turn(turn, options, Provider::OpenAi, &mut problems);
    let mut items = Vec::with_capacity(resolved.len() + 1);
    let mut user_parts: Vec<Value> = Vec::new();
    for call in &resolved {
        let two_messages = call.has_media() || (call.note.is_some() && call.has_content);
        let content = if two_messages {
            let label = format!(
                "Output of tool call {} ({}):",
                call.call.call_id, call.call.tool_name
            );
            user_parts.push(object([("type", string("text")), ("text", string(label))]));
            user_parts.extend(call.content_parts().iter().map(user_part));
            // The error line stays in the tool message, where the model
            // expects failures; the content moves to the user message.
            let stand_in = call.note.unwrap_or(options.placeholder());
            match call.error {
                Some(error) => format!("Error: {error}\n{stand_in}"),
                None => stand_in.to_owned(),
            }
        } else {
            let text = call.joined_text();
            match call.note {
                Some(note) => format!("{text}\n{note}"),
                None => text,
            }
        };
        items.push(object([
            ("role", string("tool")),
            ("tool_call_id", string(&call.call.call_id)),
            ("content", string(content)),
        ]));
    }
    if !user_parts.is_empty() {
        items.push(object([
            ("role", string("user")),
            ("content", Value::Array(user_parts)),
        ]));
    }
    Emitted { items, problems }
}

fn user_part(part: &Part<'_>) -> Value {
    match part {
        Part::Image { mime_type, data } => object([
            ("type", string("image_url")),
            (
                "image_url",
                object([("url", string(data_url(mime_type, data)))]),
            ),
        ]),
        Part::Audio { mime_type, data } => object([
            ("type", string("input_audio")),
            (
                "input_audio",
                object([
                    ("data", string(&**data)),
                    (
                        "format",
                        string(openai_audio_format(mime_type).unwrap_or("wav")),
                    ),
                ]),
            ),
        ]),
        text => object([("type", string("text")), ("text", text.text_value())]),
    }
}
