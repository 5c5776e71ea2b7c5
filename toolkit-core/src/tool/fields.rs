//! The schema of the struct `#[tool]` gathers a tool's arguments into,
//! built from a table of its fields.
//!
//! Deriving `JsonSchema` for that struct would expand, for every tool, a
//! block of code per field that the compiler parses, resolves and checks
//! again on every rebuild of the user's crate. A table whose entries point
//! at one generic function per field *type* (shared by every tool with a
//! field of that type) produces the same schema for a fraction of that
//! cost.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

/// One field of a tool's argument struct.
pub struct FieldSchema {
    name: &'static str,
    doc: &'static str,
    schema: fn(&mut SchemaGenerator) -> Schema,
    is_option: fn() -> bool,
}

impl FieldSchema {
    /// The field `name` of type `T`, documented by `doc` (empty for none).
    pub const fn of<T: JsonSchema>(name: &'static str, doc: &'static str) -> Self {
        Self {
            name,
            doc,
            schema: subschema::<T>,
            is_option: <T as JsonSchema>::_schemars_private_is_option,
        }
    }
}

fn subschema<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// The schema of a struct with `fields` that refuses unknown fields, as
/// schemars' derive writes it: an object, each field's schema with its
/// doc comment as `description` (a leading `# Heading` line as `title`),
/// every field required unless its type may be left out (`Option`).
pub fn object_schema(generator: &mut SchemaGenerator, fields: &[FieldSchema]) -> Schema {
    let mut properties = Map::new();
    let mut required = Vec::new();
    // Arguments are read, so an `Option` field may be left out.
    let reading = generator.contract().is_deserialize();
    for field in fields {
        let mut schema = (field.schema)(generator);
        let (title, description) = title_and_description(field.doc);
        for (key, text) in [("title", title), ("description", description)] {
            if !text.is_empty() {
                schema.insert(key.to_owned(), Value::String(text.to_owned()));
            }
        }
        properties.insert(field.name.to_owned(), schema.into());
        if !(reading && (field.is_option)()) {
            required.push(Value::String(field.name.to_owned()));
        }
    }
    let mut object = Map::new();
    object.insert("type".to_owned(), Value::String("object".to_owned()));
    object.insert("additionalProperties".to_owned(), Value::Bool(false));
    if !fields.is_empty() {
        object.insert("properties".to_owned(), Value::Object(properties));
    }
    if !required.is_empty() {
        object.insert("required".to_owned(), Value::Array(required));
    }
    Schema::from(object)
}

/// A doc comment as a title and a description: a first line starting with
/// `#` is the title (its `#`s trimmed), the rest the description.
fn title_and_description(doc: &str) -> (&str, &str) {
    let doc = doc.trim();
    match doc.strip_prefix('#') {
        Some(_) => {
            let (heading, rest) = doc.split_once('\n').unwrap_or((doc, ""));
            (heading.trim_start_matches('#').trim(), rest.trim())
        }
        None => ("", doc),
    }
}

#[cfg(test)]
mod tests {
    use schemars::generate::SchemaSettings;

    use super::*;

    // What schemars' own derive makes of the same struct (undocumented,
    // as the argument struct is).
    #[derive(schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Derived {
        /// The full-text query.
        query: String,
        /// Maximum number of hits.
        limit: Option<u32>,
        /// # Tags
        ///
        /// To filter by.
        tags: Vec<Order>,
        nested: Option<Option<Nested>>,
    }

    /// Result ordering.
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Order {
        /// Best first.
        Relevance,
        Newest,
    }

    /// A nested value, which refers to itself.
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        /// Its children.
        children: Vec<Nested>,
    }

    struct Table;

    impl JsonSchema for Table {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "Derived".into()
        }

        fn json_schema(generator: &mut SchemaGenerator) -> Schema {
            object_schema(
                generator,
                &[
                    FieldSchema::of::<String>("query", "The full-text query."),
                    FieldSchema::of::<Option<u32>>("limit", "Maximum number of hits."),
                    FieldSchema::of::<Vec<Order>>("tags", "# Tags\n\nTo filter by."),
                    FieldSchema::of::<Option<Option<Nested>>>("nested", ""),
                ],
            )
        }
    }

    #[test]
    fn the_table_gives_what_the_derive_gives() {
        for settings in [
            SchemaSettings::draft2020_12(),
            SchemaSettings::draft07(),
            SchemaSettings::openapi3(),
        ] {
            let mut settings = settings.for_deserialize();
            settings.inline_subschemas = true;
            let derived = settings
                .clone()
                .into_generator()
                .into_root_schema_for::<Derived>();
            let table = settings.into_generator().into_root_schema_for::<Table>();
            assert_eq!(table, derived);
        }
    }

    #[test]
    fn headings_become_titles() {
        assert_eq!(title_and_description("  plain text "), ("", "plain text"));
        assert_eq!(
            title_and_description("## Heading\nbody\nmore"),
            ("Heading", "body\nmore")
        );
        assert_eq!(title_and_description("# Only"), ("Only", ""));
    }
}
