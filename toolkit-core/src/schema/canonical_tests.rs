use serde_json::{Value, json};

use super::*;
use crate::schema::Source;

fn canonical(generated: Value, order: &[&str]) -> Value {
    canonicalize(&generated, order).unwrap().to_value()
}

fn text(generated: Value, order: &[&str]) -> String {
    canonicalize(&generated, order).unwrap().to_json_string()
}

/// A root object around one optional property `p`.
fn optional(property: Value) -> Value {
    json!({"type": "object", "properties": {"p": property}, "additionalProperties": false})
}

fn canonical_p(property: Value) -> Value {
    canonical(optional(property), &["p"])["properties"]["p"].clone()
}

#[test]
fn drops_title_and_schema_but_not_a_property_named_title() {
    let out = canonical(
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "title": {"title": "Inner", "type": "string"},
                "nested": {"type": "object", "title": "Nested",
                           "properties": {"title": {"type": "string"}}, "required": ["title"]}
            },
            "required": ["title", "nested"]
        }),
        &["title", "nested"],
    );
    assert_eq!(
        out,
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "nested": {"type": "object", "properties": {"title": {"type": "string"}},
                           "required": ["title"], "additionalProperties": false}
            },
            "required": ["title", "nested"],
            "additionalProperties": false
        })
    );
}

#[test]
fn root_properties_follow_param_order() {
    let generated = json!({
        "type": "object",
        "properties": {
            "b": {"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "string"}}},
            "a": {"type": "string"},
            "c": {"type": "string"}
        },
        "required": ["c", "b", "a"]
    });
    assert_eq!(
        text(generated.clone(), &["c", "b", "a"]),
        r#"{"type":"object","properties":{"c":{"type":"string"},"b":{"type":"object","properties":{"a":{"type":"string"},"z":{"type":"string"}},"additionalProperties":false},"a":{"type":"string"}},"required":["c","b","a"],"additionalProperties":false}"#
    );
    // Names the order leaves out follow: required ones in `required`'s order.
    let out = canonicalize(&generated, &["c"]).unwrap();
    let names: Vec<&str> = out
        .get("properties")
        .unwrap()
        .as_object()
        .unwrap()
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["c", "b", "a"]);
}

#[test]
fn nested_required_properties_keep_declaration_order() {
    // schemars writes `required` in declaration order in every build, and
    // `properties` alphabetically unless `preserve_order` is on.
    let generated = json!({
        "type": "object",
        "properties": {
            "event": {
                "type": "object",
                "properties": {
                    "attendees": {"type": "array", "items": {"type": "string"}},
                    "note": {"type": "string"},
                    "slot": {"type": "string"},
                    "alpha": {"type": "string"},
                    "title": {"type": "string"}
                },
                "required": ["title", "slot", "attendees"]
            }
        },
        "required": ["event"]
    });
    let out = canonicalize(&generated, &["event"]).unwrap();
    let names: Vec<&str> = out
        .get("properties")
        .and_then(|p| p.get("event"))
        .and_then(|e| e.get("properties"))
        .and_then(OrderedJson::as_object)
        .unwrap()
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["title", "slot", "attendees", "alpha", "note"]);
}

#[test]
fn bad_param_order_is_an_error() {
    let generated = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    assert_eq!(
        canonicalize(&generated, &["a", "b"]),
        Err(SchemaError::UnknownParam { name: "b".into() })
    );
    assert_eq!(
        canonicalize(&generated, &["a", "a"]),
        Err(SchemaError::DuplicateParam { name: "a".into() })
    );
}

#[test]
fn root_gets_type_and_empty_properties() {
    assert_eq!(
        canonical(
            json!({"title": "NoArgs", "additionalProperties": false}),
            &[]
        ),
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    // Closed like any struct: the arguments struct denies unknown fields.
    assert_eq!(
        text(json!({"type": "object"}), &[]),
        r#"{"type":"object","properties":{},"additionalProperties":false}"#
    );
}

#[test]
fn non_object_roots_are_errors() {
    for root in [
        json!({"type": "array", "items": {"type": "string"}}),
        json!({"anyOf": [{"type": "object"}, {"type": "null"}]}),
        json!(true),
        json!(["not", "a", "schema"]),
        json!({"type": ["object", "null"]}),
    ] {
        let error = canonicalize(&root, &[]).unwrap_err();
        assert!(
            matches!(error, SchemaError::RootNotObject { .. }),
            "{root}: {error}"
        );
    }
}

#[test]
fn malformed_sub_schemas_are_errors_not_panics() {
    let error = canonicalize(&optional(json!({"type": "array", "items": 5})), &["p"]).unwrap_err();
    assert_eq!(
        error,
        SchemaError::NotASchema {
            path: "properties.p.items".into(),
            found: "a number".into()
        }
    );
    let error = canonicalize(&optional(json!({"anyOf": {"type": "string"}})), &["p"]).unwrap_err();
    assert!(
        error.to_string().contains("`properties.p.anyOf`"),
        "{error}"
    );
    let error = canonicalize(&json!({"type": "object", "properties": []}), &[]).unwrap_err();
    assert!(matches!(error, SchemaError::NotASchema { .. }));
}

#[test]
fn deep_input_is_refused_before_recursing() {
    let mut deep = json!({"type": "string"});
    for _ in 0..MAX_JSON_DEPTH {
        deep = json!({"type": "array", "items": deep});
    }
    let error = canonicalize(&optional(deep), &["p"]).unwrap_err();
    assert!(matches!(
        error,
        SchemaError::TooDeep {
            limit: MAX_JSON_DEPTH,
            ..
        }
    ));
}

#[test]
fn optional_primitive_keeps_its_null_type() {
    // Absent and `null` are different values where the type tells them
    // apart (`Option<Option<T>>`), so an optional property keeps its `null`.
    assert_eq!(
        canonical_p(json!({"type": ["integer", "null"], "format": "uint32", "minimum": 0})),
        json!({"type": ["integer", "null"], "minimum": 0, "maximum": 4_294_967_295u64})
    );
}

#[test]
fn required_nullable_keeps_its_null() {
    let generated = json!({
        "type": "object",
        "properties": {"p": {"type": ["string", "null"]}},
        "required": ["p"]
    });
    assert_eq!(
        canonical(generated, &["p"])["properties"]["p"],
        json!({"type": ["string", "null"]})
    );
}

#[test]
fn optional_any_of_null_keeps_its_null_branch() {
    assert_eq!(
        canonical_p(json!({
            "description": "Field doc.",
            "anyOf": [
                {"description": "Type doc.", "type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]},
                {"type": "null"}
            ]
        })),
        json!({"description": "Field doc.", "anyOf": [
            {"type": "object", "description": "Type doc.", "properties": {"x": {"type": "boolean"}},
             "required": ["x"], "additionalProperties": false},
            {"type": "null"}
        ]})
    );
}

#[test]
fn optional_plain_enum_keeps_null_in_type_and_values() {
    assert_eq!(
        canonical_p(json!({"type": ["string", "null"], "enum": ["A", "B", null]})),
        json!({"type": ["string", "null"], "enum": ["A", "B", null]})
    );
}

#[test]
fn nested_optional_properties_keep_null_too() {
    let out = canonical_p(json!({
        "type": ["object", "null"],
        "properties": {"min": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255},
                       "tags": {"type": "array", "items": {"type": ["string", "null"]}}},
        "required": ["tags"]
    }));
    assert_eq!(
        out,
        json!({"type": ["object", "null"],
               "properties": {"min": {"type": ["integer", "null"], "minimum": 0, "maximum": 255},
                              // Not a property: a list of optional strings keeps its nulls.
                              "tags": {"type": "array", "items": {"type": ["string", "null"]}}},
               "required": ["tags"], "additionalProperties": false})
    );
}

#[test]
fn documented_unit_enum_becomes_a_flat_string_enum() {
    let order = json!({
        "description": "Sort order.",
        "oneOf": [
            {"type": "string", "enum": ["relevance"]},
            {"description": "Newest first.", "type": "string", "const": "newest"},
            {"description": "Oldest first.\nBy date.", "type": "string", "const": "oldest"}
        ]
    });
    let generated = json!({
        "type": "object",
        "properties": {"order": order, "maybe": {"anyOf": [order, {"type": "null"}]}},
        "required": ["order"]
    });
    let out = canonical(generated, &["order", "maybe"]);
    let expected = json!({
        "type": "string",
        "description": "Sort order.\n\n- `newest`: Newest first.\n- `oldest`: Oldest first.\n  By date.",
        "enum": ["relevance", "newest", "oldest"]
    });
    assert_eq!(out["properties"]["order"], expected);
    assert_eq!(
        out["properties"]["maybe"],
        json!({
            "type": ["string", "null"],
            "description": "Sort order.\n\n- `newest`: Newest first.\n- `oldest`: Oldest first.\n  By date.",
            "enum": ["relevance", "newest", "oldest", null]
        })
    );
}

#[test]
fn undocumented_variants_add_no_list() {
    assert_eq!(
        canonical_p(
            json!({"oneOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"}]})
        ),
        json!({"type": "string", "enum": ["a", "b"]})
    );
}

#[test]
fn data_carrying_enums_stay_unions() {
    let union = json!({"oneOf": [
        {"type": "string", "enum": ["Unit"]},
        {"type": "object", "properties": {"Text": {"type": "string"}}, "required": ["Text"]}
    ]});
    assert_eq!(
        canonical_p(union),
        json!({"oneOf": [
            {"type": "string", "enum": ["Unit"]},
            {"type": "object", "properties": {"Text": {"type": "string"}}, "required": ["Text"], "additionalProperties": false}
        ]})
    );
}

#[test]
fn integer_formats_become_bounds() {
    let cases = [
        (
            "int8",
            json!({"type": "integer", "minimum": -128, "maximum": 127}),
        ),
        (
            "int16",
            json!({"type": "integer", "minimum": -32768, "maximum": 32767}),
        ),
        (
            "int32",
            json!({"type": "integer", "minimum": -2_147_483_648i64, "maximum": 2_147_483_647}),
        ),
        (
            "uint8",
            json!({"type": "integer", "minimum": 0, "maximum": 255}),
        ),
        (
            "uint16",
            json!({"type": "integer", "minimum": 0, "maximum": 65535}),
        ),
        (
            "uint32",
            json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_295u64}),
        ),
        (
            "int64",
            json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX}),
        ),
        (
            "int",
            json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX}),
        ),
        // What a parsed `serde_json::Value` carries exactly.
        (
            "int128",
            json!({"type": "integer", "minimum": i64::MIN, "maximum": u64::MAX}),
        ),
        (
            "uint64",
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
        ),
        (
            "uint128",
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
        ),
        (
            "uint",
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}),
        ),
    ];
    for (format, expected) in cases {
        assert_eq!(
            canonical_p(json!({"type": "integer", "format": format})),
            expected,
            "{format}"
        );
    }
}

#[test]
fn tighter_bounds_are_kept() {
    assert_eq!(
        canonical_p(json!({"type": "integer", "format": "uint8", "minimum": 1, "maximum": 100})),
        json!({"type": "integer", "minimum": 1, "maximum": 100})
    );
    assert_eq!(
        canonical_p(json!({"type": "integer", "format": "uint32", "minimum": 1})),
        json!({"type": "integer", "minimum": 1, "maximum": 4_294_967_295u64})
    );
    // A looser bound than the type allows is tightened.
    assert_eq!(
        canonical_p(json!({"type": "integer", "format": "uint8", "minimum": -5, "maximum": 1000})),
        json!({"type": "integer", "minimum": 0, "maximum": 255})
    );
}

#[test]
fn float_formats_go_standard_formats_stay() {
    assert_eq!(
        canonical_p(json!({"type": "number", "format": "double"})),
        json!({"type": "number"})
    );
    // An `f32` reads a larger number as an infinity: its range is a bound.
    assert_eq!(
        canonical_p(json!({"type": "number", "format": "float"})),
        json!({"type": "number", "minimum": -3.4028235e38, "maximum": 3.4028235e38})
    );
    assert_eq!(
        canonical_p(json!({"type": "number", "format": "float", "minimum": 0.1, "maximum": 2.5})),
        json!({"type": "number", "minimum": 0.1, "maximum": 2.5})
    );
    for format in [
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uuid",
    ] {
        assert_eq!(
            canonical_p(json!({"type": "string", "format": format})),
            json!({"type": "string", "format": format})
        );
    }
}

#[test]
fn recursive_types_keep_their_definitions_canonical() {
    let tree = json!({
        "title": "Tree", "description": "A tree.", "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
            "parent": {"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]},
            "size": {"type": ["integer", "null"], "format": "uint16"}
        },
        "required": ["name", "children"]
    });
    let generated = json!({
        "type": "object",
        "properties": {"tree": tree},
        "required": ["tree"],
        "$defs": {"Tree": tree, "Unused": {"type": "string"}}
    });
    let expected_tree = json!({
        "type": "object", "description": "A tree.",
        "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
            "name": {"type": "string"},
            "parent": {"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]},
            "size": {"type": ["integer", "null"], "minimum": 0, "maximum": 65535}
        },
        "required": ["name", "children"], "additionalProperties": false
    });
    let out = canonical(generated, &["tree"]);
    assert_eq!(out["properties"]["tree"], expected_tree);
    assert_eq!(out["$defs"], json!({"Tree": expected_tree}));
}

#[test]
fn non_recursive_definitions_are_inlined() {
    let generated = json!({
        "type": "object",
        "properties": {"point": {"$ref": "#/$defs/Point", "description": "Where."}},
        "required": ["point"],
        "$defs": {"Point": {"title": "Point", "type": "object", "properties": {"x": {"type": "number", "format": "double"}}, "required": ["x"]}}
    });
    assert_eq!(
        canonical(generated, &["point"]),
        json!({
            "type": "object",
            "properties": {"point": {"type": "object", "description": "Where.",
                                     "properties": {"x": {"type": "number"}}, "required": ["x"],
                                     "additionalProperties": false}},
            "required": ["point"],
            "additionalProperties": false
        })
    );
}

#[test]
fn foreign_references_are_errors() {
    let error = canonicalize(
        &optional(json!({"$ref": "https://example.com/x.json"})),
        &["p"],
    )
    .unwrap_err();
    assert_eq!(
        error,
        SchemaError::UnsupportedRef {
            path: "properties.p".into(),
            reference: "\"https://example.com/x.json\"".into()
        }
    );
}

#[test]
fn maps_stay_open_and_objects_beside_unions_stay_open() {
    assert_eq!(
        canonical_p(
            json!({"type": "object", "additionalProperties": {"type": "integer", "format": "int32"}})
        ),
        json!({"type": "object", "additionalProperties": {"type": "integer", "minimum": -2_147_483_648i64, "maximum": 2_147_483_647}})
    );
    // `#[serde(flatten)]` of an enum: the branches' properties belong to the
    // same object as the root's, so nothing may be closed.
    let generated = json!({
        "type": "object",
        "properties": {"y": {"type": "integer", "format": "uint8"}},
        "oneOf": [
            {"type": "object", "properties": {"t": {"type": "string", "const": "A"}}, "required": ["t"]},
            {"type": "object", "properties": {"t": {"type": "string", "const": "B"}}, "required": ["t"]}
        ],
        "required": ["y"],
        "unevaluatedProperties": false
    });
    let out = canonical(generated, &["y"]);
    assert!(out.get("additionalProperties").is_none());
    assert!(out["oneOf"][0].get("additionalProperties").is_none());
    assert_eq!(out["unevaluatedProperties"], json!(false));
}

#[test]
fn union_branches_are_closed_when_nothing_else_sees_their_properties() {
    let out = canonical_p(json!({"oneOf": [
        {"type": "object", "properties": {"kind": {"type": "string", "const": "Circle"}, "r": {"type": "number"}}, "required": ["kind", "r"]},
        {"type": "object", "properties": {"kind": {"type": "string", "const": "Square"}}, "required": ["kind"]}
    ]}));
    assert_eq!(out["oneOf"][0]["additionalProperties"], json!(false));
    assert_eq!(out["oneOf"][1]["additionalProperties"], json!(false));
    // Under `allOf` or `not`, closing would change the meaning.
    let out = canonical_p(
        json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}),
    );
    assert!(out["allOf"][0].get("additionalProperties").is_none());
}

#[test]
fn keyword_order_is_fixed() {
    // (A derived schema's `uniqueItems` is dropped: serde keeps one of
    // repeated set items rather than refusing them.)
    let out = text(
        optional(json!({
            "uniqueItems": true, "x-extra": 1, "maxItems": 3, "items": {"type": "string", "minLength": 1,
            "description": "Tag."}, "description": "Tags.", "type": "array", "default": ["a"], "minItems": 1
        })),
        &["p"],
    );
    assert_eq!(
        out,
        r#"{"type":"object","properties":{"p":{"type":"array","description":"Tags.","items":{"type":"string","description":"Tag.","minLength":1},"minItems":1,"maxItems":3,"default":["a"],"x-extra":1}},"additionalProperties":false}"#
    );
}

/// Every ordering of every object's keys gives the same bytes.
#[test]
fn output_does_not_depend_on_input_key_order() {
    let generated = json!({
        "title": "Args", "type": "object", "description": "Args.",
        "properties": {
            "query": {"type": "string", "description": "Q."},
            "limit": {"type": ["integer", "null"], "format": "uint8", "minimum": 0, "maximum": 255},
            "filter": {"type": ["object", "null"], "properties": {"b": {"type": "string"}, "a": {"type": "string"}}, "required": ["b"]},
            "order": {"description": "Order.", "oneOf": [{"type": "string", "const": "x", "description": "X."}, {"type": "string", "const": "y"}]},
            "meta": {"type": "object", "default": {"z": 1, "a": {"y": 2, "b": 3}}, "additionalProperties": {"type": "string"}}
        },
        "required": ["query", "meta", "order"],
        "additionalProperties": false
    });
    let expected = text(
        generated.clone(),
        &["query", "limit", "filter", "order", "meta"],
    );
    for rotation in 0..5 {
        let mut tree = OrderedJson::from(&generated);
        permute(&mut tree, rotation);
        let order = ["query", "limit", "filter", "order", "meta"];
        // The tree keeps the permuted order in every build ...
        let out = canonicalize_tree(tree.clone(), &order, Source::Derived)
            .unwrap()
            .to_json_string();
        assert_eq!(out, expected, "rotation {rotation}");
        // ... a `Value` only under serde_json's `preserve_order`: the
        // public entry point must agree either way.
        let out = canonicalize(&tree.to_value(), &order)
            .unwrap()
            .to_json_string();
        assert_eq!(out, expected, "rotation {rotation}");
    }
}

/// Rotates and reverses every object's members, recursively.
pub(super) fn permute(tree: &mut OrderedJson, rotation: usize) {
    match tree {
        OrderedJson::Object(members) => {
            if !members.is_empty() {
                let by = rotation % members.len();
                members.rotate_left(by);
                if rotation % 2 == 1 {
                    members.reverse();
                }
            }
            members
                .iter_mut()
                .for_each(|(_, value)| permute(value, rotation));
        }
        OrderedJson::Array(items) => items.iter_mut().for_each(|item| permute(item, rotation)),
        _ => {}
    }
}

#[test]
fn canonical_schemas_are_a_fixed_point() {
    let inputs = [
        json!({"type": "object"}),
        json!({"type": "object", "properties": {"b": {"type": ["integer", "null"], "format": "uint8"}, "a": {"oneOf": [{"const": "x", "type": "string", "description": "X."}]}}, "required": ["a"]}),
        json!({"type": "object", "properties": {"t": {"$ref": "#/$defs/T"}}, "$defs": {"T": {"type": "object", "properties": {"k": {"type": "array", "items": {"$ref": "#/$defs/T"}}}}}}),
    ];
    for input in inputs {
        let order: Vec<String> = input["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone())
            .collect();
        let order: Vec<&str> = order.iter().map(String::as_str).collect();
        let once = canonicalize(&input, &order).unwrap();
        let twice = canonicalize_tree(once.clone(), &order, Source::Derived).unwrap();
        assert_eq!(once, twice, "{input}");
    }
}

#[test]
fn durations_and_sets_say_what_serde_does() {
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        wait: std::time::Duration,
        tags: std::collections::HashSet<String>,
    }
    let tool = crate::tool::schema::ToolSchema::of::<Args>(&["wait", "tags"]);
    let out: Value = serde_json::from_str(tool.canonical().unwrap()).unwrap();
    assert_eq!(
        out["properties"]["wait"]["properties"]["nanos"]["maximum"],
        json!(999_999_999),
        "{out}"
    );
    assert!(
        out["properties"]["tags"].get("uniqueItems").is_none(),
        "{out}"
    );
}

/// `$anchor` names one place in a schema; the canonical form inlines a
/// definition wherever it is used, so an anchor kept would name several
/// places (which JSON Schema forbids, and OpenAI's strict mode refuses).
/// References by anchor are not followed here, so anchors go, as
/// `$schema` does; MCP keeps the schema as written, anchors included.
#[test]
fn anchors_go_with_the_definitions_they_named() {
    let generated = json!({
        "type": "object",
        "properties": {
            "from": {"$ref": "#/$defs/Place"},
            "to": {"$ref": "#/$defs/Place"}
        },
        "required": ["from", "to"],
        "$defs": {"Place": {
            "$anchor": "place",
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        }}
    });
    let out = canonical(generated, &["from", "to"]);
    assert!(!out.to_string().contains("$anchor"), "{out}");
    assert_eq!(out["properties"]["from"], out["properties"]["to"]);
    let tree = canonicalize(&out, &["from", "to"]).unwrap();
    let strict = crate::schema::lower::lower(&tree, crate::schema::Dialect::OpenAiStrict);
    assert!(strict.is_ok(), "{strict:?}");
}
