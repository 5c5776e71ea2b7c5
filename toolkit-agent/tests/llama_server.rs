//! Against a real model: llama.cpp's server with Gemma 3 270M, started here
//! on 127.0.0.1 (see support/llama.rs).

#[path = "support/llama.rs"]
mod llama;

use serde_json::json;
use toolkit_agent::{Agent, Conversation, Limits, Model, ModelError, StopReason, ToolChoice};
use toolkit_core::Provider;

/// A conversation with the example tools, short answers.
fn fresh() -> Conversation {
    let registry = toolkit_examples::registry().unwrap();
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_instructions("You are a careful assistant. Use the tools.");
    conversation.set_tools(&registry).unwrap();
    conversation.set("max_tokens", json!(48));
    conversation
}

/// A turn as the model writes it when cut off: the second call's arguments
/// end mid-JSON.
fn truncated_turn() -> toolkit_core::response::Turn {
    Provider::OpenAi
        .read(&json!({"choices": [{"index": 0, "finish_reason": "length", "message": {
            "role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "word_count", "arguments": "{\"text\":\"one two\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "convert_temperature", "arguments": "{\"value"}}
            ]}}]}))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn real_model() {
    let Some(server) = llama::start(8192) else {
        return;
    };
    let model = server.model();

    // Every tool choice is accepted.
    for choice in [
        ToolChoice::Auto,
        ToolChoice::None,
        ToolChoice::Required,
        ToolChoice::Tool("convert_temperature".into()),
    ] {
        let mut conversation = fresh();
        conversation.set_tool_choice(choice.clone());
        conversation.set_parallel_calls(false);
        conversation.push_user("Convert 20 degrees celsius to fahrenheit.");
        let turn = model.complete(&conversation.request()).await;
        assert!(turn.is_ok(), "{choice:?}: {turn:?}");
    }

    // A truncated call, its results (tool messages), then two user
    // messages: accepted, because the malformed call is echoed as `{}`.
    let registry = toolkit_examples::registry().unwrap();
    let turn = truncated_turn();
    assert!(turn.call_info[1].malformed.is_some());
    let mut conversation = fresh();
    conversation.push_user("Count the words of 'one two', then convert 20 C to F.");
    conversation.push_turn(&turn);
    let outcome = registry.run_turn(&turn.calls).await;
    assert!(
        outcome.results[1].result.is_error(),
        "a malformed call is answered with an error"
    );
    conversation.push_results(&turn, outcome.results);
    conversation.push_user("Thanks.");
    conversation.push_user("Now answer in one sentence.");
    let request = conversation.request();
    let reply = model.complete(&request).await;
    assert!(reply.is_ok(), "{reply:?}\n{request:#}");

    // The same conversation with the truncated text echoed verbatim is
    // what the server refuses: the sanitising above is what keeps a run
    // going.
    let mut verbatim = request.clone();
    let messages = verbatim["messages"].as_array_mut().unwrap();
    let assistant = messages
        .iter_mut()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assistant["tool_calls"][1]["function"]["arguments"] = json!("{\"value");
    match model.complete(&verbatim).await {
        Err(ModelError::Status { status, body, .. }) => {
            assert!(status >= 400, "{status}: {body}");
        }
        other => panic!("the server took a malformed echoed call: {other:?}"),
    }

    // Streaming gives a turn, and reports progress.
    let mut conversation = fresh();
    conversation.push_user("Say hello.");
    let mut events = 0;
    let mut progress = |_: &toolkit_core::response::Accumulator| events += 1;
    let streamed = model
        .stream(&conversation.request(), &mut progress)
        .await
        .unwrap();
    assert!(events > 1, "{events} events");
    assert!(!streamed.text.is_empty() || streamed.has_calls());

    // A full run with the example tools: several steps, every request
    // accepted, a clean stop (the small model rarely finishes the task).
    let agent = Agent::new(model.clone(), registry)
        .instructions("Use the tools, then call finish.")
        .tool_choice(ToolChoice::Required)
        .limits(Limits {
            max_steps: 3,
            max_failures: 10,
        })
        .configure(|conversation| conversation.set("max_tokens", json!(64)));
    let outcome = agent
        .run("Convert 20 C to F, then count the words of 'a b c'.")
        .await;
    assert!(
        !matches!(outcome.stop, StopReason::Model(_)),
        "every request was accepted: {:?}",
        outcome.stop
    );
    assert!(outcome.steps >= 1);
    assert!(outcome.usage.input_tokens > 0);
}
