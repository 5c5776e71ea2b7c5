//! The canonical parameter schema: one JSON Schema 2020-12 document per
//! tool, from which every provider's dialect is derived.

use std::collections::BTreeMap;

use serde_json::Value;

use super::defs::{inline_non_recursive, reachable};
use super::error::SchemaError;
use super::json::Json;
use super::keywords::{Holds, child_path, holds, index_path, member_path, order_schema};

/// The deepest JSON nesting (arrays and objects) a schema may have. Deep
/// enough for any parameter type a person writes, shallow enough that the
/// recursive passes here cannot exhaust the stack.
pub const MAX_JSON_DEPTH: usize = 256;

/// Turns the schema generated for a tool's arguments struct into the
/// canonical schema.
///
/// `generated` is schemars' root schema for the arguments struct
/// (draft 2020-12, sub-schemas inlined); `param_order` lists the
/// parameters' serialized names in declaration order.
///
/// The result:
/// - has no `$schema` and no `title` keyword anywhere (a property *named*
///   `title` stays);
/// - is an object schema at the root, with `properties` (possibly empty) in
///   `param_order`, then any property `param_order` does not name, such as
///   fields of a `#[serde(flatten)]` struct, alphabetically;
/// - lists nested objects' properties alphabetically: nested declaration
///   order is not knowable, because schemars only keeps it when serde_json's
///   `preserve_order` feature happens to be on, and output must not depend
///   on that;
/// - keeps `required` as given;
/// - removes the `null` alternative of every optional (non-required)
///   property, at every level: absence from `required` already says "may be
///   omitted", and each lowering restores nullability where its dialect
///   needs it;
/// - inlines every definition except recursive ones, which stay as
///   `$ref: "#/$defs/NAME"` with their bodies canonical too;
/// - writes unit enums as one flat string `enum`, with documented
///   variants listed in the description;
/// - drops schemars' non-standard numeric `format`s, keeping the bounds of
///   8-, 16- and 32-bit integers as `minimum`/`maximum` and `minimum: 0`
///   for wider unsigned ones;
/// - closes struct-like objects with `additionalProperties: false` where
///   that cannot reject valid input;
/// - orders the keywords of every schema object as in
///   [`KEYWORD_ORDER`](super::KEYWORD_ORDER).
///
/// The result is the same, byte for byte, whatever the key order of
/// `generated`'s objects.
pub fn canonicalize(generated: &Value, param_order: &[&str]) -> Result<Json, SchemaError> {
    let depth = value_depth(generated);
    if depth > MAX_JSON_DEPTH {
        return Err(SchemaError::TooDeep {
            depth,
            limit: MAX_JSON_DEPTH,
        });
    }
    canonicalize_tree(Json::from(generated), param_order)
}

/// [`canonicalize`] on a tree, whose key order (unlike a `Value`'s) the
/// caller controls: what the tests use to show that order does not matter.
pub(crate) fn canonicalize_tree(mut root: Json, param_order: &[&str]) -> Result<Json, SchemaError> {
    let depth = root.depth();
    if depth > MAX_JSON_DEPTH {
        return Err(SchemaError::TooDeep {
            depth,
            limit: MAX_JSON_DEPTH,
        });
    }
    check_root(&root)?;

    let mut defs = take_defs(&mut root)?;
    inline_non_recursive(&mut root, &mut defs)?;

    canonical_node(&mut root, "", true)?;
    for (name, body) in &mut defs {
        canonical_node(body, &member_path("", "$defs", name), true)?;
    }

    root.insert("type", Json::from("object"));
    if !root.contains_key("properties") {
        root.insert("properties", Json::object());
    }
    if let Some(Json::Object(properties)) = root.get_mut("properties") {
        order_params(properties, param_order)?;
    }

    let used = reachable(&root, &defs)?;
    if !used.is_empty() {
        let kept = used
            .into_iter()
            .filter_map(|name| defs.remove(&name).map(|body| (name, body)))
            .collect();
        root.insert("$defs", Json::Object(kept));
    }
    order_schema(&mut root);
    Ok(root)
}

/// The JSON nesting depth of a value, counted without recursion.
fn value_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        match node {
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|value| (value, depth + 1))),
            _ => {}
        }
    }
    deepest
}

fn check_root(root: &Json) -> Result<(), SchemaError> {
    let Json::Object(_) = root else {
        return Err(SchemaError::RootNotObject {
            found: kind_of(root),
        });
    };
    match root.get("type") {
        Some(Json::String(kind)) if kind == "object" => Ok(()),
        Some(other) => Err(SchemaError::RootNotObject {
            found: format!("`\"type\": {}`", other.to_json_string()),
        }),
        None => match ["anyOf", "oneOf", "allOf", "$ref", "enum", "const"]
            .iter()
            .find(|keyword| root.contains_key(keyword))
        {
            Some(keyword) => Err(SchemaError::RootNotObject {
                found: format!("a schema with `{keyword}` and no `type`"),
            }),
            // `{}` or `{"properties": ...}`: an object in all but name.
            None => Ok(()),
        },
    }
}

fn take_defs(root: &mut Json) -> Result<BTreeMap<String, Json>, SchemaError> {
    match root.remove("$defs") {
        None => Ok(BTreeMap::new()),
        Some(Json::Object(entries)) => Ok(entries.into_iter().collect()),
        Some(other) => Err(SchemaError::NotASchema {
            path: "$defs".into(),
            found: kind_of(&other),
        }),
    }
}

/// Puts the root properties in parameter order, then the rest
/// alphabetically (they arrive sorted).
fn order_params(
    properties: &mut Vec<(String, Json)>,
    param_order: &[&str],
) -> Result<(), SchemaError> {
    let mut ordered = Vec::with_capacity(properties.len());
    for (index, name) in param_order.iter().enumerate() {
        if param_order[..index].contains(name) {
            return Err(SchemaError::DuplicateParam {
                name: (*name).to_owned(),
            });
        }
        let Some(position) = properties.iter().position(|(key, _)| key == name) else {
            return Err(SchemaError::UnknownParam {
                name: (*name).to_owned(),
            });
        };
        ordered.push(properties.remove(position));
    }
    ordered.append(properties);
    *properties = ordered;
    Ok(())
}

/// Keywords whose sub-schema describes a value of its own, which may be
/// closed with `additionalProperties: false` if it is a struct. Under
/// `not`, `if`/`then`/`else`, `allOf` and `dependentSchemas`, closing
/// would change what the parent accepts.
fn closable_position(keyword: &str) -> bool {
    matches!(
        keyword,
        "items"
            | "prefixItems"
            | "additionalProperties"
            | "properties"
            | "patternProperties"
            | "$defs"
            | "contains"
            | "additionalItems"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "propertyNames"
            | "contentSchema"
    )
}

/// Keywords through which a schema's own object instance gets properties
/// evaluated by another schema; closing such a schema would reject them.
const APPLICATORS: &[&str] = &["anyOf", "oneOf", "allOf", "$ref", "if", "dependentSchemas"];

/// Keywords that evaluate properties of the schema's own instance.
const PROPERTY_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
];

/// Makes one schema canonical, its sub-schemas first. `closable` says
/// whether the schema describes a whole value by itself (see
/// [`closable_position`]).
fn canonical_node(schema: &mut Json, path: &str, closable: bool) -> Result<(), SchemaError> {
    match schema {
        Json::Bool(_) => return Ok(()),
        Json::Object(_) => {}
        other => {
            return Err(SchemaError::NotASchema {
                path: path.to_owned(),
                found: kind_of(other),
            });
        }
    }
    // `title` is schemars' Rust type name: noise to a model, and it leaks
    // internal names. `$schema` is implied (2020-12) everywhere it matters.
    schema.remove("title");
    schema.remove("$schema");

    let required: Vec<String> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let evaluates_properties = PROPERTY_KEYWORDS.iter().any(|k| schema.contains_key(k));
    let Json::Object(members) = schema else {
        return Ok(());
    };
    for (keyword, value) in members.iter_mut() {
        match holds(keyword) {
            Some(Holds::One) => canonical_node(
                value,
                &child_path(path, keyword),
                closable_position(keyword),
            )?,
            Some(Holds::List) => {
                let Json::Array(items) = value else {
                    return Err(not_a_list(path, keyword, value));
                };
                // A union's branches describe the same value as the union;
                // they may be closed only if nothing beside the union
                // evaluates that value's properties.
                let branch_closable = match keyword.as_str() {
                    "anyOf" | "oneOf" => closable && !evaluates_properties,
                    other => closable_position(other),
                };
                for (index, item) in items.iter_mut().enumerate() {
                    canonical_node(item, &index_path(path, keyword, index), branch_closable)?;
                }
            }
            Some(Holds::Map) => {
                let Json::Object(entries) = value else {
                    return Err(SchemaError::NotASchema {
                        path: child_path(path, keyword),
                        found: format!("{} (expected an object of schemas)", kind_of(value)),
                    });
                };
                for (name, sub) in entries.iter_mut() {
                    if keyword == "properties" && !required.contains(name) {
                        strip_null(sub);
                    }
                    canonical_node(
                        sub,
                        &member_path(path, keyword, name),
                        closable_position(keyword),
                    )?;
                }
                // Alphabetical, see `canonicalize`; the root's are put in
                // parameter order afterwards.
                if keyword == "properties" {
                    entries.sort_by(|(a, _), (b, _)| a.cmp(b));
                }
            }
            None => {}
        }
    }
    flatten_unit_enum(schema);
    normalize_numeric_format(schema);
    let closes = closable
        && schema.contains_key("properties")
        && !schema.contains_key("additionalProperties")
        && !schema.contains_key("unevaluatedProperties")
        && !APPLICATORS.iter().any(|k| schema.contains_key(k));
    if closes {
        schema.insert("additionalProperties", Json::Bool(false));
    }
    Ok(())
}

fn not_a_list(path: &str, keyword: &str, value: &Json) -> SchemaError {
    SchemaError::NotASchema {
        path: child_path(path, keyword),
        found: format!("{} (expected an array of schemas)", kind_of(value)),
    }
}

/// A short description of a JSON value's kind, for messages.
pub(crate) fn kind_of(value: &Json) -> String {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean schema",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
    .to_owned()
}

fn is_null_type(value: &Json) -> bool {
    value.as_str() == Some("null")
}

/// A branch that only admits `null`: `{"type": "null"}`, `{"const": null}`
/// or `{"enum": [null]}` (annotations aside).
fn is_null_schema(branch: &Json) -> bool {
    let Some(members) = branch.as_object() else {
        return false;
    };
    let mut admits_only_null = false;
    for (keyword, value) in members {
        match keyword.as_str() {
            "type" => admits_only_null |= is_null_type(value),
            "const" => admits_only_null |= *value == Json::Null,
            "enum" => admits_only_null |= value.as_array() == Some(&[Json::Null]),
            "description" | "title" | "$comment" => {}
            _ => return false,
        }
    }
    admits_only_null
}

/// Removes the `null` alternative an `Option<T>` added: from a `type` array
/// (and the `enum` schemars extends with `null`), or as a branch of
/// `anyOf`/`oneOf`, merging the one remaining branch into the schema (the
/// schema's own keys, such as a field's doc, win over the branch's, such
/// as its type's doc).
fn strip_null(schema: &mut Json) {
    if let Some(Json::Array(types)) = schema.get_mut("type")
        && types.len() > 1
        && types.iter().any(is_null_type)
    {
        types.retain(|kind| !is_null_type(kind));
        if let [single] = types.as_slice() {
            let single = single.clone();
            schema.insert("type", single);
        }
    }
    // schemars extends a unit enum's values with `null` for `Option<E>`.
    if let Some(Json::Array(values)) = schema.get_mut("enum")
        && values.len() > 1
        && values.contains(&Json::Null)
    {
        values.retain(|value| *value != Json::Null);
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(Json::Array(branches)) = schema.get_mut(keyword) else {
            continue;
        };
        if branches.len() < 2 || !branches.iter().any(is_null_schema) {
            continue;
        }
        branches.retain(|branch| !is_null_schema(branch));
        if let [single] = branches.as_slice() {
            match single.clone() {
                Json::Object(body) => {
                    schema.remove(keyword);
                    for (key, value) in body {
                        if !schema.contains_key(&key) {
                            schema.insert(key, value);
                        }
                    }
                }
                Json::Bool(true) => {
                    schema.remove(keyword);
                }
                // `false` or junk: leave the one-branch union as it is.
                _ => {}
            }
        }
    }
}

/// A `oneOf`/`anyOf` branch that is one or more string constants, as
/// schemars writes a unit variant (`const`) or a run of undocumented ones
/// (`enum`): its values and its doc.
fn unit_variant(branch: &Json) -> Option<(Vec<Json>, Option<String>)> {
    let mut values = None;
    let mut doc = None;
    for (keyword, value) in branch.as_object()? {
        match keyword.as_str() {
            "type" if value.as_str() == Some("string") => {}
            "const" if value.as_str().is_some() && values.is_none() => {
                values = Some(vec![value.clone()]);
            }
            "enum" if values.is_none() => {
                let items = value.as_array()?;
                if items.is_empty() || items.iter().any(|item| item.as_str().is_none()) {
                    return None;
                }
                values = Some(items.to_vec());
            }
            "description" => doc = Some(value.as_str()?.to_owned()),
            _ => return None,
        }
    }
    Some((values?, doc))
}

/// Rewrites a union of string constants (a unit enum whose variants have
/// docs) as one `{"type": "string", "enum": [...]}`, listing the variant
/// docs in the description: providers handle a flat `enum` best, and
/// several reject `const` or `oneOf`.
fn flatten_unit_enum(schema: &mut Json) {
    if ["type", "enum", "const"]
        .iter()
        .any(|k| schema.contains_key(k))
    {
        return;
    }
    for keyword in ["oneOf", "anyOf"] {
        let Some(Json::Array(branches)) = schema.get(keyword) else {
            continue;
        };
        let Some(variants) = branches
            .iter()
            .map(unit_variant)
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let mut values = Vec::new();
        let mut lines = Vec::new();
        for (group, doc) in variants {
            if let Some(doc) = doc.filter(|doc| !doc.trim().is_empty()) {
                let names = group
                    .iter()
                    .filter_map(Json::as_str)
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                // Continuation lines are indented to stay in the list item.
                lines.push(format!("- {names}: {}", doc.trim().replace('\n', "\n  ")));
            }
            values.extend(group);
        }
        schema.remove(keyword);
        schema.insert("type", Json::from("string"));
        schema.insert("enum", Json::Array(values));
        if !lines.is_empty() {
            let list = lines.join("\n");
            let text = match schema.get("description").and_then(Json::as_str) {
                Some(intro) if !intro.trim().is_empty() => format!("{intro}\n\n{list}"),
                _ => list,
            };
            schema.insert("description", Json::String(text));
        }
        return;
    }
}

/// The range an integer `format` of schemars stands for, as
/// `(minimum, maximum)`; `None` if `format` is not one of them. 64- and
/// 128-bit bounds are left out: beyond 2^53 they are not exact in the
/// doubles most JSON readers use, and no model will reach them.
fn integer_range(format: &str) -> Option<(Option<i64>, Option<i64>)> {
    Some(match format {
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
        "uint8" => (Some(0), Some(u8::MAX.into())),
        "uint16" => (Some(0), Some(u16::MAX.into())),
        "uint32" => (Some(0), Some(u32::MAX.into())),
        "int64" | "int128" | "int" => (None, None),
        "uint64" | "uint128" | "uint" => (Some(0), None),
        _ => return None,
    })
}

/// Replaces schemars' numeric `format`s, which are not JSON Schema formats
/// and which strict dialects reject, by the bounds they imply.
fn normalize_numeric_format(schema: &mut Json) {
    let Some(format) = schema.get("format").and_then(Json::as_str) else {
        return;
    };
    if matches!(format, "float" | "double") {
        schema.remove("format");
        return;
    }
    let Some((low, high)) = integer_range(format) else {
        return;
    };
    schema.remove("format");
    if let Some(low) = low {
        tighten(schema, "minimum", low, |existing, bound| existing >= bound);
    }
    if let Some(high) = high {
        tighten(schema, "maximum", high, |existing, bound| existing <= bound);
    }
}

/// Sets `keyword` to `bound` unless it already holds a number at least as
/// tight (e.g. `NonZeroU32`'s `minimum: 1`, or a `#[schemars(range)]`).
fn tighten(schema: &mut Json, keyword: &str, bound: i64, tighter: fn(f64, f64) -> bool) {
    let keeps = match schema.get(keyword) {
        Some(Json::Number(existing)) => existing
            .as_f64()
            .is_some_and(|existing| tighter(existing, bound as f64)),
        _ => false,
    };
    if !keeps {
        schema.insert(keyword, Json::Number(bound.into()));
    }
}

#[cfg(test)]
#[path = "canonical_tests.rs"]
mod tests;
