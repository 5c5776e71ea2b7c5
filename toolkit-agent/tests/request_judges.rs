//! Whole request bodies, after a turn with calls and its results, judged
//! by `async-openai`'s types: each must deserialize and serialize back to
//! every field we sent (nothing unknown to the SDK, misnamed or mistyped;
//! fields the SDK adds on its own, such as a default `type`, and nulls it
//! leaves out, are its normalisation, not ours).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolkit_agent::{Conversation, Settings, ToolChoice};
use toolkit_core::Provider;

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
    let registry = toolkit_examples::registry().unwrap();
    let mut conversation = Conversation::new(provider);
    conversation.set_instructions("Be brief.");
    conversation.set_tools(&registry).unwrap();
    conversation.set_tool_choice(choice);
    conversation.set_settings(Settings::new().parallel_calls(true));
    conversation.push_user("Count the words of 'a b', convert 20 C.");
    let turn = provider.read(&turn).unwrap();
    conversation.push_turn(&turn);
    let outcome = registry.run_turn(&turn.calls).await;
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
