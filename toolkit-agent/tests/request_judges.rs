//! Whole request bodies, after a turn with calls and its results, judged
//! by `async-openai`'s types: each must deserialize and serialize back to
//! every field we sent (nothing unknown to the SDK, misnamed or mistyped;
//! fields the SDK adds on its own, such as a default `type`, and nulls it
//! leaves out, are its normalisation, not ours).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolkit_agent::{AnswerSchema, Conversation, ReasoningEffort, Settings, ToolChoice};
use toolkit_core::Provider;

mod support;
use support::answers::Forecast;

fn round_trip<T: DeserializeOwned + Serialize>(value: &Value) {
    let typed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|error| panic!("{error} in {value:#}"));
    let back = serde_json::to_value(&typed).unwrap();
    kept(value, &back, "$");
}

/// Every non-null value of `ours` is in `back`, at the same place.
fn kept(ours: &Value, back: &Value, path: &str) {
    match (ours, back) {
        (Value::Object(ours), Value::Object(back)) => {
            for (key, value) in ours {
                if value.is_null() {
                    continue;
                }
                let Some(other) = back.get(key) else {
                    panic!("{path}.{key} was dropped by the SDK type: {value}");
                };
                kept(value, other, &format!("{path}.{key}"));
            }
        }
        (Value::Array(ours), Value::Array(back)) => {
            assert_eq!(ours.len(), back.len(), "{path}: length changed");
            for (n, (value, other)) in ours.iter().zip(back).enumerate() {
                kept(value, other, &format!("{path}[{n}]"));
            }
        }
        (ours, back) => assert_eq!(ours, back, "{path} changed"),
    }
}

async fn body(provider: Provider, turn: Value, choice: ToolChoice) -> Value {
    let registry = toolkit_example_tools::registry().unwrap();
    let mut conversation = Conversation::new(provider);
    conversation.set_instructions("Be brief.");
    conversation.set_tools(&registry).unwrap();
    conversation.set_tool_choice(choice);
    conversation.set_settings(Settings::new().parallel_calls(true));
    conversation.push_user("Count the words of 'a b', convert 20 C.");
    let turn = provider.read(&turn).unwrap();
    conversation.push_turn(&turn);
    let outcome = registry.dispatch_turn(&turn.calls).await;
    conversation.push_results(&turn, outcome.results);
    conversation.push_user("Thanks.");
    let mut body = conversation.request();
    body["model"] = json!("gpt-4.1-mini");
    body
}

#[tokio::test]
async fn chat_completions_requests() {
    let turn = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "word_count", "arguments": "{\"text\":\"a b\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "convert_temperature", "arguments": "{\"value"}}]}}]});
    for choice in [
        ToolChoice::Auto,
        ToolChoice::None,
        ToolChoice::Required,
        ToolChoice::Tool("word_count".into()),
    ] {
        let body = body(Provider::OpenAi, turn.clone(), choice).await;
        round_trip::<async_openai::types::chat::CreateChatCompletionRequest>(&body);
    }
}

#[tokio::test]
async fn responses_requests() {
    let turn = json!({"status": "completed", "output": [
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "word_count", "arguments": "{\"text\":\"a b\"}", "status": "completed"},
        {"type": "function_call", "id": "fc_2", "call_id": "c2", "name": "convert_temperature", "arguments": "{\"value", "status": "completed"}]});
    for choice in [
        ToolChoice::Auto,
        ToolChoice::None,
        ToolChoice::Required,
        ToolChoice::Tool("word_count".into()),
    ] {
        let body = body(Provider::OpenAiResponses, turn.clone(), choice).await;
        round_trip::<async_openai::types::responses::CreateResponse>(&body);
    }
}

/// Every setting, in values both `f32` and `f64` hold exactly (the SDK
/// reads floats as `f32`).
fn every_setting() -> Settings {
    Settings::new()
        .temperature(0.5)
        .top_p(0.25)
        .max_output_tokens(300)
        .stop(["END", "STOP"])
        .seed(7)
        .reasoning_effort(ReasoningEffort::Low)
        .thinking_budget(2048)
        .parallel_calls(false)
}

fn with_settings_and_answer(provider: Provider) -> Value {
    let registry = toolkit_example_tools::registry().unwrap();
    let mut conversation = Conversation::new(provider);
    conversation.set_instructions("Be brief.");
    conversation.set_tools(&registry).unwrap();
    conversation.set_settings(every_setting());
    conversation.set_answer_schema(Some(AnswerSchema::of::<Forecast>().unwrap()));
    conversation.push_user("The forecast for Oslo?");
    let mut body = conversation.request();
    body["model"] = json!("gpt-4.1-mini");
    body
}

#[test]
fn chat_completions_settings_and_answer_schema() {
    let body = with_settings_and_answer(Provider::OpenAi);
    round_trip::<async_openai::types::chat::CreateChatCompletionRequest>(&body);
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["top_p"], 0.25);
    assert_eq!(body["max_completion_tokens"], 300);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(body["stop"], json!(["END", "STOP"]));
    assert_eq!(body["seed"], 7);
    assert_eq!(body["reasoning_effort"], "low");
    assert_eq!(body["parallel_tool_calls"], false);
    let format = &body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "Forecast");
    assert_eq!(format["json_schema"]["strict"], true);
    // Strict lowering: every field required, the optional one nullable.
    let schema = &format["json_schema"]["schema"];
    assert_eq!(
        schema["required"],
        json!(["city", "hourly", "sky", "station", "humidity"])
    );
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(
        schema["properties"]["station"]["required"],
        json!(["id", "elevation"])
    );
}

#[test]
fn responses_settings_and_answer_schema() {
    let body = with_settings_and_answer(Provider::OpenAiResponses);
    round_trip::<async_openai::types::responses::CreateResponse>(&body);
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["top_p"], 0.25);
    assert_eq!(body["max_output_tokens"], 300);
    assert_eq!(body["reasoning"], json!({"effort": "low"}));
    assert_eq!(body["parallel_tool_calls"], false);
    // The API has no stop sequences or seed: left out.
    for absent in ["stop", "seed", "max_tokens", "max_completion_tokens"] {
        assert!(body.get(absent).is_none(), "{absent}");
    }
    let format = &body["text"]["format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["name"], "Forecast");
    assert_eq!(format["strict"], true);
    assert_eq!(
        format["schema"]["properties"]["sky"]["enum"],
        json!(["Clear", "Cloudy"])
    );
}

/// The SDK judge is no pushover: a misnamed setting or a broken format is
/// refused.
#[test]
#[should_panic(expected = "was dropped by the SDK type")]
fn the_sdk_judge_refuses_a_misplaced_setting() {
    let mut body = with_settings_and_answer(Provider::OpenAi);
    body["response_format"]["json_schema"]["strictness"] = json!(true);
    round_trip::<async_openai::types::chat::CreateChatCompletionRequest>(&body);
}
