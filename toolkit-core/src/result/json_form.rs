//! A result's JSON form, for saving a conversation and loading it back.
//!
//! One public form for every inner representation: the content is always a
//! list of blocks, whether the result holds one block inline, several, or a
//! lazily computed text (saved as the text it computed). The typed error a
//! result was made from cannot be written as JSON; its message is kept, and
//! a loaded result gives back an error of another type with that message.

use std::collections::BTreeMap;
use std::error::Error;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::{Block, Completion, ToolResult};

/// What a result is written as: `content` always, the rest only when set.
#[derive(Serialize)]
struct Written<'a> {
    content: &'a [Block],
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    done: Option<Done>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<&'a str>,
    #[serde(skip_serializing_if = "is_false")]
    show_once: bool,
    #[serde(skip_serializing_if = "<[PathBuf]>::is_empty")]
    attachments: &'a [PathBuf],
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    attributes: &'a BTreeMap<String, Value>,
}

/// What a result is read from: the same fields, each but `content`
/// optional, and nothing else.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a tool result: {\"content\": [...], ...}"
)]
struct Read {
    content: Vec<Block>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    cause: Option<String>,
    #[serde(default)]
    done: Option<Done>,
    #[serde(default)]
    memory: Option<String>,
    #[serde(default)]
    show_once: bool,
    #[serde(default)]
    attachments: Vec<PathBuf>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    attributes: BTreeMap<String, Value>,
}

/// `"done": {"success": bool}`: success exists only for a finished task, as
/// in [`Completion`].
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "{\"success\": true or false}")]
struct Done {
    success: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

/// The typed error of a loaded result: its type did not survive the JSON
/// form, its message did.
#[derive(Debug)]
struct LoadedCause(String);

impl fmt::Display for LoadedCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for LoadedCause {}

/// `{"content": [...], "error"?, "cause"?, "done"?, "memory"?, "show_once"?,
/// "attachments"?, "note"?, "attributes"?}`. A lazy text is computed and
/// written as a text block (a supplier that panicked: no content and its
/// error), so it comes back as plain text.
impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The content first: it computes a lazy text, which may fail.
        let content = self.content();
        Written {
            content,
            error: self.error_message(),
            cause: self.error_source().map(ToString::to_string),
            done: self.success().map(|success| Done { success }),
            memory: self.memory(),
            show_once: self.show_once,
            attachments: self.attachments(),
            note: self.note(),
            attributes: self.attributes(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let read = Read::deserialize(deserializer)?;
        if read.cause.is_some() && read.error.is_none() {
            return Err(serde::de::Error::custom(
                "a result has a `cause` but no `error`: a cause is the error a failed result was made from",
            ));
        }
        let mut result = ToolResult::blocks(read.content);
        if let Some(error) = read.error {
            result = result.with_error(error);
        }
        if let Some(cause) = read.cause {
            result.extras_mut().cause = Some(Arc::new(LoadedCause(cause)));
        }
        if let Some(Done { success }) = read.done {
            result.completion = Completion::Done { success };
        }
        if let Some(memory) = read.memory {
            result = result.with_memory(memory);
        }
        result.show_once = read.show_once;
        for attachment in read.attachments {
            result = result.with_attachment(attachment);
        }
        if let Some(note) = read.note {
            result = result.with_note(note);
        }
        for (key, value) in read.attributes {
            result = result.with_attribute(key, value);
        }
        Ok(result)
    }
}
