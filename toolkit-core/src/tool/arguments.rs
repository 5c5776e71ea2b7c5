//! Reading a call's arguments into a tool's argument struct.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::schema::ToolSchema;
use super::validate::MAX_ARGUMENT_DEPTH;
use super::{normalize, unique, validate};
use crate::{Arguments, CallError};

/// Parses a call's arguments into the tool's generated argument struct.
///
/// The fast path, for a tool whose parameters serde holds to their schema
/// by itself (see `enforcement.rs`), is one `serde_json` parse of the text.
/// A tool whose canonical schema compiles (see `shape.rs`) has its text
/// read by serde once too, each value checked against the schema as it is
/// read. Everything
/// else, and whatever either fast path is unsure of, goes through `prepare`: the arguments as a `Value`,
/// repeated keys refused, the `null`s that mean "absent" removed, checked
/// against the tool's canonical schema (every problem named with its path),
/// then read from the `Value`. So each tool instantiates its `Deserialize`
/// impl twice, not once per way in (the generated code is most of a
/// tool's build time).
///
/// Inlined into the generated code, the slow way kept out of line: on
/// every call's path, the parsed struct goes straight to the tool.
#[inline]
pub fn parse_arguments<T: DeserializeOwned>(
    arguments: Arguments<'_>,
    tool: &str,
    schema: fn() -> &'static ToolSchema,
) -> Result<T, CallError> {
    let schema = schema();
    if let Arguments::Text(text) = arguments {
        // Whatever serde or the compiled schema refuses goes the slow way,
        // which decides and explains.
        if schema.serde_enforces() {
            if opens_object(text)
                && let Ok(parsed) = serde_json::from_str(text)
            {
                return Ok(parsed);
            }
        } else if let Some(parsed) = schema.shape().and_then(|shape| shape.read(text)) {
            return Ok(parsed);
        }
    }
    parse_slowly(arguments, tool, schema)
}

/// The slow way of [`parse_arguments`].
#[inline(never)]
fn parse_slowly<T: DeserializeOwned>(
    arguments: Arguments<'_>,
    tool: &str,
    schema: &ToolSchema,
) -> Result<T, CallError> {
    let value = prepare(arguments, tool, schema)?;
    T::deserialize(&*value).map_err(|error| refused_by_serde(tool, &error))
}

/// Whether JSON text starts an object: the arguments are an object of
/// named parameters, and serde would read a struct from an array too.
#[inline]
fn opens_object(text: &str) -> bool {
    text.trim_ascii_start().starts_with('{')
}

/// The arguments as a `Value` the tool may read: parsed (blank text and
/// `null` mean no arguments), an object, with no repeated key, the `null`s
/// that stand for an absent optional field removed and integral floats
/// written as integers where the schema wants an integer, and every rule
/// of the canonical schema kept. The one way in for run-time tools, and
/// for `#[tool]`s whose arguments serde alone cannot hold to their schema.
pub(crate) fn prepare<'a>(
    arguments: Arguments<'a>,
    tool: &str,
    schema: &ToolSchema,
) -> Result<Cow<'a, Value>, CallError> {
    let invalid = |path: Option<String>, message: String| CallError::InvalidArguments {
        tool: tool.to_owned(),
        path,
        message,
    };
    let mut value = match arguments {
        Arguments::Text(text) if text.trim().is_empty() => Cow::Owned(Value::Object(Map::new())),
        Arguments::Text(text) => match unique::parse(text) {
            Ok(value) => Cow::Owned(value),
            Err(unique::Refusal::Repeated { path }) => {
                return Err(invalid(
                    Some(path),
                    "this key appears more than once in its object".to_owned(),
                ));
            }
            // serde_json stops at its recursion limit, which is
            // MAX_ARGUMENT_DEPTH: said as it is said for a host-built value.
            Err(unique::Refusal::Syntax(error))
                if error.to_string().starts_with("recursion limit exceeded") =>
            {
                return Err(invalid(None, validate::too_deep_message()));
            }
            Err(unique::Refusal::Syntax(error)) => {
                return Err(invalid(
                    None,
                    format!("the arguments are not valid JSON: {error}"),
                ));
            }
        },
        Arguments::Value(Value::Null) => Cow::Owned(Value::Object(Map::new())),
        Arguments::Value(value) if validate::nests_deeper_than(value, MAX_ARGUMENT_DEPTH) => {
            return Err(invalid(None, validate::too_deep_message()));
        }
        Arguments::Value(value) => Cow::Borrowed(value),
    };
    if !value.is_object() {
        let found = validate::describe(&value);
        let message = match &*value {
            Value::String(text) if text.trim_start().starts_with('{') => format!(
                "the arguments must be a JSON object, got a string holding JSON ({found}): \
                 send the object itself"
            ),
            _ => format!("the arguments must be a JSON object, got {found}"),
        };
        return Err(invalid(None, message));
    }
    let Some(canonical) = schema.canonical_value() else {
        return Ok(value);
    };
    if normalize::needed(canonical, &value) {
        normalize::apply(canonical, value.to_mut());
    }
    match validate::to_error(tool, validate::check(canonical, &value)) {
        Some(error) => Err(error),
        None => Ok(value),
    }
}

/// Arguments the schema allows but serde refused: a rule of the Rust type
/// the schema cannot state (a custom `Deserialize`, say). serde's message,
/// without its position and without the generated struct's name.
#[cold]
fn refused_by_serde(tool: &str, error: &serde_json::Error) -> CallError {
    CallError::InvalidArguments {
        tool: tool.to_owned(),
        path: None,
        message: without_generated_names(&without_position(error)),
    }
}

/// A message without the names `#[tool]` generates (`__searchToolArguments`),
/// which mean nothing to a model: "expected struct __searchToolArguments"
/// reads "expected the arguments object".
pub(crate) fn without_generated_names(message: &str) -> String {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut words: Vec<String> = Vec::new();
    for word in message.split(' ') {
        let start = word.find(is_ident).unwrap_or(word.len());
        let end = word.rfind(is_ident).map_or(start, |i| i + 1);
        let core = &word[start..end.max(start)];
        if !core.starts_with("__") {
            words.push(word.to_owned());
            continue;
        }
        if words.last().is_some_and(|last| last == "struct") {
            words.pop();
        }
        words.push(format!(
            "{}the arguments object{}",
            &word[..start],
            &word[end.max(start)..]
        ));
    }
    words.join(" ")
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
