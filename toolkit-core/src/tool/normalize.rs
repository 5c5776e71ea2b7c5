//! What a model may send that means something other than it says in JSON
//! Schema terms, written as the tool's own schema means it.
//!
//! - A `null` for an optional property whose schema does not admit `null`
//!   means "absent": OpenAI's strict mode and Gemini mark every optional
//!   property nullable (strict mode must list every property), so a model
//!   sends `null` for "not given". It is removed, so the field takes its
//!   default. A property whose schema admits `null` (an `Option`) keeps it:
//!   absent and `null` may mean different things there (`Option<Option<T>>`).
//!   Free-form values (`serde_json::Value`) are never touched.
//! - A whole number written as a float (`5.0`) where the schema wants an
//!   integer: JSON Schema says it is an integer, serde does not.

use serde_json::{Number, Value};

use super::validate;

/// The deepest the walk follows schemas (through `$ref` and nesting).
const MAX_DEPTH: usize = validate::MAX_DEPTH;

/// One step into a value.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A change to make at a path of the value.
#[derive(Debug, Clone, PartialEq)]
struct Edit {
    path: Vec<Step>,
    change: Change,
}

#[derive(Debug, Clone, PartialEq)]
enum Change {
    /// Remove this key of the object at the path.
    Remove(String),
    /// Replace the number at the path.
    Integer(Number),
}

/// Whether `value` has anything to rewrite under `schema`. Most arguments
/// hold neither a `null` nor a float, and are not walked against the
/// schema at all.
pub(crate) fn needed(schema: &Value, value: &Value) -> bool {
    holds_null_or_float(value) && !edits(schema, value).is_empty()
}

fn holds_null_or_float(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Number(number) => !(number.is_i64() || number.is_u64()),
        Value::Array(items) => items.iter().any(holds_null_or_float),
        Value::Object(map) => map.values().any(holds_null_or_float),
        Value::Bool(_) | Value::String(_) => false,
    }
}

/// Rewrites `value` as `schema` means it (see the module's doc).
pub(crate) fn apply(schema: &Value, value: &mut Value) {
    for edit in edits(schema, value) {
        perform(value, &edit);
    }
}

fn edits(schema: &Value, value: &Value) -> Vec<Edit> {
    let mut walk = Walk {
        root: schema,
        edits: Vec::new(),
    };
    walk.visit(schema, value, &mut Vec::new(), 0);
    walk.edits
}

fn perform(value: &mut Value, edit: &Edit) {
    let mut target = value;
    for step in &edit.path {
        let next = match step {
            Step::Key(key) => target.get_mut(key.as_str()),
            Step::Index(index) => target.get_mut(*index),
        };
        match next {
            Some(next) => target = next,
            None => return,
        }
    }
    match &edit.change {
        Change::Remove(key) => {
            if let Value::Object(map) = target {
                map.remove(key);
            }
        }
        Change::Integer(number) => *target = Value::Number(number.clone()),
    }
}

struct Walk<'s> {
    root: &'s Value,
    edits: Vec<Edit>,
}

impl<'s> Walk<'s> {
    fn visit(&mut self, schema: &'s Value, value: &Value, path: &mut Vec<Step>, depth: usize) {
        let Some(members) = schema.as_object() else {
            return;
        };
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(target) = members
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|reference| validate::resolve(self.root, reference))
        {
            self.visit(target, value, path, depth + 1);
        }
        if let Some(Value::Array(parts)) = members.get("allOf") {
            for part in parts {
                self.visit(part, value, path, depth + 1);
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = members.get(keyword) {
                self.union(branches, value, path, depth);
            }
        }
        match value {
            Value::Object(object) => {
                let properties = members.get("properties").and_then(Value::as_object);
                let required = |name: &str| {
                    members
                        .get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|names| names.iter().any(|n| n == name))
                };
                for (key, field) in object {
                    let field_schema = match properties.and_then(|p| p.get(key)) {
                        Some(field_schema) => field_schema,
                        None => match members.get("additionalProperties") {
                            Some(extra @ Value::Object(_)) => extra,
                            _ => continue,
                        },
                    };
                    let is_property = properties.is_some_and(|p| p.contains_key(key));
                    if field.is_null()
                        && is_property
                        && !required(key)
                        && !validate::admits(self.root, field_schema, &Value::Null)
                    {
                        self.edits.push(Edit {
                            path: path.clone(),
                            change: Change::Remove(key.clone()),
                        });
                        continue;
                    }
                    path.push(Step::Key(key.clone()));
                    self.visit(field_schema, field, path, depth + 1);
                    path.pop();
                }
            }
            Value::Array(items) => {
                let prefix = members
                    .get("prefixItems")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                for (index, item) in items.iter().enumerate() {
                    let Some(item_schema) = prefix.get(index).or_else(|| members.get("items"))
                    else {
                        continue;
                    };
                    path.push(Step::Index(index));
                    self.visit(item_schema, item, path, depth + 1);
                    path.pop();
                }
            }
            Value::Number(number) if wants_integer(members) => {
                if let Some(integer) = as_integer(number) {
                    self.edits.push(Edit {
                        path: path.clone(),
                        change: Change::Integer(integer),
                    });
                }
            }
            _ => {}
        }
    }

    /// A union's rewrites: those of the first branch the value fits once
    /// rewritten for it (none if that branch takes it as it is).
    fn union(&mut self, branches: &'s [Value], value: &Value, path: &[Step], depth: usize) {
        for branch in branches {
            let mut trial = Walk {
                root: self.root,
                edits: Vec::new(),
            };
            trial.visit(branch, value, &mut Vec::new(), depth + 1);
            if trial.edits.is_empty() {
                if validate::admits(self.root, branch, value) {
                    return;
                }
                continue;
            }
            let mut rewritten = value.clone();
            for edit in &trial.edits {
                perform(&mut rewritten, edit);
            }
            if validate::admits(self.root, branch, &rewritten) {
                self.edits.extend(trial.edits.into_iter().map(|mut edit| {
                    let mut full = path.to_vec();
                    full.append(&mut edit.path);
                    edit.path = full;
                    edit
                }));
                return;
            }
        }
    }
}

/// A schema that takes integers and not other numbers.
fn wants_integer(schema: &serde_json::Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "integer",
        Some(Value::Array(kinds)) => {
            kinds.iter().any(|k| k == "integer") && !kinds.iter().any(|k| k == "number")
        }
        _ => false,
    }
}

/// A float that is a whole number, as an integer. Only where the float is
/// exact: past 2^64 it is not, and at -2^63 it may be a rounded neighbour.
fn as_integer(number: &Number) -> Option<Number> {
    if number.is_i64() || number.is_u64() {
        return None;
    }
    let float = number.as_f64()?;
    // -2^63 and 2^64, written as the powers they are.
    let (low, high) = (-(2f64.powi(63)), 2f64.powi(64));
    if float.fract() != 0.0 || float <= low || float >= high {
        return None;
    }
    Some(if float < 0.0 {
        Number::from(float as i64)
    } else {
        Number::from(float as u64)
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn normalized(schema: Value, mut value: Value) -> Value {
        apply(&schema, &mut value);
        value
    }

    #[test]
    fn nulls_mean_absent_only_where_the_schema_refuses_null() {
        let schema = json!({
            "type": "object",
            "properties": {
                "notify": {"type": "boolean"},
                "nickname": {"type": ["string", "null"]},
                "patch": {"description": "Free-form."},
                "need": {"type": "string"}
            },
            "required": ["need"]
        });
        assert_eq!(
            normalized(
                schema,
                json!({"notify": null, "nickname": null, "patch": {"email": null}, "need": null})
            ),
            json!({"nickname": null, "patch": {"email": null}, "need": null})
        );
    }

    #[test]
    fn whole_floats_become_integers_where_integers_are_wanted() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "list": {"type": "array", "items": {"type": "integer"}}
        }});
        assert_eq!(
            normalized(schema, json!({"n": 5.0, "x": 5.0, "list": [1.0, 2.5]})),
            json!({"n": 5, "x": 5.0, "list": [1, 2.5]})
        );
    }

    #[test]
    fn unions_take_the_rewrites_of_the_branch_that_fits() {
        let schema = json!({"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "a"}, "size": {"type": "integer"}}, "required": ["kind"], "additionalProperties": false},
            {"type": "object", "properties": {"kind": {"const": "b"}, "name": {"type": "string"}}, "required": ["kind"], "additionalProperties": false}
        ]});
        assert_eq!(
            normalized(schema.clone(), json!({"kind": "b", "name": null})),
            json!({"kind": "b"})
        );
        assert_eq!(
            normalized(schema, json!({"kind": "a", "size": 3.0})),
            json!({"kind": "a", "size": 3})
        );
    }
}
