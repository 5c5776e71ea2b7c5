//! Tool definitions from elsewhere (an MCP server, an OpenAPI document, a
//! benchmark's function list), taken as they come: names no provider
//! accepts, keywords JSON Schema does not define, `$ref`s with siblings,
//! parameter names outside Gemini's rule, objects left open, and arguments
//! a host built nested far deeper than any text could be.

use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::schema::Dialect;
use toolkit_core::{
    CallContext, CallOutcome, Problem, Provider, Registry, ToolBuilder, ToolCall, ToolDef, name,
    tool, tools,
};
use toolkit_tests::judges::gemini_schema;

/// A run-time tool with `schema` that answers with the arguments it got.
fn echo(name: &str, schema: Value) -> ToolDef {
    echo_builder(name, schema).handler(answer)
}

/// The same tool under a portable wire name: what a host importing a
/// catalogue writes for every tool.
fn foreign(original: &str, schema: Value) -> ToolDef {
    echo_builder(original, schema)
        .wire_name(name::portable(original))
        .handler(answer)
}

fn echo_builder(name: &str, schema: Value) -> ToolBuilder {
    ToolDef::builder(name)
        .description("Answers with its arguments.")
        .input_schema(schema)
}

async fn answer(arguments: Value, _: CallContext) -> String {
    arguments.to_string()
}

#[tokio::test]
async fn a_dotted_name_is_sent_portable_and_maps_back_both_ways() {
    // Refused as it is, with the portable name to use.
    let error = Registry::builder()
        .tool(echo("math.factorial", json!({"type": "object"})))
        .build()
        .unwrap_err();
    assert!(
        matches!(
            &error.problems()[0],
            Problem::BadName { name, portable } if name == "math.factorial" && portable == "math_factorial"
        ),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains(r#".wire_name("math_factorial")"#),
        "{error}"
    );

    // Under its portable wire name, it keeps its own.
    let original = "ChaDri.change_drink";
    let tool = foreign(
        original,
        json!({"type": "object", "properties": {"drink": {"type": "string"}}}),
    );
    let registry = Registry::builder().tool(tool).build().unwrap();
    let def = registry.get("ChaDri_change_drink").unwrap();
    assert_eq!(def.name(), "ChaDri_change_drink");
    assert_eq!(def.original_name(), original);

    // Every provider is sent the portable name.
    for provider in Provider::ALL {
        let list = registry.tool_list(provider).unwrap().to_json_string();
        assert!(
            list.contains(r#""ChaDri_change_drink""#),
            "{provider}: {list}"
        );
        assert!(!list.contains(original), "{provider}: {list}");
    }
    // A call by the wire name reaches the tool; so does one by the original.
    for called in ["ChaDri_change_drink", original] {
        let outcome = registry.dispatch((called, r#"{"drink": "tea"}"#)).await;
        assert_eq!(
            outcome.result.as_text(),
            Ok(r#"{"drink":"tea"}"#),
            "{called}"
        );
    }
    // The host finds it by either name, and removes it by either.
    assert_eq!(
        registry.get(original).unwrap().name(),
        "ChaDri_change_drink"
    );
    assert!(registry.remove(original));
    assert!(registry.get("ChaDri_change_drink").is_none());

    // Two foreign names that clean to one are refused as a duplicate.
    let error = Registry::builder()
        .tool(foreign("a.b", json!({"type": "object"})))
        .tool(echo("a_b", json!({"type": "object"})))
        .build()
        .unwrap_err();
    assert!(
        matches!(&error.problems()[0], Problem::Duplicate { name, .. } if name == "a_b"),
        "{error}"
    );
}

#[test]
fn strict_mode_folds_a_keyword_json_schema_does_not_define() {
    let tool = echo(
        "car_price",
        json!({
            "type": "object",
            "properties": {
                "year": {"type": "integer", "description": "Model year.", "optional": true},
                "make": {"type": "string"}
            },
            "required": ["make"],
            "additionalProperties": false
        }),
    );
    let registry = Registry::builder()
        .tool(tool)
        .require(Provider::OpenAiStrict)
        .build()
        .unwrap();
    let list = registry
        .tool_list(Provider::OpenAiStrict)
        .unwrap()
        .to_value();
    let year = &list[0]["function"]["parameters"]["properties"]["year"];
    assert_eq!(
        year,
        &json!({"type": ["integer", "null"], "description": "Model year.\n\n{optional: true}"})
    );
    assert_eq!(list[0]["function"]["strict"], true);
    // The Responses API is sent the strict form too, flagged strict.
    let list = registry
        .tool_list(Provider::OpenAiResponses)
        .unwrap()
        .to_value();
    assert_eq!(list[0]["strict"], true);
}

#[test]
fn gemini_gets_a_ref_with_siblings_wrapped() {
    // A recursive type, which `parameters` cannot express, with a field's
    // description beside its `$ref`.
    let tool = echo(
        "outline",
        json!({
            "type": "object",
            "properties": {
                "root": {"$ref": "#/$defs/Node", "description": "The outline's root."}
            },
            "required": ["root"],
            "$defs": {"Node": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                },
                "required": ["title"]
            }}
        }),
    );
    let registry = Registry::builder()
        .tool(tool)
        .require(Provider::Gemini)
        .build()
        .unwrap();
    let def = registry.get("outline").unwrap();
    assert_eq!(
        def.schema().dialect(Provider::Gemini).unwrap(),
        Dialect::GeminiJsonSchema
    );
    let list = registry.tool_list(Provider::Gemini).unwrap().to_value();
    let schema = &list[0]["parametersJsonSchema"];
    assert_eq!(
        gemini_schema::json_schema_problems(schema),
        Vec::<String>::new()
    );
    assert_eq!(
        schema["properties"]["root"],
        json!({"description": "The outline's root.", "anyOf": [{"$ref": "#/$defs/Node"}]})
    );
    // The canonical schema, which the arguments are checked against, is
    // unchanged: the wrapper means the same.
    let canonical: Value = serde_json::from_str(def.schema().canonical().unwrap()).unwrap();
    assert_eq!(canonical["properties"]["root"]["$ref"], "#/$defs/Node");
}

#[test]
fn gemini_refuses_a_parameter_name_outside_its_rule_naming_it() {
    let tool = echo(
        "cotizar",
        json!({
            "type": "object",
            "properties": {"año_vehiculo": {"type": "integer"}, "marca": {"type": "string"}},
            "required": ["año_vehiculo"]
        }),
    );
    let registry = Registry::builder().tool(tool.clone()).build().unwrap();
    let error = registry.tool_list(Provider::Gemini).unwrap_err();
    let message = error.to_string();
    assert!(message.contains("`año_vehiculo`"), "{message}");
    assert!(message.contains("parametersJsonSchema"), "{message}");
    // Every other provider takes it.
    for provider in Provider::ALL.into_iter().filter(|p| *p != Provider::Gemini) {
        registry.tool_list(provider).unwrap();
    }
    // Required at build, it is refused there.
    let error = Registry::builder()
        .tool(tool)
        .require(Provider::Gemini)
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("`año_vehiculo`"), "{error}");
}

#[tokio::test]
async fn an_object_left_open_stays_open_and_a_closed_one_closed() {
    let open = echo(
        "open",
        json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    );
    let closed = echo(
        "closed",
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": false}),
    );
    let registry = Registry::builder().tools([open, closed]).build().unwrap();

    // The author left `open` open: an extra argument reaches the handler,
    // and the schemas that can say so say so.
    let outcome = registry
        .dispatch(("open", r#"{"q": "a", "page": 2}"#))
        .await;
    // Compared as JSON: serde_json's key order depends on whether another
    // crate of the build turns on `preserve_order`.
    let received: Value = serde_json::from_str(outcome.result.as_text().unwrap()).unwrap();
    assert_eq!(received, json!({"q": "a", "page": 2}));
    for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Mcp] {
        let list = registry.tool_list(provider).unwrap().to_value();
        let text = list.to_string();
        let schemas: Vec<&Value> = list
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| {
                tool.pointer("/function/parameters")
                    .or_else(|| tool.get("input_schema"))
                    .or_else(|| tool.get("inputSchema"))
                    .unwrap()
            })
            .collect();
        assert_eq!(
            schemas[0].get("additionalProperties"),
            None,
            "{provider}: {text}"
        );
        assert_eq!(
            schemas[1]["additionalProperties"], false,
            "{provider}: {text}"
        );
    }
    // Strict mode can only express closed objects: it is sent closed, and
    // a model held to it sends only what the tool accepts anyway.
    let strict = registry
        .tool_list(Provider::OpenAiStrict)
        .unwrap()
        .to_value();
    assert_eq!(
        strict[0]["function"]["parameters"]["additionalProperties"],
        false
    );

    // The closed one refuses the extra argument, naming it.
    let outcome = registry
        .dispatch(("closed", r#"{"q": "a", "page": 2}"#))
        .await;
    let message = outcome.result.error_message().unwrap();
    assert!(message.contains("page"), "{message}");
}

/// Checks the value it is given against nothing: any JSON.
#[tool]
fn inspect(
    /// Any JSON value.
    value: Value,
) -> String {
    value.to_string()
}

/// `[[[ … null … ]]]`, `levels` arrays deep, built without recursion.
fn nested(levels: usize) -> Value {
    let mut value = Value::Null;
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    value
}

/// `{"value": <value>}`, built without copying the value (`json!` would
/// copy it through serde, one level of recursion per level of it).
fn argument(value: Value) -> Value {
    Value::Object([("value".to_owned(), value)].into_iter().collect())
}

/// Drops a value of any depth without recursion (serde_json's own drop
/// recurses once per level).
fn dismantle(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, value)| value)),
            _ => {}
        }
    }
}

/// A million levels deep, on a tokio worker thread (2 MiB of stack): every
/// way a host-built value reaches dispatch ends in an error result, and the
/// process goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_a_million_levels_deep_are_refused_without_a_crash() {
    const LEVELS: usize = 1_000_000;
    let runtime_tool = echo(
        "store",
        json!({"type": "object", "properties": {"value": {}}}),
    );
    let registry = Arc::new(
        Registry::builder()
            .tools(tools![inspect])
            .tool(runtime_tool)
            .build()
            .unwrap(),
    );
    let worker = tokio::spawn({
        let registry = Arc::clone(&registry);
        async move {
            let mut messages = Vec::new();
            for tool in ["inspect", "store"] {
                let arguments = argument(nested(LEVELS));
                let outcome = registry.dispatch((tool, &arguments)).await;
                messages.push(outcome.result.error_message().map(str::to_owned));
                assert!(
                    outcome.error.is_some(),
                    "{tool}: a typed error for the host"
                );
                dismantle(arguments);

                let call = ToolCall::new("call_1", tool, argument(nested(LEVELS)));
                let turn = registry.dispatch_turn(std::slice::from_ref(&call)).await;
                messages.push(turn.results[0].result.error_message().map(str::to_owned));
                dismantle(call.into_arguments());
            }
            // An action that is not an object of one key is described in
            // its refusal without being written out.
            let action = nested(LEVELS);
            let outcome = match registry.action(&action) {
                Ok(call) => registry.dispatch(call).await,
                Err(error) => CallOutcome::failed(error),
            };
            messages.push(outcome.result.error_message().map(str::to_owned));
            dismantle(action);
            messages
        }
    });
    let messages = worker.await.expect("the worker survives");
    for message in &messages[..4] {
        let message = message.as_deref().expect("an error result");
        assert!(
            message.contains("nest more than 127 levels deep"),
            "{message}"
        );
    }
    let action = messages[4].as_deref().expect("an error result");
    assert!(
        action.contains("nested more than 127 levels deep"),
        "{action}"
    );

    // The registry still works.
    let outcome = registry
        .dispatch(("inspect", r#"{"value": [1, [2]]}"#))
        .await;
    assert_eq!(outcome.result.as_text(), Ok("[1,[2]]"));
}

/// The same arguments as JSON text.
fn nested_text(levels: usize) -> String {
    format!(
        r#"{{"value": {}null{}}}"#,
        "[".repeat(levels),
        "]".repeat(levels)
    )
}

/// JSON text and a host-built `Value` are held to one depth: the arguments
/// object and the arrays in it count, at the limit both are accepted, one
/// level past it both are refused with the same message.
#[tokio::test]
async fn text_and_values_meet_one_depth_limit() {
    let runtime_tool = echo(
        "store",
        json!({"type": "object", "properties": {"value": {}}}),
    );
    let registry = Registry::builder()
        .tools(tools![inspect])
        .tool(runtime_tool)
        .build()
        .unwrap();
    let limit = toolkit_core::MAX_ARGUMENT_DEPTH;
    for tool in ["inspect", "store"] {
        for depth in [limit - 1, limit, limit + 1] {
            // The object around the value is one level.
            let levels = depth - 1;
            let text = registry.dispatch((tool, &nested_text(levels))).await;
            let value = registry.dispatch((tool, &argument(nested(levels)))).await;
            for (form, outcome) in [("text", &text), ("value", &value)] {
                let accepted = outcome.error.is_none();
                assert_eq!(
                    accepted,
                    depth <= limit,
                    "{tool}, {form} {depth} levels deep: {:?}",
                    outcome.result.error_message()
                );
            }
            if depth > limit {
                assert_eq!(
                    text.result.error_message(),
                    value.result.error_message(),
                    "{tool}: one message for both forms"
                );
            } else {
                assert_eq!(text.result.as_text(), value.result.as_text(), "{tool}");
            }
        }
    }
}
