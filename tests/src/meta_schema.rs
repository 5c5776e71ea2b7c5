//! JSON Schema 2020-12 checks, offline: the `jsonschema` crate bundles the
//! meta-schemas and is built without any resolver that could fetch one.

use serde_json::Value;

/// Asserts that `schema` is a valid JSON Schema 2020-12 document: it
/// conforms to the 2020-12 meta-schema (whatever its `$schema` says, since
/// the toolkit never writes one) and compiles, so every `$ref` in it
/// resolves inside the document.
///
/// # Panics
///
/// With the validator's message and the schema, when it is not valid.
pub fn assert_valid_2020_12(schema: &Value) {
    if let Err(error) = jsonschema::draft202012::meta::validate(schema) {
        panic!(
            "not a valid JSON Schema 2020-12 document: {error} (at `{}`)\n{schema:#}",
            error.instance_path()
        );
    }
    if let Err(error) = jsonschema::draft202012::new(schema) {
        panic!("the schema does not compile: {error}\n{schema:#}");
    }
}

/// Whether `instance` is valid under `schema`, read as JSON Schema 2020-12.
///
/// # Panics
///
/// When `schema` does not compile.
pub fn accepts(schema: &Value, instance: &Value) -> bool {
    match jsonschema::draft202012::new(schema) {
        Ok(validator) => validator.is_valid(instance),
        Err(error) => panic!("the schema does not compile: {error}\n{schema:#}"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn accepts_a_valid_schema() {
        assert_valid_2020_12(&json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree"}},
            "$defs": {"Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}}
        }));
        assert!(accepts(
            &json!({"type": "integer", "minimum": 1}),
            &json!(3)
        ));
        assert!(!accepts(
            &json!({"type": "integer", "minimum": 1}),
            &json!(0)
        ));
    }

    #[test]
    #[should_panic(expected = "not a valid JSON Schema 2020-12 document")]
    fn rejects_a_bad_type() {
        assert_valid_2020_12(&json!({"type": "strin"}));
    }

    #[test]
    #[should_panic(expected = "not a valid JSON Schema 2020-12 document")]
    fn rejects_a_bad_keyword_value() {
        assert_valid_2020_12(&json!({"type": "object", "required": "name"}));
    }

    #[test]
    #[should_panic(expected = "does not compile")]
    fn rejects_a_dangling_reference() {
        assert_valid_2020_12(&json!({"$ref": "#/$defs/Missing"}));
    }
}
