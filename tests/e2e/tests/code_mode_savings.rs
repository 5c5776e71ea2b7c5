//! What the model is sent on the twenty-lookup task, plain tool calling
//! against code mode: the request bodies a scripted model's conversation
//! produces (OpenAI Chat Completions, built by toolkit-agent's
//! `Conversation`, each judged by the OpenAI SDK's request type), summed
//! over the run. Bytes of request bodies, not tokens: no tokenizer is
//! involved; the ratio of bytes is what the test asserts.

use std::sync::Arc;

use async_openai::types::chat::CreateChatCompletionRequest;
use serde_json::{Value, json};
use toolkit_agent::Conversation;
use toolkit_code::CodeMode;
use toolkit_core::{Provider, Registry, tool, tools};

/// The population of a city, in thousands, with the year of the count.
#[tool]
fn population(
    /// The city's name, as written in English.
    city: String,
) -> String {
    format!(
        "{{\"city\":\"{city}\",\"population_thousands\":{},\"counted\":2024,\"source\":\"national statistics office\"}}",
        city.len() * 731
    )
}

/// The country a city is in.
#[tool]
fn country_of(
    /// The city's name.
    city: String,
) -> String {
    format!("the country of {city}")
}

const CITIES: [&str; 20] = [
    "Oslo", "Lima", "Paris", "Rome", "Cairo", "Tokyo", "Delhi", "Quito", "Accra", "Hanoi", "Dakar",
    "Sofia", "Riga", "Lagos", "Dhaka", "Bern", "Minsk", "Kyiv", "Seoul", "Vienna",
];

const TASK: &str = "What is the total population of these twenty cities: Oslo, Lima, Paris, Rome, \
    Cairo, Tokyo, Delhi, Quito, Accra, Hanoi, Dakar, Sofia, Riga, Lagos, Dhaka, Bern, Minsk, Kyiv, \
    Seoul, Vienna?";

/// A Chat Completions response that calls `calls` (name, arguments).
fn response(step: usize, calls: &[(&str, Value)]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, arguments))| {
            json!({
                "id": format!("call_{step}_{i}"),
                "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}
            })
        })
        .collect();
    json!({
        "id": format!("resp_{step}"),
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [{
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}
        }]
    })
}

/// The request's bytes, after the OpenAI SDK's type accepted it.
fn sent(conversation: &Conversation) -> usize {
    let mut body = conversation.request();
    body["model"] = json!("scripted");
    serde_json::from_value::<CreateChatCompletionRequest>(body.clone())
        .unwrap_or_else(|error| panic!("{error} in {body:#}"));
    serde_json::to_vec(&body).unwrap().len()
}

struct Totals {
    requests: usize,
    bytes: usize,
    tool_round_trips: usize,
}

/// Runs the scripted model's steps: each step's calls go through the
/// registry, their results into the conversation; every request counted.
async fn run(registry: &Registry, offered: &Registry, steps: Vec<Vec<(&str, Value)>>) -> Totals {
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_tools(offered).unwrap();
    conversation.push_user(TASK);
    let mut totals = Totals {
        requests: 0,
        bytes: 0,
        tool_round_trips: 0,
    };
    for (step, calls) in steps.into_iter().enumerate() {
        totals.bytes += sent(&conversation);
        totals.requests += 1;
        let turn = Provider::OpenAi.read(&response(step, &calls)).unwrap();
        let outcome = registry.dispatch_turn(&turn.calls).await;
        for result in &outcome.results {
            assert!(!result.result.is_error(), "{:?}", result.result);
        }
        let _ = conversation.push_results(&turn, outcome.results);
        totals.tool_round_trips += 1;
    }
    // The request that carries the last results, answered in text.
    totals.bytes += sent(&conversation);
    totals.requests += 1;
    totals
}

#[tokio::test]
async fn code_mode_sends_a_fifth_of_the_bytes_in_one_round_trip() {
    let tools = Arc::new(
        Registry::builder()
            .tools(tools![population, country_of])
            .build()
            .unwrap(),
    );

    // Plain tool calling, one lookup a step.
    let steps = CITIES
        .iter()
        .map(|city| vec![("population", json!({"city": city}))])
        .collect();
    let plain = run(&tools, &tools, steps).await;

    // Plain tool calling, the twenty lookups in one step (parallel calls).
    let parallel_step = vec![
        CITIES
            .iter()
            .map(|city| ("population", json!({"city": city})))
            .collect(),
    ];
    let parallel = run(&tools, &tools, parallel_step).await;

    // Code mode: one program.
    let mode = CodeMode::new(tools.clone());
    let offered = Registry::builder().tool(mode.tool()).build().unwrap();
    let program = r#"
const cities = ["Oslo", "Lima", "Paris", "Rome", "Cairo", "Tokyo", "Delhi", "Quito", "Accra",
  "Hanoi", "Dakar", "Sofia", "Riga", "Lagos", "Dhaka", "Bern", "Minsk", "Kyiv", "Seoul", "Vienna"];
const counts = await Promise.all(cities.map((city) => tools.population({ city })));
return counts.reduce((sum, text) => sum + JSON.parse(text).population_thousands, 0);
"#;
    let code = run(
        &offered,
        &offered,
        vec![vec![("run_code", json!({"code": program}))]],
    )
    .await;

    eprintln!(
        "plain, one call a step: {} requests, {} tool round trips, {} bytes",
        plain.requests, plain.tool_round_trips, plain.bytes
    );
    eprintln!(
        "plain, parallel calls: {} requests, {} tool round trips, {} bytes",
        parallel.requests, parallel.tool_round_trips, parallel.bytes
    );
    eprintln!(
        "code mode: {} requests, {} tool round trips, {} bytes",
        code.requests, code.tool_round_trips, code.bytes
    );
    assert_eq!(plain.tool_round_trips, 20);
    assert_eq!(code.tool_round_trips, 1);
    assert!(
        plain.bytes >= 5 * code.bytes,
        "plain {} bytes, code mode {} bytes",
        plain.bytes,
        code.bytes
    );
}
