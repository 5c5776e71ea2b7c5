//! Chat Completions as the test HTTP server plays it: scripted replies, and
//! what the requests it answered held.

use serde_json::{Value, json};
use toolkit_agent::{HttpModel, RetryPolicy};
use toolkit_tests::http::{Reply, Request, TestServer};

/// A reply making `calls`: `(id, tool, arguments)`.
pub fn chat_calls(calls: &[(&str, &str, Value)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    Reply::json(
        &json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
    )
}

/// A reply answering with `text`.
pub fn chat_text(text: &str) -> Reply {
    Reply::json(&json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3}}))
}

/// A model speaking to `server`, without retries: a request the script
/// did not expect fails at once.
pub fn model(server: &TestServer) -> HttpModel {
    HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
}

/// The JSON bodies of the requests the server answered, oldest first.
pub fn bodies(server: &TestServer) -> Vec<Value> {
    server.requests().iter().map(Request::json).collect()
}

/// The contents of a request's tool messages, in order.
pub fn tool_messages(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect()
}
