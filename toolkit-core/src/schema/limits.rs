//! OpenAI's size limits on strict schemas (raised in July 2025).

use super::error::{Dialect, LoweringError, LoweringErrorKind as Kind};
use super::keywords::{Holds, child_path, holds, index_path, member_path};
use super::ordered_json::OrderedJson;

/// Object properties in the whole schema.
pub const MAX_PROPERTIES: usize = 5000;
/// Levels of objects nested in one another; the root object is level 1.
/// Counting the root makes this at worst one level stricter than OpenAI's
/// own count, which only costs a fallback to non-strict.
pub const MAX_OBJECT_DEPTH: usize = 10;
/// Characters across property names, definition names, enum and const
/// values.
pub const MAX_CHARACTERS: usize = 120_000;
/// Enum values in the whole schema.
pub const MAX_ENUM_VALUES: usize = 1000;
/// An enum with more string values than this ...
pub const LARGE_ENUM: usize = 250;
/// ... may total at most this many characters.
pub const MAX_LARGE_ENUM_CHARACTERS: usize = 15_000;

#[derive(Default)]
struct Tally {
    properties: usize,
    characters: usize,
    enum_values: usize,
}

/// Checks a lowered strict schema against OpenAI's limits.
pub(crate) fn check_openai_limits(schema: &OrderedJson) -> Result<(), LoweringError> {
    let mut tally = Tally::default();
    walk(schema, "", 0, &mut tally)?;
    let error = |kind| Err(LoweringError::new(Dialect::OpenAiStrict, "", kind));
    if tally.properties > MAX_PROPERTIES {
        return error(Kind::TooManyProperties {
            count: tally.properties,
            limit: MAX_PROPERTIES,
        });
    }
    if tally.enum_values > MAX_ENUM_VALUES {
        return error(Kind::TooManyEnumValues {
            count: tally.enum_values,
            limit: MAX_ENUM_VALUES,
        });
    }
    if tally.characters > MAX_CHARACTERS {
        return error(Kind::TooManyCharacters {
            count: tally.characters,
            limit: MAX_CHARACTERS,
        });
    }
    Ok(())
}

/// The length a value counts for: a string's characters, else its JSON.
fn length(value: &OrderedJson) -> usize {
    match value {
        OrderedJson::String(text) => text.chars().count(),
        other => other.to_json_string().chars().count(),
    }
}

fn walk(
    schema: &OrderedJson,
    path: &str,
    level: usize,
    tally: &mut Tally,
) -> Result<(), LoweringError> {
    let OrderedJson::Object(members) = schema else {
        return Ok(());
    };
    let is_object = match schema.get("type") {
        Some(OrderedJson::String(kind)) => kind == "object",
        Some(OrderedJson::Array(kinds)) => kinds.iter().any(|k| k.as_str() == Some("object")),
        _ => schema.contains_key("properties"),
    };
    // A definition starts its own count: where it is used is not known here.
    let level = if is_object { level + 1 } else { level };
    if level > MAX_OBJECT_DEPTH {
        let kind = Kind::TooDeep {
            depth: level,
            limit: MAX_OBJECT_DEPTH,
        };
        return Err(LoweringError::new(Dialect::OpenAiStrict, path, kind));
    }
    for (keyword, value) in members {
        match keyword.as_str() {
            "enum" => count_enum(value, path, tally)?,
            "const" => {
                tally.enum_values += 1;
                tally.characters += length(value);
            }
            "properties" | "$defs" => {
                if let OrderedJson::Object(entries) = value {
                    if keyword == "properties" {
                        tally.properties += entries.len();
                    }
                    tally.characters += entries
                        .iter()
                        .map(|(n, _)| n.chars().count())
                        .sum::<usize>();
                }
            }
            _ => {}
        }
        match (holds(keyword), value) {
            (Some(Holds::One), sub) => walk(sub, &child_path(path, keyword), level, tally)?,
            (Some(Holds::List), OrderedJson::Array(items)) => {
                for (index, sub) in items.iter().enumerate() {
                    walk(sub, &index_path(path, keyword, index), level, tally)?;
                }
            }
            (Some(Holds::Map), OrderedJson::Object(entries)) => {
                let inner = if keyword == "$defs" { 0 } else { level };
                for (name, sub) in entries {
                    walk(sub, &member_path(path, keyword, name), inner, tally)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn count_enum(values: &OrderedJson, path: &str, tally: &mut Tally) -> Result<(), LoweringError> {
    let OrderedJson::Array(values) = values else {
        return Ok(());
    };
    // The `null` that makes an optional enum nullable is not a choice.
    let values: Vec<&OrderedJson> = values.iter().filter(|v| **v != OrderedJson::Null).collect();
    let characters: usize = values.iter().map(|v| length(v)).sum();
    tally.enum_values += values.len();
    tally.characters += characters;
    let strings = values.iter().filter(|v| v.as_str().is_some()).count();
    if strings > LARGE_ENUM && characters > MAX_LARGE_ENUM_CHARACTERS {
        let kind = Kind::EnumTooLong {
            values: values.len(),
            count: characters,
            limit: MAX_LARGE_ENUM_CHARACTERS,
        };
        return Err(LoweringError::new(Dialect::OpenAiStrict, path, kind));
    }
    Ok(())
}
