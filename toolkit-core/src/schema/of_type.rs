//! Schemas of whole Rust types, for uses other than a tool's parameters:
//! the shape a model's final answer must take.

use serde_json::Value;

use super::canonical::{Source, canonicalize_from};
use super::error::SchemaError;
use super::ordered_json::OrderedJson;
use crate::tool::validate;

// `schema_rules` (integration tests) asks schemars the same on purpose:
// its judge must not take the crate's way of asking for it.
/// schemars' schema of `T`, generated as for a tool's argument struct
/// (draft 2020-12, sub-schemas inlined, no `$schema`).
pub(crate) fn generate<T: schemars::JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The canonical schema of `T`, as [`canonicalize`](super::canonicalize)
/// makes it for a tool whose arguments are `T`: the same rules, the same
/// text in every build, ready for [`lower`](super::lower). `T` must be
/// object-like (a struct, a map): anything else is
/// [`SchemaError::RootNotObject`].
///
/// The fields of `T` come in name order: their declaration order is known
/// to `#[tool]`, which sees the function, but not from `T`'s schema alone.
///
/// ```
/// use toolkit_core::schema::{canonical_of, openai_strict};
///
/// #[derive(schemars::JsonSchema)]
/// struct City {
///     /// The city's name.
///     name: String,
///     population: Option<u32>,
/// }
///
/// let canonical = canonical_of::<City>()?;
/// assert_eq!(
///     canonical.to_json_string(),
///     r#"{"type":"object","properties":{"name":{"type":"string","description":"The city's name."},"population":{"type":["integer","null"],"minimum":0,"maximum":4294967295}},"required":["name"],"additionalProperties":false}"#
/// );
/// let strict = openai_strict(&canonical)?;
/// assert_eq!(strict.get("required").unwrap().to_json_string(), r#"["name","population"]"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn canonical_of<T: schemars::JsonSchema>() -> Result<OrderedJson, SchemaError> {
    canonicalize_from(&generate::<T>(), &[], Source::Derived)
}

/// Every way `value` breaks `schema`, each as one line (`at `path`:
/// message`, or the message alone for the whole value), in path order.
/// Empty when `value` keeps the schema.
///
/// The checker is the one a registry holds run-time tools' arguments to:
/// the keywords tool schemas use (`type`, `enum`, `const`, `properties`,
/// `required`, `additionalProperties`, `items`, `prefixItems`, the bounds,
/// `uniqueItems`, `allOf`, `anyOf`, `oneOf`, `not`, `$ref` within the
/// schema); `pattern` and `format` are not checked. At most ten problems
/// are listed.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::schema::violations;
///
/// let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}},
///     "required": ["n", "m"], "additionalProperties": false});
/// assert_eq!(
///     violations(&schema, &json!({"n": "3", "x": 1})),
///     [
///         "at `m`: missing required field",
///         "at `n`: expected an integer, got \"3\"",
///         "at `x`: unknown field; expected one of `n`",
///     ]
/// );
/// ```
pub fn violations(schema: &Value, value: &Value) -> Vec<String> {
    validate::check(schema, value)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// One way a value breaks a schema: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Violation {
    /// Where in the value, as a JSON Pointer (RFC 6901): `/items/0/name`;
    /// empty for the whole value.
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
    /// The sentence [`violations`] gives for it.
    said: String,
}

impl std::fmt::Display for Violation {
    /// The sentence [`violations`] gives: the place as a path of the
    /// value's names, such as `items[0].name`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.said)
    }
}

/// Every way `value` breaks `schema`, each with its place, as
/// [`violations`] finds them.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::schema::violations_at;
///
/// let schema = json!({"type": "object", "properties": {"tags": {"type": "array",
///     "items": {"type": "string"}}}});
/// let found = violations_at(&schema, &json!({"tags": ["a", 2]}));
/// assert_eq!(found[0].pointer, "/tags/1");
/// assert_eq!(found[0].message, "expected a string, got 2");
/// ```
pub fn violations_at(schema: &Value, value: &Value) -> Vec<Violation> {
    validate::check(schema, value)
        .into_iter()
        .map(|violation| Violation {
            pointer: pointer_of(&violation.path),
            said: violation.to_string(),
            message: violation.message,
        })
        .collect()
}

/// The JSON Pointer of a checker's path (`items[0].name` → `/items/0/name`).
/// A member name holding `.` or `[` reads as more than one step: the
/// checker's paths do not set them apart.
fn pointer_of(path: &str) -> String {
    let mut pointer = String::new();
    for part in path.split('.').filter(|part| !part.is_empty()) {
        let (name, indexes) = match part.find('[') {
            Some(at) => part.split_at(at),
            None => (part, ""),
        };
        if !name.is_empty() {
            pointer.push('/');
            pointer.push_str(&name.replace('~', "~0").replace('/', "~1"));
        }
        for index in indexes.split(['[', ']']).filter(|index| !index.is_empty()) {
            pointer.push('/');
            pointer.push_str(index);
        }
    }
    pointer
}
