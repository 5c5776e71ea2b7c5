//! `#[tool]`'s title, behaviour hints and output schema, as MCP clients
//! read them, and structured results that validate against the schema.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{Annotations, Json, Provider, Registry, ToolCallResult, tool, tools};
use toolkit_tests::meta_schema::assert_valid_2020_12;

/// A forecast.
#[derive(Serialize, JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: f64,
    /// Rain expected, if known.
    rain: Option<bool>,
    /// Hourly temperatures.
    hourly: Vec<f64>,
}

/// Today's weather for a city.
#[tool(
    catalogue = false,
    title = "Weather today",
    read_only,
    idempotent,
    open_world = true
)]
fn weather(
    /// The city.
    city: String,
) -> Json<Forecast> {
    Json(Forecast {
        city,
        celsius: 21.5,
        rain: None,
        hourly: vec![18.0, 21.5],
    })
}

/// Tomorrow's forecast, as a plain struct.
#[tool(catalogue = false, destructive = false)]
async fn tomorrow(
    /// The city.
    city: String,
) -> Result<Forecast, std::io::Error> {
    Ok(Forecast {
        city,
        celsius: 19.0,
        rain: Some(true),
        hourly: vec![],
    })
}

/// Says hello.
#[tool(catalogue = false)]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("hello {name}")
}

/// Lists the cities.
#[tool(catalogue = false)]
fn cities() -> Vec<String> {
    vec!["Paris".into()]
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![weather, tomorrow, greet, cities])
        .build()
        .unwrap()
}

#[test]
fn title_and_hints_reach_the_definition() {
    let def = registry().get("weather").unwrap();
    assert_eq!(def.title(), Some("Weather today"));
    assert_eq!(
        def.annotations(),
        Annotations::new()
            .read_only(true)
            .idempotent(true)
            .open_world(true)
    );
    let list = registry().tool_list(Provider::Mcp).unwrap().to_value();
    assert_eq!(list[0]["title"], "Weather today");
    assert_eq!(
        list[0]["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true, "openWorldHint": true})
    );
    assert_eq!(list[1]["annotations"], json!({"destructiveHint": false}));
    assert!(list[2].get("annotations").is_none());
    // The official Rust SDK's types take every definition as it is.
    for definition in list.as_array().unwrap() {
        let parsed: rmcp::model::Tool = serde_json::from_value(definition.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), *definition);
    }
}

#[test]
fn output_schemas_come_from_structured_returns_only() {
    let registry = registry();
    let schema = |name: &str| {
        registry
            .get(name)
            .unwrap()
            .output_schema()
            .map(|s| s.to_value())
    };
    let weather = schema("weather").expect("Json<Forecast> has an output schema");
    assert_eq!(weather["type"], "object");
    assert!(weather.get("title").is_none() && weather.get("$schema").is_none());
    assert_valid_2020_12(&weather);
    assert_eq!(
        schema("tomorrow"),
        Some(weather.clone()),
        "a serialized struct"
    );
    assert_eq!(schema("greet"), None, "text is not structured");
    assert_eq!(schema("cities"), None, "an array is not an object schema");

    let list = registry.tool_list(Provider::Mcp).unwrap().to_value();
    assert_eq!(list[0]["outputSchema"], weather);
    assert!(list[2].get("outputSchema").is_none());
    for provider in [
        Provider::OpenAi,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::OpenAiResponses,
    ] {
        let text = registry.tool_list(provider).unwrap().to_json_string();
        assert!(!text.contains("outputSchema"), "{provider}");
        assert!(!text.contains("Weather today"), "{provider}");
    }
}

/// A page of results.
#[derive(Serialize, JsonSchema)]
struct Page {
    /// How many results in all.
    total: u64,
    /// The page's number.
    number: u16,
    /// How well the first result matches.
    score: f32,
    /// Each result's weight.
    weights: Vec<f64>,
}

/// Searches.
#[tool(catalogue = false)]
fn page() -> Json<Page> {
    Json(Page {
        total: 12,
        number: 1,
        score: 0.1,
        weights: vec![0.5],
    })
}

/// MCP clients validate `structuredContent` with general JSON Schema
/// validators, which warn on or refuse schemars' own numeric formats.
#[test]
fn output_schemas_hold_no_numeric_format_of_schemars() {
    let registry = Registry::builder().tools(tools![page]).build().unwrap();
    let schema = registry
        .get("page")
        .unwrap()
        .output_schema()
        .unwrap()
        .to_value();
    let text = schema.to_string();
    assert!(!text.contains("\"format\""), "{text}");
    let properties = &schema["properties"];
    assert_eq!(properties["total"]["minimum"], json!(0));
    assert_eq!(properties["total"]["maximum"], json!(u64::MAX));
    assert_eq!(properties["number"]["maximum"], json!(u16::MAX));
    assert_eq!(properties["score"]["maximum"], json!(3.4028235e38));
    assert_valid_2020_12(&schema);
}

#[tokio::test]
async fn structured_content_validates_against_the_output_schema() {
    let registry = registry();
    for (name, arguments) in [
        ("weather", r#"{"city": "Oslo"}"#),
        ("tomorrow", r#"{"city": "Rome"}"#),
    ] {
        let schema: Value = registry
            .get(name)
            .unwrap()
            .output_schema()
            .unwrap()
            .to_value();
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        let outcome = registry.dispatch((name, arguments)).await;
        let emitted = emit::mcp(
            &[ToolCallResult::new("1", name, outcome.result)],
            &EmitOptions::default(),
        )
        .items;
        let structured = &emitted[0]["structuredContent"];
        assert!(structured.is_object(), "{name}: {}", emitted[0]);
        let errors: Vec<String> = validator
            .iter_errors(structured)
            .map(|error| error.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?} in {structured}");
        // A `null` for an unknown `Option` is what serde writes; the
        // schema, made for serializing, allows it.
        assert!(structured.get("rain").is_some());
        // And the schema is not vacuous.
        assert!(!validator.is_valid(&json!({"city": 5})), "{name}");
    }
}

/// Every tool of this file keeps the property of schema and dispatch
/// agreement (`toolkit_tests::agreement`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_here_accepts_exactly_what_its_schemas_say() {
    let report = toolkit_tests::agreement::check_registry(&registry(), 0x5eed_0005, 6).await;
    assert!(report.failures.is_empty(), "{:#?}", report.failures);
    assert!(report.accepted > 0, "{report:?}");
}

#[tokio::test]
async fn the_example_registry_s_structured_result_validates_against_its_output_schema() {
    let registry = toolkit_example_tools::registry().unwrap();
    let listed = registry.tool_list(Provider::Mcp).unwrap().to_json_string();
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let tools = listed.as_array().expect("a list");
    let create = tools
        .iter()
        .find(|tool| tool["name"] == "create_event")
        .expect("create_event");
    assert_eq!(create["title"], "Create a calendar event");
    assert_eq!(create["annotations"]["destructiveHint"], false);
    let schema = &create["outputSchema"];
    assert_valid_2020_12(schema);
    let outcome = registry
        .dispatch((
            "create_event",
            r#"{"event": {"title": "Sync", "slot": {"start": "2026-11-23T10:00", "minutes": 30},
                "attendees": [{"name": "Ada", "email": null}]}}"#,
        ))
        .await;
    assert!(outcome.error.is_none(), "{:?}", outcome.result);
    let turn = [ToolCallResult::new("c1", "create_event", outcome.result)];
    let emitted = emit::mcp(&turn, &EmitOptions::default()).items;
    let structured = &emitted[0]["structuredContent"];
    assert!(structured.is_object(), "{}", emitted[0]);
    let validator = jsonschema::draft202012::new(schema).unwrap();
    assert!(validator.is_valid(structured), "{structured}");
}
