//! Whole Anthropic and Gemini request bodies, as a conversation renders
//! them over several steps (thinking echoed, images, errors, a malformed
//! call, show-once output, observations, every tool choice), judged by the
//! judges written from each provider's documentation. (Chat Completions and
//! Responses bodies are judged by async-openai's types in toolkit-agent's
//! tests.)

use serde_json::{Value, json};
use toolkit_agent::{
    AnswerSchema, Conversation, Observation, ReasoningEffort, Settings, ToolChoice,
};
use toolkit_core::{Provider, ToolResult};
use toolkit_tests::judges::{anthropic_request, gemini_request};

mod support;
use support::answers::Forecast;

const CHOICES: [fn() -> ToolChoice; 4] = [
    || ToolChoice::Auto,
    || ToolChoice::None,
    || ToolChoice::Required,
    || ToolChoice::Tool("word_count".into()),
];

/// Three responses in the provider's own form: calls (with thinking),
/// calls of which one failed or is malformed, then a text answer.
fn responses(provider: Provider, with_ids: bool) -> [Value; 3] {
    match provider {
        Provider::Anthropic => [
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "thinking", "thinking": "Count first, then look.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
                    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
                    {"type": "text", "text": "Let me do both."},
                    {"type": "tool_use", "id": "toolu_01", "name": "word_count", "input": {"text": "a b c"}},
                    {"type": "tool_use", "id": "toolu_02", "name": "screenshot", "input": {"url": "https://example.com"}}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 100, "output_tokens": 40}}),
            json!({"id": "msg_2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "tool_use", "id": "toolu_03", "name": "fetch", "input": {"url": "https://example.com"}},
                    {"type": "tool_use", "id": "toolu_04", "name": "convert_temperature", "input": {"value": "hot"}}],
                "stop_reason": "tool_use"}),
            json!({"id": "msg_3", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Three words; the page could not be fetched."}],
                "stop_reason": "end_turn"}),
        ],
        _ => {
            let id = |id: &str| if with_ids { json!(id) } else { Value::Null };
            let call = |name: &str, args: Value, call_id: &str| {
                let mut call = json!({"name": name, "args": args});
                if with_ids {
                    call["id"] = id(call_id);
                }
                call
            };
            [
                json!({"candidates": [{"content": {"role": "model", "parts": [
                    {"text": "Counting first.", "thought": true},
                    {"functionCall": call("word_count", json!({"text": "a b c"}), "fc_1"), "thoughtSignature": "CiQBcsjafE1dl8/2vNRAv1SdAx7u"},
                    {"functionCall": call("screenshot", json!({"url": "https://example.com"}), "fc_2")}]},
                    "finishReason": "STOP"}],
                    "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 40}}),
                json!({"candidates": [{"content": {"role": "model", "parts": [
                    {"functionCall": call("fetch", json!({"url": "https://example.com"}), "fc_3"), "thoughtSignature": "CiQBcsjafO2x"},
                    {"functionCall": call("convert_temperature", json!({"value": "hot"}), "fc_4")}]},
                    "finishReason": "STOP"}]}),
                json!({"candidates": [{"content": {"role": "model", "parts": [
                    {"text": "Three words; the page could not be fetched.", "thoughtSignature": "CiQBcsjafA=="}]},
                    "finishReason": "STOP"}]}),
            ]
        }
    }
}

/// Every request of a three-step conversation in `provider`, each one as
/// it would be sent.
async fn requests(provider: Provider, choice: ToolChoice, with_ids: bool) -> Vec<Value> {
    let registry = toolkit_example_tools::registry().unwrap();
    let mut conversation = Conversation::new(provider);
    conversation.set_instructions("Use the tools.");
    conversation.set_tools(&registry).unwrap();
    conversation.set_tool_choice(choice);
    conversation.set_settings(Settings::new().parallel_calls(false));
    conversation.push_user("Count the words of 'a b c' and look at example.com.");
    let mut sent = Vec::new();
    let with_model = |mut body: Value| {
        if provider == Provider::Anthropic {
            body["model"] = json!("claude-sonnet-4-5");
        }
        body
    };
    for (step, response) in responses(provider, with_ids).into_iter().enumerate() {
        conversation.push_observation(
            Observation::new(format!("Open tabs: {}", step + 1)).later("(older tab list)"),
        );
        sent.push(with_model(conversation.request()));
        let turn = provider.read(&response).unwrap();
        conversation.push_turn(&turn);
        if !turn.has_calls() {
            break;
        }
        let outcome = registry.dispatch_turn(&turn.calls).await;
        let mut results = outcome.results;
        if step == 0 {
            // A show-once output: in the next request, gone from the one after.
            results[0].result = ToolResult::text("3")
                .with_show_once()
                .with_memory("Counted 3 words");
        }
        conversation.push_results(&turn, results);
    }
    conversation.push_user("Thanks.");
    sent.push(with_model(conversation.request()));
    sent
}

#[tokio::test]
async fn anthropic_requests_are_accepted_by_the_judge() {
    for choice in CHOICES {
        let choice = choice();
        for (n, body) in requests(Provider::Anthropic, choice.clone(), true)
            .await
            .iter()
            .enumerate()
        {
            if let Err(problem) = anthropic_request::check_request(body) {
                panic!("{choice:?}, request {n}: {problem}\n{body:#}");
            }
        }
    }
    let last = requests(Provider::Anthropic, ToolChoice::Auto, true)
        .await
        .pop()
        .unwrap();
    let text = last.to_string();
    assert!(
        text.contains("EqQBCgIYAhIM1gbcDa9GJwZA2b3h"),
        "signature echoed"
    );
    assert!(text.contains("Counted 3 words"));
    assert_eq!(last["tool_choice"]["disable_parallel_tool_use"], true);
}

#[tokio::test]
async fn gemini_requests_are_accepted_by_the_judge() {
    for with_ids in [true, false] {
        for choice in CHOICES {
            let choice = choice();
            for (n, body) in requests(Provider::Gemini, choice.clone(), with_ids)
                .await
                .iter()
                .enumerate()
            {
                if let Err(problem) = gemini_request::check_request(body) {
                    panic!("{choice:?} (ids: {with_ids}), request {n}: {problem}\n{body:#}");
                }
            }
        }
    }
    let last = requests(Provider::Gemini, ToolChoice::Auto, true)
        .await
        .pop()
        .unwrap();
    let text = last.to_string();
    assert!(
        text.contains("CiQBcsjafE1dl8/2vNRAv1SdAx7u"),
        "signature echoed"
    );
    assert!(text.contains("Counted 3 words"));
}

/// The judges are not pushovers: each rule across messages refuses a body
/// that breaks it.
#[tokio::test]
async fn the_request_judges_refuse_what_the_providers_refuse() {
    let good = requests(Provider::Anthropic, ToolChoice::Auto, true)
        .await
        .pop()
        .unwrap();
    anthropic_request::check_request(&good).unwrap();
    let broken = |change: &dyn Fn(&mut Value)| {
        let mut body = good.clone();
        change(&mut body);
        anthropic_request::check_request(&body).unwrap_err()
    };
    // The results of the first turn removed.
    let error = broken(&|body| {
        body["messages"].as_array_mut().unwrap().remove(2);
    });
    assert!(
        error.contains("tool_use") || error.contains("tool_result"),
        "{error}"
    );
    // Text before the results in their message.
    let error = broken(&|body| {
        let content = body["messages"][2]["content"].as_array_mut().unwrap();
        content.insert(0, json!({"type": "text", "text": "first"}));
    });
    assert!(error.contains("must come first"), "{error}");
    let error = broken(&|body| body["tool_choice"] = json!({"type": "tool", "name": "nope"}));
    assert!(error.contains("no tool named"), "{error}");
    let error = broken(&|body| body["tool_choice"] = json!({"type": "required"}));
    assert!(error.contains("not a Messages API request"), "{error}");
    let error = broken(&|body| {
        body.as_object_mut().unwrap().remove("max_tokens");
    });
    assert!(error.contains("max_tokens"), "{error}");
    let error = broken(&|body| {
        body["messages"][1]["content"][0]
            .as_object_mut()
            .unwrap()
            .remove("signature");
    });
    assert!(error.contains("signature"), "{error}");

    let good = requests(Provider::Gemini, ToolChoice::Auto, false)
        .await
        .pop()
        .unwrap();
    gemini_request::check_request(&good).unwrap();
    let broken = |change: &dyn Fn(&mut Value)| {
        let mut body = good.clone();
        change(&mut body);
        gemini_request::check_request(&body).unwrap_err()
    };
    let answers = good["contents"]
        .as_array()
        .unwrap()
        .iter()
        .position(|content| content.to_string().contains("functionResponse"))
        .unwrap();
    let error = broken(&|body| {
        let parts = body["contents"][answers]["parts"].as_array_mut().unwrap();
        parts.pop();
    });
    assert!(error.contains("function response parts"), "{error}");
    let error = broken(&|body| {
        body["contents"][answers]["parts"][0]["functionResponse"]["id"] = json!("x")
    });
    assert!(error.contains("had none"), "{error}");
    let error = broken(&|body| {
        body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"] = json!(["word_count"])
    });
    assert!(error.contains("only with mode ANY"), "{error}");
    let error = broken(&|body| {
        body["contents"]
            .as_array_mut()
            .unwrap()
            .drain(..answers - 1);
    });
    assert!(error.contains("immediately after a user turn"), "{error}");
}

fn every_setting() -> Settings {
    Settings::new()
        .temperature(0.5)
        .top_p(0.9)
        .max_output_tokens(4000)
        .stop(["END"])
        .seed(7)
        .reasoning_effort(ReasoningEffort::High)
        .thinking_budget(2048)
        .parallel_calls(false)
}

/// A request after one step of calls, with settings and an answer schema.
async fn with_settings_and_answer(provider: Provider, settings: Settings) -> Value {
    let mut sent = requests(provider, ToolChoice::Auto, true).await;
    let last = sent.pop().unwrap();
    let registry = toolkit_example_tools::registry().unwrap();
    let mut conversation = Conversation::new(provider);
    conversation.set_tools(&registry).unwrap();
    conversation.set_settings(settings);
    conversation.set_answer_schema(Some(AnswerSchema::of::<Forecast>().unwrap()));
    conversation.push_user("The forecast for Oslo?");
    // The transcript of the three-step run, with this conversation's
    // settings and schema.
    let mut body = conversation.request();
    for key in [
        "messages",
        "contents",
        "system",
        "systemInstruction",
        "model",
    ] {
        if let Some(value) = last.get(key) {
            body[key] = value.clone();
        }
    }
    body
}

#[tokio::test]
async fn anthropic_settings_and_answer_schema_are_accepted_by_the_judge() {
    let body = with_settings_and_answer(Provider::Anthropic, every_setting()).await;
    if let Err(problem) = anthropic_request::check_request(&body) {
        panic!("{problem}\n{body:#}");
    }
    assert_eq!(body["max_tokens"], 4000);
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["top_p"], 0.9);
    assert_eq!(body["stop_sequences"], json!(["END"]));
    assert!(body.get("seed").is_none(), "Anthropic has no seed");
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(body["output_config"]["effort"], "high");
    assert_eq!(body["tool_choice"]["disable_parallel_tool_use"], true);
    let format = &body["output_config"]["format"];
    assert_eq!(format["type"], "json_schema");
    // The bounds of `u8` and `i32` are left out for Anthropic.
    let humidity = &format["schema"]["properties"]["humidity"];
    assert!(humidity.get("maximum").is_none(), "{humidity}");

    // The default output limit, when none is set.
    let body = with_settings_and_answer(Provider::Anthropic, Settings::new()).await;
    assert_eq!(body["max_tokens"], 4096);
    anthropic_request::check_request(&body).unwrap();

    // The judge refuses what the API refuses.
    let mut broken = body.clone();
    broken["output_config"]["format"]["schema"]["properties"]["humidity"]["maximum"] = json!(100);
    let error = anthropic_request::check_request(&broken).unwrap_err();
    assert!(error.contains("`maximum` is not supported"), "{error}");
    let mut broken = body.clone();
    broken["thinking"] = json!({"type": "enabled", "budget_tokens": 8192});
    let error = anthropic_request::check_request(&broken).unwrap_err();
    assert!(error.contains("below max_tokens"), "{error}");
    let mut broken = body.clone();
    broken["output_config"]["effort"] = json!("extreme");
    anthropic_request::check_request(&broken).unwrap_err();
}

#[tokio::test]
async fn gemini_settings_and_answer_schema_are_accepted_by_the_judge() {
    let body = with_settings_and_answer(Provider::Gemini, every_setting()).await;
    if let Err(problem) = gemini_request::check_request(&body) {
        panic!("{problem}\n{body:#}");
    }
    let config = &body["generationConfig"];
    assert_eq!(config["temperature"], 0.5);
    assert_eq!(config["topP"], 0.9);
    assert_eq!(config["maxOutputTokens"], 4000);
    assert_eq!(config["stopSequences"], json!(["END"]));
    assert_eq!(config["seed"], 7);
    // A budget and a level are refused together: the budget is sent.
    assert_eq!(config["thinkingConfig"], json!({"thinkingBudget": 2048}));
    assert_eq!(config["responseMimeType"], "application/json");
    assert_eq!(config["responseJsonSchema"]["type"], "object");
    assert!(body.get("parallel_tool_calls").is_none());

    let level = with_settings_and_answer(
        Provider::Gemini,
        Settings::new().reasoning_effort(ReasoningEffort::Medium),
    )
    .await;
    gemini_request::check_request(&level).unwrap();
    assert_eq!(
        level["generationConfig"]["thinkingConfig"],
        json!({"thinkingLevel": "medium"})
    );

    // The judge refuses what the API refuses.
    let mut broken = body.clone();
    broken["generationConfig"]["thinkingConfig"]["thinkingLevel"] = json!("low");
    let error = gemini_request::check_request(&broken).unwrap_err();
    assert!(error.contains("exclusive"), "{error}");
    let mut broken = body.clone();
    broken["generationConfig"]
        .as_object_mut()
        .unwrap()
        .remove("responseMimeType");
    let error = gemini_request::check_request(&broken).unwrap_err();
    assert!(error.contains("responseMimeType"), "{error}");
    let mut broken = body.clone();
    broken["generationConfig"]["max_output_tokens"] = json!(5);
    gemini_request::check_request(&broken).unwrap_err();
}
