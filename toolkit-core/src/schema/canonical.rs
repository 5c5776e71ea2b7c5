//! The canonical parameter schema: one JSON Schema 2020-12 document per
//! tool, from which every provider's dialect is derived.

use std::collections::BTreeMap;

use serde_json::Value;

use super::defs::{inline_non_recursive, reachable};
use super::enums::{flatten_unit_enum, type_untyped_values};
use super::error::SchemaError;
use super::formats::normalize_numeric_format;
use super::keywords::{Holds, child_path, holds, index_path, member_path, order_schema};
use super::nulls::is_null_schema;
use super::ordered_json::OrderedJson;

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
/// - lists nested objects' required properties in the order of
///   `required` (declaration order: schemars writes it so whatever the
///   build's features), then their optional properties alphabetically: the
///   position of an optional field among the others is not knowable, because
///   schemars only keeps declaration order in `properties` when serde_json's
///   `preserve_order` feature happens to be on, and output must not depend
///   on that;
/// - keeps `required` as given;
/// - keeps the `null` of an `Option`: absent and `null` are different
///   values where the Rust type tells them apart (`Option<Option<T>>`
///   read with a helper says "leave" and "clear"), and every value a
///   schema allows must be one the tool accepts;
/// - inlines every definition except recursive ones, which stay as
///   `$ref: "#/$defs/NAME"` with their bodies canonical too;
/// - writes unit enums as one flat string `enum`, with documented
///   variants listed in the description;
/// - drops schemars' non-standard numeric `format`s, keeping the bounds
///   they imply as `minimum`/`maximum` (a `u64`'s maximum included; 128-bit
///   integers bounded to what a parsed `serde_json::Value` holds exactly),
///   and writes an `f32`'s values in their shortest form;
/// - says what serde does where schemars says otherwise: no `uniqueItems`
///   for sets (serde keeps one of repeated items), nanoseconds below a
///   second for `Duration` and `SystemTime`;
/// - closes struct-like objects with `additionalProperties: false` where
///   that cannot reject valid input (the arguments are then held to it:
///   an unknown field at any depth is refused). Only a schema derived from
///   Rust types is closed so: a schema given by hand (a run-time tool's,
///   an MCP server's) keeps every object as its author left it, open
///   unless it says otherwise;
/// - orders the keywords of every schema object as in
///   [`KEYWORD_ORDER`](super::KEYWORD_ORDER).
///
/// The result is the same, byte for byte, whatever the key order of
/// `generated`'s objects.
pub fn canonicalize(generated: &Value, param_order: &[&str]) -> Result<OrderedJson, SchemaError> {
    canonicalize_from(generated, param_order, Source::Derived)
}

/// Where a schema comes from, which decides what its keywords mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// schemars, from Rust types that serde reads: a keyword means what
    /// serde does with the type (a `HashSet`'s `uniqueItems` is not a
    /// refusal: serde drops repeated items).
    Derived,
    /// Written by hand (a run-time tool's, an MCP server's): every keyword
    /// means what JSON Schema says, an object left open stays open, and the
    /// arguments are checked against it.
    Given,
}

/// [`canonicalize`] of a schema from `source`.
pub(crate) fn canonicalize_from(
    generated: &Value,
    param_order: &[&str],
    source: Source,
) -> Result<OrderedJson, SchemaError> {
    let depth = value_depth(generated);
    if depth > MAX_JSON_DEPTH {
        return Err(SchemaError::TooDeep {
            depth,
            limit: MAX_JSON_DEPTH,
        });
    }
    canonicalize_tree(OrderedJson::from(generated), param_order, source)
}

/// [`canonicalize`] on a tree, whose key order (unlike a `Value`'s) the
/// caller controls: what the tests use to show that order does not matter.
pub(crate) fn canonicalize_tree(
    mut root: OrderedJson,
    param_order: &[&str],
    source: Source,
) -> Result<OrderedJson, SchemaError> {
    let depth = root.depth();
    if depth > MAX_JSON_DEPTH {
        return Err(SchemaError::TooDeep {
            depth,
            limit: MAX_JSON_DEPTH,
        });
    }
    check_root(&root)?;

    // Before the passes, so the root is treated as the object it is
    // (closed like any other).
    root.insert("type", OrderedJson::from("object"));
    if !root.contains_key("properties") {
        root.insert("properties", OrderedJson::object());
    }

    let mut defs = take_defs(&mut root)?;
    inline_non_recursive(&mut root, &mut defs)?;

    canonical_node(&mut root, "", true, source)?;
    for (name, body) in &mut defs {
        canonical_node(body, &member_path("", "$defs", name), true, source)?;
    }

    if let Some(OrderedJson::Object(properties)) = root.get_mut("properties") {
        order_params(properties, param_order)?;
    }

    let used = reachable(&root, &defs)?;
    if !used.is_empty() {
        let kept = used
            .into_iter()
            .filter_map(|name| defs.remove(&name).map(|body| (name, body)))
            .collect();
        root.insert("$defs", OrderedJson::Object(kept));
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

fn check_root(root: &OrderedJson) -> Result<(), SchemaError> {
    let OrderedJson::Object(_) = root else {
        return Err(SchemaError::RootNotObject {
            found: kind_of(root),
        });
    };
    match root.get("type") {
        Some(OrderedJson::String(kind)) if kind == "object" => Ok(()),
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

fn take_defs(root: &mut OrderedJson) -> Result<BTreeMap<String, OrderedJson>, SchemaError> {
    match root.remove("$defs") {
        None => Ok(BTreeMap::new()),
        Some(OrderedJson::Object(entries)) => Ok(entries.into_iter().collect()),
        Some(other) => Err(SchemaError::NotASchema {
            path: "$defs".into(),
            found: kind_of(&other),
        }),
    }
}

/// Puts the root properties in parameter order, then the rest
/// alphabetically (they arrive sorted).
fn order_params(
    properties: &mut Vec<(String, OrderedJson)>,
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
fn canonical_node(
    schema: &mut OrderedJson,
    path: &str,
    closable: bool,
    source: Source,
) -> Result<(), SchemaError> {
    match schema {
        OrderedJson::Bool(_) => return Ok(()),
        OrderedJson::Object(_) => {}
        other => {
            return Err(SchemaError::NotASchema {
                path: path.to_owned(),
                found: kind_of(other),
            });
        }
    }
    if source == Source::Derived {
        serde_meaning(schema);
    }
    // `title` is schemars' Rust type name: noise to a model, and it leaks
    // internal names. `$schema` is implied (2020-12) everywhere it matters.
    // `$anchor` names one place, and definitions are inlined wherever they
    // are used, so a kept anchor would name several (OpenAI's strict mode
    // refuses that); references by anchor are not followed here anyway.
    schema.remove("title");
    schema.remove("$schema");
    schema.remove("$anchor");
    let optional_enum = lift_optional_unit_enum(schema);

    let required: Vec<String> = schema
        .get("required")
        .and_then(OrderedJson::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(OrderedJson::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let evaluates_properties = PROPERTY_KEYWORDS.iter().any(|k| schema.contains_key(k));
    let OrderedJson::Object(members) = schema else {
        return Ok(());
    };
    for (keyword, value) in members.iter_mut() {
        match holds(keyword) {
            Some(Holds::One) => canonical_node(
                value,
                &child_path(path, keyword),
                closable_position(keyword),
                source,
            )?,
            Some(Holds::List) => {
                let OrderedJson::Array(items) = value else {
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
                    canonical_node(
                        item,
                        &index_path(path, keyword, index),
                        branch_closable,
                        source,
                    )?;
                }
            }
            Some(Holds::Map) => {
                let OrderedJson::Object(entries) = value else {
                    return Err(SchemaError::NotASchema {
                        path: child_path(path, keyword),
                        found: format!("{} (expected an object of schemas)", kind_of(value)),
                    });
                };
                for (name, sub) in entries.iter_mut() {
                    canonical_node(
                        sub,
                        &member_path(path, keyword, name),
                        closable_position(keyword),
                        source,
                    )?;
                }
                // Required properties in `required`'s order, which schemars
                // writes in declaration order whatever serde_json's
                // features; then the optional ones alphabetically (see
                // `canonicalize`). The root's are put in parameter order
                // afterwards.
                if keyword == "properties" {
                    let rank = |name: &str| required.iter().position(|r| r == name);
                    entries.sort_by(|(a, _), (b, _)| match (rank(a), rank(b)) {
                        (Some(x), Some(y)) => x.cmp(&y),
                        (Some(_), None) => std::cmp::Ordering::Less,
                        (None, Some(_)) => std::cmp::Ordering::Greater,
                        (None, None) => a.cmp(b),
                    });
                }
            }
            None => {}
        }
    }
    flatten_unit_enum(schema);
    if optional_enum {
        admit_null(schema);
    }
    type_untyped_values(schema);
    normalize_numeric_format(schema);
    // Closing says what serde does with a struct (an unknown field of a
    // nested struct would be dropped without a word): a schema written by
    // hand means what it says, and one that leaves an object open keeps it
    // open.
    let closes = source == Source::Derived
        && closable
        && schema.contains_key("properties")
        && !schema.contains_key("additionalProperties")
        && !schema.contains_key("unevaluatedProperties")
        && !APPLICATORS.iter().any(|k| schema.contains_key(k));
    if closes {
        schema.insert("additionalProperties", OrderedJson::Bool(false));
    }
    Ok(())
}

/// Says in a derived schema what serde does with the type, where schemars
/// says something else:
///
/// - a set's `uniqueItems`: serde keeps one of repeated items rather than
///   refusing them, so repeats are allowed;
/// - `Duration` and `SystemTime`: serde carries nanoseconds past a second
///   into the seconds and fails when that overflows them, so the
///   nanoseconds are bounded below a second (which the arguments' check
///   then holds to).
fn serde_meaning(schema: &mut OrderedJson) {
    if schema.get("uniqueItems") == Some(&OrderedJson::Bool(true)) {
        schema.remove("uniqueItems");
    }
    // Known by their shape: schemars gives an inlined schema no title.
    let Some(OrderedJson::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    let format = |properties: &[(String, OrderedJson)], name: &str| {
        properties
            .iter()
            .find(|(field, _)| field == name)
            .and_then(|(_, field)| field.get("format"))
            .and_then(OrderedJson::as_str)
            .map(str::to_owned)
    };
    for (secs, nanos) in [("secs", "nanos"), ("secs_since_epoch", "nanos_since_epoch")] {
        let shaped = properties.len() == 2
            && format(properties, secs).as_deref() == Some("uint64")
            && format(properties, nanos).as_deref() == Some("uint32");
        if shaped && let Some((_, field)) = properties.iter_mut().find(|(name, _)| name == nanos) {
            field.insert("maximum", OrderedJson::Number(999_999_999.into()));
        }
    }
}

/// `Option<E>` of a unit enum whose variants have docs, `anyOf: [E, null]`:
/// lifts `E`'s variants into the node, so that it becomes one flat enum
/// (the field's doc first, then the variants') that admits `null`.
fn lift_optional_unit_enum(schema: &mut OrderedJson) -> bool {
    let Some(OrderedJson::Array(branches)) = schema.get("anyOf") else {
        return false;
    };
    let [a, b] = branches.as_slice() else {
        return false;
    };
    let inner = match (is_null_schema(a), is_null_schema(b)) {
        (false, true) => a.clone(),
        (true, false) => b.clone(),
        _ => return false,
    };
    let mut probe = inner.clone();
    flatten_unit_enum(&mut probe);
    let flat_strings = probe.get("type").and_then(OrderedJson::as_str) == Some("string")
        && probe
            .get("enum")
            .and_then(OrderedJson::as_array)
            .is_some_and(|values| values.iter().all(|v| v.as_str().is_some()));
    if !flat_strings || probe.get("oneOf").is_some() || probe.get("anyOf").is_some() {
        return false;
    }
    schema.remove("anyOf");
    for (keyword, value) in inner.as_object().unwrap_or_default() {
        if keyword != "title" && keyword != "$schema" && !schema.contains_key(keyword) {
            schema.insert(keyword.clone(), value.clone());
        }
    }
    true
}

/// Adds `null` to a flat enum's type and values.
fn admit_null(schema: &mut OrderedJson) {
    if let Some(OrderedJson::String(kind)) = schema.get("type").cloned() {
        schema.insert(
            "type",
            OrderedJson::Array(vec![OrderedJson::String(kind), OrderedJson::from("null")]),
        );
    }
    if let Some(OrderedJson::Array(values)) = schema.get_mut("enum")
        && !values.contains(&OrderedJson::Null)
    {
        values.push(OrderedJson::Null);
    }
}

fn not_a_list(path: &str, keyword: &str, value: &OrderedJson) -> SchemaError {
    SchemaError::NotASchema {
        path: child_path(path, keyword),
        found: format!("{} (expected an array of schemas)", kind_of(value)),
    }
}

/// A short description of a JSON value's kind, for messages.
pub(crate) fn kind_of(value: &OrderedJson) -> String {
    match value {
        OrderedJson::Null => "null",
        OrderedJson::Bool(_) => "a boolean schema",
        OrderedJson::Number(_) => "a number",
        OrderedJson::String(_) => "a string",
        OrderedJson::Array(_) => "an array",
        OrderedJson::Object(_) => "an object",
    }
    .to_owned()
}

#[cfg(test)]
#[path = "canonical_tests.rs"]
mod tests;
