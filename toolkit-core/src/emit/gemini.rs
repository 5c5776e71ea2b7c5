//! Gemini `generateContent`: `functionResponse` parts.

use serde_json::{Map, Value};

use super::resolve::{Part, Resolved, object, string};
use super::{EmitOptions, Emitted};
use crate::{Provider, ToolCallResult};

/// One turn's results as Gemini contents: one `user` content holding a
/// `functionResponse` part per call, in call order.
///
/// `response` is always an object: `{"output": …}` with the result's text,
/// or its JSON value when the content is exactly one JSON block;
/// `{"error": …}` when the tool failed (with `output` too if the result has
/// content); `note` beside them when the result has one.
///
/// Images travel as `inlineData` parts of the function response, each named
/// by a `displayName` that `response` refers to as `{"$ref": name}` (Gemini 3
/// and later). With [`EmitOptions::with_gemini_inline_images`] off, they
/// travel instead in a second `user` content after the function responses,
/// each call's images behind a text part naming the call.
///
/// Audio travels as `inlineData` in that second `user` content (a function
/// response's own parts take no audio), behind a text part naming the call;
/// `output` then says the content is in the next message. Audio of a type
/// Gemini does not read, embedded resources and resource links are text.
///
/// ```
/// use toolkit_core::emit::{self, EmitOptions};
/// use toolkit_core::{ToolCallResult, ToolResult};
///
/// let result = ToolResult::json(serde_json::json!({"hits": 3}));
/// let turn = [ToolCallResult::new("fc_1", "search", result)];
/// let items = emit::gemini(&turn, &EmitOptions::default()).items;
/// assert_eq!(
///     items[0]["parts"][0]["functionResponse"]["response"],
///     serde_json::json!({"output": {"hits": 3}})
/// );
/// ```
pub fn gemini(turn: &[ToolCallResult], options: &EmitOptions) -> Emitted {
    let mut problems = Vec::new();
    let resolved = Resolved::turn(turn, options, Provider::Gemini, &mut problems);
    let inline = options.gemini_inline_images();
    let mut responses = Vec::with_capacity(resolved.len());
    let mut image_parts: Vec<Value> = Vec::new();
    for call in &resolved {
        let mut response = Map::new();
        if let Some(error) = call.error {
            response.insert("error".into(), Value::String(error.to_owned()));
        }
        if let Some(output) = output(call, inline, options.placeholder()) {
            response.insert("output".into(), output);
        }
        if let Some(note) = call.note {
            response.insert("note".into(), Value::String(note.to_owned()));
        }
        let mut function_response = Map::new();
        if options.gemini_call_ids() {
            function_response.insert("id".into(), Value::String(call.call.call_id.clone()));
        }
        function_response.insert("name".into(), Value::String(call.call.tool_name.clone()));
        let images = images(call);
        if inline && !images.is_empty() {
            let mut parts = Vec::with_capacity(images.len());
            for (n, (mime_type, data)) in images.into_iter().enumerate() {
                let name = display_name(&call.call.call_id, n + 1, mime_type);
                response.insert(
                    format!("image_{}", n + 1),
                    object([("$ref", string(&name))]),
                );
                parts.push(object([(
                    "inlineData",
                    object([
                        ("mimeType", string(mime_type)),
                        ("data", string(data)),
                        ("displayName", string(name)),
                    ]),
                )]));
            }
            function_response.insert("response".into(), Value::Object(response));
            function_response.insert("parts".into(), Value::Array(parts));
        } else {
            if !images.is_empty() {
                let label = format!(
                    "Images returned by tool call {} ({}):",
                    call.call.call_id, call.call.tool_name
                );
                image_parts.push(object([("text", string(label))]));
                image_parts.extend(images.into_iter().map(|(mime_type, data)| {
                    object([(
                        "inlineData",
                        object([("mimeType", string(mime_type)), ("data", string(data))]),
                    )])
                }));
            }
            function_response.insert("response".into(), Value::Object(response));
        }
        let sounds = audio(call);
        if !sounds.is_empty() {
            let label = format!(
                "Audio returned by tool call {} ({}):",
                call.call.call_id, call.call.tool_name
            );
            image_parts.push(object([("text", string(label))]));
            image_parts.extend(sounds.into_iter().map(|(mime_type, data)| {
                object([(
                    "inlineData",
                    object([("mimeType", string(mime_type)), ("data", string(data))]),
                )])
            }));
        }
        responses.push(object([(
            "functionResponse",
            Value::Object(function_response),
        )]));
    }
    let mut items = Vec::with_capacity(2);
    if !responses.is_empty() {
        items.push(object([
            ("role", string("user")),
            ("parts", Value::Array(responses)),
        ]));
    }
    if !image_parts.is_empty() {
        items.push(object([
            ("role", string("user")),
            ("parts", Value::Array(image_parts)),
        ]));
    }
    Emitted { items, problems }
}

/// The `output` value: the JSON itself for a lone JSON block, else the text
/// parts joined. Absent when there is nothing besides the error, or, with
/// inline images, nothing besides them.
fn output(call: &Resolved<'_>, inline: bool, placeholder: &str) -> Option<Value> {
    if !call.has_content {
        return call
            .error
            .is_none()
            .then(|| Value::String(call.joined_text()));
    }
    let texts: Vec<&Part<'_>> = call
        .content_parts()
        .iter()
        .filter(|part| !matches!(part, Part::Image { .. } | Part::Audio { .. }))
        .collect();
    let has_audio = call
        .parts
        .iter()
        .any(|part| matches!(part, Part::Audio { .. }));
    match texts.as_slice() {
        [Part::Json(value)] => Some((*value).clone()),
        [] if inline && !has_audio => None,
        [] => Some(Value::String(placeholder.to_owned())),
        parts => {
            let joined: Vec<_> = parts.iter().filter_map(|part| part.as_text()).collect();
            Some(Value::String(joined.join("\n")))
        }
    }
}

fn images<'a>(call: &'a Resolved<'_>) -> Vec<(&'a str, &'a str)> {
    call.parts
        .iter()
        .filter_map(|part| match part {
            Part::Image { mime_type, data } => Some((*mime_type, &**data)),
            _ => None,
        })
        .collect()
}

fn audio<'a>(call: &'a Resolved<'_>) -> Vec<(&'a str, &'a str)> {
    call.parts
        .iter()
        .filter_map(|part| match part {
            Part::Audio { mime_type, data } => Some((*mime_type, &**data)),
            _ => None,
        })
        .collect()
}

/// A name unique within the request: the call id, the image's number and the
/// extension its type implies.
fn display_name(call_id: &str, n: usize, mime_type: &str) -> String {
    let ext = match mime_type {
        "image/jpeg" => "jpg",
        other => other.strip_prefix("image/").unwrap_or("img"),
    };
    format!("{call_id}_image_{n}.{ext}")
}
