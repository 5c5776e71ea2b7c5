//! Whether serde alone holds a `#[tool]`'s arguments to their schema.
//!
//! The generated argument struct refuses unknown and repeated fields, and
//! each parameter's type refuses what its schema refuses for a good many
//! types: strings, booleans, integers of up to 64 bits (their bounds are
//! the type's), floats, `Option`s, `Vec`s, fixed-size arrays and tuples of
//! these, and unit enums. A tool whose parameters are all of that kind is
//! read by one `serde_json` parse and nothing else.
//!
//! Anything else is checked against the canonical schema as well, because
//! serde accepts more than its schema says:
//!
//! - a struct (at any depth) ignores unknown fields unless it denies them,
//!   and reads a JSON array as its fields in order;
//! - a map or a `serde_json::Value` keeps the last of repeated keys;
//! - `#[schemars(range, length, ...)]` bounds, `i128`'s and `f32`'s bounds
//!   (see `schema/numbers.rs`) and `Duration`'s nanoseconds are schema
//!   rules serde does not know (it reads `1e39` as an infinite `f32`);
//! - tagged and untagged enums read their contents through a buffer that
//!   keeps any field.
//!
//! The list of types is an allow-list over schemars' output: a shape not
//! recognised is checked, which can only cost time.

use serde_json::{Map, Value};

/// Whether serde refuses everything `generated` (schemars' root schema of
/// a `#[tool]`'s argument struct) refuses.
pub(crate) fn serde_enforces(generated: &Value) -> bool {
    let Some(root) = generated.as_object() else {
        return false;
    };
    if root.contains_key("$defs") || root.get("additionalProperties") != Some(&Value::Bool(false)) {
        return false;
    }
    let known = |key: &str| {
        is_annotation(key)
            || matches!(
                key,
                "type" | "properties" | "required" | "additionalProperties"
            )
    };
    root.keys().all(|key| known(key))
        && root
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| properties.values().all(exact))
}

/// Keywords that describe and constrain nothing.
pub(super) fn is_annotation(keyword: &str) -> bool {
    matches!(
        keyword,
        "title"
            | "description"
            | "default"
            | "examples"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "$comment"
            | "$schema"
    )
}

/// Whether serde's reading of the type behind `schema` refuses exactly what
/// `schema` refuses.
fn exact(schema: &Value) -> bool {
    let Some(schema) = schema.as_object() else {
        return false;
    };
    if let Some(Value::Array(branches)) = schema.get("anyOf").or_else(|| schema.get("oneOf")) {
        // `Option<T>` of a type without a `type` array, or a unit enum whose
        // variants have docs.
        let only = |key: &str| is_annotation(key) || key == "anyOf" || key == "oneOf";
        return schema.keys().all(|key| only(key))
            && branches
                .iter()
                .all(|branch| is_null(branch) || unit_variant(branch) || exact(branch));
    }
    let kinds: Vec<&str> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => return false,
    };
    let nullable = kinds.contains(&"null");
    let named: Vec<&str> = kinds.into_iter().filter(|kind| *kind != "null").collect();
    let kind = match named.as_slice() {
        [kind] => *kind,
        [] if nullable => "null",
        _ => return false,
    };
    let rest = |allowed: &[&str]| {
        schema
            .keys()
            .all(|key| is_annotation(key) || key == "type" || allowed.contains(&key.as_str()))
    };
    match kind {
        "boolean" | "null" => rest(&[]),
        "string" => {
            // A unit enum (with `null` for `Option<E>`), or a `char`.
            let values_ok = match schema.get("enum") {
                None => true,
                Some(Value::Array(values)) => values
                    .iter()
                    .all(|v| v.is_string() || (nullable && v.is_null())),
                Some(_) => false,
            };
            let lengths = (schema.get("minLength"), schema.get("maxLength"));
            let lengths_ok = match lengths {
                (None, None) => true,
                (Some(min), Some(max)) => min == &Value::from(1) && max == &Value::from(1),
                _ => false,
            };
            values_ok && lengths_ok && rest(&["enum", "const", "minLength", "maxLength"])
        }
        // Not an `f32`: serde reads a number past its range as an
        // infinity, where the schema's bounds refuse it.
        "number" => {
            schema.get("format").and_then(Value::as_str) == Some("double") && rest(&["format"])
        }
        "integer" => integer_bounds_are_the_type(schema) && rest(&["format", "minimum", "maximum"]),
        "array" => array(schema),
        // Structs, maps and free-form objects: see the module's doc.
        _ => false,
    }
}

/// An integer whose bounds are exactly those of its Rust type, up to 64
/// bits (serde refuses out-of-range numbers itself).
fn integer_bounds_are_the_type(schema: &Map<String, Value>) -> bool {
    let (min, max): (Value, Option<Value>) = match schema.get("format").and_then(Value::as_str) {
        Some("int8") => (i8::MIN.into(), Some(i8::MAX.into())),
        Some("int16") => (i16::MIN.into(), Some(i16::MAX.into())),
        Some("int32") => (i32::MIN.into(), Some(i32::MAX.into())),
        Some("int64" | "int") => (i64::MIN.into(), Some(i64::MAX.into())),
        Some("uint8") => (0.into(), Some(u8::MAX.into())),
        Some("uint16") => (0.into(), Some(u16::MAX.into())),
        Some("uint32") => (0.into(), Some(u32::MAX.into())),
        Some("uint64" | "uint") => (0.into(), Some(u64::MAX.into())),
        _ => return false,
    };
    let min_ok = schema.get("minimum").is_none_or(|found| *found == min);
    let max_ok = schema
        .get("maximum")
        .is_none_or(|found| Some(found) == max.as_ref());
    min_ok && max_ok
}

/// A `Vec`, a fixed-size array or a tuple of exact items.
fn array(schema: &Map<String, Value>) -> bool {
    let sized = match (schema.get("minItems"), schema.get("maxItems")) {
        (None, None) => None,
        // `[T; N]` and tuples: serde reads exactly that many.
        (Some(min), Some(max)) if min == max => min.as_u64(),
        _ => return false,
    };
    let allowed = ["items", "prefixItems", "minItems", "maxItems"];
    if !schema
        .keys()
        .all(|key| is_annotation(key) || key == "type" || allowed.contains(&key.as_str()))
    {
        return false;
    }
    match (schema.get("prefixItems"), schema.get("items")) {
        (Some(Value::Array(prefix)), items) => {
            sized == Some(prefix.len() as u64)
                && prefix.iter().all(exact)
                && items.is_none_or(|items| *items == Value::Bool(false))
        }
        (None, Some(items)) => exact(items),
        _ => false,
    }
}

fn is_null(branch: &Value) -> bool {
    branch.get("type").and_then(Value::as_str) == Some("null")
        && branch
            .as_object()
            .is_some_and(|b| b.keys().all(|k| k == "type" || is_annotation(k)))
}

/// A unit variant as schemars writes a documented one: a string `const`,
/// or an `enum` of strings.
fn unit_variant(branch: &Value) -> bool {
    let Some(members) = branch.as_object() else {
        return false;
    };
    members.iter().all(|(key, value)| match key.as_str() {
        "type" => value == "string",
        "const" => value.is_string(),
        "enum" => value
            .as_array()
            .is_some_and(|values| values.iter().all(Value::is_string)),
        other => is_annotation(other),
    }) && (members.contains_key("const") || members.contains_key("enum"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn root(property: Value) -> Value {
        json!({"type": "object", "properties": {"p": property}, "required": ["p"], "additionalProperties": false})
    }

    #[test]
    fn flat_parameters_are_left_to_serde() {
        for property in [
            json!({"type": "string"}),
            json!({"type": "string", "minLength": 1, "maxLength": 1}),
            json!({"type": ["integer", "null"], "format": "uint32", "minimum": 0, "maximum": 4294967295u64}),
            json!({"type": "integer", "format": "int64"}),
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": "string", "enum": ["a", "b"]}),
            json!({"oneOf": [{"type": "string", "const": "a", "description": "A."}, {"type": "string", "enum": ["b"]}]}),
            json!({"type": "array", "prefixItems": [{"type": "boolean"}, {"type": "number", "format": "double"}], "minItems": 2, "maxItems": 2}),
            json!({"type": "number", "format": "double"}),
        ] {
            assert!(serde_enforces(&root(property.clone())), "{property}");
        }
    }

    #[test]
    fn structs_maps_values_and_extra_rules_are_checked() {
        for property in [
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!(true),
            json!({"description": "Anything."}),
            json!({"type": "string", "maxLength": 10}),
            json!({"type": "integer", "format": "uint32", "minimum": 1, "maximum": 4294967295u64}),
            json!({"type": "integer", "format": "int128"}),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
            json!({"type": "number", "format": "float"}),
            json!({"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]}),
        ] {
            assert!(!serde_enforces(&root(property.clone())), "{property}");
        }
    }
}
