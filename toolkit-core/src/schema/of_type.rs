//! Schemas of whole Rust types, for uses other than a tool's parameters:
//! the shape a model's final answer must take.

use serde_json::Value;

use super::canonical::{Source, canonicalize_from};
use super::error::SchemaError;
use super::ordered_json::OrderedJson;
use crate::tool::validate;

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
