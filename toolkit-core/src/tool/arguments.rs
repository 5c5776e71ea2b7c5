//! A call's arguments, and reading them into a tool's argument struct.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::schema::ToolSchema;
use super::validate;
use crate::CallError;

/// The arguments of one call, as the provider sent them: JSON text (OpenAI's
/// `arguments` string) or an already-parsed value (Anthropic's `input`,
/// Gemini's `args`).
#[derive(Debug, Clone, Copy)]
pub enum Arguments<'a> {
    /// JSON text. An empty or blank text means no arguments (`{}`).
    Text(&'a str),
    /// A parsed value. `null` means no arguments.
    Value(&'a Value),
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(text: &'a String) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a Value> for Arguments<'a> {
    fn from(value: &'a Value) -> Self {
        Self::Value(value)
    }
}

/// Parses a call's arguments into the tool's generated argument struct.
///
/// The fast path is a plain `serde_json` parse of the text. Anything else
/// (a parsed value, a failed parse) goes through a `Value`, so that each
/// tool instantiates its `Deserialize` impl twice, not once per way in
/// (the generated code is most of a tool's build time). A refusal is
/// explained by checking the arguments against the tool's own schema,
/// which names every problem with its path; serde's message is the last
/// resort, for a rule the schema cannot state.
pub fn parse_arguments<T: DeserializeOwned>(
    arguments: Arguments<'_>,
    tool: &str,
    schema: fn() -> &'static ToolSchema,
) -> Result<T, CallError> {
    if let Arguments::Text(text) = arguments
        && let Ok(parsed) = serde_json::from_str(text)
    {
        return Ok(parsed);
    }
    let value = as_value(arguments, tool)?;
    let refusal = match T::deserialize(&*value) {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error,
    };
    // Strict-mode and Gemini schemas mark optional fields nullable, so a
    // model may send `null` for a field that is merely defaulted
    // (`#[serde(default)]`). Absent means the same to the tool.
    if let Some(without_nulls) = without_null_fields(&value)
        && let Ok(parsed) = T::deserialize(&without_nulls)
    {
        return Ok(parsed);
    }
    Err(explain(tool, schema(), &value, &refusal))
}

/// The arguments as a value: parsed from text (blank text is no
/// arguments), or as given (`null` is no arguments).
fn as_value<'a>(arguments: Arguments<'a>, tool: &str) -> Result<Cow<'a, Value>, CallError> {
    match arguments {
        Arguments::Text(text) if text.trim().is_empty() => {
            Ok(Cow::Owned(Value::Object(Map::new())))
        }
        Arguments::Text(text) => match serde_json::from_str(text) {
            Ok(value) => Ok(Cow::Owned(value)),
            Err(error) => Err(CallError::InvalidArguments {
                tool: tool.to_owned(),
                path: None,
                message: format!("the arguments are not valid JSON: {error}"),
            }),
        },
        Arguments::Value(Value::Null) => Ok(Cow::Owned(Value::Object(Map::new()))),
        Arguments::Value(value) => Ok(Cow::Borrowed(value)),
    }
}

/// The value without its `null` fields, or `None` if it has none.
fn without_null_fields(value: &Value) -> Option<Value> {
    fn has_nulls(value: &Value) -> bool {
        match value {
            Value::Object(map) => map.values().any(|v| v.is_null() || has_nulls(v)),
            Value::Array(items) => items.iter().any(has_nulls),
            _ => false,
        }
    }
    fn remove(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|_, field| !field.is_null());
                map.values_mut().for_each(remove);
            }
            Value::Array(items) => items.iter_mut().for_each(remove),
            _ => {}
        }
    }
    has_nulls(value).then(|| {
        let mut copy = value.clone();
        remove(&mut copy);
        copy
    })
}

/// Why the arguments were refused: every violation of the tool's schema,
/// or, when the schema allows them, serde's own message.
fn explain(
    tool: &str,
    schema: &ToolSchema,
    value: &Value,
    refusal: &serde_json::Error,
) -> CallError {
    let violations = match schema.canonical_value() {
        Some(schema) => validate::check(schema, value),
        None => Vec::new(),
    };
    validate::to_error(tool, violations).unwrap_or_else(|| CallError::InvalidArguments {
        tool: tool.to_owned(),
        path: None,
        message: without_position(refusal),
    })
}

/// serde_json's message without its ` at line 1 column 9` suffix, which
/// means nothing to a model that sent the arguments as one value.
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.rfind(" at line ") {
        Some(at) if error.line() > 0 => message[..at].to_owned(),
        _ => message,
    }
}
