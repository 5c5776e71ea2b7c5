//! The schema of a tool's structured output.

use std::fmt;

use serde_json::Value;

use crate::schema::formats::normalize_numeric_formats;
use crate::schema::{OrderedJson, order_schema};

/// The JSON Schema of what a tool returns as structured content (MCP's
/// `outputSchema`): always an object schema, as MCP requires.
///
/// `#[tool]` gives one to a tool that returns [`Json<T>`](crate::Json) (or
/// a `Result` of it), or a type that serializes without converting into a
/// result otherwise (a struct), when `T`'s schema is an object; the MCP
/// emitter then sends the value as `structuredContent`, which clients
/// validate against this schema.
#[derive(Clone, PartialEq)]
pub struct OutputSchema {
    json: OrderedJson,
    text: String,
}

impl OutputSchema {
    /// The schema of what `T` serializes to, if it is an object schema.
    ///
    /// Made for serializing, not reading: an `Option` field may be `null`,
    /// as serde writes it, and fields with defaults are required.
    pub fn of<T: schemars::JsonSchema>() -> Option<Self> {
        let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_serialize();
        settings.meta_schema = None;
        let generated = settings.into_generator().into_root_schema_for::<T>();
        let mut schema = Self::from_value(generated.as_value())?;
        // schemars' numeric formats (`uint`, `double`) are no JSON Schema
        // formats: clients' validators warn on each, or refuse them.
        normalize_numeric_formats(&mut schema.json);
        // schemars lists fields in declaration order only when serde_json
        // keeps the order of maps, which depends on what else the build
        // holds: fields in name order and keywords in the canonical order
        // make the schema the same text in every build.
        sort_properties(&mut schema.json);
        order_schema(&mut schema.json);
        schema.text = schema.json.to_json_string();
        Some(schema)
    }

    /// An output schema from JSON Schema, if its root is an object schema
    /// (`"type": "object"`), as MCP requires. It is kept as given, but for
    /// the root's `$schema` and `title`, which clients do not need.
    pub fn from_value(schema: &Value) -> Option<Self> {
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return None;
        }
        let mut json = OrderedJson::from(schema);
        json.remove("$schema");
        json.remove("title");
        let text = json.to_json_string();
        Some(Self { json, text })
    }

    /// The schema as JSON text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The schema as a `serde_json::Value`.
    pub fn to_value(&self) -> Value {
        self.json.to_value()
    }

    pub(crate) fn json(&self) -> &OrderedJson {
        &self.json
    }
}

impl fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Puts the entries of every `properties` in `schema` into name order.
fn sort_properties(schema: &mut OrderedJson) {
    match schema {
        OrderedJson::Object(members) => {
            for (keyword, value) in members.iter_mut() {
                if keyword == "properties"
                    && let OrderedJson::Object(entries) = value
                {
                    entries.sort_by(|(a, _), (b, _)| a.cmp(b));
                }
                sort_properties(value);
            }
        }
        OrderedJson::Array(items) => items.iter_mut().for_each(sort_properties),
        _ => {}
    }
}
