//! Which keywords hold sub-schemas, the fixed keyword order, and schema
//! paths for messages.

use super::ordered_json::OrderedJson;

/// How a keyword's value relates to sub-schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holds {
    /// One sub-schema (`items`, `not`, ...).
    One,
    /// An array of sub-schemas (`anyOf`, `prefixItems`, ...).
    List,
    /// An object of named sub-schemas (`properties`, `$defs`, ...).
    Map,
}

/// What `keyword`'s value holds, or `None` for plain data (`enum`,
/// `required`, `default`, ...).
pub(crate) fn holds(keyword: &str) -> Option<Holds> {
    Some(match keyword {
        "items"
        | "additionalProperties"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contains"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties"
        | "additionalItems"
        | "contentSchema" => Holds::One,
        "anyOf" | "oneOf" | "allOf" | "prefixItems" => Holds::List,
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
            Holds::Map
        }
        _ => return None,
    })
}

/// The order keywords take inside every schema object: what a reader (or a
/// model) needs first comes first (what the value is, then its
/// constraints, then its structure, then the rest). Keywords not listed
/// follow in alphabetical order.
///
/// `nullable` and `propertyOrdering` appear only in Gemini's dialect; they
/// sit next to their JSON Schema counterparts there.
// Stretches of this order match the Anthropic judge's list of refused
// keywords (`toolkit-tests`, `judges/anthropic_request.rs`), which is
// written from the documentation on purpose, apart from this code.
// The bounds among these stand again in `BOUNDS`, below, which names the
// keywords that bound a value, for the dialects that drop them.
pub const KEYWORD_ORDER: &[&str] = &[
    "type",
    "nullable",
    "description",
    "enum",
    "const",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "propertyOrdering",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "$defs",
    "default",
    "examples",
];

fn rank(keyword: &str) -> usize {
    KEYWORD_ORDER
        .iter()
        .position(|known| *known == keyword)
        .unwrap_or(KEYWORD_ORDER.len())
}

/// Puts every schema object in `schema` into [`KEYWORD_ORDER`], and the keys
/// of every data object (inside `default`, `enum`, ...) and of `$defs`,
/// `patternProperties` and `dependentSchemas` into alphabetical order.
///
/// `properties` keep their order: it is meaningful (declaration order) and
/// set by whoever built them.
pub(crate) fn order_schema(schema: &mut OrderedJson) {
    let OrderedJson::Object(members) = schema else {
        return;
    };
    // A stable sort: unknown keywords tie on rank and are then ordered by
    // name, so the result never depends on the input order.
    members.sort_by(|(a, _), (b, _)| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    for (keyword, value) in members.iter_mut() {
        match holds(keyword) {
            Some(Holds::One) => order_schema(value),
            Some(Holds::List) => {
                if let OrderedJson::Array(items) = value {
                    items.iter_mut().for_each(order_schema);
                }
            }
            Some(Holds::Map) => {
                if let OrderedJson::Object(entries) = value {
                    if keyword != "properties" {
                        entries.sort_by(|(a, _), (b, _)| a.cmp(b));
                    }
                    entries.iter_mut().for_each(|(_, sub)| order_schema(sub));
                }
            }
            None => order_data(value),
        }
    }
}

/// Sorts the keys of every object inside a data value.
pub(crate) fn order_data(value: &mut OrderedJson) {
    match value {
        OrderedJson::Array(items) => items.iter_mut().for_each(order_data),
        OrderedJson::Object(members) => {
            members.sort_by(|(a, _), (b, _)| a.cmp(b));
            members.iter_mut().for_each(|(_, value)| order_data(value));
        }
        _ => {}
    }
}

/// The path of a keyword below `parent`, as messages print it:
/// `properties.filter.items`.
pub(crate) fn child_path(parent: &str, segment: &str) -> String {
    if parent.is_empty() {
        segment.to_owned()
    } else {
        format!("{parent}.{segment}")
    }
}

/// The path of a named sub-schema (`properties.tags`) or a listed one
/// (`anyOf[1]`) below `parent`.
pub(crate) fn member_path(parent: &str, keyword: &str, member: &str) -> String {
    child_path(parent, &format!("{keyword}.{member}"))
}

/// The path of the `index`th sub-schema of a list keyword.
pub(crate) fn index_path(parent: &str, keyword: &str, index: usize) -> String {
    child_path(parent, &format!("{keyword}[{index}]"))
}

/// A path as messages show it: the root is named, the rest quoted.
pub(crate) fn show_path(path: &str) -> String {
    if path.is_empty() {
        "the root".to_owned()
    } else {
        format!("`{path}`")
    }
}

/// Short JSON for a description: strings quoted, values compact.
pub(crate) fn compact(value: &OrderedJson) -> String {
    value.to_json_string()
}

/// Appends `{keyword: value, ...}` to the schema's description, so a
/// constraint a dialect cannot express still reaches the model as prose.
pub(crate) fn fold_into_description(schema: &mut OrderedJson, folded: &[(String, OrderedJson)]) {
    if folded.is_empty() {
        return;
    }
    // In keyword order, so the note reads the same whatever order the
    // caller found the keywords in.
    let mut folded = folded.to_vec();
    folded.sort_by(|(a, _), (b, _)| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    let listed = folded
        .iter()
        .map(|(keyword, value)| format!("{keyword}: {}", compact(value)))
        .collect::<Vec<_>>()
        .join(", ");
    let note = format!("{{{listed}}}");
    let text = match schema.get("description").and_then(OrderedJson::as_str) {
        Some(existing) if !existing.is_empty() => format!("{existing}\n\n{note}"),
        _ => note,
    };
    schema.insert("description", OrderedJson::String(text));
}

// The bounds stand in `KEYWORD_ORDER` too, in the same order: that list
// orders every keyword a schema is written with, this one names the ones
// that bound a value; neither can be made from the other. The Anthropic
// judge (`toolkit-tests`, `judges/anthropic_request.rs`) lists the same
// words from the documentation, apart from this code, on purpose.
/// The bounds a schema may put on a value: numeric ranges and steps,
/// lengths of strings, sizes of arrays and objects. Dialects that cannot
/// enforce them drop them (Anthropic's structured outputs refuse them);
/// the canonical schema, which arguments and answers are checked against,
/// keeps them.
pub(crate) const BOUNDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
];

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn orders_keywords_and_leaves_properties_alone() {
        let mut schema = OrderedJson::from(&json!({
            "zeta": 1, "required": ["b", "a"], "type": "object", "alpha": 2,
            "properties": {"b": {"description": "B", "type": "string"}, "a": {"type": "integer"}},
            "default": {"y": 1, "x": 2},
        }));
        // Reverse `properties` so the test does not rely on the map order of
        // the `Value` it was built from.
        if let Some(OrderedJson::Object(properties)) = schema.get_mut("properties") {
            properties.sort_by(|(a, _), (b, _)| b.cmp(a));
        }
        order_schema(&mut schema);
        assert_eq!(
            schema.to_json_string(),
            r#"{"type":"object","properties":{"b":{"type":"string","description":"B"},"a":{"type":"integer"}},"required":["b","a"],"default":{"x":2,"y":1},"alpha":2,"zeta":1}"#
        );
    }

    #[test]
    fn folds_into_description() {
        let mut schema = OrderedJson::from(&json!({"description": "Name."}));
        fold_into_description(
            &mut schema,
            &[
                ("minLength".into(), OrderedJson::from(&json!(3))),
                ("format".into(), OrderedJson::from("uri")),
            ],
        );
        assert_eq!(
            schema.get("description").and_then(OrderedJson::as_str),
            Some("Name.\n\n{format: \"uri\", minLength: 3}")
        );
        let mut bare = OrderedJson::object();
        fold_into_description(&mut bare, &[("default".into(), OrderedJson::Null)]);
        assert_eq!(
            bare.get("description").and_then(OrderedJson::as_str),
            Some("{default: null}")
        );
    }

    #[test]
    fn paths_read_well() {
        assert_eq!(member_path("", "properties", "filter"), "properties.filter");
        assert_eq!(
            index_path("properties.a", "anyOf", 1),
            "properties.a.anyOf[1]"
        );
        assert_eq!(show_path(""), "the root");
        assert_eq!(show_path("items"), "`items`");
    }
}
