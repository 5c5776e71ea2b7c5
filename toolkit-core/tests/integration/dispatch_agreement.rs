//! Dispatch accepts exactly what a tool's schemas say, and nothing fails
//! silently: one test per way the two used to disagree.

// The tools' argument types are read by serde and schemars, and shown by
// `Debug`; no test reads their fields.
#![allow(missing_docs, dead_code)]

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};
use toolkit_core::{CallError, Provider, Registry, ToolDef, tool, tools};

/// The error message the model reads, or `None` if the tool ran.
async fn refusal(registry: &Registry, tool: &str, arguments: &str) -> Option<String> {
    let as_text = registry.dispatch((tool, arguments)).await;
    let value: Value = serde_json::from_str(arguments).unwrap();
    let as_value = registry.dispatch((tool, &value)).await;
    let text_refused = matches!(as_text.error, Some(CallError::InvalidArguments { .. }));
    let value_refused = matches!(as_value.error, Some(CallError::InvalidArguments { .. }));
    assert_eq!(
        text_refused, value_refused,
        "text and value disagree on {arguments}: {as_text:?} / {as_value:?}"
    );
    text_refused.then(|| as_text.result.error_message().unwrap().to_owned())
}

/// What the tool answered (it must have run).
async fn answer(registry: &Registry, tool: &str, arguments: &str) -> String {
    let as_text = registry.dispatch((tool, arguments)).await;
    let value: Value = serde_json::from_str(arguments).unwrap();
    let as_value = registry.dispatch((tool, &value)).await;
    let text = as_text.result.as_text().map(str::to_owned);
    assert_eq!(
        text,
        as_value.result.as_text().map(str::to_owned),
        "text and value differ for {arguments}"
    );
    text.unwrap_or_else(|_| panic!("the tool did not run for {arguments}: {as_text:?}"))
}

fn schema_of(registry: &Registry, tool: &str, provider: Provider) -> Value {
    let text = registry
        .get(tool)
        .unwrap()
        .schema()
        .lowered(provider)
        .unwrap()
        .to_owned();
    serde_json::from_str(&text).unwrap()
}

// ---- Nested unknown fields, a top-level array ----

#[tokio::test]
async fn a_misspelled_nested_field_is_refused_not_dropped() {
    let registry = toolkit_example_tools::registry().unwrap();
    let message = refusal(
        &registry,
        "create_event",
        r#"{"event": {"title": "Sync", "slot": {"start": "2026-11-23T10:00", "minutes": 30, "timezone": "CET"},
            "attendees": [{"name": "Ada", "emial": "ada@example.com"}]}}"#,
    )
    .await
    .expect("refused");
    assert!(
        message.contains("at `event.attendees[0].emial`: unknown field"),
        "{message}"
    );
    assert!(
        message.contains("at `event.slot.timezone`: unknown field"),
        "{message}"
    );
}

#[tokio::test]
async fn a_nested_struct_is_not_read_from_an_array() {
    let registry = toolkit_example_tools::registry().unwrap();
    let message = refusal(
        &registry,
        "create_event",
        r#"{"event": {"title": "Sync", "slot": ["2026-11-23T10:00", 30], "attendees": []}}"#,
    )
    .await
    .expect("refused");
    assert!(
        message.contains("at `event.slot`: expected an object"),
        "{message}"
    );
}

#[tokio::test]
async fn a_top_level_array_is_not_positional_arguments() {
    let registry = toolkit_example_tools::registry().unwrap();
    let message = refusal(&registry, "word_count", r#"["a b c"]"#)
        .await
        .expect("refused");
    assert!(
        message.contains("the arguments must be a JSON object"),
        "{message}"
    );
}

// ---- Nulls ----

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Ascending,
    Descending,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SortOptions {
    /// Which way.
    #[serde(default)]
    pub direction: Direction,
}

/// Sorts.
#[tool]
fn sort(
    /// How.
    options: SortOptions,
) -> String {
    format!("{:?}", options.direction)
}

fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ContactPatch {
    /// The new nickname; `null` clears it, absent leaves it.
    #[serde(default, deserialize_with = "present")]
    #[schemars(with = "Option<String>")]
    pub nickname: Option<Option<String>>,
    /// Whether to tell the contact.
    #[serde(default)]
    pub notify: bool,
    /// Other fields to change; `null` deletes one.
    #[serde(default)]
    pub fields: BTreeMap<String, Value>,
}

/// Updates a contact.
#[tool]
fn update_contact(
    /// The changes.
    patch: ContactPatch,
) -> String {
    let nickname = match patch.nickname {
        None => "kept".to_owned(),
        Some(None) => "cleared".to_owned(),
        Some(Some(name)) => format!("set to {name}"),
    };
    format!(
        "nickname {nickname}, notify {}, fields {}",
        patch.notify,
        serde_json::to_string(&patch.fields).unwrap()
    )
}

/// Stores a free-form document.
#[tool]
fn store(
    /// The document.
    document: Value,
    /// A label.
    label: Option<String>,
    /// How many copies.
    copies: Option<u8>,
) -> String {
    format!("{document} {label:?} {copies:?}")
}

fn null_registry() -> Registry {
    Registry::builder()
        .tools(tools![sort, update_contact, store])
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_null_for_a_defaulted_field_means_absent_as_text_and_as_value() {
    let registry = null_registry();
    assert_eq!(
        answer(&registry, "sort", r#"{"options": {"direction": null}}"#).await,
        "Ascending"
    );
}

#[tokio::test]
async fn nulls_keep_their_meaning_whatever_else_the_call_holds() {
    let registry = null_registry();
    for (arguments, expected) in [
        (
            r#"{"patch": {"nickname": null, "notify": null}}"#,
            "nickname cleared, notify false, fields {}",
        ),
        (
            r#"{"patch": {"nickname": null, "notify": true}}"#,
            "nickname cleared, notify true, fields {}",
        ),
        (
            r#"{"patch": {"notify": null}}"#,
            "nickname kept, notify false, fields {}",
        ),
        (
            r#"{"patch": {"notify": null, "fields": {"email": null, "phone": "1"}}}"#,
            r#"nickname kept, notify false, fields {"email":null,"phone":"1"}"#,
        ),
    ] {
        assert_eq!(
            answer(&registry, "update_contact", arguments).await,
            expected
        );
    }
}

#[tokio::test]
async fn free_form_values_keep_their_nulls() {
    let registry = null_registry();
    assert_eq!(
        answer(
            &registry,
            "store",
            r#"{"document": {"keep": null, "list": [null]}, "label": null, "copies": null}"#
        )
        .await,
        r#"{"keep":null,"list":[null]} None None"#
    );
}

/// Renames a contact.
#[tool]
fn rename_contact(
    /// The contact.
    id: u64,
    /// The new nickname; `null` clears it, absent leaves it.
    nickname: Option<Option<String>>,
    /// Whether to tell the contact.
    notify: Option<bool>,
) -> String {
    let nickname = match nickname {
        None => "kept".to_owned(),
        Some(None) => "cleared".to_owned(),
        Some(Some(name)) => format!("set to {name}"),
    };
    format!("{id}: nickname {nickname}, notify {notify:?}")
}

#[tokio::test]
async fn a_double_option_parameter_tells_absent_null_and_a_value_apart() {
    let registry = Registry::builder()
        .tools(tools![rename_contact])
        .build()
        .unwrap();
    for (arguments, expected) in [
        (r#"{"id": 1}"#, "1: nickname kept, notify None"),
        (
            r#"{"id": 1, "nickname": null}"#,
            "1: nickname cleared, notify None",
        ),
        (
            r#"{"id": 1, "nickname": null, "notify": null}"#,
            "1: nickname cleared, notify None",
        ),
        (
            r#"{"id": 1, "nickname": "Ada", "notify": true}"#,
            "1: nickname set to Ada, notify Some(true)",
        ),
        (
            r#"{"id": 1, "notify": null}"#,
            "1: nickname kept, notify None",
        ),
    ] {
        assert_eq!(
            answer(&registry, "rename_contact", arguments).await,
            expected,
            "{arguments}"
        );
    }
    assert!(
        refusal(&registry, "rename_contact", r#"{"id": 1, "nickname": 5}"#)
            .await
            .is_some()
    );
}

#[test]
fn an_option_keeps_its_null_for_every_provider() {
    let registry = null_registry();
    for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Mcp] {
        let schema = schema_of(&registry, "store", provider);
        assert_eq!(
            schema["properties"]["label"]["type"],
            json!(["string", "null"]),
            "{provider}"
        );
    }
    let schema = schema_of(&registry, "update_contact", Provider::Anthropic);
    assert_eq!(
        schema["properties"]["patch"]["properties"]["nickname"]["type"],
        json!(["string", "null"])
    );
}

#[test]
fn no_schema_says_a_default_its_type_refuses() {
    #[derive(Deserialize, JsonSchema)]
    pub struct WithDefaults {
        #[serde(default)]
        pub name: Option<String>,
        #[serde(default)]
        pub count: u32,
    }
    /// Has defaults.
    #[tool]
    fn defaulted(
        /// The settings.
        settings: WithDefaults,
    ) -> String {
        let _ = (settings.name, settings.count);
        String::new()
    }
    let registry = Registry::builder()
        .tools(tools![defaulted, sort, update_contact])
        .build()
        .unwrap();
    for name in registry.names() {
        let schema: Value =
            serde_json::from_str(registry.get(&name).unwrap().schema().canonical().unwrap())
                .unwrap();
        every_default_fits(&schema, &schema);
    }
}

fn every_default_fits(root: &Value, schema: &Value) {
    match schema {
        Value::Object(members) => {
            if let Some(default) = members.get("default") {
                let mut own = schema.clone();
                own.as_object_mut().unwrap().remove("default");
                if let Some(defs) = root.get("$defs") {
                    own["$defs"] = defs.clone();
                }
                assert!(
                    toolkit_tests::meta_schema::accepts(&own, default),
                    "the default {default} does not fit {schema}"
                );
            }
            members
                .values()
                .for_each(|value| every_default_fits(root, value));
        }
        Value::Array(items) => items.iter().for_each(|item| every_default_fits(root, item)),
        _ => {}
    }
}

// ---- Schemas that lied ----

/// Takes the awkward types.
#[tool]
fn awkward(
    /// One character.
    initial: char,
    /// A big unsigned number.
    big: u64,
    /// A size.
    size: usize,
    /// A very big signed number.
    huge: i128,
    /// A wait.
    wait: Duration,
    /// Tags; repeats are fine.
    tags: HashSet<String>,
) -> String {
    format!("{initial} {big} {size} {huge} {wait:?} {}", tags.len())
}

fn awkward_registry() -> Registry {
    Registry::builder().tools(tools![awkward]).build().unwrap()
}

const AWKWARD_OK: &str = r#"{"initial": "x", "big": 1, "size": 2, "huge": -3, "wait": {"secs": 1, "nanos": 5}, "tags": ["a", "a"]}"#;

fn awkward_with(field: &str, value: Value) -> String {
    let mut arguments: Value = serde_json::from_str(AWKWARD_OK).unwrap();
    arguments[field] = value;
    arguments.to_string()
}

#[tokio::test]
async fn a_char_is_one_character_in_strict_mode_too() {
    let registry = awkward_registry();
    let schema = schema_of(&registry, "awkward", Provider::OpenAiStrict);
    assert_eq!(
        schema["properties"]["initial"],
        json!({"type": "string", "description": "One character.", "pattern": "^[\\s\\S]{1}$"})
    );
    let message = refusal(&registry, "awkward", &awkward_with("initial", json!("xy")))
        .await
        .expect("refused");
    assert!(
        message.contains("at `initial`: expected at most 1 characters, got 2"),
        "{message}"
    );
}

#[tokio::test]
async fn sixty_four_bit_integers_have_their_maximum() {
    let registry = awkward_registry();
    let schema = schema_of(&registry, "awkward", Provider::OpenAi);
    assert_eq!(schema["properties"]["big"]["maximum"], json!(u64::MAX));
    assert_eq!(schema["properties"]["size"]["maximum"], json!(u64::MAX));
    assert_eq!(
        answer(&registry, "awkward", &awkward_with("big", json!(u64::MAX))).await,
        "x 18446744073709551615 2 -3 1.000000005s 1"
    );
    let over = AWKWARD_OK.replace(r#""big": 1"#, r#""big": 18446744073709551616"#);
    let message = refusal(&registry, "awkward", &over).await.expect("refused");
    assert!(
        message
            .contains("at `big`: expected at most 18446744073709551615, got 18446744073709551616"),
        "{message}"
    );
}

#[tokio::test]
async fn i128_takes_what_every_way_in_carries_and_blames_its_own_field() {
    let registry = awkward_registry();
    let schema = schema_of(&registry, "awkward", Provider::Mcp);
    assert_eq!(schema["properties"]["huge"]["minimum"], json!(i64::MIN));
    assert_eq!(schema["properties"]["huge"]["maximum"], json!(u64::MAX));
    let over = AWKWARD_OK.replace(r#""huge": -3"#, r#""huge": 36893488147419103232"#);
    let message = refusal(&registry, "awkward", &over).await.expect("refused");
    assert!(message.contains("at `huge`: expected at most"), "{message}");
    assert!(!message.contains("`big`"), "{message}");
}

#[tokio::test]
async fn duration_nanoseconds_stay_below_a_second() {
    let registry = awkward_registry();
    let schema = schema_of(&registry, "awkward", Provider::Anthropic);
    assert_eq!(
        schema["properties"]["wait"]["properties"]["nanos"]["maximum"],
        json!(999_999_999)
    );
    for wait in [
        json!({"secs": u64::MAX, "nanos": 1_500_000_000u64}),
        json!({"secs": 1, "nanos": 1_500_000_000u64}),
    ] {
        let message = refusal(&registry, "awkward", &awkward_with("wait", wait))
            .await
            .expect("refused");
        assert!(
            message.contains("at `wait.nanos`: expected at most 999999999"),
            "{message}"
        );
    }
    assert!(
        answer(
            &registry,
            "awkward",
            &awkward_with("wait", json!({"secs": u64::MAX, "nanos": 999_999_999}))
        )
        .await
        .contains("18446744073709551615.999999999s")
    );
}

#[tokio::test]
async fn a_set_allows_repeats_as_serde_does() {
    let registry = awkward_registry();
    for provider in Provider::ALL {
        if let Ok(text) = registry.get("awkward").unwrap().schema().lowered(provider) {
            assert!(!text.contains("uniqueItems"), "{provider}: {text}");
        }
    }
    assert!(
        answer(&registry, "awkward", AWKWARD_OK)
            .await
            .ends_with(" 1")
    );
}

#[tokio::test]
async fn repeated_keys_are_refused() {
    let registry = null_registry();
    let message = refusal_text(
        &registry,
        "update_contact",
        r#"{"patch": {"fields": {"email": "a@b", "email": "c@d"}}}"#,
    )
    .await;
    assert!(
        message.contains("at `patch.fields.email`: this key appears more than once"),
        "{message}"
    );
    let message = refusal_text(&registry, "store", r#"{"document": 1, "document": 2}"#).await;
    assert!(message.contains("`document`"), "{message}");
}

/// The refusal of arguments sent as text only (a parsed value cannot
/// repeat a key).
async fn refusal_text(registry: &Registry, tool: &str, arguments: &str) -> String {
    let outcome = registry.dispatch((tool, arguments)).await;
    assert!(
        matches!(outcome.error, Some(CallError::InvalidArguments { .. })),
        "{outcome:?}"
    );
    outcome.result.error_message().unwrap().to_owned()
}

// ---- Gemini ----

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    Num(f64),
    Add { left: Box<Expr>, right: Box<Expr> },
}

/// Evaluates an expression.
#[tool]
fn evaluate(
    /// The expression.
    expr: Expr,
) -> String {
    format!("{expr:?}")
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Headers {
    #[serde(rename = "content-type")]
    pub content_type: String,
    #[serde(rename = "$ref")]
    pub reference: Option<String>,
}

/// Sends a request.
#[tool]
fn send(
    /// The headers.
    headers: Headers,
) -> String {
    format!("{headers:?}")
}

#[test]
fn gemini_gets_full_json_schema_where_its_subset_falls_short() {
    let registry = Registry::builder()
        .tools(tools![evaluate, send, store])
        .require(Provider::Gemini)
        .build()
        .unwrap();
    let definitions = registry.tool_list(Provider::Gemini).unwrap().to_value();
    for definition in definitions.as_array().unwrap() {
        assert!(
            definition.get("parameters").is_none(),
            "{definition}: `parameters` cannot express it"
        );
        let schema = &definition["parametersJsonSchema"];
        assert_eq!(schema["type"], "object", "{definition}");
    }
    let store = &definitions[2]["parametersJsonSchema"]["properties"]["document"];
    assert_eq!(store, &json!({"description": "The document."}));
}

#[test]
fn gemini_parameters_never_hold_an_untyped_schema() {
    // A documented `serde_json::Value` has a description and no type,
    // which Gemini's `parameters` refuses.
    let definitions = null_registry()
        .tool_list(Provider::Gemini)
        .unwrap()
        .to_value();
    fn typed(schema: &Value) {
        if let Some(members) = schema.as_object() {
            assert!(
                members.contains_key("type") || members.contains_key("anyOf"),
                "{schema}"
            );
            if let Some(Value::Object(properties)) = members.get("properties") {
                properties.values().for_each(typed);
            }
            if let Some(items) = members.get("items") {
                typed(items);
            }
        }
    }
    for definition in definitions.as_array().unwrap() {
        if let Some(parameters) = definition.get("parameters") {
            typed(parameters);
        } else {
            assert!(
                definition.get("parametersJsonSchema").is_some(),
                "{definition}"
            );
        }
    }
}

// ---- Refusals at build time ----

#[test]
fn refusals_name_the_rust_path_every_problem_and_one_line_per_tool() {
    let error = Registry::builder()
        .tools(tools![evaluate, awkward, store])
        .require(Provider::OpenAiStrict)
        .build()
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("`store`"), "{message}");
    assert!(message.contains("`document`"), "{message}");
    assert!(!message.contains("properties."), "{message}");

    let registry = Registry::builder()
        .tools(tools![evaluate, awkward, store])
        .build()
        .unwrap();
    let error = registry.tool_list(Provider::OpenAiStrict).unwrap_err();
    let text = error.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + error.tools.len(), "{text}");
    assert!(
        lines[1..].iter().all(|line| line.starts_with("- `")),
        "{text}"
    );
    // The free-form map and the free-form value are both named.
    let store_line = lines.iter().find(|l| l.contains("`store`")).unwrap();
    assert!(store_line.contains("`document`"), "{store_line}");
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Formula {
    Num(f64),
    Add {
        left: BTreeMap<String, f64>,
        right: f64,
    },
}

/// Computes.
#[tool]
fn compute(
    /// The formula.
    expr: Formula,
) -> String {
    format!("{expr:?}")
}

#[test]
fn a_refusal_names_the_place_by_its_rust_path() {
    let error = Registry::builder()
        .tools(tools![compute])
        .require(Provider::OpenAiStrict)
        .build()
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("free-form map at `expr.add.left`"),
        "{message}"
    );
}

#[test]
fn rust_paths_read_like_the_type() {
    assert_eq!(
        toolkit_core::schema::rust_path("properties.expr.oneOf[2].properties.add.properties.left"),
        "expr.add.left"
    );
}

// ---- Every argument error at once, and no generated names ----

#[tokio::test]
async fn every_argument_error_is_reported_at_once() {
    let registry = toolkit_example_tools::registry().unwrap();
    let message = refusal(
        &registry,
        "convert_temperature",
        r#"{"value": "hot", "from": "celsius", "to": "kelvin"}"#,
    )
    .await
    .expect("refused");
    assert!(message.contains("2 problems"), "{message}");
    assert!(
        message.contains(r#"at `to`: expected one of "celsius", "fahrenheit", got "kelvin""#),
        "{message}"
    );
    assert!(
        message.contains(r#"at `value`: expected a number, got "hot""#),
        "{message}"
    );
}

#[tokio::test]
async fn no_generated_name_reaches_the_model() {
    let registry = toolkit_example_tools::registry().unwrap();
    let double_encoded = serde_json::to_string(r#"{"text": "a b"}"#).unwrap();
    let runtime = Registry::builder()
        .tool(
            ToolDef::builder("echo")
                .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
                .handler(
                    |arguments: Value, _: toolkit_core::CallContext| async move {
                        arguments.to_string()
                    },
                ),
        )
        .build()
        .unwrap();
    let bad_inputs = [
        double_encoded.as_str(),
        "[1, 2]",
        "42",
        "\"text\"",
        "true",
        "{\"text\": 5}",
        "{\"text\": \"a\", \"text\": \"b\"}",
        "{\"nope\": 1}",
        "{",
        "{\"text\": null}",
        "{\"event\": []}",
        "{\"event\": {\"slot\": 3}}",
        "{\"summary\": [], \"success\": \"yes\"}",
    ];
    for tool in registry.names().chain(["echo".to_owned()]) {
        for input in bad_inputs {
            let outcome = if tool == "echo" {
                runtime.dispatch((&tool, input)).await
            } else {
                registry.dispatch((&tool, input)).await
            };
            if let Some(message) = outcome.result.error_message() {
                assert!(!message.contains("__"), "{tool} with {input}: {message}");
                assert!(!message.contains("ToolArguments"), "{tool}: {message}");
            }
        }
    }
    let outcome = registry
        .dispatch(("word_count", double_encoded.as_str()))
        .await;
    let message = outcome.result.error_message().unwrap();
    assert!(message.contains("a string holding JSON"), "{message}");
}

// ---- Numbers as written ----

fn default_rating() -> f32 {
    3.9
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct Review {
    /// The rating.
    #[serde(default = "default_rating")]
    pub rating: f32,
    /// A weight.
    #[schemars(range(min = 0.1, max = 2.5))]
    pub weight: f32,
}

/// Reviews.
#[tool]
fn review(
    /// The review.
    entry: Review,
) -> String {
    format!("{entry:?}")
}

#[test]
fn f32_values_in_schemas_are_written_as_the_f32_they_are() {
    let registry = Registry::builder().tools(tools![review]).build().unwrap();
    for provider in Provider::ALL {
        let text = registry
            .get("review")
            .unwrap()
            .schema()
            .lowered(provider)
            .unwrap()
            .to_owned();
        assert!(!text.contains("3.9000000953674316"), "{provider}: {text}");
        assert!(!text.contains("0.10000000149011612"), "{provider}: {text}");
    }
    let schema = schema_of(&registry, "review", Provider::OpenAi);
    assert_eq!(
        schema["properties"]["entry"]["properties"]["rating"]["default"],
        json!(3.9)
    );
}

/// Rates a film.
#[tool]
fn rate_film(
    /// The rating.
    rating: f32,
    /// More ratings.
    others: Vec<f32>,
) -> String {
    format!("{rating} {others:?}")
}

#[tokio::test]
async fn an_f32_out_of_its_range_is_refused_not_read_as_infinity() {
    let registry = Registry::builder()
        .tools(tools![rate_film])
        .build()
        .unwrap();
    for (arguments, expected) in [
        (
            r#"{"rating": 3.5e38, "others": []}"#,
            "at `rating`: expected at most 3.4028235e+38, got 3.5e+38",
        ),
        (
            r#"{"rating": -1e39, "others": []}"#,
            "at `rating`: expected at least -3.4028235e+38, got -1e+39",
        ),
        (
            r#"{"rating": 1, "others": [2, 1e300]}"#,
            "at `others[1]`: expected at most 3.4028235e+38, got 1e+300",
        ),
    ] {
        let message = refusal(&registry, "rate_film", arguments).await;
        assert!(
            message.as_deref().is_some_and(|m| m.ends_with(expected)),
            "{arguments}: {message:?}"
        );
    }
    assert_eq!(
        answer(
            &registry,
            "rate_film",
            r#"{"rating": 3.4028235e38, "others": [0.1]}"#
        )
        .await,
        "340282350000000000000000000000000000000 [0.1]"
    );
    for provider in Provider::ALL {
        let schema = schema_of(&registry, "rate_film", provider);
        let rating = &schema["properties"]["rating"];
        assert_eq!(
            rating["maximum"],
            json!(3.4028235e38),
            "{provider}: {schema}"
        );
        assert_eq!(
            rating["minimum"],
            json!(-3.4028235e38),
            "{provider}: {schema}"
        );
    }
}

#[tokio::test]
async fn an_f32_field_of_a_struct_is_held_to_its_range_too() {
    let registry = Registry::builder().tools(tools![review]).build().unwrap();
    let message = refusal(
        &registry,
        "review",
        r#"{"entry": {"weight": 1, "rating": 4e38}}"#,
    )
    .await;
    assert!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("entry.rating")),
        "{message:?}"
    );
}

/// Where a booking goes: serde alone would drop an unknown field here and
/// read the struct from an array.
#[derive(Debug, Deserialize, JsonSchema)]
struct Slot {
    day: String,
    hour: u8,
    guests: Vec<String>,
}

/// Books a room.
#[tool]
fn book(
    /// The room.
    room: String,
    /// When, and for whom.
    slot: Slot,
) -> String {
    format!("{room} {} {} {}", slot.day, slot.hour, slot.guests.len())
}

fn shapes_registry() -> Registry {
    let lookup = ToolDef::builder("lookup")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 0, "maximum": 100},
                "tags": {"type": "array", "items": {"type": "string"}},
                "order": {"type": "string", "enum": ["relevance", "newest"]}
            },
            "required": ["query", "order"],
            "additionalProperties": false
        }))
        .handler(|arguments: Value, _| async move { arguments.to_string() });
    Registry::builder()
        .tools(tools![book])
        .tool(lookup)
        .build()
        .unwrap()
}

/// The message a call given as text is refused with, or `None` if the tool
/// ran.
async fn text_refusal(registry: &Registry, tool: &str, text: &str) -> Option<String> {
    let outcome = registry.dispatch((tool, text)).await;
    matches!(outcome.error, Some(CallError::InvalidArguments { .. }))
        .then(|| outcome.result.error_message().unwrap().to_owned())
}

/// The text of a call is read in one pass through the tool's compiled
/// schema; a `Value` goes the slow way. Both refuse the same, in the same
/// words.
#[tokio::test]
async fn the_one_pass_read_refuses_what_the_slow_way_refuses() {
    let registry = shapes_registry();
    let slot = r#""slot": {"day": "Mon", "hour": 9, "guests": ["Ada"]}"#;
    let bad_bookings = [
        format!(r#"{{"room": "A", "room": "B", {slot}}}"#),
        r#"{"room": "A", "slot": {"day": "Mon", "day": "Tue", "hour": 9, "guests": []}}"#
            .to_owned(),
        r#"{"room": "A", "slot": {"day": "Mon", "hour": 9, "guests": [], "dya": "Tue"}}"#
            .to_owned(),
        r#"{"room": "A", "slot": ["Mon", 9, []]}"#.to_owned(),
        r#"{"room": "A", "slot": null}"#.to_owned(),
        r#"{"room": "A", "slot": {"day": "Mon", "hour": null, "guests": []}}"#.to_owned(),
        r#"{"room": "A", "slot": {"day": "Mon", "hour": 9, "guests": [null]}}"#.to_owned(),
        r#"{"room": 7, "slot": {"day": "Mon", "hour": 9, "guests": []}}"#.to_owned(),
        r#"{"room": "A", "slot": {"day": "Mon", "hour": 256, "guests": []}}"#.to_owned(),
        r#"{"room": "A", "slot": {"day": "Mon", "hour": "9", "guests": []}}"#.to_owned(),
        r#"{"room": "A", "slot": {"day": "Mon", "guests": []}}"#.to_owned(),
    ];
    for text in &bad_bookings {
        let from_text = text_refusal(&registry, "book", text).await;
        let value: Value = serde_json::from_str(text).unwrap();
        let from_value = registry.dispatch(("book", &value)).await;
        // A repeated key is lost in the `Value` itself: only the text can
        // be refused for it.
        if !text.contains(r#""room": "B""#) && !text.contains(r#""day": "Tue", "hour""#) {
            assert_eq!(
                from_text.as_deref(),
                from_value.result.error_message(),
                "{text}"
            );
        }
        assert!(from_text.is_some(), "{text} was taken");
    }
    let bad_lookups = [
        r#"{"query": "q", "query": "r", "order": "newest"}"#,
        r#"{"query": "q", "order": "newest", "other": 1}"#,
        r#"{"query": null, "order": "newest"}"#,
        r#"{"query": "q", "order": "oldest"}"#,
        r#"{"query": "q", "order": "newest", "limit": 101}"#,
        r#"{"query": "q", "order": "newest", "limit": 5.5}"#,
        r#"{"query": "q", "order": "newest", "tags": [1]}"#,
        r#"{"order": "newest"}"#,
    ];
    for text in bad_lookups {
        let from_text = text_refusal(&registry, "lookup", text).await;
        assert!(from_text.is_some(), "{text} was taken");
        if !text.contains(r#""query": "r""#) {
            let value: Value = serde_json::from_str(text).unwrap();
            let from_value = registry.dispatch(("lookup", &value)).await;
            assert_eq!(
                from_text.as_deref(),
                from_value.result.error_message(),
                "{text}"
            );
        }
    }
    // What the slow way rewrites, the one-pass read leaves to it.
    let rewritten = answer(
        &registry,
        "lookup",
        r#"{"query": "q", "order": "newest", "limit": 5.0}"#,
    )
    .await;
    assert_eq!(
        serde_json::from_str::<Value>(&rewritten).unwrap(),
        json!({"query": "q", "order": "newest", "limit": 5})
    );
    assert!(!rewritten.contains("5.0"), "{rewritten}");
    assert_eq!(
        answer(&registry, "book", &format!(r#"{{"room": "A", {slot}}}"#)).await,
        "A Mon 9 1"
    );
    // Past the depth limit, in text.
    let deep = format!(
        r#"{{"query": "q", "order": "newest", "tags": {}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let outcome = registry.dispatch(("lookup", deep.as_str())).await;
    let message = outcome.result.error_message().unwrap();
    assert!(message.contains("more than 127 levels deep"), "{message}");
}
