//! OpenAI Structured Outputs (`"strict": true`): the subset of JSON Schema
//! the Chat and Responses APIs accept for a strict function.

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::canonical::MAX_JSON_DEPTH;
use super::defs::{RefTarget, parse_ref};
use super::error::{Dialect, LoweringError, LoweringErrorKind as Kind};
use super::keywords::{child_path, fold_into_description, index_path, member_path, order_schema};
use super::limits::check_openai_limits;
use super::ordered_json::OrderedJson;

// The integration test `schema_rules` (strict-mode judge) writes this
// list again on purpose: it judges what lowering emits from OpenAI's
// documentation, not from this list.
/// The `format`s strict mode accepts; any other is rejected with a 400.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Annotations strict mode does not support: they move into the
/// description, so the model still reads them. They constrain nothing.
const FOLDED: &[&str] = &[
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
];

/// Constraints strict mode has no keyword for. Folded into the description
/// they would let the model send values the tool refuses, so a schema
/// with one of them is not strict. (String lengths are the exception: a
/// `pattern` says them, see [`length_pattern`].)
const CONSTRAINTS: &[&str] = &[
    "uniqueItems",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
];

// `openai_strict_tests.rs` lists them again on purpose: a keyword dropped
// from here must fail that test, not silently leave it.
/// Keywords strict mode rejects and whose meaning cannot be kept.
const REJECTED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
];

/// Primitive types that take the `["T", "null"]` form when nullable.
const PRIMITIVES: &[&str] = &["string", "number", "integer", "boolean"];

/// Lowers a canonical schema to OpenAI's strict subset.
///
/// - every property is listed in `required`, in property order; the
///   optional ones become nullable: `"type": ["T", "null"]` for a primitive,
///   else `anyOf: [T, {"type": "null"}]`;
/// - every object gets `additionalProperties: false`; a map (an object
///   whose `additionalProperties` is a schema) is an error;
/// - `oneOf` becomes `anyOf`, `const` a one-value `enum`;
/// - `allOf`, `not`, `if`/`then`/`else`, `dependent*` and tuples are
///   errors;
/// - annotations strict mode does not take (`default`, `examples`, a
///   `format` outside the accepted list, and any keyword JSON Schema does
///   not define, such as `optional` or `x-order`) move into the
///   description as `{default: 3}`: they constrain nothing, and the model
///   still reads them;
/// - a `$ref` with sibling keywords (strict mode ignores or rejects them) is
///   replaced by its definition, once per path: inside that copy, a
///   reference back to the same definition stays a bare `$ref`; an optional
///   reference with only a doc beside it stays a `$ref` too, the doc going
///   on its nullable `anyOf` wrapper;
/// - OpenAI's size limits (5000 properties, 10 levels of objects, 120,000
///   characters of names and values, 1000 enum values, 15,000 characters
///   for an enum of more than 250 strings) are checked.
///
/// The error names the first place that cannot be expressed. Send
/// `"strict": true` only with a schema this returns.
pub fn openai_strict(canonical: &OrderedJson) -> Result<OrderedJson, LoweringError> {
    let error = |path: &str, kind| LoweringError::new(Dialect::OpenAiStrict, path, kind);
    let depth = canonical.depth();
    if depth > MAX_JSON_DEPTH {
        return Err(error(
            "",
            Kind::TooDeep {
                depth,
                limit: MAX_JSON_DEPTH,
            },
        ));
    }
    if canonical.get("type").and_then(OrderedJson::as_str) != Some("object") {
        return Err(error("", Kind::RootNotObject));
    }
    let mut root = canonical.clone();
    let defs: BTreeMap<String, OrderedJson> = match root.remove("$defs") {
        Some(OrderedJson::Object(entries)) => entries.into_iter().collect(),
        Some(_) => {
            return Err(error(
                "$defs",
                Kind::Unsupported {
                    keyword: "$defs".into(),
                },
            ));
        }
        None => BTreeMap::new(),
    };
    let lowering = Lowering {
        root: &root,
        defs: &defs,
        problems: RefCell::new(Vec::new()),
    };
    let lowered = lowering.node(&root, "", &[]);
    let mut lowered = match lowered {
        Ok(lowered) => lowered,
        Err(error) => {
            let mut problems = lowering.problems.into_inner();
            problems.push(error);
            return Err(LoweringError::merge(problems).expect("one problem at least"));
        }
    };
    // Only a root that refers to itself (`"$ref": "#"`) can lower to
    // something other than an object.
    if lowered.get("type").and_then(OrderedJson::as_str) != Some("object") {
        return Err(error("", Kind::RootNotObject));
    }
    if !defs.is_empty() {
        let mut bodies = Vec::with_capacity(defs.len());
        for (name, body) in &defs {
            let path = member_path("", "$defs", name);
            bodies.push((name.clone(), lowering.child(body, &path, &[])));
        }
        lowered.insert("$defs", OrderedJson::Object(bodies));
    }
    if let Some(error) = LoweringError::merge(lowering.problems.into_inner()) {
        return Err(error);
    }
    check_openai_limits(&lowered)?;
    order_schema(&mut lowered);
    Ok(lowered)
}

/// The canonical schema being lowered, for resolving `$ref`s.
struct Lowering<'a> {
    root: &'a OrderedJson,
    defs: &'a BTreeMap<String, OrderedJson>,
    // Every problem found: a sub-schema that fails is recorded and the
    // walk goes on, so that one refusal names them all.
    problems: RefCell<Vec<LoweringError>>,
}

impl Lowering<'_> {
    /// Lowers a sub-schema, recording its problems; a placeholder stands in
    /// for a sub-schema that cannot be lowered.
    fn child(&self, schema: &OrderedJson, path: &str, inlining: &[&str]) -> OrderedJson {
        self.node(schema, path, inlining).unwrap_or_else(|error| {
            self.problems.borrow_mut().push(error);
            OrderedJson::Bool(true)
        })
    }

    fn error(&self, path: &str, kind: Kind) -> LoweringError {
        LoweringError::new(Dialect::OpenAiStrict, path, kind)
    }

    /// Lowers one schema. `inlining` lists the references being inlined
    /// around it, innermost last.
    fn node(
        &self,
        schema: &OrderedJson,
        path: &str,
        inlining: &[&str],
    ) -> Result<OrderedJson, LoweringError> {
        let members = match schema {
            OrderedJson::Object(members) => members,
            OrderedJson::Bool(true) => return Err(self.error(path, Kind::Unconstrained)),
            _ => {
                return Err(self.error(
                    path,
                    Kind::Unsupported {
                        keyword: schema.to_json_string(),
                    },
                ));
            }
        };
        if let Some(reference) = schema.get("$ref") {
            let reference = reference.as_str().unwrap_or_default();
            let body = self.resolve(reference, path)?;
            if members.len() == 1 {
                return Ok(schema.clone());
            }
            // Inside its own inlined body, a recursive reference stays a
            // reference and loses its siblings (annotations such as the
            // field's doc, which the outer copy carries): inlining it again
            // would never end.
            if inlining.contains(&reference) {
                return Ok(OrderedJson::Object(vec![(
                    "$ref".into(),
                    OrderedJson::string(reference),
                )]));
            }
            let mut merged = schema.clone();
            merged.remove("$ref");
            for (keyword, value) in body.as_object().unwrap_or_default() {
                if keyword != "$defs" && !merged.contains_key(keyword) {
                    merged.insert(keyword.clone(), value.clone());
                }
            }
            let inlining = [inlining, &[reference]].concat();
            return self.node(&merged, path, &inlining);
        }
        let constrained = ["type", "enum", "const", "anyOf", "oneOf"]
            .iter()
            .any(|k| schema.contains_key(k));
        if !constrained {
            return Err(self.error(path, Kind::Unconstrained));
        }

        // The walk has the shape of Gemini's (`gemini.rs`): each dialect keeps
        // its own, so that one's rules never leak into the other.
        let mut out = OrderedJson::object();
        let mut folded = Vec::new();
        let mut union = Vec::new();
        for (keyword, value) in members {
            match keyword.as_str() {
                "type" => {
                    check_type(value).map_err(|kind| self.error(path, kind))?;
                    out.insert("type", value.clone());
                }
                "format" if value.as_str().is_some_and(|f| FORMATS.contains(&f)) => {
                    out.insert("format", value.clone());
                }
                "description" | "enum" | "pattern" | "minimum" | "maximum" | "exclusiveMinimum"
                | "exclusiveMaximum" | "multipleOf" | "minItems" | "maxItems" => {
                    out.insert(keyword.clone(), value.clone());
                }
                "const" => {
                    out.insert("enum", OrderedJson::Array(vec![value.clone()]));
                }
                "items" => {
                    let items = self.child(value, &child_path(path, "items"), inlining);
                    out.insert("items", items);
                }
                "properties" => {
                    let properties = self.properties(schema, value, path, inlining)?;
                    out.insert("properties", properties);
                }
                "anyOf" | "oneOf" => {
                    let OrderedJson::Array(branches) = value else {
                        return Err(self.error(
                            path,
                            Kind::Unsupported {
                                keyword: keyword.clone(),
                            },
                        ));
                    };
                    for (index, branch) in branches.iter().enumerate() {
                        let branch_path = index_path(path, keyword, index);
                        union.push(self.child(branch, &branch_path, inlining));
                    }
                }
                "additionalProperties" if *value == OrderedJson::Bool(false) => {}
                "additionalProperties" => {
                    return Err(self.error(path, Kind::FreeFormMap));
                }
                // Implied by the `additionalProperties: false` set below.
                "unevaluatedProperties" if *value == OrderedJson::Bool(false) => {}
                "unevaluatedProperties" => {
                    return Err(self.error(path, Kind::FreeFormMap));
                }
                "required" | "$comment" => {}
                "prefixItems" => return Err(self.error(path, Kind::Tuple)),
                "format" => folded.push((keyword.clone(), value.clone())),
                "minLength" | "maxLength" => {}
                k if FOLDED.contains(&k) => folded.push((keyword.clone(), value.clone())),
                k if CONSTRAINTS.contains(&k) => {
                    return Err(self.error(
                        path,
                        Kind::Constraint {
                            keyword: keyword.clone(),
                        },
                    ));
                }
                k if REJECTED.contains(&k) => {
                    return Err(self.error(
                        path,
                        Kind::Unsupported {
                            keyword: keyword.clone(),
                        },
                    ));
                }
                // Core keywords (`$anchor`, `$dynamicRef`, ...) change what
                // references mean; strict mode takes none of them.
                k if k.starts_with('$') => {
                    return Err(self.error(
                        path,
                        Kind::Unsupported {
                            keyword: keyword.clone(),
                        },
                    ));
                }
                // A keyword JSON Schema does not define (`optional`,
                // `x-order`, an OpenAPI extension) is an annotation: the
                // arguments are not checked against it, so it constrains
                // nothing, and the model still reads it.
                _ => folded.push((keyword.clone(), value.clone())),
            }
        }
        if schema.contains_key("minLength") || schema.contains_key("maxLength") {
            match length_pattern(schema) {
                Some(pattern) if !schema.contains_key("pattern") => {
                    out.insert("pattern", OrderedJson::String(pattern));
                }
                _ => {
                    let keyword = if schema.contains_key("minLength") {
                        "minLength"
                    } else {
                        "maxLength"
                    };
                    return Err(self.error(
                        path,
                        Kind::Constraint {
                            keyword: keyword.into(),
                        },
                    ));
                }
            }
        }
        if !union.is_empty() {
            if out.contains_key("properties") {
                return Err(self.error(path, Kind::UnionBesideProperties));
            }
            out.insert("anyOf", OrderedJson::Array(union));
        }
        if is_object(&out) {
            self.close_object(schema, &mut out, path)?;
        }
        fold_into_description(&mut out, &folded);
        Ok(nullable_as_union(out))
    }

    /// Lowers `properties`, making the non-required ones nullable.
    fn properties(
        &self,
        schema: &OrderedJson,
        properties: &OrderedJson,
        path: &str,
        inlining: &[&str],
    ) -> Result<OrderedJson, LoweringError> {
        let OrderedJson::Object(entries) = properties else {
            return Err(self.error(
                path,
                Kind::Unsupported {
                    keyword: "properties".into(),
                },
            ));
        };
        let required = schema
            .get("required")
            .and_then(OrderedJson::as_array)
            .unwrap_or_default();
        let mut lowered = Vec::with_capacity(entries.len());
        for (name, sub) in entries {
            let sub_path = member_path(path, "properties", name);
            if required.iter().any(|r| r.as_str() == Some(name)) {
                lowered.push((name.clone(), self.child(sub, &sub_path, inlining)));
                continue;
            }
            // An optional reference with only a doc beside it: the doc goes
            // on the nullable wrapper and the reference stays bare, rather
            // than inlining the definition.
            let mut sub = sub.clone();
            let doc = match sub.as_object() {
                Some([(a, _), (b, _)]) if a == "$ref" || b == "$ref" => sub.remove("description"),
                _ => None,
            };
            let mut property = nullable(self.child(&sub, &sub_path, inlining));
            if let Some(doc) = doc {
                property.insert("description", doc);
            }
            lowered.push((name.clone(), property));
        }
        Ok(OrderedJson::Object(lowered))
    }

    /// Every property required, nothing else allowed.
    fn close_object(
        &self,
        schema: &OrderedJson,
        out: &mut OrderedJson,
        path: &str,
    ) -> Result<(), LoweringError> {
        let closed = schema.get("additionalProperties") == Some(&OrderedJson::Bool(false))
            || schema.get("unevaluatedProperties") == Some(&OrderedJson::Bool(false));
        if !out.contains_key("properties") {
            if !closed {
                // `{"type": "object"}` alone: any object at all.
                return Err(self.error(path, Kind::FreeFormMap));
            }
            out.insert("properties", OrderedJson::object());
        }
        let names = out
            .get("properties")
            .and_then(OrderedJson::as_object)
            .unwrap_or_default()
            .iter()
            .map(|(name, _)| OrderedJson::string(name.as_str()))
            .collect();
        out.insert("required", OrderedJson::Array(names));
        out.insert("additionalProperties", OrderedJson::Bool(false));
        Ok(())
    }

    /// The schema a `$ref` points to.
    fn resolve(&self, reference: &str, path: &str) -> Result<&OrderedJson, LoweringError> {
        let body = match parse_ref(reference) {
            Some(RefTarget::Root) => Some(self.root),
            Some(RefTarget::Def(name)) => self.defs.get(&name),
            None => None,
        };
        body.ok_or_else(|| {
            self.error(
                path,
                Kind::MissingDefinition {
                    reference: reference.to_owned(),
                },
            )
        })
    }
}

/// A string's length bounds as the `pattern` strict mode takes:
/// `^[\s\S]{1,1}$` for a `char`. `None` when a bound is not a count.
fn length_pattern(schema: &OrderedJson) -> Option<String> {
    let count = |keyword: &str| -> Option<Option<u64>> {
        match schema.get(keyword) {
            None => Some(None),
            Some(OrderedJson::Number(number)) => number.as_u64().map(Some),
            Some(_) => None,
        }
    };
    let (min, max) = (count("minLength")?, count("maxLength")?);
    let min = min.unwrap_or(0);
    Some(match max {
        Some(max) if max == min => format!("^[\\s\\S]{{{min}}}$"),
        Some(max) => format!("^[\\s\\S]{{{min},{max}}}$"),
        None => format!("^[\\s\\S]{{{min},}}$"),
    })
}

/// Checks a `type`: one type, or one type and `null`.
fn check_type(value: &OrderedJson) -> Result<(), Kind> {
    let OrderedJson::Array(types) = value else {
        return Ok(());
    };
    let named: Vec<String> = types
        .iter()
        .filter(|kind| kind.as_str() != Some("null"))
        .map(|kind| {
            kind.as_str()
                .map_or_else(|| kind.to_json_string(), str::to_owned)
        })
        .collect();
    if named.len() > 1 {
        return Err(Kind::TypeUnion { types: named });
    }
    Ok(())
}

fn is_object(schema: &OrderedJson) -> bool {
    match schema.get("type") {
        Some(OrderedJson::String(kind)) => kind == "object",
        Some(OrderedJson::Array(kinds)) => kinds.iter().any(|k| k.as_str() == Some("object")),
        _ => schema.contains_key("properties"),
    }
}

/// Admits `null` too: strict mode's way of saying "optional", since every
/// property must be present.
pub(crate) fn nullable(mut schema: OrderedJson) -> OrderedJson {
    if admits_null(&schema) {
        return schema;
    }
    let primitive = match schema.get("type") {
        Some(OrderedJson::String(kind)) => PRIMITIVES.contains(&kind.as_str()),
        _ => false,
    };
    if primitive && !schema.contains_key("anyOf") {
        if let Some(OrderedJson::String(kind)) = schema.get("type") {
            let kinds = vec![
                OrderedJson::string(kind.as_str()),
                OrderedJson::from("null"),
            ];
            schema.insert("type", OrderedJson::Array(kinds));
        }
        // An `enum` is checked on its own: it must list `null` as well.
        if let Some(OrderedJson::Array(values)) = schema.get_mut("enum")
            && !values.contains(&OrderedJson::Null)
        {
            values.push(OrderedJson::Null);
        }
        return schema;
    }
    let null = OrderedJson::Object(vec![("type".into(), OrderedJson::from("null"))]);
    // A bare union (plus its description) takes `null` as one more branch.
    let bare_union = schema
        .as_object()
        .is_some_and(|m| m.iter().all(|(k, _)| k == "anyOf" || k == "description"));
    if bare_union && let Some(OrderedJson::Array(branches)) = schema.get_mut("anyOf") {
        branches.push(null);
        return schema;
    }
    // The description moves to the wrapper, where a reader looks for it;
    // it also leaves a `$ref` bare, which strict mode needs.
    let description = schema.remove("description");
    let mut wrapper = OrderedJson::object();
    if let Some(description) = description {
        wrapper.insert("description", description);
    }
    wrapper.insert("anyOf", OrderedJson::Array(vec![schema, null]));
    wrapper
}

/// `"type": ["object", "null"]` (an `Option` of a struct) as strict mode
/// takes a nullable object or array: `anyOf` with a `null` branch, the
/// description on the wrapper. Primitives keep the `["T", "null"]` form.
fn nullable_as_union(mut schema: OrderedJson) -> OrderedJson {
    let Some(OrderedJson::Array(kinds)) = schema.get("type") else {
        return schema;
    };
    let named: Vec<OrderedJson> = kinds
        .iter()
        .filter(|kind| kind.as_str() != Some("null"))
        .cloned()
        .collect();
    let composite = match named.as_slice() {
        [kind] if kinds.len() == 2 => !PRIMITIVES.contains(&kind.as_str().unwrap_or_default()),
        _ => false,
    };
    if !composite {
        return schema;
    }
    schema.insert("type", named[0].clone());
    let description = schema.remove("description");
    let mut wrapper = OrderedJson::object();
    if let Some(description) = description {
        wrapper.insert("description", description);
    }
    let null = OrderedJson::Object(vec![("type".into(), OrderedJson::from("null"))]);
    wrapper.insert("anyOf", OrderedJson::Array(vec![schema, null]));
    wrapper
}

/// Whether a lowered schema already admits `null`: a `type` naming it, or
/// a union with a `null` branch.
fn admits_null(schema: &OrderedJson) -> bool {
    let type_admits = match schema.get("type") {
        Some(OrderedJson::String(kind)) => kind == "null",
        Some(OrderedJson::Array(kinds)) => kinds.iter().any(|k| k.as_str() == Some("null")),
        None => false,
        _ => false,
    };
    let enum_refuses = schema
        .get("enum")
        .and_then(OrderedJson::as_array)
        .is_some_and(|values| !values.contains(&OrderedJson::Null));
    if schema.contains_key("type") {
        return type_admits && !enum_refuses;
    }
    schema
        .get("anyOf")
        .and_then(OrderedJson::as_array)
        .is_some_and(|branches| branches.iter().any(admits_null))
}

#[cfg(test)]
#[path = "openai_strict_tests.rs"]
mod tests;
