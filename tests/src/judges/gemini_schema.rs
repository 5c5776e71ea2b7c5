//! Judge for a Gemini function declaration's `parameters`: the OpenAPI 3.0
//! subset that Gemini's API parses into its `Schema` proto, where any other
//! key is a 400.
//!
//! Sources: the `Schema` reference of the Gemini API
//! (<https://ai.google.dev/api/caching#Schema>: the fields, `nullable`,
//! `format: "enum"` for string enums, `propertyOrdering`) and the
//! function-calling guide.

use serde_json::{Value, json};

use super::walk_schemas;

/// What breaks Gemini's `parameters` rules, one line per problem: a key
/// its proto does not know, a type that is not one name, `anyOf` beside
/// other keys, an enum not of strings or without `format: enum`, an
/// incomplete `propertyOrdering`.
pub fn problems(schema: &Value) -> Vec<String> {
    // From Google's documentation, apart from toolkit-core's list of copied
    // keywords on purpose: the judge does not read the code it judges.
    const ALLOWED: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "items",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "anyOf",
        "propertyOrdering",
        "default",
        "example",
    ];
    const TYPES: &[&str] = &[
        "string", "number", "integer", "boolean", "array", "object", "null",
    ];
    let mut problems = Vec::new();
    if !schema.is_object() {
        problems.push(format!("the root is not a schema object: {schema}"));
    }
    walk_schemas(schema, "", &mut |path, members| {
        // `walk_schemas` visits objects only: a sub-schema that is not one
        // (`true`, a string) is caught here, at its parent.
        let children = members
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|properties| properties.values())
            .chain(members.get("items"))
            .chain(
                members
                    .get("anyOf")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            );
        for child in children {
            if !child.is_object() {
                problems.push(format!("{path}: sub-schema {child} is not an object"));
            }
        }
        for keyword in members.keys() {
            if !ALLOWED.contains(&keyword.as_str()) {
                problems.push(format!("{path}: keyword {keyword}"));
            }
        }
        match members.get("type") {
            Some(Value::String(kind)) if TYPES.contains(&kind.as_str()) => {}
            None if members.contains_key("anyOf") => {}
            other => problems.push(format!("{path}: type {other:?}")),
        }
        if members.contains_key("anyOf") && members.len() > 1 {
            problems.push(format!("{path}: anyOf is not alone"));
        }
        if let Some(values) = members.get("enum") {
            if members.get("format") != Some(&json!("enum")) {
                problems.push(format!("{path}: enum without format enum"));
            }
            if !values
                .as_array()
                .is_some_and(|v| v.iter().all(Value::is_string))
            {
                problems.push(format!("{path}: enum of other than strings"));
            }
        }
        if let Some(Value::Object(properties)) = members.get("properties") {
            let names: Vec<Value> = properties.keys().map(|k| json!(k)).collect();
            let ordering = members.get("propertyOrdering").and_then(Value::as_array);
            if ordering
                .is_none_or(|o| o.len() != names.len() || names.iter().any(|n| !o.contains(n)))
            {
                problems.push(format!(
                    "{path}: propertyOrdering {ordering:?} vs {names:?}"
                ));
            }
        }
    });
    problems
}

/// What breaks Gemini's `parametersJsonSchema` rules, one line per problem:
/// a root that is not an object schema, a `$ref` with keywords beside it
/// other than `$`-prefixed ones, a parameter (root property) whose name is
/// not `^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`.
///
/// Source: the `FunctionDeclaration.parametersJsonSchema` reference of the
/// Gemini API (<https://ai.google.dev/api/caching#FunctionDeclaration>).
pub fn json_schema_problems(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if schema.get("type") != Some(&json!("object")) {
        problems.push(format!("the root is not an object schema: {schema}"));
    }
    let names = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|properties| properties.keys());
    for name in names {
        let mut chars = name.chars();
        let valid = name.len() <= 64
            && chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            problems.push(format!("the parameter name {name:?}"));
        }
    }
    walk_schemas(schema, "", &mut |path, members| {
        if members.contains_key("$ref") {
            for keyword in members.keys().filter(|k| !k.starts_with('$')) {
                problems.push(format!("{path}: {keyword} beside $ref"));
            }
        }
    });
    problems
}
