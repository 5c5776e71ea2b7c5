//! Gemini's `parametersJsonSchema`: JSON Schema, with two rules of its own
//! on top of the canonical schema.

use super::error::{Dialect, LoweringError, LoweringErrorKind as Kind};
use super::gemini::is_gemini_name;
use super::keywords::{Holds, child_path, holds, index_path, member_path, order_schema};
use super::ordered_json::OrderedJson;

/// Lowers a canonical schema to what Gemini takes as
/// `parametersJsonSchema`, for the tools its `parameters` dialect cannot
/// express (recursive types, maps, tuples):
///
/// - a `$ref` may have only `$`-prefixed keywords beside it, so a `$ref`
///   with others (a field's `description` beside the type it refers to) is
///   wrapped: `{"description": "…", "anyOf": [{"$ref": "…"}]}`, which means
///   the same;
/// - the parameters' names (the root's properties) follow Gemini's rule for
///   parameter names, `^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`: a tool with another
///   name (`año`, `first-name`) is refused, naming each, rather than sent
///   and refused by the API. Renaming it would need every call's arguments
///   renamed back, which a provider's response alone cannot tell.
///
/// Everything else is the canonical schema as it is.
pub fn gemini_json_schema(canonical: &OrderedJson) -> Result<OrderedJson, LoweringError> {
    let error = |path: &str, kind| LoweringError::new(Dialect::GeminiJsonSchema, path, kind);
    if canonical.get("type").and_then(OrderedJson::as_str) != Some("object") {
        return Err(error("", Kind::RootNotObject));
    }
    let mut problems: Vec<LoweringError> = canonical
        .get("properties")
        .and_then(OrderedJson::as_object)
        .unwrap_or_default()
        .iter()
        .filter(|(name, _)| !is_gemini_name(name))
        .map(|(name, _)| {
            let path = member_path("", "properties", name);
            error(&path, Kind::PropertyName { name: name.clone() })
        })
        .collect();
    let mut lowered = canonical.clone();
    wrap_refs(&mut lowered, "", &mut problems);
    if let Some(error) = LoweringError::merge(problems) {
        return Err(error);
    }
    order_schema(&mut lowered);
    Ok(lowered)
}

/// Wraps every `$ref` that has keywords other than `$`-prefixed ones beside
/// it in a one-branch `anyOf`, in `schema` and its sub-schemas. The
/// canonical schema's depth is bounded, and so is this walk.
fn wrap_refs(schema: &mut OrderedJson, path: &str, problems: &mut Vec<LoweringError>) {
    let OrderedJson::Object(members) = schema else {
        return;
    };
    for (keyword, value) in members.iter_mut() {
        match (holds(keyword), value) {
            (Some(Holds::One), sub) => wrap_refs(sub, &child_path(path, keyword), problems),
            (Some(Holds::List), OrderedJson::Array(items)) => {
                for (index, item) in items.iter_mut().enumerate() {
                    wrap_refs(item, &index_path(path, keyword, index), problems);
                }
            }
            (Some(Holds::Map), OrderedJson::Object(entries)) => {
                for (name, sub) in entries.iter_mut() {
                    wrap_refs(sub, &member_path(path, keyword, name), problems);
                }
            }
            _ => {}
        }
    }
    let has_siblings = members.iter().any(|(keyword, _)| !keyword.starts_with('$'));
    if !has_siblings || !schema.contains_key("$ref") {
        return;
    }
    if schema.contains_key("anyOf") || schema.contains_key("oneOf") {
        // The reference would have to hold beside the union (`allOf`),
        // which the dialect does not list.
        problems.push(LoweringError::new(
            Dialect::GeminiJsonSchema,
            path,
            Kind::Unsupported {
                keyword: "$ref".to_owned(),
            },
        ));
        return;
    }
    let reference = schema.remove("$ref").expect("checked above");
    let branch = OrderedJson::Object(vec![("$ref".to_owned(), reference)]);
    schema.insert("anyOf", OrderedJson::Array(vec![branch]));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lowered(schema: serde_json::Value) -> Result<serde_json::Value, LoweringError> {
        gemini_json_schema(&OrderedJson::from(&schema)).map(|json| json.to_value())
    }

    #[test]
    fn a_ref_beside_other_keywords_is_wrapped() {
        let schema = json!({
            "type": "object",
            "properties": {
                "tree": {"$ref": "#/$defs/Tree", "description": "The tree."}
            },
            "required": ["tree"],
            "$defs": {"Tree": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
            }}}
        });
        let out = lowered(schema).unwrap();
        assert_eq!(
            out["properties"]["tree"],
            json!({"description": "The tree.", "anyOf": [{"$ref": "#/$defs/Tree"}]})
        );
        // A bare reference stays as it is.
        assert_eq!(
            out["$defs"]["Tree"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
    }

    #[test]
    fn parameter_names_outside_the_rule_are_refused_each_named() {
        let schema = json!({
            "type": "object",
            "properties": {
                "año_vehiculo": {"type": "integer"},
                "first-name": {"type": "string"},
                "nested": {"type": "object", "properties": {"año": {"type": "string"}}}
            }
        });
        let error = lowered(schema).unwrap_err();
        let names: Vec<_> = error.problems().map(|(path, _)| path.to_owned()).collect();
        assert_eq!(names, ["properties.año_vehiculo", "properties.first-name"]);
        assert!(error.to_string().contains("`año_vehiculo`"), "{error}");
    }

    #[test]
    fn a_ref_beside_a_union_is_refused() {
        let schema = json!({
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/X", "anyOf": [{"type": "string"}]}},
            "$defs": {"X": {"type": "string"}}
        });
        let error = lowered(schema).unwrap_err();
        assert_eq!(error.path(), "properties.x");
    }
}
