//! Tools defined at run time: the same rules and guarantees as `#[tool]`s.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{
    Annotations, CallContext, CallError, Cancellation, Json, Problem, Provider, Registry, ToolCall,
    ToolDef, ToolResult, tool, tools,
};
use toolkit_tests::judges::gemini_schema::problems as gemini_problems;
use toolkit_tests::meta_schema::{accepts, assert_valid_2020_12};

/// An event, as a calendar service's endpoint describes it.
fn create_event() -> ToolDef {
    ToolDef::builder("create_event")
        .title("Create an event")
        .description("Adds an event to the calendar.")
        .source("calendar")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "What the event is.", "maxLength": 80},
                "minutes": {"type": "integer", "minimum": 5, "maximum": 480},
                "attendees": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "email": {"type": "string"}
                        },
                        "required": ["name", "email"],
                        "additionalProperties": false
                    }
                },
                "visibility": {"enum": ["public", "private"]}
            },
            "required": ["title", "minutes"],
            "additionalProperties": false
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"id": {"type": "string"}, "attendees": {"type": "integer"}},
            "required": ["id", "attendees"]
        }))
        .destructive(false)
        .idempotent(false)
        .handler(|arguments: Value, _call: CallContext| async move {
            let attendees = arguments["attendees"].as_array().map_or(0, Vec::len);
            Json(json!({"id": format!("evt-{}", arguments["title"].as_str().unwrap_or("")), "attendees": attendees}))
        })
}

fn sleeper() -> ToolDef {
    ToolDef::builder("sleep")
        .description("Waits, unless cancelled.")
        .input_schema(json!({
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0}},
            "required": ["ms"]
        }))
        .handler(|arguments: Value, call: CallContext| async move {
            let wait =
                tokio::time::sleep(Duration::from_millis(arguments["ms"].as_u64().unwrap_or(0)));
            tokio::select! {
                () = wait => ToolResult::text("woke"),
                () = call.cancellation().cancelled() => ToolResult::error("cancelled"),
            }
        })
}

fn panicker() -> ToolDef {
    ToolDef::builder("explode")
        .description("Always panics.")
        .handler(|_: Value, _: CallContext| async move {
            if true {
                panic!("boom at run time");
            }
            "never"
        })
}

/// Says hello.
#[tool(catalogue = false)]
fn hello(
    /// Who to greet.
    name: String,
) -> String {
    format!("hello {name}")
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![hello])
        .tool(create_event())
        .tool(sleeper())
        .tool(panicker())
        .tool_timeout("sleep", Duration::from_millis(300))
        .build()
        .unwrap()
}

#[tokio::test]
async fn arguments_are_checked_against_the_given_schema() {
    let registry = registry();
    let ok = registry
        .dispatch((
            "create_event",
            r#"{"title": "standup", "minutes": 15, "attendees": [{"name": "Ada", "email": "ada@example.com"}]}"#,
        ))
        .await;
    assert!(ok.error.is_none(), "{:?}", ok.result);
    assert_eq!(
        ok.result.content()[0],
        toolkit_core::Block::json(json!({"id": "evt-standup", "attendees": 1}))
    );

    // A misspelt nested field is refused, not dropped, with every problem.
    let typo = registry
        .dispatch((
            "create_event",
            &json!({"title": "standup", "minutes": 2, "attendees": [{"name": "Ada", "emial": "ada@example.com"}]}),
        ))
        .await;
    let message = typo.result.error_message().unwrap();
    assert_eq!(
        message,
        "invalid arguments for `create_event`: 3 problems: at `attendees[0].email`: missing required field: expected a string; \
         at `attendees[0].emial`: unknown field; expected one of `email`, `name`; at `minutes`: expected at least 5, got 2"
    );
    assert!(matches!(
        typo.error,
        Some(CallError::InvalidArguments { .. })
    ));

    let one = registry
        .dispatch(("create_event", r#"{"title": 7, "minutes": 10}"#))
        .await;
    assert_eq!(
        one.error,
        Some(CallError::InvalidArguments {
            tool: "create_event".into(),
            path: Some("title".into()),
            message: "expected a string (at most 80 characters), got 7".into(),
        })
    );

    for (arguments, expected) in [
        (
            r#"["standup", 15]"#,
            "the arguments must be a JSON object, got [\"standup\",15]",
        ),
        (r#"{"title": "x""#, "the arguments are not valid JSON"),
        (r#"{"minutes": 10}"#, "at `title`: missing required field"),
        (
            r#"{"title": "x", "minutes": 10, "visibility": "team"}"#,
            "expected one of \"public\", \"private\"",
        ),
    ] {
        let outcome = registry.dispatch(("create_event", arguments)).await;
        let message = outcome.result.error_message().unwrap_or_default();
        assert!(message.contains(expected), "{arguments}: {message}");
        assert!(outcome.error.is_some(), "{arguments}");
    }
}

#[tokio::test]
async fn panics_timeouts_and_cancellation_are_results() {
    let registry = registry();
    let panicked = registry.dispatch(("explode", "")).await;
    assert_eq!(
        panicked.result.error_message(),
        Some("the tool `explode` failed unexpectedly: the tool panicked: boom at run time")
    );
    assert!(matches!(panicked.error, Some(CallError::Panicked { .. })));
    // The registry keeps working after a panic.
    assert_eq!(
        registry
            .dispatch(("hello", r#"{"name": "Ada"}"#))
            .await
            .result
            .as_text(),
        Ok("hello Ada")
    );

    let late = registry.dispatch(("sleep", r#"{"ms": 5000}"#)).await;
    assert!(
        matches!(late.error, Some(CallError::TimedOut { ref tool, .. }) if tool == "sleep"),
        "{:?}",
        late.error
    );

    let cancellation = Cancellation::new();
    // No time limit this time, and a sleep far longer than the test: only
    // the cancellation can end it.
    let registry = Registry::builder().tool(sleeper()).build().unwrap();
    let call = ToolCall::new("c1", "sleep", json!({"ms": 60000}));
    let cancel = {
        let cancellation = cancellation.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            cancellation.cancel();
        }
    };
    let (outcome, ()) = tokio::join!(registry.dispatch(&call).cancellation(&cancellation), cancel);
    assert_eq!(outcome.result.error_message(), Some("cancelled"));
}

#[test]
fn every_provider_takes_the_definitions() {
    let registry = registry();
    for provider in Provider::ALL {
        let definitions = registry
            .tool_list(provider)
            .unwrap_or_else(|error| panic!("{provider}: {error}"));
        assert_eq!(definitions.len(), 4, "{provider}");
        let list = definitions.to_value();
        let event = &list[1];
        let parameters = match provider {
            Provider::OpenAi | Provider::OpenAiStrict => &event["function"]["parameters"],
            Provider::Anthropic => &event["input_schema"],
            Provider::Mcp => &event["inputSchema"],
            _ => &event["parameters"],
        };
        match provider {
            Provider::Gemini => assert_eq!(gemini_problems(parameters), Vec::<String>::new()),
            _ => assert_valid_2020_12(parameters),
        }
        // The run-time tool's parameters keep what its schema says.
        let title = &parameters["properties"]["title"];
        let description = title["description"].as_str().unwrap_or_default();
        assert!(description.starts_with("What the event is."), "{provider}");
    }
    // Strict mode: every property required, optional ones nullable.
    let strict = registry
        .tool_list(Provider::OpenAiStrict)
        .unwrap()
        .to_value();
    let parameters = &strict[1]["function"]["parameters"];
    assert_eq!(
        parameters["required"],
        json!(["title", "minutes", "attendees", "visibility"])
            .as_array()
            .map(|names| {
                // The schema's own property order, as serde_json holds it.
                let mut names: Vec<Value> = names.clone();
                let order: Vec<&String> = parameters["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .collect();
                names.sort_by_key(|name| {
                    order.iter().position(|key| *key == name.as_str().unwrap())
                });
                Value::Array(names)
            })
            .unwrap()
    );
    assert!(accepts(
        parameters,
        &json!({"title": "x", "minutes": 5, "attendees": null, "visibility": null})
    ));
}

#[tokio::test]
async fn mcp_definitions_carry_title_annotations_and_output_schema() {
    let registry = registry();
    let list = registry.tool_list(Provider::Mcp).unwrap().to_value();
    let event = &list[1];
    assert_eq!(event["title"], "Create an event");
    assert_eq!(
        event["annotations"],
        json!({"destructiveHint": false, "idempotentHint": false})
    );
    // rmcp, the official Rust SDK, reads the definition back unchanged.
    let parsed: rmcp::model::Tool = serde_json::from_value(event.clone()).unwrap();
    assert_eq!(serde_json::to_value(&parsed).unwrap(), *event);
    assert!(list[0].get("annotations").is_none(), "no hints, no field");
    assert!(list[0].get("title").is_none());

    // The result's structuredContent validates against the outputSchema.
    let output_schema = &event["outputSchema"];
    assert_valid_2020_12(output_schema);
    let outcome = registry
        .dispatch(("create_event", r#"{"title": "review", "minutes": 30}"#))
        .await;
    let turn = [toolkit_core::ToolCallResult::new(
        "1",
        "create_event",
        outcome.result,
    )];
    let emitted = emit::mcp(&turn, &EmitOptions::default()).items;
    let structured = &emitted[0]["structuredContent"];
    assert_eq!(*structured, json!({"id": "evt-review", "attendees": 0}));
    let validator = jsonschema::draft202012::new(output_schema).unwrap();
    assert!(validator.is_valid(structured));
    assert!(!validator.is_valid(&json!({"id": 5, "attendees": 0})));

    // Other providers have no such fields.
    for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Gemini] {
        let text = registry.tool_list(provider).unwrap().to_json_string();
        assert!(
            !text.contains("outputSchema") && !text.contains("Hint"),
            "{provider}"
        );
    }
}

#[tokio::test]
async fn tools_come_and_go_at_run_time() {
    let registry = Arc::new(registry());
    let mut changes = registry.changes();

    let echo = ToolDef::builder("echo")
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
        .annotations(Annotations::new().read_only(true))
        .handler(|arguments: Value, _: CallContext| async move {
            arguments["text"].as_str().unwrap_or_default().to_owned()
        });
    registry.add(echo.clone()).unwrap();
    assert!(changes.changed().await);
    assert_eq!(
        registry
            .dispatch(("echo", r#"{"text": "hi"}"#))
            .await
            .result
            .as_text(),
        Ok("hi")
    );
    assert!(registry.names().any(|name| name == "echo"));

    // The same name twice is refused, naming both origins.
    let again = registry.add(echo).unwrap_err();
    assert!(
        matches!(&again.problems()[0], Problem::Duplicate { name, .. } if name == "echo"),
        "{again}"
    );
    assert!(!changes.has_changed());

    // Disabling and removing are changes too; a removed tool is unknown.
    assert!(registry.set_enabled("echo", false));
    assert!(changes.changed().await);
    assert!(!registry.set_enabled("echo", false) || !changes.has_changed());
    assert!(registry.remove("echo"));
    assert!(changes.changed().await);
    assert!(!registry.remove("echo"));
    let gone = registry.dispatch(("echo", "{}")).await;
    assert!(matches!(gone.error, Some(CallError::UnknownTool { .. })));
    // Tools added later still dispatch with the index intact.
    assert_eq!(
        registry
            .dispatch(("hello", r#"{"name": "Bo"}"#))
            .await
            .result
            .as_text(),
        Ok("hello Bo")
    );
}

/// A tool whose schema uses JSON Schema 2020-12's vocabulary, as MCP
/// servers write it.
fn plan_route() -> ToolDef {
    ToolDef::builder("plan_route")
        .description("Plans a route between two cities.")
        .input_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"city": {"$anchor": "city", "type": "string", "minLength": 1}},
            "properties": {
                "from": {"$ref": "#/$defs/city"},
                "to": {"$ref": "#/$defs/city"}
            },
            "required": ["from", "to"],
            "additionalProperties": false
        }))
        .handler(|arguments: Value, _call: CallContext| async move {
            format!("{} to {}", arguments["from"], arguments["to"])
        })
}

#[tokio::test]
async fn mcp_lists_a_given_schema_as_written_and_the_others_their_lowering() {
    let def = plan_route();
    let written: Value = serde_json::from_str(def.schema().written().unwrap()).unwrap();
    let registry = Registry::builder()
        .tool(plan_route())
        .tools(tools![hello])
        .build()
        .unwrap();
    let mcp = registry.tool_list(Provider::Mcp).unwrap().to_value();
    assert_eq!(mcp[0]["inputSchema"], written, "every keyword kept");
    assert_eq!(
        def.schema().dialect(Provider::Mcp).unwrap(),
        toolkit_core::schema::Dialect::Written
    );
    // A tool derived from Rust types has no written schema: MCP lists
    // its canonical one, as every other provider starts from.
    let derived = registry.get("hello").unwrap();
    assert_eq!(derived.schema().written(), None);
    let canonical: Value = serde_json::from_str(derived.schema().canonical().unwrap()).unwrap();
    assert_eq!(mcp[1]["inputSchema"], canonical);

    // The other providers receive the canonical schema or its lowering,
    // as before: no `$schema`, and the `$defs` inlined.
    for provider in Provider::ALL {
        // Strict mode refuses the schema's `$anchor`, as it did before.
        if provider == Provider::Mcp || provider == Provider::OpenAiStrict {
            continue;
        }
        let lowered = def
            .schema()
            .lowered(provider)
            .unwrap_or_else(|error| panic!("{provider}: {error}"));
        for keyword in ["$schema", "$defs", "$ref"] {
            assert!(
                !lowered.contains(keyword),
                "{provider}: {keyword} in {lowered}"
            );
        }
    }
    // Arguments are still checked against the schema.
    let outcome = registry
        .dispatch(("plan_route", r#"{"from": "", "to": "Lyon"}"#))
        .await;
    assert!(outcome.result.is_error(), "{:?}", outcome.result);
}

#[test]
fn a_given_schema_without_an_object_root_is_listed_canonical_on_mcp() {
    let def = ToolDef::builder("bare")
        .description("Takes a word.")
        .input_schema(json!({"properties": {"word": {"type": "string"}}}))
        .handler(|_arguments: Value, _call: CallContext| async move { "ok" });
    assert_eq!(def.schema().written(), None);
    let listed: Value = serde_json::from_str(def.schema().lowered(Provider::Mcp).unwrap()).unwrap();
    assert_eq!(listed["type"], "object");
}

#[test]
fn run_time_tools_are_checked_like_macro_tools() {
    let bad_name = ToolDef::builder("say hello").handler(|_: Value, _: CallContext| async { "hi" });
    let free_form = ToolDef::builder("tags")
        .input_schema(json!({
            "type": "object",
            "properties": {"labels": {"type": "object", "additionalProperties": {"type": "string"}}}
        }))
        .handler(|_: Value, _: CallContext| async { "ok" });
    let error = Registry::builder()
        .tool(bad_name)
        .tool(free_form.clone())
        .require(Provider::OpenAiStrict)
        .build()
        .unwrap_err();
    let problems = error.problems();
    assert!(
        matches!(&problems[0], Problem::BadName { name, portable } if name == "say hello" && portable == "say_hello"),
        "{error}"
    );
    assert!(
        matches!(&problems[1], Problem::Provider { tool, provider: Provider::OpenAiStrict, .. } if tool == "tags"),
        "{error}"
    );

    // Added later to a registry that requires strict mode: refused the same way.
    let registry = Registry::builder()
        .require(Provider::OpenAiStrict)
        .build()
        .unwrap();
    assert!(registry.add(free_form).is_err());
    assert_eq!(registry.names().count(), 0);

    // Excluding works for run-time tools as for macro tools.
    let registry = Registry::builder()
        .tools(tools![hello])
        .tool(create_event())
        .exclude(["create_event"])
        .build()
        .unwrap();
    assert_eq!(registry.names().collect::<Vec<_>>(), ["hello"]);
}

#[tokio::test]
async fn huge_and_hostile_arguments_stay_bounded() {
    let registry = registry();
    // Many unknown fields: at most ten are reported.
    let mut fields = serde_json::Map::new();
    fields.insert("title".into(), json!("x"));
    fields.insert("minutes".into(), json!(10));
    for i in 0..10_000 {
        fields.insert(format!("extra{i}"), json!(i));
    }
    let outcome = registry
        .dispatch(("create_event", &Value::Object(fields)))
        .await;
    let message = outcome.result.error_message().unwrap();
    assert!(
        message.starts_with("invalid arguments for `create_event`: 10 problems"),
        "{message}"
    );
    assert!(message.len() < 2_000, "{}", message.len());

    // A schema that refers to itself forever is reported, not followed.
    let looping = ToolDef::builder("loop")
        .input_schema(json!({"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}}))
        .handler(|_: Value, _: CallContext| async { "ran" });
    let flag = Arc::new(AtomicBool::new(false));
    let registry = Registry::builder().tool(looping).build();
    if let Ok(registry) = registry {
        let outcome = registry.dispatch(("loop", r#"{"a": 1}"#)).await;
        flag.store(outcome.error.is_some(), Ordering::Relaxed);
    } else {
        flag.store(true, Ordering::Relaxed);
    }
    assert!(
        flag.load(Ordering::Relaxed),
        "a self-reference is refused at build or at call"
    );
}

#[tokio::test]
async fn a_tool_added_later_may_change_the_registry_it_runs_in() {
    use std::sync::Mutex;
    let slot: Arc<Mutex<Option<Arc<Registry>>>> = Arc::default();
    let registry = Arc::new(Registry::builder().build().unwrap());
    *slot.lock().unwrap() = Some(Arc::clone(&registry));

    // Its handler changes the registry before returning its future: the
    // call must not hold any lock of the registry while that runs.
    let inner = Arc::clone(&slot);
    let grow = ToolDef::builder("grow").handler(move |_: Value, _: CallContext| {
        let registry = inner.lock().unwrap().clone().expect("set above");
        let added = registry
            .add(ToolDef::builder("leaf").handler(|_: Value, _: CallContext| async { "leaf" }))
            .is_ok();
        registry.set_enabled("grow", true);
        async move { if added { "grew" } else { "already grown" } }
    });
    registry.add(grow).unwrap();

    let outcome = tokio::time::timeout(Duration::from_secs(5), registry.dispatch(("grow", "{}")))
        .await
        .expect("no deadlock");
    assert_eq!(outcome.result.as_text(), Ok("grew"));
    assert_eq!(
        registry.dispatch(("leaf", "{}")).await.result.as_text(),
        Ok("leaf")
    );
    // The cycle through the slot is broken so the registry is dropped.
    slot.lock().unwrap().take();
}

/// Every tool of this file keeps the property of schema and dispatch
/// agreement (`toolkit_tests::agreement`): run-time tools are checked
/// against the canonical schema every provider was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_here_accepts_exactly_what_its_schemas_say() {
    let registry = Registry::builder()
        .tools(tools![hello])
        .tool(create_event())
        .tool(sleeper())
        .tool(panicker())
        .timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    let report = toolkit_tests::agreement::check_registry(&registry, 0x5eed_0004, 6).await;
    assert!(report.failures.is_empty(), "{:#?}", report.failures);
    assert!(report.accepted > 0 && report.refused > 0, "{report:?}");
}
