//! Checking a run-time tool's arguments against its JSON Schema.
//!
//! A small validator of the keywords tool schemas use: `type`, `enum`,
//! `const`, `properties`, `required`, `additionalProperties`,
//! `patternProperties`-free objects, `items`, `prefixItems`, the
//! numeric, length and size bounds, `uniqueItems`, `allOf`, `anyOf`,
//! `oneOf`, `not`, and `$ref` within the schema (`#`, `#/$defs/…`,
//! `#/definitions/…`). `pattern` and `format` are not checked (they would
//! need a regular-expression engine in every build): the tool sees such
//! values as sent. The checks are bounded: at most [`MAX_VIOLATIONS`]
//! reported, and `$ref` chains at most [`MAX_DEPTH`] deep.

use std::fmt;

use std::cmp::Ordering;

use serde_json::{Map, Value};

use crate::CallError;
use crate::number;

/// The most violations reported for one call.
pub(crate) const MAX_VIOLATIONS: usize = 10;

/// The deepest the checker follows schemas (through `$ref` and nesting).
pub(crate) const MAX_DEPTH: usize = 128;

/// One way the arguments break the schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Violation {
    /// The argument's path, `attendees[0].email`; empty for the whole.
    pub(crate) path: String,
    pub(crate) message: String,
}

impl Violation {
    pub(crate) fn path(&self) -> Option<String> {
        (!self.path.is_empty()).then(|| self.path.clone())
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "at `{}`: {}", self.path, self.message)
        }
    }
}

/// Every violation of `schema` by `value`, at most [`MAX_VIOLATIONS`].
pub(crate) fn check(schema: &Value, value: &Value) -> Vec<Violation> {
    let mut checker = Checker {
        root: schema,
        violations: Vec::new(),
    };
    checker.check(schema, value, &mut String::new(), 0);
    finish(checker.violations)
}

/// Whether `value` keeps `schema`, a part of the schema `root`.
pub(crate) fn admits(root: &Value, schema: &Value, value: &Value) -> bool {
    let mut checker = Checker {
        root,
        violations: Vec::new(),
    };
    checker.check(schema, value, &mut String::new(), 0);
    checker.violations.is_empty()
}

/// The schema a `$ref` inside `root` points to.
pub(crate) fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    if reference == "#" {
        return Some(root);
    }
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

fn finish(mut violations: Vec<Violation>) -> Vec<Violation> {
    // In path order: the order of an object's fields depends on serde_json's
    // features, and the message must not.
    violations.sort_by(|a, b| a.path.cmp(&b.path));
    violations
}

/// One error for every violation: the first's path, and all of them in
/// the message when there are several; `None` when there are none.
pub(crate) fn to_error(tool: &str, violations: Vec<Violation>) -> Option<CallError> {
    let invalid = |path: Option<String>, message: String| CallError::InvalidArguments {
        tool: tool.to_owned(),
        path,
        message,
    };
    match violations.as_slice() {
        [] => None,
        [one] => Some(invalid(one.path(), one.message.clone())),
        many => {
            let listed: Vec<String> = many.iter().map(Violation::to_string).collect();
            Some(invalid(
                None,
                format!("{} problems: {}", many.len(), listed.join("; ")),
            ))
        }
    }
}

/// The deepest a call's arguments may nest, counting the arguments object
/// itself and every array and object inside it.
///
/// It is what serde_json's parser allows in JSON text (it refuses the
/// 128th level), so arguments sent as text and arguments a host built as a
/// `serde_json::Value` are accepted and refused at exactly the same depth,
/// with the same message. Every walk of the arguments (checking them,
/// reading them into the tool's types, copying them for a run-time tool)
/// recurses once per level: bounded, none of them can exhaust a thread's
/// stack.
pub const MAX_ARGUMENT_DEPTH: usize = 127;

/// The refusal of arguments nested past [`MAX_ARGUMENT_DEPTH`], in either
/// form.
pub(crate) fn too_deep_message() -> String {
    format!(
        "the arguments nest more than {MAX_ARGUMENT_DEPTH} levels deep, more than JSON text may"
    )
}

/// Whether `value` nests arrays and objects more than `limit` levels deep.
/// Recurses at most `limit` levels, whatever the value's depth.
pub(crate) fn nests_deeper_than(value: &Value, limit: usize) -> bool {
    match value {
        Value::Array(items) => limit == 0 || items.iter().any(|v| nests_deeper_than(v, limit - 1)),
        Value::Object(map) => limit == 0 || map.values().any(|v| nests_deeper_than(v, limit - 1)),
        _ => false,
    }
}

/// A value, briefly, for messages: its JSON cut to 40 characters.
pub(crate) fn describe(value: &Value) -> String {
    // Writing a value out recurses once per level of it.
    if nests_deeper_than(value, MAX_ARGUMENT_DEPTH) {
        return format!("a value nested more than {MAX_ARGUMENT_DEPTH} levels deep");
    }
    crate::text::cut_string(value.to_string(), 40)
}

/// Whether a number keeps a bound, from how it compares with it.
type Holds = fn(Ordering) -> bool;

struct Checker<'s> {
    root: &'s Value,
    violations: Vec<Violation>,
}

impl<'s> Checker<'s> {
    fn report(&mut self, path: &str, message: String) {
        if self.violations.len() < MAX_VIOLATIONS {
            self.violations.push(Violation {
                path: path.to_owned(),
                message,
            });
        }
    }

    fn full(&self) -> bool {
        self.violations.len() >= MAX_VIOLATIONS
    }

    fn check(&mut self, schema: &'s Value, value: &Value, path: &mut String, depth: usize) {
        if self.full() {
            return;
        }
        if depth > MAX_DEPTH {
            self.report(path, "the schema nests too deeply to check".to_owned());
            return;
        }
        let schema = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                self.report(path, "no value is allowed here".to_owned());
                return;
            }
            Value::Object(schema) => schema,
            // Not a schema: nothing is known, so nothing is refused.
            _ => return,
        };
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            match self.resolve(reference) {
                Some(target) => self.check(target, value, path, depth + 1),
                None => self.report(
                    path,
                    format!("the schema refers to `{reference}`, which it does not define"),
                ),
            }
        }
        if !self.type_matches(schema, value, path) {
            // Everything else would only repeat the type mismatch.
            return;
        }
        self.check_values(schema, value, path);
        match value {
            Value::Object(object) => self.check_object(schema, object, path, depth),
            Value::Array(items) => self.check_array(schema, items, path, depth),
            Value::String(text) => self.check_string(schema, text, path),
            Value::Number(_) => self.check_number(schema, value, path),
            _ => {}
        }
        self.check_combinators(schema, value, path, depth);
    }

    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        resolve(self.root, reference)
    }

    fn type_matches(&mut self, schema: &Map<String, Value>, value: &Value, path: &str) -> bool {
        let matches = match schema.get("type") {
            Some(Value::String(kind)) => is_type(value, kind),
            Some(Value::Array(kinds)) => kinds
                .iter()
                .filter_map(Value::as_str)
                .any(|kind| is_type(value, kind)),
            _ => return true,
        };
        if matches {
            return true;
        }
        self.report(
            path,
            format!("expected {}, got {}", expected(schema), describe(value)),
        );
        false
    }

    fn check_values(&mut self, schema: &Map<String, Value>, value: &Value, path: &str) {
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && !allowed.iter().any(|candidate| json_equal(candidate, value))
        {
            let listed: Vec<String> = allowed.iter().take(20).map(Value::to_string).collect();
            let more = if allowed.len() > 20 { ", …" } else { "" };
            self.report(
                path,
                format!(
                    "expected one of {}{more}, got {}",
                    listed.join(", "),
                    describe(value)
                ),
            );
        }
        if let Some(expected) = schema.get("const")
            && !json_equal(expected, value)
        {
            self.report(
                path,
                format!("expected {}, got {}", describe(expected), describe(value)),
            );
        }
    }

    fn check_object(
        &mut self,
        schema: &'s Map<String, Value>,
        object: &Map<String, Value>,
        path: &mut String,
        depth: usize,
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    let at = child(path, name);
                    let wanted = properties
                        .and_then(|properties| properties.get(name))
                        .and_then(Value::as_object)
                        .map(expected)
                        .filter(|wanted| !wanted.is_empty());
                    let message = match wanted {
                        Some(wanted) => format!("missing required field: expected {wanted}"),
                        None => "missing required field".to_owned(),
                    };
                    self.report(&at, message);
                }
            }
        }
        for (key, field) in object {
            let length = path.len();
            push_key(path, key);
            match properties.and_then(|properties| properties.get(key)) {
                Some(field_schema) => self.check(field_schema, field, path, depth + 1),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        // Sorted: a `Map`'s order depends on serde_json's
                        // features, and the message must not.
                        let mut known: Vec<&str> = properties
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        known.sort_unstable();
                        let message = if known.is_empty() {
                            "unknown field: no fields are allowed here".to_owned()
                        } else {
                            format!("unknown field; expected one of `{}`", known.join("`, `"))
                        };
                        self.report(path, message);
                    }
                    Some(extra @ Value::Object(_)) => self.check(extra, field, path, depth + 1),
                    _ => {}
                },
            }
            path.truncate(length);
        }
        if schema.get("unevaluatedProperties") == Some(&Value::Bool(false)) {
            let mut known = Vec::new();
            self.evaluated(schema, &Value::Object(object.clone()), &mut known, depth);
            for key in object.keys() {
                if !known.iter().any(|name| name == key) {
                    let at = child(path, key);
                    known.sort_unstable();
                    known.dedup();
                    let message =
                        format!("unknown field; expected one of `{}`", known.join("`, `"));
                    self.report(&at, message);
                }
            }
        }
        let count = object.len();
        if let Some(min) = bound(schema, "minProperties")
            && (count as f64) < min
        {
            self.report(path, format!("expected at least {min} fields, got {count}"));
        }
        if let Some(max) = bound(schema, "maxProperties")
            && (count as f64) > max
        {
            self.report(path, format!("expected at most {max} fields, got {count}"));
        }
    }

    /// The property names `schema` evaluates for `value`: its own, those
    /// of the branches of `allOf`, and of the `anyOf`/`oneOf` branches the
    /// value keeps (what `unevaluatedProperties` looks at).
    fn evaluated(
        &self,
        schema: &'s Map<String, Value>,
        value: &Value,
        known: &mut Vec<String>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(Value::Object(properties)) = schema.get("properties") {
            known.extend(properties.keys().cloned());
        }
        if let Some(target) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| self.resolve(reference))
            .and_then(Value::as_object)
        {
            self.evaluated(target, value, known, depth + 1);
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            let Some(Value::Array(branches)) = schema.get(keyword) else {
                continue;
            };
            for branch in branches {
                let Some(members) = branch.as_object() else {
                    continue;
                };
                if keyword == "allOf" || admits(self.root, branch, value) {
                    self.evaluated(members, value, known, depth + 1);
                }
            }
        }
    }

    fn check_array(
        &mut self,
        schema: &'s Map<String, Value>,
        items: &[Value],
        path: &mut String,
        depth: usize,
    ) {
        let prefix = schema
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for (index, item) in items.iter().enumerate() {
            let item_schema = match prefix.get(index) {
                Some(schema) => Some(schema),
                None => schema.get("items"),
            };
            if let Some(item_schema) = item_schema {
                let length = path.len();
                path.push_str(&format!("[{index}]"));
                self.check(item_schema, item, path, depth + 1);
                path.truncate(length);
            }
        }
        let count = items.len();
        if let Some(min) = bound(schema, "minItems")
            && (count as f64) < min
        {
            self.report(path, format!("expected at least {min} items, got {count}"));
        }
        if let Some(max) = bound(schema, "maxItems")
            && (count as f64) > max
        {
            self.report(path, format!("expected at most {max} items, got {count}"));
        }
        if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            let repeated = items
                .iter()
                .enumerate()
                .any(|(i, a)| items[..i].iter().any(|b| json_equal(a, b)));
            if repeated {
                self.report(path, "expected every item to be different".to_owned());
            }
        }
    }

    fn check_string(&mut self, schema: &Map<String, Value>, text: &str, path: &str) {
        let count = text.chars().count();
        if let Some(min) = bound(schema, "minLength")
            && (count as f64) < min
        {
            self.report(
                path,
                format!("expected at least {min} characters, got {count}"),
            );
        }
        if let Some(max) = bound(schema, "maxLength")
            && (count as f64) > max
        {
            self.report(
                path,
                format!("expected at most {max} characters, got {count}"),
            );
        }
    }

    fn check_number(&mut self, schema: &Map<String, Value>, value: &Value, path: &str) {
        let Value::Number(number) = value else {
            return;
        };
        let checks: [(&str, Holds, &str); 4] = [
            ("minimum", Ordering::is_ge, "at least"),
            ("maximum", Ordering::is_le, "at most"),
            ("exclusiveMinimum", Ordering::is_gt, "more than"),
            ("exclusiveMaximum", Ordering::is_lt, "less than"),
        ];
        for (keyword, holds, words) in checks {
            if let Some(Value::Number(limit)) = schema.get(keyword)
                && !holds(number::compare(number, limit))
            {
                self.report(
                    path,
                    format!(
                        "expected {words} {}, got {}",
                        number::show(limit),
                        number::show(number)
                    ),
                );
            }
        }
        if let (Some(step), Some(float)) = (bound(schema, "multipleOf"), number.as_f64()) {
            let ratio = float / step;
            if step > 0.0 && (ratio - ratio.round()).abs() > 1e-9 {
                self.report(path, format!("expected a multiple of {step}, got {value}"));
            }
        }
    }

    fn check_combinators(
        &mut self,
        schema: &'s Map<String, Value>,
        value: &Value,
        path: &mut String,
        depth: usize,
    ) {
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for part in all {
                self.check(part, value, path, depth + 1);
            }
        }
        let root = self.root;
        let trial = |schema: &'s Value, path: &str| {
            let mut trial = Checker {
                root,
                violations: Vec::new(),
            };
            trial.check(schema, value, &mut path.to_owned(), depth + 1);
            trial.violations
        };
        for keyword in ["anyOf", "oneOf"] {
            let Some(Value::Array(branches)) = schema.get(keyword) else {
                continue;
            };
            let outcomes: Vec<Vec<Violation>> =
                branches.iter().map(|branch| trial(branch, path)).collect();
            let matching = outcomes.iter().filter(|found| found.is_empty()).count();
            if matching == 1 || (matching > 1 && keyword == "anyOf") {
                continue;
            }
            if matching > 1 {
                let message = format!(
                    "{} matches {matching} shapes where one is allowed",
                    describe(value)
                );
                self.report(path, message);
                continue;
            }
            self.explain_union(branches, outcomes, value, path);
        }
        if let Some(not) = schema.get("not")
            && trial(not, path).is_empty()
        {
            self.report(path, format!("{} is not allowed here", describe(value)));
        }
    }
}

impl Checker<'_> {
    /// Why a value fits no branch of a union. When one branch is plainly
    /// the one meant (the value has its type, and its tag or its only
    /// key, if it has one), that branch's own problems, with their paths;
    /// otherwise the shapes allowed.
    fn explain_union(
        &mut self,
        branches: &[Value],
        outcomes: Vec<Vec<Violation>>,
        value: &Value,
        path: &str,
    ) {
        // A branch is meant when its problems are all inside the value:
        // none is about the value as a whole, or about a tag (a field
        // whose schema is a single constant).
        let meant: Vec<usize> = outcomes
            .iter()
            .enumerate()
            .filter(|(index, found)| {
                found.iter().all(|violation| {
                    violation.path != path && !is_tag(&branches[*index], path, &violation.path)
                })
            })
            .map(|(index, _)| index)
            .collect();
        if let [index] = meant.as_slice() {
            for violation in outcomes.into_iter().nth(*index).unwrap_or_default() {
                self.report(&violation.path, violation.message);
            }
            return;
        }
        let shapes: Vec<String> = branches.iter().take(8).map(shape).collect();
        let more = if branches.len() > 8 { "; …" } else { "" };
        let message = format!(
            "expected one of: {}{more}; got {}",
            shapes.join("; "),
            describe(value)
        );
        self.report(path, message);
    }
}

/// Whether the violation at `at` is about a tag of `branch` (the value at
/// `path`): a property whose schema is one constant, which tells the
/// branches apart.
fn is_tag(branch: &Value, path: &str, at: &str) -> bool {
    let Some(name) = at
        .strip_prefix(path)
        .map(|rest| rest.strip_prefix('.').unwrap_or(rest))
    else {
        return false;
    };
    branch
        .get("properties")
        .and_then(|properties| properties.get(name))
        .is_some_and(|field| {
            field.get("const").is_some()
                || field
                    .get("enum")
                    .and_then(Value::as_array)
                    .is_some_and(|values| values.len() == 1)
        })
}

/// A branch of a union, briefly: `"circle"`, `an object with `add``, `a
/// string`.
fn shape(branch: &Value) -> String {
    let Some(members) = branch.as_object() else {
        return "anything".to_owned();
    };
    if let Some(Value::Object(properties)) = members.get("properties") {
        let tags: Vec<String> = properties
            .iter()
            .filter_map(|(name, field)| {
                let value = field.get("const").or_else(|| {
                    field
                        .get("enum")
                        .and_then(Value::as_array)
                        .filter(|values| values.len() == 1)
                        .and_then(|values| values.first())
                })?;
                Some(format!("`{name}`: {value}"))
            })
            .collect();
        if !tags.is_empty() {
            return format!("an object with {}", tags.join(", "));
        }
        let required: Vec<String> = members
            .get("required")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|name| format!("`{name}`"))
                    .collect()
            })
            .unwrap_or_default();
        if !required.is_empty() {
            return format!("an object with {}", required.join(", "));
        }
    }
    let wanted = expected(members);
    if wanted.is_empty() {
        "anything".to_owned()
    } else {
        wanted
    }
}

/// What a schema wants, for messages: its type, with its allowed values
/// or bounds: `one of "a", "b"`, `an integer from 0 to 255`, `a string of
/// at most 3 characters`. Empty when the schema says nothing of the kind.
pub(crate) fn expected(schema: &Map<String, Value>) -> String {
    if let Some(Value::Array(values)) = schema.get("enum") {
        let listed: Vec<String> = values.iter().take(20).map(Value::to_string).collect();
        let more = if values.len() > 20 { ", …" } else { "" };
        return format!("one of {}{more}", listed.join(", "));
    }
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    let kinds: Vec<&str> = match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => return String::new(),
    };
    let mut text = kinds
        .iter()
        .map(|kind| article(kind))
        .collect::<Vec<_>>()
        .join(" or ");
    // A 64-bit integer's own bounds say nothing a model needs.
    let number = |keyword: &str| match schema.get(keyword) {
        Some(Value::Number(n))
            if n.as_i64() != Some(i64::MIN)
                && n.as_i64() != Some(i64::MAX)
                && n.as_u64() != Some(u64::MAX) =>
        {
            Some(number::show(n))
        }
        _ => None,
    };
    let mut limits = Vec::new();
    for (keyword, words) in [
        ("minimum", "at least"),
        ("exclusiveMinimum", "more than"),
        ("maximum", "at most"),
        ("exclusiveMaximum", "less than"),
        ("minLength", "at least {} characters"),
        ("maxLength", "at most {} characters"),
        ("minItems", "at least {} items"),
        ("maxItems", "at most {} items"),
    ] {
        if let Some(limit) = number(keyword) {
            limits.push(if words.contains("{}") {
                words.replace("{}", &limit)
            } else {
                format!("{words} {limit}")
            });
        }
    }
    if !limits.is_empty() {
        text.push_str(" (");
        text.push_str(&limits.join(", "));
        text.push(')');
    }
    text
}

fn is_type(value: &Value, kind: &str) -> bool {
    match kind {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(number) => {
                number.is_i64()
                    || number.is_u64()
                    || number.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

fn article(kind: &str) -> String {
    match kind {
        "object" | "array" | "integer" => format!("an {kind}"),
        "null" => "null".to_owned(),
        _ => format!("a {kind}"),
    }
}

/// JSON equality, where numbers compare by value (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, a)| y.get(key).is_some_and(|b| json_equal(a, b)))
        }
        _ => a == b,
    }
}

fn bound(schema: &Map<String, Value>, keyword: &str) -> Option<f64> {
    schema.get(keyword).and_then(Value::as_f64)
}

fn child(path: &str, key: &str) -> String {
    let mut at = path.to_owned();
    push_key(&mut at, key);
    at
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(schema: Value, value: Value) -> Vec<String> {
        check(&schema, &value)
            .iter()
            .map(Violation::to_string)
            .collect()
    }

    #[test]
    fn nested_unknown_and_missing_fields_are_all_reported() {
        let schema = json!({
            "type": "object",
            "properties": {
                "event": {
                    "type": "object",
                    "properties": {
                        "attendees": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}, "email": {"type": "string"}},
                                "required": ["name", "email"],
                                "additionalProperties": false
                            }
                        }
                    }
                }
            }
        });
        let value = json!({"event": {"attendees": [{"name": "Ada", "emial": "a@b"}]}});
        assert_eq!(
            messages(schema, value),
            [
                "at `event.attendees[0].email`: missing required field: expected a string",
                "at `event.attendees[0].emial`: unknown field; expected one of `email`, `name`"
            ]
        );
    }

    #[test]
    fn types_bounds_and_enums() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "maximum": 10},
                "s": {"type": "string", "maxLength": 3},
                "e": {"enum": ["a", "b"]},
                "o": {"type": ["string", "null"]}
            }
        });
        assert_eq!(
            messages(
                schema.clone(),
                json!({"n": 11, "s": "abcd", "e": "c", "o": null})
            ),
            [
                "at `e`: expected one of \"a\", \"b\", got \"c\"",
                "at `n`: expected at most 10, got 11",
                "at `s`: expected at most 3 characters, got 4"
            ]
        );
        assert_eq!(
            messages(schema.clone(), json!({"n": 1.5})),
            ["at `n`: expected an integer (at least 1, at most 10), got 1.5"]
        );
        assert!(messages(schema, json!({"n": 2.0, "o": "x"})).is_empty());
    }

    #[test]
    fn refs_and_combinators() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree"}},
            "$defs": {
                "Tree": {
                    "type": "object",
                    "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
                    "additionalProperties": false
                }
            }
        });
        assert!(
            messages(
                schema.clone(),
                json!({"tree": {"children": [{"children": []}]}})
            )
            .is_empty()
        );
        assert_eq!(
            messages(schema, json!({"tree": {"children": [{"leaf": 1}]}})),
            ["at `tree.children[0].leaf`: unknown field; expected one of `children`"]
        );
        let one_of = json!({"oneOf": [{"type": "string"}, {"type": "integer"}]});
        assert!(messages(one_of.clone(), json!(3)).is_empty());
        assert_eq!(
            messages(one_of, json!(true)),
            ["expected one of: a string; an integer; got true"]
        );
    }

    #[test]
    fn a_self_referencing_schema_does_not_loop() {
        let schema = json!({"$ref": "#"});
        let found = check(&schema, &json!({}));
        assert_eq!(found.len(), 1);
        assert!(found[0].message.contains("too deeply"));
    }

    #[test]
    fn violations_are_capped() {
        let schema = json!({"type": "object", "additionalProperties": false});
        let value: Map<String, Value> = (0..50).map(|i| (format!("k{i}"), json!(i))).collect();
        assert_eq!(check(&schema, &Value::Object(value)).len(), MAX_VIOLATIONS);
    }
}
