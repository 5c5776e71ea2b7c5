//! Gemini's `parameters`: an OpenAPI 3.0 subset held in a protocol buffer,
//! so any key it does not know is a 400.

use std::cell::RefCell;

use super::canonical::MAX_JSON_DEPTH;
use super::error::{Dialect, LoweringError, LoweringErrorKind as Kind};
use super::keywords::{child_path, fold_into_description, index_path, member_path, order_schema};
use super::nulls::strip_null;
use super::ordered_json::OrderedJson;

// The Gemini judge (`toolkit-tests`, `judges/gemini_schema.rs`) lists
// these again from Google's documentation, on purpose: it must not read
// the code it judges.
/// Keywords `parameters` accepts and that are copied as they are. `format`,
/// `enum`, `anyOf`, `type`, `items` and `properties` are rewritten on the
/// way.
const COPIED: &[&str] = &[
    "description",
    "nullable",
    "title",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "required",
    "minProperties",
    "maxProperties",
    "default",
];

/// Constraints `parameters` has no keyword for: put in words, they would let
/// the model send values the tool refuses.
const CONSTRAINTS: &[&str] = &[
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "patternProperties",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
];

/// Keywords whose meaning is lost if dropped and cannot be put in words.
const REJECTED: &[&str] = &["allOf", "not", "if", "then", "else", "dependentSchemas"];

/// Lowers a canonical schema to Gemini's `parameters` dialect.
///
/// - one `type` per schema: `["T", "null"]` becomes `"type": "T",
///   "nullable": true`, and optional properties get `nullable: true`;
/// - `const` becomes a one-value `enum`; string enums get
///   `"format": "enum"`; non-string enums and `const`s move into the
///   description;
/// - `oneOf` becomes `anyOf`, and `anyOf` is left alone on its node, as the
///   API requires: the node's description (and nullability) move into each
///   branch;
/// - objects get `propertyOrdering`, the order Gemini generates them in;
///   `additionalProperties: false` is dropped (it is unknown there);
/// - `exclusiveMinimum`, `multipleOf`, `uniqueItems`, string `format`s
///   other than `date-time` and other unknown keywords move into the
///   description as `{exclusiveMinimum: 0}`;
/// - recursive types (`$ref`) are an error, not cut at some depth: a cut
///   would silently refuse valid deep arguments. Send such a tool with
///   `parametersJsonSchema` (the canonical schema) instead. Maps, tuples,
///   `serde_json::Value` and unions beside properties are errors too.
pub fn gemini(canonical: &OrderedJson) -> Result<OrderedJson, LoweringError> {
    let depth = canonical.depth();
    if depth > MAX_JSON_DEPTH {
        let kind = Kind::TooDeep {
            depth,
            limit: MAX_JSON_DEPTH,
        };
        return Err(LoweringError::new(Dialect::Gemini, "", kind));
    }
    if canonical.get("type").and_then(OrderedJson::as_str) != Some("object") {
        return Err(LoweringError::new(Dialect::Gemini, "", Kind::RootNotObject));
    }
    let sink = Sink::default();
    let lowered = node(canonical, "", false, &sink);
    let mut problems = sink.into_inner();
    let mut lowered = match lowered {
        Ok(lowered) if problems.is_empty() => lowered,
        Ok(_) => return Err(LoweringError::merge(problems).expect("one problem at least")),
        Err(error) => {
            problems.push(error);
            return Err(LoweringError::merge(problems).expect("one problem at least"));
        }
    };
    order_schema(&mut lowered);
    Ok(lowered)
}

/// Every problem found: a sub-schema that fails is recorded and the walk
/// goes on, so that one refusal names them all.
type Sink = RefCell<Vec<LoweringError>>;

/// Lowers a sub-schema, recording its problems.
fn child(schema: &OrderedJson, path: &str, nullable: bool, sink: &Sink) -> OrderedJson {
    node(schema, path, nullable, sink).unwrap_or_else(|error| {
        sink.borrow_mut().push(error);
        OrderedJson::Bool(true)
    })
}

/// Whether Gemini takes `name` as a property name: its parameter names'
/// alphabet, which the API applies to nested properties too.
pub(crate) fn is_gemini_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
}

fn error(path: &str, kind: Kind) -> LoweringError {
    LoweringError::new(Dialect::Gemini, path, kind)
}

fn unsupported(path: &str, keyword: &str) -> LoweringError {
    error(
        path,
        Kind::Unsupported {
            keyword: keyword.to_owned(),
        },
    )
}

/// Lowers one schema; `nullable` when it is an optional property's.
fn node(
    schema: &OrderedJson,
    path: &str,
    nullable: bool,
    sink: &Sink,
) -> Result<OrderedJson, LoweringError> {
    match schema {
        OrderedJson::Object(members) if !members.is_empty() => {}
        OrderedJson::Object(_) | OrderedJson::Bool(true) => {
            return Err(error(path, Kind::Unconstrained));
        }
        _ => return Err(unsupported(path, &schema.to_json_string())),
    }
    // `Option<T>`'s `null`, as a type, an enum value or a union branch, is
    // Gemini's `nullable`.
    let mut stripped = schema.clone();
    strip_null(&mut stripped);
    let nullable = nullable || stripped != *schema;
    let OrderedJson::Object(members) = &stripped else {
        return Err(unsupported(path, &schema.to_json_string()));
    };
    let schema = &stripped;
    // The walk has the shape of strict mode's (`openai_strict.rs`): each
    // dialect keeps its own, so that one's rules never leak into the other.
    let mut out = OrderedJson::object();
    let mut folded = Vec::new();
    let mut union = Vec::new();
    for (keyword, value) in members {
        match keyword.as_str() {
            "type" => {
                let (kind, with_null) = single_type(value).map_err(|kind| error(path, kind))?;
                out.insert("type", OrderedJson::String(kind));
                if with_null {
                    out.insert("nullable", OrderedJson::Bool(true));
                }
            }
            "enum"
                if value
                    .as_array()
                    .is_some_and(|v| v.iter().all(|x| x.as_str().is_some())) =>
            {
                out.insert("enum", value.clone());
            }
            "const" if value.as_str().is_some() => {
                out.insert("enum", OrderedJson::Array(vec![value.clone()]));
            }
            // Gemini's `enum` holds strings only: in words, any other would
            // let through values the tool refuses.
            "enum" | "const" => {
                return Err(error(
                    path,
                    Kind::Constraint {
                        keyword: keyword.clone(),
                    },
                ));
            }
            "format" if value.as_str() == Some("date-time") => {
                out.insert("format", value.clone());
            }
            "examples" => {
                if let Some(first) = value.as_array().and_then(<[OrderedJson]>::first) {
                    out.insert("example", first.clone());
                }
            }
            "items" => {
                let items = child(value, &child_path(path, "items"), false, sink);
                out.insert("items", items);
            }
            "properties" => {
                let properties = properties(schema, value, path, sink)?;
                out.insert("properties", properties);
            }
            "anyOf" | "oneOf" => {
                let OrderedJson::Array(branches) = value else {
                    return Err(unsupported(path, keyword));
                };
                for (index, branch) in branches.iter().enumerate() {
                    union.push(child(
                        branch,
                        &index_path(path, keyword, index),
                        false,
                        sink,
                    ));
                }
            }
            "$ref" => {
                let reference = value.as_str().unwrap_or_default().to_owned();
                return Err(error(path, Kind::Recursive { reference }));
            }
            "additionalProperties" | "unevaluatedProperties"
                if *value == OrderedJson::Bool(false) => {}
            "additionalProperties" | "unevaluatedProperties" => {
                return Err(error(path, Kind::FreeFormMap));
            }
            "prefixItems" => return Err(error(path, Kind::Tuple)),
            // Only reachable alongside a `$ref`, which is rejected above.
            "$defs" | "$comment" => {}
            k if COPIED.contains(&k) => {
                out.insert(keyword.clone(), value.clone());
            }
            k if REJECTED.contains(&k) => return Err(unsupported(path, keyword)),
            k if CONSTRAINTS.contains(&k) => {
                return Err(error(
                    path,
                    Kind::Constraint {
                        keyword: keyword.clone(),
                    },
                ));
            }
            _ => folded.push((keyword.clone(), value.clone())),
        }
    }
    if nullable {
        out.insert("nullable", OrderedJson::Bool(true));
    }
    if out.get("enum").is_some() && !out.contains_key("format") {
        out.insert("format", OrderedJson::from("enum"));
    }
    if let Some(OrderedJson::Object(entries)) = out.get("properties") {
        let order = entries
            .iter()
            .map(|(name, _)| OrderedJson::string(name.as_str()))
            .collect();
        out.insert("propertyOrdering", OrderedJson::Array(order));
    }
    fold_into_description(&mut out, &folded);
    if union.is_empty() {
        // A description alone (a documented `serde_json::Value`) says
        // nothing Gemini can use: it rejects a schema without a type.
        if !out.contains_key("type") {
            return Err(error(path, Kind::Unconstrained));
        }
        return Ok(out);
    }
    if out.contains_key("properties") {
        return Err(error(path, Kind::UnionBesideProperties));
    }
    Ok(alone_with_union(out, union))
}

/// Lowers `properties`, marking the non-required ones nullable.
fn properties(
    schema: &OrderedJson,
    properties: &OrderedJson,
    path: &str,
    sink: &Sink,
) -> Result<OrderedJson, LoweringError> {
    let OrderedJson::Object(entries) = properties else {
        return Err(unsupported(path, "properties"));
    };
    let required = schema
        .get("required")
        .and_then(OrderedJson::as_array)
        .unwrap_or_default();
    let mut lowered = Vec::with_capacity(entries.len());
    for (name, sub) in entries {
        let optional = !required.iter().any(|r| r.as_str() == Some(name));
        let sub_path = member_path(path, "properties", name);
        if !is_gemini_name(name) {
            let kind = Kind::PropertyName { name: name.clone() };
            sink.borrow_mut().push(error(&sub_path, kind));
        }
        lowered.push((name.clone(), child(sub, &sub_path, optional, sink)));
    }
    Ok(OrderedJson::Object(lowered))
}

/// The one type Gemini takes, and whether `null` was also allowed.
fn single_type(value: &OrderedJson) -> Result<(String, bool), Kind> {
    match value {
        OrderedJson::String(kind) => Ok((kind.clone(), false)),
        OrderedJson::Array(kinds) => {
            let with_null = kinds.iter().any(|k| k.as_str() == Some("null"));
            let named: Vec<String> = kinds
                .iter()
                .filter(|k| k.as_str() != Some("null"))
                .map(|k| k.as_str().map_or_else(|| k.to_json_string(), str::to_owned))
                .collect();
            match named.as_slice() {
                [] if with_null => Ok(("null".into(), false)),
                [single] => Ok((single.clone(), with_null)),
                _ => Err(Kind::TypeUnion { types: named }),
            }
        }
        other => Err(Kind::TypeUnion {
            types: vec![other.to_json_string()],
        }),
    }
}

/// Gemini rejects any field beside `anyOf`: "When using any_of, it must be
/// the only field set". A single branch is merged into the node instead;
/// otherwise the node's description and `nullable` go into every branch
/// (the model reads whichever branch it picks), and any other key has
/// already been folded into that description.
fn alone_with_union(node: OrderedJson, mut union: Vec<OrderedJson>) -> OrderedJson {
    let OrderedJson::Object(members) = node else {
        return node;
    };
    if let [_] = union.as_slice()
        && let Some(OrderedJson::Object(branch)) = union.pop()
    {
        let mut merged = OrderedJson::Object(members);
        // The node's own keys (a field's doc) win over the branch's.
        for (keyword, value) in branch {
            if !merged.contains_key(&keyword) {
                merged.insert(keyword, value);
            }
        }
        return merged;
    }
    let description = members
        .iter()
        .find(|(k, _)| k == "description")
        .and_then(|(_, v)| v.as_str());
    let nullable = members
        .iter()
        .any(|(k, v)| k == "nullable" && *v == OrderedJson::Bool(true));
    for branch in &mut union {
        annotate(branch, description, nullable);
    }
    OrderedJson::Object(vec![("anyOf".into(), OrderedJson::Array(union))])
}

/// Adds the union's description before the branch's own, and `nullable`;
/// a branch that is itself a bare union passes both down.
fn annotate(branch: &mut OrderedJson, description: Option<&str>, nullable: bool) {
    if let Some(OrderedJson::Array(inner)) = branch.get_mut("anyOf") {
        for sub in inner {
            annotate(sub, description, nullable);
        }
        return;
    }
    if let Some(intro) = description {
        let text = match branch.get("description").and_then(OrderedJson::as_str) {
            Some(own) if !own.is_empty() => format!("{intro}\n\n{own}"),
            _ => intro.to_owned(),
        };
        branch.insert("description", OrderedJson::String(text));
    }
    if nullable {
        branch.insert("nullable", OrderedJson::Bool(true));
    }
}

#[cfg(test)]
#[path = "gemini_tests.rs"]
mod tests;
