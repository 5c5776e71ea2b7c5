//! Anthropic's structured outputs: the schema of a final answer, without
//! the bounds the API refuses.

use serde_json::Value;

use super::MAX_JSON_DEPTH;
use super::keywords::{BOUNDS, Holds, holds};

/// The schema Anthropic's structured outputs (`output_config.format`)
/// take for `schema`: every [bound](https://json-schema.org/understanding-json-schema/reference/numeric)
/// removed (`minimum`, `maxLength`, `maxItems`, `minProperties`...),
/// except `minItems` of 0 or 1, the only values the API takes.
///
/// Only keywords are removed, in every sub-schema: a property *named*
/// `minimum` stays. The answer is still checked against the schema as
/// given, bounds included, when it is read back. The walk stops at
/// [`MAX_JSON_DEPTH`], as the canonical schema does.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::schema::anthropic_output;
///
/// let schema = json!({"type": "object", "properties": {
///     "minimum": {"type": "integer", "minimum": 0, "maximum": 9},
///     "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "minItems": 1, "maxItems": 5},
/// }});
/// assert_eq!(anthropic_output(&schema), json!({"type": "object", "properties": {
///     "minimum": {"type": "integer"},
///     "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
/// }}));
/// ```
pub fn anthropic_output(schema: &Value) -> Value {
    let mut schema = schema.clone();
    without_bounds(&mut schema, 0);
    schema
}

fn without_bounds(schema: &mut Value, depth: usize) {
    let Value::Object(members) = schema else {
        return;
    };
    if depth > MAX_JSON_DEPTH {
        return;
    }
    let min_items = members.get("minItems").and_then(Value::as_u64);
    for keyword in BOUNDS {
        members.remove(*keyword);
    }
    if let Some(min) = min_items.filter(|min| *min <= 1) {
        members.insert("minItems".into(), min.into());
    }
    for (keyword, value) in members.iter_mut() {
        match (holds(keyword), value) {
            (Some(Holds::One), sub) => without_bounds(sub, depth + 1),
            (Some(Holds::List), Value::Array(list)) => {
                list.iter_mut()
                    .for_each(|sub| without_bounds(sub, depth + 1));
            }
            (Some(Holds::Map), Value::Object(named)) => {
                named
                    .values_mut()
                    .for_each(|sub| without_bounds(sub, depth + 1));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn bounds_go_in_every_sub_schema_and_names_stay() {
        let schema = json!({"type": "object", "properties": {
            "n": {"anyOf": [{"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}, {"type": "null"}]},
            "many": {"type": "array", "minItems": 2, "items": {"$ref": "#/$defs/T"}},
            "map": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1},
                    "minProperties": 1, "maxProperties": 3}
        }, "$defs": {"T": {"type": "string", "pattern": "^a", "maxLength": 4}}});
        assert_eq!(
            anthropic_output(&schema),
            json!({"type": "object", "properties": {
                "n": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                "many": {"type": "array", "items": {"$ref": "#/$defs/T"}},
                "map": {"type": "object", "additionalProperties": {"type": "string"}}
            }, "$defs": {"T": {"type": "string", "pattern": "^a"}}})
        );
    }

    #[test]
    fn a_schema_deeper_than_the_limit_does_not_overflow() {
        let mut schema = json!({"type": "string", "maxLength": 3});
        for _ in 0..(MAX_JSON_DEPTH * 4) {
            schema = json!({"type": "array", "items": schema, "maxItems": 2});
        }
        let lowered = anthropic_output(&schema);
        assert!(lowered.get("maxItems").is_none());
    }
}
