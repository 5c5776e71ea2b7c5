//! The canonical schema and its lowerings, end to end on what schemars
//! generates for realistic argument types: each provider's rules, byte-for-
//! byte determinism, and JSON Schema 2020-12 validity (checked against the
//! meta-schema by the `jsonschema` crate).

use std::collections::HashMap;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde_json::{Value, json};
use toolkit_core::Provider;
use toolkit_core::schema::{
    self, Dialect, LoweringErrorKind, OrderedJson, SchemaError, canonicalize, gemini, openai_strict,
};
use toolkit_tests::judges::gemini_schema::problems as gemini_problems;
use toolkit_tests::judges::walk_schemas;
use toolkit_tests::meta_schema::{accepts, assert_valid_2020_12};

// ------------------------------------------------------------------ types

/// Sort order for results.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Order {
    /// Newest first.
    Newest,
    /// Oldest first.
    Oldest,
    Relevance,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
enum Size {
    Small,
    Large,
}

/// A filter on photos.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Filter {
    /// Tags that must all match.
    tags: Vec<String>,
    min_width: Option<u16>,
    /// Only photos with this title.
    title: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(dead_code)]
enum Shape {
    Circle { radius: f64 },
    Square { side: f32 },
}

/// Search the user's photos.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct SearchPhotos {
    /// Free-text query.
    query: String,
    /// Max results (default 10).
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u8>,
    /// Result ordering.
    order: Option<Order>,
    size: Size,
    filter: Option<Filter>,
    shape: Shape,
    offset: u64,
    score: f32,
    delta: i32,
    /// A label for the search.
    title: Option<String>,
}

const SEARCH_PHOTOS: &[&str] = &[
    "query", "limit", "order", "size", "filter", "shape", "offset", "score", "delta", "title",
];

/// A folder and everything below it.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Folder {
    name: String,
    children: Vec<Folder>,
    /// The folder above, if any.
    parent: Option<Box<Folder>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct SyncTree {
    /// The folder to sync.
    root: Folder,
    depth: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct CountWords {
    /// Counts per word.
    counts: HashMap<String, u32>,
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Everything {
    /// An email address.
    #[schemars(email)]
    email: String,
    #[schemars(length(min = 3, max = 20))]
    handle: String,
    tags: std::collections::BTreeSet<String>,
    /// Retries, at least one.
    retries: std::num::NonZeroU8,
    small: i8,
    big: i64,
    ratio: Option<f64>,
    when: Option<Vec<Option<bool>>>,
    #[serde(default)]
    verbose: bool,
}

const EVERYTHING: &[&str] = &[
    "email", "handle", "tags", "retries", "small", "big", "ratio", "when", "verbose",
];

// The settings of `schema/of_type.rs`'s `generate`, written again on
// purpose: the rules are judged on schemars' own output, not on the
// crate's way of asking for it.
/// What the generator produces: schemars' 2020-12 root schema with
/// sub-schemas inlined and no `$schema`.
fn generated<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

fn canonical<T: JsonSchema>(order: &[&str]) -> OrderedJson {
    canonicalize(&generated::<T>(), order).unwrap()
}

/// Every fixture: name, generated schema, parameter order.
fn fixtures() -> Vec<(&'static str, Value, &'static [&'static str])> {
    vec![
        ("SearchPhotos", generated::<SearchPhotos>(), SEARCH_PHOTOS),
        ("SyncTree", generated::<SyncTree>(), &["root", "depth"]),
        ("CountWords", generated::<CountWords>(), &["counts", "name"]),
        ("NoArgs", generated::<NoArgs>(), &[]),
        ("Everything", generated::<Everything>(), EVERYTHING),
    ]
}

// ---------------------------------------------------------------- judges

/// OpenAI strict mode's rules, checked independently of the lowering.
fn strict_problems(schema: &Value) -> Vec<String> {
    const ALLOWED: &[&str] = &[
        "type",
        "description",
        "enum",
        "format",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "additionalProperties",
        "anyOf",
        "$ref",
        "$defs",
    ];
    // As in `schema/openai_strict.rs`, on purpose: the judge does not read
    // the code it judges.
    const FORMATS: &[&str] = &[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ];
    let mut problems = Vec::new();
    if schema.get("type") != Some(&json!("object")) {
        problems.push("root is not an object".to_owned());
    }
    walk_schemas(schema, "", &mut |path, members| {
        for keyword in members.keys() {
            if !ALLOWED.contains(&keyword.as_str()) {
                problems.push(format!("{path}: keyword {keyword}"));
            }
        }
        if let Some(format) = members.get("format").and_then(Value::as_str)
            && !FORMATS.contains(&format)
        {
            problems.push(format!("{path}: format {format}"));
        }
        if let Some(Value::Array(kinds)) = members.get("type")
            && (kinds.len() != 2 || !kinds.contains(&json!("null")))
        {
            problems.push(format!("{path}: type {kinds:?}"));
        }
        let is_object = members.get("type") == Some(&json!("object"))
            || members
                .get("type")
                .and_then(Value::as_array)
                .is_some_and(|k| k.contains(&json!("object")));
        if is_object {
            if members.get("additionalProperties") != Some(&json!(false)) {
                problems.push(format!("{path}: object not closed"));
            }
            let names: Vec<&String> = members
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            let required: Vec<&str> = members
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if names.len() != required.len()
                || names.iter().any(|n| !required.contains(&n.as_str()))
            {
                problems.push(format!(
                    "{path}: required {required:?} is not every property {names:?}"
                ));
            }
        }
        if members.contains_key("$ref") && members.len() > 1 {
            problems.push(format!("{path}: $ref with siblings"));
        }
    });
    problems
}

fn property_names(schema: &OrderedJson) -> Vec<String> {
    schema
        .get("properties")
        .and_then(OrderedJson::as_object)
        .unwrap_or_default()
        .iter()
        .map(|(name, _)| name.clone())
        .collect()
}

// ----------------------------------------------------------------- canonical

#[test]
fn search_photos_canonical_schema() {
    let schema = canonical::<SearchPhotos>(SEARCH_PHOTOS);
    let value = schema.to_value();
    assert_eq!(property_names(&schema), SEARCH_PHOTOS, "parameter order");
    assert_eq!(
        value["required"],
        json!(["query", "size", "shape", "offset", "score", "delta"])
    );
    assert_eq!(value["additionalProperties"], json!(false));
    assert_eq!(value["description"], json!("Search the user's photos."));
    let properties = &value["properties"];
    assert_eq!(
        properties["limit"],
        json!({"type": ["integer", "null"], "description": "Max results (default 10).", "minimum": 1, "maximum": 100})
    );
    assert_eq!(
        properties["order"],
        json!({
            "type": ["string", "null"],
            "description": "Result ordering.\n\n- `newest`: Newest first.\n- `oldest`: Oldest first.",
            "enum": ["relevance", "newest", "oldest", null]
        })
    );
    assert_eq!(
        properties["size"],
        json!({"type": "string", "enum": ["Small", "Large"]})
    );
    assert_eq!(
        properties["filter"],
        json!({
            "type": ["object", "null"],
            "description": "A filter on photos.",
            "properties": {
                "min_width": {"type": ["integer", "null"], "minimum": 0, "maximum": 65535},
                "tags": {"type": "array", "description": "Tags that must all match.", "items": {"type": "string"}},
                "title": {"type": ["string", "null"], "description": "Only photos with this title."}
            },
            "required": ["tags"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        properties["offset"],
        json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
    );
    // An `f32` is bounded to what it reads without becoming infinite.
    assert_eq!(
        properties["score"],
        json!({"type": "number", "minimum": -3.4028235e38, "maximum": 3.4028235e38})
    );
    assert_eq!(
        properties["delta"],
        json!({"type": "integer", "minimum": -2_147_483_648i64, "maximum": 2_147_483_647})
    );
    assert_eq!(
        properties["title"],
        json!({"type": ["string", "null"], "description": "A label for the search."})
    );
    assert_eq!(
        properties["shape"]["oneOf"][0]["additionalProperties"],
        json!(false)
    );
    assert_eq!(
        properties["shape"]["oneOf"][0]["properties"]["radius"],
        json!({"type": "number"})
    );

    // The exact text, keyword order included.
    assert!(schema.to_json_string().starts_with(
        r#"{"type":"object","description":"Search the user's photos.","properties":{"query":{"type":"string","description":"Free-text query."},"limit":{"type":["integer","null"],"description":"Max results (default 10).","minimum":1,"maximum":100},"#
    ));
}

#[test]
fn no_title_or_schema_keyword_anywhere() {
    for (name, generated, order) in fixtures() {
        let schema = canonicalize(&generated, order).unwrap().to_value();
        walk_schemas(&schema, "", &mut |path, members| {
            assert!(!members.contains_key("title"), "{name}: title at {path}");
            assert!(
                !members.contains_key("$schema"),
                "{name}: $schema at {path}"
            );
            if let Some(format) = members.get("format").and_then(Value::as_str) {
                assert!(
                    !format.starts_with("int") && !format.starts_with("uint"),
                    "{name}: {format} at {path}"
                );
                assert!(
                    !matches!(format, "float" | "double"),
                    "{name}: {format} at {path}"
                );
            }
        });
    }
    // A property named `title` is not the keyword.
    let search = canonical::<SearchPhotos>(SEARCH_PHOTOS).to_value();
    assert!(search["properties"]["title"].is_object());
    assert!(search["properties"]["filter"]["properties"]["title"].is_object());
}

#[test]
fn canonical_schema_agrees_with_serde() {
    let schema = canonical::<SearchPhotos>(SEARCH_PHOTOS).to_value();
    let minimal = json!({
        "query": "cats", "size": "Small", "shape": {"kind": "circle", "radius": 1.5},
        "offset": 0, "score": 0.5, "delta": -3
    });
    assert!(accepts(&schema, &minimal));
    serde_json::from_value::<SearchPhotos>(minimal.clone()).unwrap();

    let full = json!({
        "query": "cats", "limit": 5, "order": "newest", "size": "Large",
        "filter": {"tags": ["a"], "min_width": 100, "title": "x"},
        "shape": {"kind": "square", "side": 2.0}, "offset": 7, "score": 1, "delta": 2, "title": "t"
    });
    assert!(accepts(&schema, &full));
    serde_json::from_value::<SearchPhotos>(full).unwrap();

    // The last flag: whether serde rejects it too (a `range` is only told
    // to the model, not checked by serde).
    for (key, bad, serde_rejects) in [
        ("limit", json!(0), false),
        ("limit", json!(101), false),
        ("order", json!("random"), true),
        ("unknown", json!(1), true),
        ("offset", json!(-1), true),
        (
            "shape",
            json!({"kind": "circle", "radius": 1, "extra": 1}),
            false,
        ),
    ] {
        let mut instance = minimal.clone();
        instance[key] = bad.clone();
        assert!(!accepts(&schema, &instance), "{key} = {bad}");
        let parsed = serde_json::from_value::<SearchPhotos>(instance);
        assert_eq!(parsed.is_err(), serde_rejects, "{key} = {bad}");
    }
}

#[test]
fn recursive_type_keeps_a_definition() {
    let schema = canonical::<SyncTree>(&["root", "depth"]);
    let value = schema.to_value();
    let folder = json!({
        "type": "object",
        "description": "A folder and everything below it.",
        "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Folder"}},
            "name": {"type": "string"},
            "parent": {"description": "The folder above, if any.", "anyOf": [{"$ref": "#/$defs/Folder"}, {"type": "null"}]}
        },
        "required": ["name", "children"],
        "additionalProperties": false
    });
    assert_eq!(value["$defs"], json!({"Folder": folder}));
    let mut root = folder.clone();
    root["description"] = json!("The folder to sync.");
    assert_eq!(value["properties"]["root"], root);
    assert!(accepts(
        &value,
        &json!({"root": {"name": "a", "children": [{"name": "b", "children": [], "parent": {"name": "c", "children": []}}]}})
    ));
    assert!(!accepts(
        &value,
        &json!({"root": {"name": "a", "children": [{"name": "b"}]}})
    ));
}

#[test]
fn everything_else_canonical() {
    let value = canonical::<Everything>(EVERYTHING).to_value();
    let properties = &value["properties"];
    assert_eq!(
        properties["email"],
        json!({"type": "string", "description": "An email address.", "format": "email"})
    );
    assert_eq!(
        properties["handle"],
        json!({"type": "string", "minLength": 3, "maxLength": 20})
    );
    assert_eq!(
        properties["tags"],
        // A set: serde keeps one of repeated items, so repeats are allowed.
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        properties["retries"],
        json!({"type": "integer", "description": "Retries, at least one.", "minimum": 1, "maximum": 255})
    );
    assert_eq!(
        properties["small"],
        json!({"type": "integer", "minimum": -128, "maximum": 127})
    );
    assert_eq!(
        properties["big"],
        json!({"type": "integer", "minimum": i64::MIN, "maximum": i64::MAX})
    );
    assert_eq!(properties["ratio"], json!({"type": ["number", "null"]}));
    // An `Option<Vec<Option<bool>>>`: both nulls stay.
    assert_eq!(
        properties["when"],
        json!({"type": ["array", "null"], "items": {"type": ["boolean", "null"]}})
    );
    assert_eq!(
        properties["verbose"],
        json!({"type": "boolean", "default": false})
    );
}

#[test]
fn empty_arguments() {
    let schema = canonical::<NoArgs>(&[]);
    assert_eq!(
        schema.to_json_string(),
        r#"{"type":"object","properties":{},"additionalProperties":false}"#
    );
    assert_eq!(
        openai_strict(&schema).unwrap().to_json_string(),
        r#"{"type":"object","properties":{},"required":[],"additionalProperties":false}"#
    );
}

#[test]
fn param_order_must_name_real_parameters() {
    let error = canonicalize(&generated::<SearchPhotos>(), &["qurey"]).unwrap_err();
    assert_eq!(
        error,
        SchemaError::UnknownParam {
            name: "qurey".into()
        }
    );
    assert!(error.to_string().contains("`qurey`"));
    let error = canonicalize(&json!({"type": "array"}), &[]).unwrap_err();
    assert!(matches!(error, SchemaError::RootNotObject { .. }));
    assert!(
        error.to_string().contains("root must be an object schema"),
        "{error}"
    );
}

// --------------------------------------------------------------- determinism

/// The same schema with every object's keys inserted in reverse order: a
/// different `Value` when serde_json's `preserve_order` is on, the same one
/// otherwise. The output must not care.
fn reversed(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, item) in map.iter().rev() {
                out.insert(key.clone(), reversed(item));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

#[test]
fn byte_identical_whatever_the_input_order() {
    for (name, generated, order) in fixtures() {
        let first = canonicalize(&generated, order).unwrap();
        let again = canonicalize(&generated, order).unwrap();
        let flipped = canonicalize(&reversed(&generated), order).unwrap();
        assert_eq!(first.to_json_string(), again.to_json_string(), "{name}");
        assert_eq!(first.to_json_string(), flipped.to_json_string(), "{name}");
        // The writer and serde agree on the bytes.
        assert_eq!(
            first.to_json_string(),
            serde_json::to_string(&first).unwrap(),
            "{name}"
        );
        for (lowered_first, lowered_flipped) in [
            (openai_strict(&first).ok(), openai_strict(&flipped).ok()),
            (gemini(&first).ok(), gemini(&flipped).ok()),
        ] {
            assert_eq!(
                lowered_first.map(|s| s.to_json_string()),
                lowered_flipped.map(|s| s.to_json_string()),
                "{name}"
            );
        }
    }
}

#[test]
fn keywords_follow_the_documented_order() {
    for (name, generated, order) in fixtures() {
        let schema = canonicalize(&generated, order).unwrap();
        check_order(&schema, name);
        if let Ok(strict) = openai_strict(&schema) {
            check_order(&strict, name);
        }
        if let Ok(lowered) = gemini(&schema) {
            check_order(&lowered, name);
        }
    }
}

fn check_order(schema: &OrderedJson, name: &str) {
    let Some(members) = schema.as_object() else {
        return;
    };
    let rank = |k: &str| {
        schema::KEYWORD_ORDER
            .iter()
            .position(|o| *o == k)
            .unwrap_or(usize::MAX)
    };
    let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
    let mut sorted = keys.clone();
    sorted.sort_by_key(|k| (rank(k), *k));
    assert_eq!(keys, sorted, "{name}");
    for (keyword, value) in members {
        match keyword.as_str() {
            "properties" | "$defs" => {
                for (_, sub) in value.as_object().unwrap_or_default() {
                    check_order(sub, name);
                }
            }
            "items" | "additionalProperties" => check_order(value, name),
            "anyOf" | "oneOf" => value
                .as_array()
                .unwrap_or_default()
                .iter()
                .for_each(|s| check_order(s, name)),
            _ => {}
        }
    }
}

// --------------------------------------------------------------- meta-schema

#[test]
fn canonical_and_lowered_schemas_are_valid_2020_12() {
    let mut checked = 0;
    for (_, generated, order) in fixtures() {
        let schema = canonicalize(&generated, order).unwrap();
        for lowered in [
            Some(schema.clone()),
            openai_strict(&schema).ok(),
            schema::lower(&schema, Dialect::Canonical).ok(),
            schema::lower(&schema, Dialect::OpenAiStrict).ok(),
        ]
        .into_iter()
        .flatten()
        {
            assert_valid_2020_12(&lowered.to_value());
            checked += 1;
        }
    }
    assert_eq!(
        checked, 18,
        "5 fixtures × 2, and twice the 4 that are strict-valid"
    );
}

// ------------------------------------------------------------- OpenAI strict

#[test]
fn search_photos_strict() {
    let schema = canonical::<SearchPhotos>(SEARCH_PHOTOS);
    let strict = openai_strict(&schema).unwrap();
    let value = strict.to_value();
    assert_eq!(strict_problems(&value), Vec::<String>::new());
    assert_eq!(property_names(&strict), SEARCH_PHOTOS);
    assert_eq!(value["required"], json!(SEARCH_PHOTOS));
    let properties = &value["properties"];
    assert_eq!(
        properties["limit"],
        json!({"type": ["integer", "null"], "description": "Max results (default 10).", "minimum": 1, "maximum": 100})
    );
    assert_eq!(properties["order"]["type"], json!(["string", "null"]));
    assert_eq!(
        properties["order"]["enum"],
        json!(["relevance", "newest", "oldest", null])
    );
    assert_eq!(
        properties["filter"]["description"],
        json!("A filter on photos.")
    );
    assert_eq!(properties["filter"]["anyOf"][1], json!({"type": "null"}));
    assert_eq!(
        properties["filter"]["anyOf"][0]["required"],
        json!(["tags", "min_width", "title"])
    );
    assert_eq!(
        properties["shape"]["anyOf"][0]["properties"]["kind"],
        json!({"type": "string", "enum": ["circle"]})
    );

    // What a strict model sends, nulls for what it leaves out, is what serde
    // reads.
    let sent = json!({
        "query": "cats", "limit": null, "order": null, "size": "Small", "filter": null,
        "shape": {"kind": "circle", "radius": 1.0}, "offset": 0, "score": 1.0, "delta": 0, "title": null
    });
    assert!(accepts(&value, &sent));
    serde_json::from_value::<SearchPhotos>(sent.clone()).unwrap();
    let mut missing = sent.clone();
    missing.as_object_mut().unwrap().remove("limit");
    assert!(!accepts(&value, &missing), "strict requires every key");

    // Lowering again changes nothing.
    assert_eq!(
        openai_strict(&strict).unwrap().to_json_string(),
        strict.to_json_string()
    );
    assert_eq!(
        schema::lower(&schema, Dialect::OpenAiStrict).unwrap(),
        strict
    );
}

#[test]
fn everything_strict_folds_what_it_cannot_say() {
    let strict = openai_strict(&canonical::<Everything>(EVERYTHING))
        .unwrap()
        .to_value();
    assert_eq!(strict_problems(&strict), Vec::<String>::new());
    let properties = &strict["properties"];
    assert_eq!(
        properties["email"],
        json!({"type": "string", "description": "An email address.", "format": "email"})
    );
    assert_eq!(
        properties["handle"],
        json!({"type": "string", "pattern": "^[\\s\\S]{3,20}$"})
    );
    assert_eq!(
        properties["tags"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        properties["verbose"],
        json!({"type": ["boolean", "null"], "description": "{default: false}"})
    );
    assert_eq!(
        properties["when"],
        json!({"anyOf": [{"type": "array", "items": {"type": ["boolean", "null"]}}, {"type": "null"}]})
    );
}

#[test]
fn recursive_type_strict() {
    let schema = canonical::<SyncTree>(&["root", "depth"]);
    let strict = openai_strict(&schema).unwrap().to_value();
    assert_eq!(strict_problems(&strict), Vec::<String>::new());
    assert_eq!(
        strict["$defs"]["Folder"]["properties"]["parent"],
        json!({"description": "The folder above, if any.", "anyOf": [{"$ref": "#/$defs/Folder"}, {"type": "null"}]})
    );
    assert!(accepts(
        &strict,
        &json!({"root": {"name": "a", "children": [{"name": "b", "children": [], "parent": null}], "parent": null}, "depth": 3})
    ));
}

#[test]
fn maps_are_not_strict() {
    let schema = canonical::<CountWords>(&["counts", "name"]);
    let error = openai_strict(&schema).unwrap_err();
    assert_eq!(error.dialect(), Dialect::OpenAiStrict);
    assert_eq!(error.path(), "properties.counts");
    assert_eq!(error.kind(), &LoweringErrorKind::FreeFormMap);
    assert_eq!(
        error.to_string(),
        "free-form map at `counts` (`additionalProperties` is a schema) is not allowed in \
         OpenAI strict mode: every key must be declared; use a struct or a list of key/value pairs"
    );
    assert!(schema::lower(&schema, Dialect::OpenAiStrict).is_err());
    assert_eq!(schema::lower(&schema, Dialect::Canonical).unwrap(), schema);
}

// ---------------------------------------------------- non-strict, Anthropic, MCP

#[test]
fn non_strict_dialects_take_the_canonical_schema() {
    for (name, generated, order) in fixtures() {
        let schema = canonicalize(&generated, order).unwrap();
        for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Mcp] {
            assert_eq!(
                provider.schema_dialects(),
                [Dialect::Canonical],
                "{provider}"
            );
        }
        let canonical = schema::lower(&schema, Dialect::Canonical).unwrap();
        assert_eq!(canonical, schema, "{name}");
        assert_eq!(
            canonical.get("type"),
            Some(&OrderedJson::from("object")),
            "{name}"
        );
        assert!(canonical.get("properties").is_some(), "{name}");
    }
}

// -------------------------------------------------------------------- Gemini

#[test]
fn search_photos_gemini() {
    let lowered = gemini(&canonical::<SearchPhotos>(SEARCH_PHOTOS)).unwrap();
    let value = lowered.to_value();
    assert_eq!(gemini_problems(&value), Vec::<String>::new());
    assert_eq!(value["propertyOrdering"], json!(SEARCH_PHOTOS));
    assert_eq!(
        value["required"],
        json!(["query", "size", "shape", "offset", "score", "delta"])
    );
    let properties = &value["properties"];
    assert_eq!(
        properties["limit"],
        json!({"type": "integer", "nullable": true, "description": "Max results (default 10).", "minimum": 1, "maximum": 100})
    );
    assert_eq!(
        properties["order"],
        json!({
            "type": "string", "nullable": true,
            "description": "Result ordering.\n\n- `newest`: Newest first.\n- `oldest`: Oldest first.",
            "enum": ["relevance", "newest", "oldest"], "format": "enum"
        })
    );
    assert_eq!(
        properties["filter"]["propertyOrdering"],
        json!(["tags", "min_width", "title"])
    );
    assert_eq!(
        properties["filter"]["properties"]["min_width"]["nullable"],
        json!(true)
    );
    assert_eq!(
        properties["shape"]["anyOf"][0]["properties"]["kind"],
        json!({"type": "string", "format": "enum", "enum": ["circle"]})
    );
}

#[test]
fn everything_gemini() {
    let value = gemini(&canonical::<Everything>(EVERYTHING))
        .unwrap()
        .to_value();
    assert_eq!(gemini_problems(&value), Vec::<String>::new());
    let properties = &value["properties"];
    assert_eq!(
        properties["email"],
        json!({"type": "string", "description": "An email address.\n\n{format: \"email\"}"})
    );
    assert_eq!(
        properties["handle"],
        json!({"type": "string", "minLength": 3, "maxLength": 20})
    );
    assert_eq!(
        properties["when"],
        json!({"type": "array", "nullable": true, "items": {"type": "boolean", "nullable": true}})
    );
}

#[test]
fn gemini_refuses_recursion_and_maps_precisely() {
    let error = gemini(&canonical::<SyncTree>(&["root", "depth"])).unwrap_err();
    assert_eq!(error.dialect(), Dialect::Gemini);
    assert_eq!(error.path(), "properties.root.properties.children.items");
    assert_eq!(
        error.kind(),
        &LoweringErrorKind::Recursive {
            reference: "#/$defs/Folder".into()
        }
    );

    let error = gemini(&canonical::<CountWords>(&["counts", "name"])).unwrap_err();
    assert_eq!(
        (error.path(), error.kind()),
        ("properties.counts", &LoweringErrorKind::FreeFormMap)
    );

    let lowered = gemini(&canonical::<NoArgs>(&[])).unwrap();
    assert_eq!(
        lowered.to_json_string(),
        r#"{"type":"object","properties":{},"propertyOrdering":[]}"#
    );
}
