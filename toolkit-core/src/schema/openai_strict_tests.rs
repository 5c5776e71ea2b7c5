use serde_json::{Value, json};

use super::*;
use crate::schema::*;

fn strict(canonical: Value) -> Result<Value, LoweringError> {
    openai_strict(&OrderedJson::from(&canonical)).map(|lowered| lowered.to_value())
}

fn strict_text(canonical: Value) -> String {
    openai_strict(&OrderedJson::from(&canonical))
        .unwrap()
        .to_json_string()
}

fn root(properties: Value, required: Value) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn error_of(canonical: Value) -> LoweringError {
    strict(canonical).unwrap_err()
}

#[test]
fn every_property_required_optional_ones_nullable() {
    let canonical = OrderedJson::from(&root(
        json!({
            "query": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Max."},
            "order": {"type": "string", "enum": ["newest", "oldest"]},
            "filter": {"type": "object", "description": "F.", "properties": {"tag": {"type": "string"}}, "required": ["tag"], "additionalProperties": false},
            "tags": {"type": "array", "items": {"type": "string"}}
        }),
        json!(["query"]),
    ));
    // Keep the declaration order the map above lost.
    let mut canonical = canonical;
    if let Some(OrderedJson::Object(properties)) = canonical.get_mut("properties") {
        let order = ["query", "limit", "order", "filter", "tags"];
        properties.sort_by_key(|(name, _)| order.iter().position(|o| o == name));
    }
    assert_eq!(
        openai_strict(&canonical).unwrap().to_json_string(),
        concat!(
            r#"{"type":"object","properties":{"query":{"type":"string"},"#,
            r#""limit":{"type":["integer","null"],"description":"Max.","minimum":1,"maximum":100},"#,
            r#""order":{"type":["string","null"],"enum":["newest","oldest",null]},"#,
            r#""filter":{"description":"F.","anyOf":[{"type":"object","properties":{"tag":{"type":"string"}},"required":["tag"],"additionalProperties":false},{"type":"null"}]},"#,
            r#""tags":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"null"}]}},"#,
            r#""required":["query","limit","order","filter","tags"],"additionalProperties":false}"#
        )
    );
}

#[test]
fn every_object_is_closed_and_complete() {
    let out = strict(root(
        json!({"a": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "string"}}, "required": ["x"]}}),
        json!(["a"]),
    ))
    .unwrap();
    let a = &out["properties"]["a"];
    assert_eq!(a["additionalProperties"], json!(false));
    assert_eq!(a["required"], json!(["x", "y"]));
    assert_eq!(a["properties"]["y"], json!({"type": ["string", "null"]}));
}

#[test]
fn empty_object_gets_empty_properties() {
    assert_eq!(
        strict(json!({"type": "object", "additionalProperties": false})).unwrap(),
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    );
}

#[test]
fn maps_and_open_objects_are_errors() {
    let error = error_of(root(
        json!({"filter": {"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": {"type": "integer"}}}, "required": ["tags"]}}),
        json!(["filter"]),
    ));
    assert_eq!(error.path(), "properties.filter.properties.tags");
    assert_eq!(error.kind(), &LoweringErrorKind::FreeFormMap);
    assert!(error.to_string().contains("free-form map"), "{error}");
    assert!(
        error
            .to_string()
            .contains("not allowed in OpenAI strict mode"),
        "{error}"
    );

    let error = error_of(root(json!({"o": {"type": "object"}}), json!(["o"])));
    assert_eq!(error.kind(), &LoweringErrorKind::FreeFormMap);
}

#[test]
fn one_of_becomes_any_of_and_const_an_enum() {
    let out = strict(root(
        json!({"shape": {"oneOf": [
            {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"}}, "required": ["kind"], "additionalProperties": false},
            {"type": "string", "enum": ["none"]}
        ]}}),
        json!(["shape"]),
    ))
    .unwrap();
    assert_eq!(
        out["properties"]["shape"],
        json!({"anyOf": [
            {"type": "object", "properties": {"kind": {"type": "string", "enum": ["circle"]}}, "required": ["kind"], "additionalProperties": false},
            {"type": "string", "enum": ["none"]}
        ]})
    );
}

#[test]
fn optional_union_gains_a_null_branch() {
    let out = strict(root(
        json!({"u": {"description": "U.", "anyOf": [{"type": "string"}, {"type": "integer"}]}}),
        json!([]),
    ))
    .unwrap();
    assert_eq!(
        out["properties"]["u"],
        json!({"description": "U.", "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
    );
}

#[test]
// The list of `REJECTED` written again on purpose: a keyword dropped
// there must fail here.
fn rejected_keywords_are_errors() {
    for keyword in [
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
    ] {
        let mut property = json!({"type": "string"});
        property[keyword] = json!([{"type": "string"}]);
        let error = error_of(root(json!({"p": property}), json!(["p"])));
        assert_eq!(error.path(), "properties.p", "{keyword}");
        assert_eq!(
            error.kind(),
            &LoweringErrorKind::Unsupported {
                keyword: keyword.into()
            }
        );
    }
    let error = error_of(root(
        json!({"t": {"type": "array", "prefixItems": [{"type": "string"}]}}),
        json!(["t"]),
    ));
    assert_eq!(error.kind(), &LoweringErrorKind::Tuple);
    let error = error_of(root(
        json!({"x": {"type": "string", "$anchor": "x"}}),
        json!(["x"]),
    ));
    assert_eq!(
        error.kind(),
        &LoweringErrorKind::Unsupported {
            keyword: "$anchor".into()
        }
    );
}

#[test]
fn keywords_json_schema_does_not_define_are_folded_into_the_description() {
    let out = strict(root(
        json!({
            "year": {"type": "integer", "description": "The year.", "optional": true},
            "make": {"type": "string", "x-order": 2, "nullable": false}
        }),
        json!(["make"]),
    ))
    .unwrap();
    assert_eq!(
        out["properties"]["year"],
        json!({"type": ["integer", "null"], "description": "The year.\n\n{optional: true}"})
    );
    assert_eq!(
        out["properties"]["make"],
        json!({"type": "string", "description": "{nullable: false, x-order: 2}"})
    );
}

#[test]
fn lengths_become_a_pattern_annotations_the_description() {
    let out = strict(root(
        json!({
            "name": {"type": "string", "description": "Name.", "minLength": 3, "maxLength": 10},
            "initial": {"type": "string", "minLength": 1, "maxLength": 1},
            "site": {"type": "string", "format": "uri"},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []}
        }),
        json!(["name", "initial", "site", "when", "tags"]),
    ))
    .unwrap();
    assert_eq!(
        out["properties"]["name"],
        json!({"type": "string", "description": "Name.", "pattern": "^[\\s\\S]{3,10}$"})
    );
    // A `char`: exactly one character, which the description alone would
    // not hold the model to.
    assert_eq!(
        out["properties"]["initial"],
        json!({"type": "string", "pattern": "^[\\s\\S]{1}$"})
    );
    assert_eq!(
        out["properties"]["site"],
        json!({"type": "string", "description": "{format: \"uri\"}"})
    );
    assert_eq!(
        out["properties"]["when"],
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(
        out["properties"]["tags"],
        json!({"type": "array", "items": {"type": "string"}, "description": "{default: []}"})
    );
}

#[test]
fn constraints_strict_mode_cannot_state_are_errors_all_of_them() {
    let error = error_of(root(
        json!({
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "code": {"type": "string", "pattern": "^[A-Z]+$", "maxLength": 4},
            "extra": {"type": "object", "properties": {}, "minProperties": 1, "additionalProperties": false}
        }),
        json!(["tags", "code", "extra"]),
    ));
    let mut problems: Vec<(String, String)> = error
        .problems()
        .map(|(path, kind)| (path.to_owned(), format!("{kind:?}")))
        .collect();
    // In the order of the object's keys, which `json!` sorts or keeps as
    // written depending on serde_json's `preserve_order` feature.
    problems.sort();
    assert_eq!(
        problems,
        [
            (
                "properties.code".into(),
                "Constraint { keyword: \"maxLength\" }".into()
            ),
            (
                "properties.extra".into(),
                "Constraint { keyword: \"minProperties\" }".into()
            ),
            (
                "properties.tags".into(),
                "Constraint { keyword: \"uniqueItems\" }".into()
            ),
        ]
    );
    assert!(error.to_string().contains("`tags`"), "{error}");
}

#[test]
fn unconstrained_values_and_type_unions_are_errors() {
    let error = error_of(root(json!({"v": true}), json!(["v"])));
    assert_eq!(
        (error.path(), error.kind()),
        ("properties.v", &LoweringErrorKind::Unconstrained)
    );
    let error = error_of(root(
        json!({"v": {"description": "Anything."}}),
        json!(["v"]),
    ));
    assert_eq!(error.kind(), &LoweringErrorKind::Unconstrained);
    let error = error_of(root(
        json!({"v": {"type": ["string", "integer"]}}),
        json!(["v"]),
    ));
    assert_eq!(
        error.kind(),
        &LoweringErrorKind::TypeUnion {
            types: vec!["string".into(), "integer".into()]
        }
    );
}

#[test]
fn root_must_be_an_object() {
    let error = error_of(json!({"anyOf": [{"type": "object"}]}));
    assert_eq!(
        (error.path(), error.kind()),
        ("", &LoweringErrorKind::RootNotObject)
    );
}

#[test]
fn union_beside_properties_is_an_error() {
    let error = error_of(json!({
        "type": "object",
        "properties": {"y": {"type": "integer"}},
        "oneOf": [{"type": "object", "properties": {"t": {"type": "string"}}, "required": ["t"]}],
        "required": ["y"],
        "unevaluatedProperties": false
    }));
    assert_eq!(error.kind(), &LoweringErrorKind::UnionBesideProperties);
}

#[test]
fn recursion_stays_a_ref_and_refs_with_siblings_are_inlined() {
    let tree = json!({
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                       "name": {"type": "string"},
                       "parent": {"$ref": "#/$defs/Tree", "description": "Up."}},
        "required": ["name", "children"], "additionalProperties": false
    });
    let out = strict(json!({
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Tree", "description": "The tree."}},
        "required": ["tree"],
        "additionalProperties": false,
        "$defs": {"Tree": tree}
    }))
    .unwrap();
    let lowered_tree = json!({
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                       "name": {"type": "string"},
                       "parent": {"description": "Up.", "anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]}},
        "required": ["children", "name", "parent"], "additionalProperties": false
    });
    assert_eq!(out["$defs"]["Tree"], lowered_tree);
    let mut inlined = lowered_tree.clone();
    inlined["description"] = json!("The tree.");
    assert_eq!(out["properties"]["tree"], inlined);
}

#[test]
fn reference_chains_end_and_dangling_references_are_errors() {
    // ToolList that only refer to each other, with docs beside: each is
    // inlined once on a path, then left a bare reference.
    let out = strict(json!({
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "description": "x"}},
        "required": ["a"],
        "additionalProperties": false,
        "$defs": {"A": {"$ref": "#/$defs/B", "description": "y"}, "B": {"$ref": "#/$defs/A", "description": "z"}}
    }))
    .unwrap();
    assert_eq!(out["properties"]["a"], json!({"$ref": "#/$defs/A"}));
    assert_eq!(
        out["$defs"],
        json!({"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}})
    );
    let error = error_of(root(
        json!({"a": {"$ref": "#/$defs/Gone", "description": "x"}}),
        json!(["a"]),
    ));
    assert!(
        matches!(error.kind(), LoweringErrorKind::MissingDefinition { .. }),
        "{error}"
    );
    let error = error_of(root(json!({"a": {"$ref": "#/$defs/Gone"}}), json!(["a"])));
    assert_eq!(error.path(), "properties.a");
}

fn nested(depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        schema = json!({"type": "object", "properties": {"n": schema}, "required": ["n"], "additionalProperties": false});
    }
    schema
}

#[test]
fn nesting_limit() {
    assert!(strict(nested(MAX_OBJECT_DEPTH)).is_ok());
    let error = error_of(nested(MAX_OBJECT_DEPTH + 1));
    assert_eq!(
        error.kind(),
        &LoweringErrorKind::TooDeep {
            depth: 11,
            limit: 10
        }
    );
    assert_eq!(error.path(), ["properties.n"; 10].join("."));
}

#[test]
fn property_count_limit() {
    let many = |count: usize| {
        let properties: serde_json::Map<String, Value> = (0..count)
            .map(|i| (format!("p{i}"), json!({"type": "boolean"})))
            .collect();
        root(Value::Object(properties), json!([]))
    };
    assert!(strict(many(MAX_PROPERTIES)).is_ok());
    assert_eq!(
        error_of(many(MAX_PROPERTIES + 1)).kind(),
        &LoweringErrorKind::TooManyProperties {
            count: 5001,
            limit: 5000
        }
    );
}

#[test]
fn enum_limits() {
    let values = |count: usize, width: usize| -> Vec<String> {
        (0..count).map(|i| format!("{i:0width$}")).collect()
    };
    let with_enum = |values: Vec<String>| {
        root(
            json!({"e": {"type": "string", "enum": values}}),
            json!(["e"]),
        )
    };

    assert!(strict(with_enum(values(MAX_ENUM_VALUES, 4))).is_ok());
    assert_eq!(
        error_of(with_enum(values(MAX_ENUM_VALUES + 1, 4))).kind(),
        &LoweringErrorKind::TooManyEnumValues {
            count: 1001,
            limit: 1000
        }
    );
    // 251 values of 60 characters: 15,060 characters.
    let error = error_of(with_enum(values(LARGE_ENUM + 1, 60)));
    assert_eq!(error.path(), "properties.e");
    assert_eq!(
        error.kind(),
        &LoweringErrorKind::EnumTooLong {
            values: 251,
            count: 15_060,
            limit: 15_000
        }
    );
    // 250 values may be longer.
    assert!(strict(with_enum(values(LARGE_ENUM, 60))).is_ok());
}

#[test]
fn character_limit() {
    let long = |length: usize| {
        let properties: serde_json::Map<String, Value> = (0..40)
            .map(|i| (format!("{i:0length$}"), json!({"type": "boolean"})))
            .collect();
        root(Value::Object(properties), json!([]))
    };
    assert!(strict(long(3000)).is_ok());
    assert_eq!(
        error_of(long(3001)).kind(),
        &LoweringErrorKind::TooManyCharacters {
            count: 120_040,
            limit: 120_000
        }
    );
}

#[test]
fn lowering_a_canonical_schema_is_deterministic_and_ordered() {
    let generated = json!({
        "type": "object",
        "properties": {"b": {"type": ["integer", "null"], "format": "uint8"}, "a": {"type": "string", "maxLength": 4}},
        "required": ["a"],
        "additionalProperties": false
    });
    let canonical = canonicalize(&generated, &["a", "b"]).unwrap();
    let first = openai_strict(&canonical).unwrap().to_json_string();
    assert_eq!(
        first,
        r#"{"type":"object","properties":{"a":{"type":"string","pattern":"^[\\s\\S]{0,4}$"},"b":{"type":["integer","null"],"minimum":0,"maximum":255}},"required":["a","b"],"additionalProperties":false}"#
    );
    assert_eq!(openai_strict(&canonical).unwrap().to_json_string(), first);
    // A strict schema lowers to itself: the lowering is a fixed point.
    assert_eq!(strict_text(serde_json::from_str(&first).unwrap()), first);
}
