//! Typed settings, the answer schema and strict mode in a conversation:
//! the order fields are written in, what each provider leaves out, saving
//! and restoring, reading answers back, and the final-answer tool. (The
//! request bodies themselves are judged in request_judges.rs and
//! request_bodies.rs.)

use serde::Deserialize;
use serde_json::{Value, json};
use toolkit_agent::{AnswerSchema, Conversation, FINAL_ANSWER_TOOL, ReasoningEffort, Settings};
use toolkit_core::{CallContext, Provider, Registry, ToolDef};

#[derive(Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct City {
    /// The city's name.
    name: String,
    /// How many people live there.
    population: Option<u32>,
    districts: Vec<District>,
}

#[derive(Deserialize, schemars::JsonSchema, Debug, PartialEq)]
struct District {
    name: String,
    area_km2: f64,
}

#[test]
fn fields_set_by_hand_win_over_typed_settings() {
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.push_user("Hi.");
    conversation.set_settings(Settings::new().temperature(0.5).max_output_tokens(100));
    conversation.set("temperature", json!(1));
    let body = conversation.request();
    assert_eq!(body["temperature"], 1);
    assert_eq!(body["max_completion_tokens"], 100);

    // A whole top-level field is replaced: Gemini's generationConfig too.
    let mut conversation = Conversation::new(Provider::Gemini);
    conversation.push_user("Hi.");
    conversation.set_settings(Settings::new().temperature(0.5).seed(3));
    conversation.set_answer_schema(Some(AnswerSchema::of::<City>().unwrap()));
    assert_eq!(conversation.request()["generationConfig"]["seed"], 3);
    conversation.set("generationConfig", json!({"topK": 4}));
    assert_eq!(
        conversation.request()["generationConfig"],
        json!({"topK": 4})
    );

    // The answer schema replaces a response_format the settings cannot
    // write, and a hand-set one replaces the schema's.
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_answer_schema(Some(AnswerSchema::of::<City>().unwrap()));
    conversation.set("response_format", json!({"type": "json_object"}));
    assert_eq!(
        conversation.request()["response_format"],
        json!({"type": "json_object"})
    );
}

#[test]
fn anthropic_keeps_a_default_output_limit_a_setting_replaces() {
    let mut conversation = Conversation::new(Provider::Anthropic);
    conversation.push_user("Hi.");
    assert_eq!(conversation.request()["max_tokens"], 4096);
    conversation.settings_mut().max_output_tokens = Some(64);
    assert_eq!(conversation.request()["max_tokens"], 64);
    conversation.set("max_tokens", json!(32));
    assert_eq!(conversation.request()["max_tokens"], 32);
}

#[test]
fn parallel_calls_are_sent_only_with_tools() {
    let registry = toolkit_example_tools::registry().unwrap();
    for provider in [Provider::OpenAi, Provider::OpenAiResponses] {
        let mut conversation = Conversation::new(provider);
        conversation.push_user("Hi.");
        conversation.set_settings(Settings::new().parallel_calls(false));
        assert!(conversation.request().get("parallel_tool_calls").is_none());
        conversation.set_tools(&registry).unwrap();
        assert_eq!(conversation.request()["parallel_tool_calls"], false);
    }
}

#[test]
fn each_provider_names_what_it_leaves_out() {
    let all = Settings::new()
        .temperature(0.5)
        .top_p(0.5)
        .max_output_tokens(10)
        .stop(["x"])
        .seed(1)
        .reasoning_effort(ReasoningEffort::High)
        .thinking_budget(1024)
        .parallel_calls(true);
    assert_eq!(all.unsent(Provider::OpenAi), ["thinking_budget"]);
    assert_eq!(
        all.unsent(Provider::OpenAiResponses),
        ["stop", "seed", "thinking_budget"]
    );
    assert_eq!(all.unsent(Provider::Anthropic), ["seed"]);
    assert_eq!(all.unsent(Provider::Gemini), ["parallel_calls"]);
    assert!(Settings::new().unsent(Provider::OpenAiResponses).is_empty());

    // And what is left out is not in the body.
    let registry = toolkit_example_tools::registry().unwrap();
    for provider in [
        Provider::OpenAi,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ] {
        let mut conversation = Conversation::new(provider);
        conversation.set_tools(&registry).unwrap();
        conversation.set_settings(all.clone());
        conversation.push_user("Hi.");
        let body = conversation.request().to_string();
        if all.unsent(provider).contains(&"seed") {
            assert!(!body.contains("seed"), "{provider}: {body}");
        }
        if all.unsent(provider).contains(&"thinking_budget") {
            assert!(!body.contains("budget"), "{provider}: {body}");
        }
        if all.unsent(provider).contains(&"parallel_calls") {
            assert!(!body.contains("parallel"), "{provider}: {body}");
        }
    }
}

#[test]
fn values_no_provider_takes_are_named() {
    assert!(
        Settings::new()
            .temperature(0.0)
            .top_p(1.0)
            .problems()
            .is_empty()
    );
    let problems = Settings::new()
        .temperature(f64::NAN)
        .top_p(1.5)
        .stop([""])
        .problems();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("temperature"), "{problems:?}");
    assert!(
        problems[1].contains("top_p must be at most 1"),
        "{problems:?}"
    );
}

#[test]
fn settings_and_answer_schemas_round_trip_through_serde() {
    let settings = Settings::new()
        .temperature(0.1)
        .top_p(0.95)
        .max_output_tokens(10)
        .stop(["a", "b"])
        .seed(-3)
        .reasoning_effort(ReasoningEffort::Medium)
        .thinking_budget(2048)
        .parallel_calls(false);
    let text = serde_json::to_string(&settings).unwrap();
    assert_eq!(serde_json::from_str::<Settings>(&text).unwrap(), settings);
    assert_eq!(
        serde_json::from_str::<Settings>("{}").unwrap(),
        Settings::new()
    );
    assert!(text.contains(r#""reasoning_effort":"medium""#), "{text}");

    let schema = AnswerSchema::of::<City>().unwrap().named("city answer");
    let text = serde_json::to_string(&schema).unwrap();
    let back: AnswerSchema = serde_json::from_str(&text).unwrap();
    assert_eq!(back, schema);
    assert_eq!(back.name(), "city_answer");
}

/// A tool OpenAI's strict mode cannot take: a free-form map.
fn free_form() -> ToolDef {
    ToolDef::builder("tag")
        .description("Tags a thing.")
        .input_schema(json!({"type": "object", "properties": {
            "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}))
        .handler(|_: Value, _: CallContext| async { "ok" })
}

#[test]
fn strict_mode_may_be_set_before_or_after_the_tools() {
    let registry = toolkit_example_tools::registry().unwrap();
    let strict_flags = |conversation: &Conversation| -> Vec<Value> {
        conversation.request()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["function"]["strict"].clone())
            .collect()
    };
    let mut after = Conversation::new(Provider::OpenAi);
    after.set_tools(&registry).unwrap();
    assert!(strict_flags(&after).iter().all(Value::is_null));
    after.set_strict(true).unwrap();
    assert_eq!(after.provider(), Provider::OpenAiStrict);
    assert!(strict_flags(&after).iter().all(|flag| flag == true));

    let mut before = Conversation::new(Provider::OpenAi);
    before.set_strict(true).unwrap();
    before.set_tools(&registry).unwrap();
    assert_eq!(before.request(), after.request());

    after.set_strict(false).unwrap();
    assert_eq!(after.provider(), Provider::OpenAi);
    assert!(strict_flags(&after).iter().all(Value::is_null));

    // A tool strict mode cannot take fails the switch, naming it, and
    // changes nothing.
    let loose = Registry::builder().tool(free_form()).build().unwrap();
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_tools(&loose).unwrap();
    let sent = conversation.request();
    let error = conversation.set_strict(true).unwrap_err();
    assert_eq!(error.provider, Provider::OpenAiStrict);
    assert_eq!(error.tools[0].0, "tag");
    assert_eq!(conversation.provider(), Provider::OpenAi);
    assert_eq!(conversation.request(), sent);

    // Other providers are left as they are.
    let mut conversation = Conversation::new(Provider::Anthropic);
    conversation.set_tools(&loose).unwrap();
    conversation.set_strict(true).unwrap();
    assert_eq!(conversation.provider(), Provider::Anthropic);
}

#[test]
fn answers_are_read_into_the_type_with_every_problem_at_once() {
    let schema = AnswerSchema::of::<City>().unwrap();
    let oslo = City {
        name: "Oslo".into(),
        population: None,
        districts: vec![District {
            name: "Frogner".into(),
            area_km2: 8.3,
        }],
    };
    // Absent and null optional fields alike (strict mode writes null).
    for text in [
        r#"{"name": "Oslo", "districts": [{"name": "Frogner", "area_km2": 8.3}]}"#,
        r#"{"name": "Oslo", "population": null, "districts": [{"name": "Frogner", "area_km2": 8.3}]}"#,
        "```json\n{\"name\": \"Oslo\", \"districts\": [{\"name\": \"Frogner\", \"area_km2\": 8.3}]}\n```",
    ] {
        assert_eq!(schema.read::<City>(text).unwrap(), oslo, "{text}");
    }

    let error = schema
        .read::<City>(
            r#"{"name": 7, "population": -1, "districts": [{"area_km2": "big"}], "mayor": "x"}"#,
        )
        .unwrap_err();
    let message = error.to_string();
    assert_eq!(error.problems().len(), 5, "{message}");
    let places: Vec<&str> = error
        .problems()
        .iter()
        .map(|problem| problem.pointer.as_str())
        .collect();
    for place in [
        "/name",
        "/population",
        "/districts/0/name",
        "/districts/0/area_km2",
        "/mayor",
    ] {
        assert!(places.contains(&place), "{place} in {places:?}");
    }
    // The model is told each problem, and what to do.
    let prompt = error.prompt();
    for part in [
        "at `name`: expected a string",
        "at `population`",
        "at `districts[0].name`: missing required field",
        "at `districts[0].area_km2`: expected a number",
        "at `mayor`: unknown field",
        "Answer again",
    ] {
        assert!(prompt.contains(part), "{part} in {prompt}");
    }
    assert!(!message.contains("Answer again"), "{message}");

    let error = schema.read::<City>("Oslo, I think.").unwrap_err();
    assert!(
        error.to_string().contains("the answer is not JSON"),
        "{error}"
    );

    // Only object-like types: providers want an object at the root.
    assert!(AnswerSchema::of::<Vec<String>>().is_err());
}

#[tokio::test]
async fn the_final_answer_tool_takes_the_answer_as_its_arguments() {
    let schema = AnswerSchema::of::<City>().unwrap();
    let tool = schema.tool();
    assert_eq!(tool.name(), FINAL_ANSWER_TOOL);
    let registry = Registry::builder().tool(tool).build().unwrap();
    for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Gemini] {
        registry.tool_list(provider).unwrap();
    }

    let outcome = registry
        .dispatch((FINAL_ANSWER_TOOL, r#"{"name": "Oslo", "districts": []}"#))
        .await;
    assert!(outcome.result.is_done());
    let text = outcome.result.as_text().unwrap();
    let city: City = schema.read(text).unwrap();
    assert_eq!(city.name, "Oslo");

    let wrong = registry
        .dispatch((FINAL_ANSWER_TOOL, r#"{"name": 3, "districts": {}}"#))
        .await;
    let message = wrong.result.error_message().unwrap();
    assert!(!wrong.result.is_done());
    assert!(
        message.contains("name") && message.contains("districts"),
        "{message}"
    );
}

#[test]
fn an_agent_sends_strict_tools_and_its_settings() {
    let model = || {
        toolkit_agent::HttpModel::openai_chat("m")
            .no_key()
            .build()
            .unwrap()
    };
    let settings = toolkit_agent::Settings::new().parallel_calls(false);
    let agent = toolkit_agent::Agent::builder(model(), toolkit_example_tools::registry().unwrap())
        .settings(settings.clone())
        .strict(true)
        .configure(|conversation| conversation.settings_mut().temperature = Some(0.0))
        .build()
        .unwrap();
    let request = agent.conversation("Convert 20 C to F.").unwrap().request();
    let tools = request["tools"].as_array().unwrap();
    assert!(!tools.is_empty());
    assert!(tools.iter().all(|tool| tool["function"]["strict"] == true));
    // The agent's settings and the hook's change both hold.
    assert_eq!(request["parallel_tool_calls"], false);
    assert_eq!(request["temperature"], 0.0);

    // The same through the configure hook alone, strict switched before
    // the tools are set.
    let agent = toolkit_agent::Agent::builder(model(), toolkit_example_tools::registry().unwrap())
        .configure(|conversation| conversation.set_strict(true).unwrap())
        .build()
        .unwrap();
    let request = agent.conversation("Convert 20 C to F.").unwrap().request();
    let tools = request["tools"].as_array().unwrap();
    assert!(tools.iter().all(|tool| tool["function"]["strict"] == true));
}
