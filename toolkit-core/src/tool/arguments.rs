//! A call's arguments, and reading them into a tool's argument struct.

use serde::de::DeserializeOwned;
use serde_json::Value;

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
/// The fast path is a plain `serde_json` parse; only a failed parse is
/// parsed again, tracking the path, to say where the problem is.
pub fn parse_arguments<T: DeserializeOwned>(
    arguments: Arguments<'_>,
    tool: &str,
) -> Result<T, CallError> {
    let invalid = |path: Option<String>, message: String| CallError::InvalidArguments {
        tool: tool.to_owned(),
        path,
        message,
    };
    let value = match arguments {
        Arguments::Text(text) => {
            let error = match serde_json::from_str(text) {
                Ok(parsed) => return Ok(parsed),
                // Blank arguments, as some models send for a tool without
                // parameters, mean no arguments. Checked only here, so a
                // well-formed call does not pay for the scan.
                Err(error) if error.is_eof() && text.trim().is_empty() => {
                    return parse_arguments(Arguments::Text("{}"), tool);
                }
                Err(error) => error,
            };
            if !error.is_data() {
                return Err(invalid(
                    None,
                    format!("the arguments are not valid JSON: {error}"),
                ));
            }
            match serde_json::from_str::<Value>(text) {
                Ok(value) => value,
                Err(_) => return Err(invalid(None, without_position(&error))),
            }
        }
        Arguments::Value(Value::Null) => Value::Object(serde_json::Map::new()),
        Arguments::Value(value) => match T::deserialize(value) {
            Ok(parsed) => return Ok(parsed),
            Err(_) => value.clone(),
        },
    };
    // Strict-mode and Gemini schemas mark optional fields nullable, so a
    // model may send `null` for a field that is merely defaulted
    // (`#[serde(default)]`). Absent means the same to the tool.
    let mut without_nulls = value.clone();
    remove_null_fields(&mut without_nulls);
    if let Ok(parsed) = T::deserialize(&without_nulls) {
        return Ok(parsed);
    }
    // Parse again, tracking the path, to say where the problem is.
    match serde_path_to_error::deserialize::<_, T>(&value) {
        Err(traced) => {
            let (path, message) = located(traced.path(), traced.inner());
            Err(invalid(path, message))
        }
        Ok(parsed) => Ok(parsed),
    }
}

fn remove_null_fields(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, field| !field.is_null());
            map.values_mut().for_each(remove_null_fields);
        }
        Value::Array(items) => items.iter_mut().for_each(remove_null_fields),
        _ => {}
    }
}

fn located(
    path: &serde_path_to_error::Path,
    error: &serde_json::Error,
) -> (Option<String>, String) {
    let path = path.to_string();
    let path = (path != ".").then_some(path);
    (path, without_position(error))
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
