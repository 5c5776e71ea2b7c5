use serde_json::{Value, json};

use super::*;
use crate::schema::*;

fn lower(canonical: Value) -> Result<Value, LoweringError> {
    gemini(&OrderedJson::from(&canonical)).map(|lowered| lowered.to_value())
}

fn root(properties: Value, required: Value) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn property(schema: Value, required: bool) -> Value {
    let required = if required { json!(["p"]) } else { json!([]) };
    lower(root(json!({"p": schema}), required)).unwrap()["properties"]["p"].clone()
}

#[test]
fn search_photos_matches_the_reference_shape() {
    let generated = json!({
        "title": "SearchPhotos",
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Free-text query."},
            "limit": {"type": ["integer", "null"], "format": "uint8", "minimum": 1, "maximum": 100}
        },
        "required": ["query"],
        "additionalProperties": false
    });
    let canonical = canonicalize(&generated, &["query", "limit"]).unwrap();
    assert_eq!(
        gemini(&canonical).unwrap().to_json_string(),
        concat!(
            r#"{"type":"object","properties":{"query":{"type":"string","description":"Free-text query."},"#,
            r#""limit":{"type":"integer","nullable":true,"minimum":1,"maximum":100}},"#,
            r#""required":["query"],"propertyOrdering":["query","limit"]}"#
        )
    );
}

#[test]
fn type_arrays_become_nullable() {
    assert_eq!(
        property(json!({"type": ["string", "null"]}), true),
        json!({"type": "string", "nullable": true})
    );
    let error = lower(root(
        json!({"p": {"type": ["string", "integer"]}}),
        json!(["p"]),
    ))
    .unwrap_err();
    assert_eq!(
        error.kind(),
        &LoweringErrorKind::TypeUnion {
            types: vec!["string".into(), "integer".into()]
        }
    );
    assert_eq!(error.dialect(), Dialect::Gemini);
}

#[test]
fn enums_const_and_formats() {
    assert_eq!(
        property(json!({"type": "string", "enum": ["a", "b"]}), true),
        json!({"type": "string", "format": "enum", "enum": ["a", "b"]})
    );
    assert_eq!(
        property(json!({"type": "string", "const": "circle"}), true),
        json!({"type": "string", "format": "enum", "enum": ["circle"]})
    );
    assert_eq!(
        property(json!({"type": "string", "format": "date-time"}), true),
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(
        property(
            json!({"type": "string", "format": "email", "description": "Mail."}),
            true
        ),
        json!({"type": "string", "description": "Mail.\n\n{format: \"email\"}"})
    );
}

#[test]
fn annotations_move_into_the_description_and_constraints_are_refused() {
    assert_eq!(
        property(
            json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "examples": [["a"]], "deprecated": true}),
            true
        ),
        json!({"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "{deprecated: true}", "example": ["a"]})
    );
    // In words, a constraint would let through values the tool refuses.
    let error = lower(root(
        json!({"p": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}, "q": {"type": "integer", "enum": [1, 2]}}),
        json!(["p", "q"]),
    ))
    .unwrap_err();
    let problems: Vec<_> = error
        .problems()
        .map(|(path, kind)| (path.to_owned(), kind.clone()))
        .collect();
    assert_eq!(
        problems,
        [
            (
                "properties.p".to_owned(),
                LoweringErrorKind::Constraint {
                    keyword: "exclusiveMinimum".into()
                }
            ),
            (
                "properties.q".to_owned(),
                LoweringErrorKind::Constraint {
                    keyword: "enum".into()
                }
            ),
        ]
    );
    assert!(error.to_string().starts_with("2 problems: "), "{error}");
}

#[test]
fn nulls_become_nullable_and_names_and_untyped_values_are_checked() {
    assert_eq!(
        property(
            json!({"anyOf": [{"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}, {"type": "null"}]}),
            true
        ),
        json!({"type": "object", "nullable": true, "properties": {"x": {"type": "string"}}, "required": ["x"], "propertyOrdering": ["x"]})
    );
    assert_eq!(
        property(
            json!({"type": ["string", "null"], "enum": ["a", null]}),
            true
        ),
        json!({"type": "string", "nullable": true, "format": "enum", "enum": ["a"]})
    );
    let error = lower(root(
        json!({"p": {"description": "Anything."}, "q": {"type": "object", "properties": {"content-type": {"type": "string"}, "$ref": {"type": "string"}}, "required": []}}),
        json!(["p", "q"]),
    ))
    .unwrap_err();
    let mut kinds: Vec<String> = error
        .problems()
        .map(|(_, kind)| format!("{kind:?}"))
        .collect();
    // The order of the object's keys depends on serde_json's
    // `preserve_order` feature, which another crate of a build may enable.
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "PropertyName { name: \"$ref\" }",
            "PropertyName { name: \"content-type\" }",
            "Unconstrained",
        ]
    );
}

#[test]
fn objects_lose_additional_properties_and_gain_property_ordering() {
    let out = property(
        json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["b"], "additionalProperties": false}),
        false,
    );
    assert_eq!(
        out,
        json!({
            "type": "object", "nullable": true,
            "properties": {"a": {"type": "string", "nullable": true}, "b": {"type": "string"}},
            "required": ["b"], "propertyOrdering": ["a", "b"]
        })
    );
    // The ordering follows the schema's: here the parameter order.
    let generated = root(
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
        json!(["a", "b"]),
    );
    let lowered = gemini(&canonicalize(&generated, &["b", "a"]).unwrap()).unwrap();
    assert_eq!(
        lowered.get("propertyOrdering").unwrap().to_value(),
        json!(["b", "a"])
    );
    assert!(lowered.get("additionalProperties").is_none());
}

#[test]
fn any_of_is_alone_on_its_node() {
    let out = property(
        json!({"description": "A shape.", "oneOf": [
            {"type": "object", "properties": {"r": {"type": "number"}}, "required": ["r"], "additionalProperties": false},
            {"type": "string", "enum": ["none"], "description": "Nothing."}
        ]}),
        false,
    );
    assert_eq!(
        out,
        json!({"anyOf": [
            {"type": "object", "nullable": true, "description": "A shape.", "properties": {"r": {"type": "number"}}, "required": ["r"], "propertyOrdering": ["r"]},
            {"type": "string", "nullable": true, "description": "A shape.\n\nNothing.", "format": "enum", "enum": ["none"]}
        ]})
    );
    // One branch is merged instead, the node's doc winning.
    assert_eq!(
        property(
            json!({"description": "Outer.", "anyOf": [{"type": "string", "description": "Inner."}]}),
            true
        ),
        json!({"type": "string", "description": "Outer."})
    );
}

#[test]
fn what_gemini_cannot_express_is_an_error() {
    let cases = [
        (
            json!({"$ref": "#/$defs/Tree"}),
            LoweringErrorKind::Recursive {
                reference: "#/$defs/Tree".into(),
            },
        ),
        (
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
            LoweringErrorKind::FreeFormMap,
        ),
        (
            json!({"type": "array", "prefixItems": [{"type": "string"}]}),
            LoweringErrorKind::Tuple,
        ),
        (json!(true), LoweringErrorKind::Unconstrained),
        (json!({}), LoweringErrorKind::Unconstrained),
        (
            json!({"allOf": [{"type": "string"}]}),
            LoweringErrorKind::Unsupported {
                keyword: "allOf".into(),
            },
        ),
    ];
    for (schema, kind) in cases {
        let error = lower(root(
            json!({"p": {"type": "array", "items": schema}}),
            json!(["p"]),
        ))
        .unwrap_err();
        assert_eq!(error.kind(), &kind);
        assert_eq!(error.path(), "properties.p.items");
    }
    let error = lower(json!({"type": "array"})).unwrap_err();
    assert_eq!(error.kind(), &LoweringErrorKind::RootNotObject);
}

#[test]
fn recursive_canonical_schema_is_refused_with_its_place() {
    let tree = json!({"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}, "required": ["kids"]});
    let generated = json!({
        "type": "object", "properties": {"tree": tree}, "required": ["tree"], "$defs": {"Tree": tree}
    });
    let canonical = canonicalize(&generated, &["tree"]).unwrap();
    let error = gemini(&canonical).unwrap_err();
    assert_eq!(error.path(), "properties.tree.properties.kids.items");
    assert!(error.to_string().contains("recursive type"), "{error}");
}
