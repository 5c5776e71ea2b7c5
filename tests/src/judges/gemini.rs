//! Judge for one Gemini `Content` (an entry of `generateContent`'s
//! `contents`), in the REST API's camelCase JSON.
//!
//! Sources:
//! - <https://ai.google.dev/gemini-api/docs/function-calling#multimodal>
//!   (`functionResponse.parts`, `{"$ref": "<displayName>"}`, supported MIME
//!   types);
//! - the generated API types for `FunctionResponse`, `FunctionResponsePart`
//!   and `FunctionResponseScheduling`, e.g.
//!   <https://googleapis.github.io/js-genai/release_docs/classes/types.FunctionResponse.html>
//!   (`response` is a JSON object with `output` or `error`);
//! - API errors quoted in public issues: "contents.parts must not be empty",
//!   "required oneof field 'data' must have one initialized field" (what an
//!   empty `text` becomes), and "The referenced name … does not match to a
//!   display_name in the function_response.parts".

use super::check_base64_payload;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// MIME types a multimodal function response may carry.
const FUNCTION_RESPONSE_MIME_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "application/pdf",
    "text/plain",
];

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Content {
    /// Who speaks; function responses travel in `user` turns.
    pub role: Role,
    /// The turn's parts, in order; never empty.
    pub parts: Vec<Part>,
}

/// The two roles of a `Content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The caller's side, which also carries function responses.
    User,
    /// Gemini's side, which carries function calls.
    Model,
}

/// One part of a turn: a single piece of data plus, on Gemini 3 model turns,
/// the thought signature that must be replayed with it.
///
/// The wire form is flat (`{"text": …, "thoughtSignature": …}`), and the
/// data fields form a protobuf oneof, so deserialization goes through a flat
/// struct and then insists on exactly one data field.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawPart")]
pub struct Part {
    /// The part's single piece of data.
    pub data: PartData,
    /// Opaque reasoning state Gemini 3 expects back on the part it came with.
    pub thought_signature: Option<String>,
    /// Marks a thought summary the model wrote (echoed back in `model`
    /// turns as received).
    pub thought: Option<bool>,
}

/// The oneof `data` of a [`Part`].
#[derive(Debug, Clone, PartialEq)]
pub enum PartData {
    /// `text`; must not be empty.
    Text(String),
    /// `inlineData`: bytes carried in the request.
    InlineData(Blob),
    /// `fileData`: bytes uploaded beforehand.
    FileData(FileData),
    /// `functionCall`, only in `model` turns.
    FunctionCall(FunctionCall),
    /// `functionResponse`, only in `user` turns.
    FunctionResponse(FunctionResponse),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawPart {
    text: Option<String>,
    inline_data: Option<Blob>,
    file_data: Option<FileData>,
    function_call: Option<FunctionCall>,
    function_response: Option<FunctionResponse>,
    thought_signature: Option<String>,
    thought: Option<bool>,
}

impl TryFrom<RawPart> for Part {
    type Error = String;

    fn try_from(raw: RawPart) -> Result<Self, String> {
        let found: Vec<PartData> = [
            raw.text.map(PartData::Text),
            raw.inline_data.map(PartData::InlineData),
            raw.file_data.map(PartData::FileData),
            raw.function_call.map(PartData::FunctionCall),
            raw.function_response.map(PartData::FunctionResponse),
        ]
        .into_iter()
        .flatten()
        .collect();
        match <[PartData; 1]>::try_from(found) {
            Ok([data]) => Ok(Self {
                data,
                thought_signature: raw.thought_signature,
                thought: raw.thought,
            }),
            Err(found) => Err(format!(
                "a part holds exactly one of text, inlineData, fileData, functionCall and \
                 functionResponse; found {}",
                found.len()
            )),
        }
    }
}

/// Inline bytes (`Blob`, and `FunctionResponseBlob` inside a function
/// response, which has the same fields).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Blob {
    /// IANA MIME type of the bytes.
    pub mime_type: String,
    /// Standard base64.
    pub data: String,
    /// The name a `{"$ref": …}` in a function response points at.
    pub display_name: Option<String>,
}

/// A reference to bytes uploaded beforehand (`FileData`, and
/// `FunctionResponseFileData` inside a function response).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileData {
    /// IANA MIME type of the file.
    pub mime_type: Option<String>,
    /// URI returned by the Files API (or a `gs://` URI on Vertex).
    pub file_uri: String,
    /// The name a `{"$ref": …}` in a function response points at.
    pub display_name: Option<String>,
}

/// A function call Gemini made, replayed as conversation history.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FunctionCall {
    /// Call id, which the matching response echoes on the Gemini API.
    pub id: Option<String>,
    /// Name of the declared function.
    pub name: String,
    /// Arguments; a JSON object, never a serialized string.
    pub args: Option<Map<String, Value>>,
}

/// The result of one function call.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FunctionResponse {
    /// The `functionCall.id` this answers.
    pub id: Option<String>,
    /// Name of the called function.
    pub name: String,
    /// The result as a JSON object (a protobuf `Struct`): `output` for the
    /// output, `error` for a failure. Strings and arrays must be wrapped.
    pub response: Map<String, Value>,
    /// Media for Gemini 3 and later, referenced from `response` by name.
    pub parts: Option<Vec<FunctionResponsePart>>,
    /// More responses to this non-blocking call will follow.
    pub will_continue: Option<bool>,
    /// How a non-blocking response joins the conversation.
    pub scheduling: Option<Scheduling>,
}

/// One piece of media in a multimodal function response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum FunctionResponsePart {
    /// `inlineData`.
    InlineData(Blob),
    /// `fileData`.
    FileData(FileData),
}

/// When a non-blocking function response is acted upon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Scheduling {
    /// Add to the context without triggering generation.
    Silent,
    /// Add to the context and generate once the model is idle.
    WhenIdle,
    /// Add to the context and interrupt ongoing generation.
    Interrupt,
}

/// Checks one `Content` against the documented shape and the rules the
/// types cannot express:
///
/// - `parts` is not empty and no `text` is empty (an empty string is the
///   protobuf default, so the API sees a part with no data);
/// - `functionCall` appears only in `model` turns, `functionResponse` only
///   in `user` turns;
/// - inline data is canonical standard base64 and matches its MIME type;
/// - function response media use a supported MIME type, display names are
///   unique, every `{"$ref": name}` in `response` names one of them, and
///   each of them is referenced exactly once.
pub fn check_content(value: &Value) -> Result<Content, String> {
    let content = Content::deserialize(value).map_err(|e| format!("not a Gemini Content: {e}"))?;
    if content.parts.is_empty() {
        return Err("parts: must not be empty".to_owned());
    }
    for (i, part) in content.parts.iter().enumerate() {
        let path = format!("parts[{i}]");
        match &part.data {
            PartData::Text(text) if text.is_empty() => {
                return Err(format!("{path}.text: empty, so the part carries no data"));
            }
            PartData::Text(_) | PartData::FileData(_) => {}
            PartData::InlineData(blob) => {
                check_base64_payload(&blob.mime_type, &blob.data, &format!("{path}.inlineData"))?;
            }
            PartData::FunctionCall(_) if content.role != Role::Model => {
                return Err(format!("{path}: functionCall belongs in a model turn"));
            }
            PartData::FunctionCall(_) => {}
            PartData::FunctionResponse(_) if content.role != Role::User => {
                return Err(format!("{path}: functionResponse belongs in a user turn"));
            }
            PartData::FunctionResponse(response) => {
                check_function_response(response, &format!("{path}.functionResponse"))?;
            }
        }
    }
    Ok(content)
}

fn check_function_response(response: &FunctionResponse, path: &str) -> Result<(), String> {
    // Display name -> number of `$ref`s to it.
    let mut names = BTreeMap::new();
    for (i, part) in response.parts.iter().flatten().enumerate() {
        let path = format!("{path}.parts[{i}]");
        let (mime_type, display_name) = match part {
            FunctionResponsePart::InlineData(blob) => {
                check_base64_payload(&blob.mime_type, &blob.data, &format!("{path}.inlineData"))?;
                (Some(blob.mime_type.as_str()), &blob.display_name)
            }
            FunctionResponsePart::FileData(file) => (file.mime_type.as_deref(), &file.display_name),
        };
        if !mime_type.is_some_and(|m| FUNCTION_RESPONSE_MIME_TYPES.contains(&m)) {
            return Err(format!(
                "{path}: MIME type {mime_type:?} is not one of {FUNCTION_RESPONSE_MIME_TYPES:?}"
            ));
        }
        if let Some(name) = display_name
            && names.insert(name.as_str(), 0).is_some()
        {
            return Err(format!("{path}: displayName {name:?} is not unique"));
        }
    }

    let mut refs = Vec::new();
    collect_refs(&response.response, &mut refs, &format!("{path}.response"))?;
    for name in refs {
        let count = names.get_mut(name).ok_or_else(|| {
            format!("{path}.response: $ref {name:?} names no displayName in parts")
        })?;
        *count += 1;
    }
    match names.into_iter().find(|&(_, count)| count != 1) {
        Some((name, count)) => Err(format!(
            "{path}: displayName {name:?} is referenced {count} times from response, not once"
        )),
        None => Ok(()),
    }
}

/// Collects the targets of every `{"$ref": name}` object in `map`,
/// including `map` itself.
fn collect_refs<'a>(
    map: &'a Map<String, Value>,
    refs: &mut Vec<&'a str>,
    path: &str,
) -> Result<(), String> {
    if let Some(target) = map.get("$ref") {
        return match target.as_str() {
            Some(name) if map.len() == 1 => {
                refs.push(name);
                Ok(())
            }
            _ => Err(format!(
                "{path}: a $ref must be {{\"$ref\": \"<displayName>\"}}"
            )),
        };
    }
    let mut pending: Vec<&Value> = map.values().collect();
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => collect_refs(map, refs, path)?,
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    Ok(())
}
