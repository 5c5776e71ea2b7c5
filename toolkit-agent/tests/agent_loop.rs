//! The agent loop over a real local HTTP server answering with scripted
//! provider responses, and the example registry's real tools.

use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use serde_json::{Value, json};
use toolkit_agent::{Agent, Decision, Event, HttpModel, HttpModelBuilder, Limits, StopReason};
use toolkit_core::Provider;
use toolkit_core::{Cancellation, Registry};
use toolkit_tests::http::{Reply, Request, TestServer};

fn registry() -> Registry {
    toolkit_example_tools::registry().unwrap()
}

fn chat_calls(calls: &[(&str, &str, &str)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    Reply::json(
        &json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
    )
}

fn chat_text(text: &str) -> Reply {
    Reply::json(&json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3}}))
}

/// The JSON bodies of the requests the server answered, oldest first.
fn bodies(server: &TestServer) -> Vec<Value> {
    server.requests().iter().map(Request::json).collect()
}

fn chat_model(replies: Vec<Reply>) -> (HttpModel, TestServer) {
    let server = TestServer::replying(replies);
    let model = HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .build()
        .unwrap();
    (model, server)
}

#[tokio::test]
async fn malformed_call_is_answered_and_the_run_goes_on_to_done() {
    let (model, server) = chat_model(vec![
        chat_calls(&[
            ("c1", "word_count", r#"{"text":"a b c"}"#),
            ("c2", "convert_temperature", r#"{"value"#),
        ]),
        chat_calls(&[("c3", "done", r#"{"summary":"3 words","success":true}"#)]),
    ]);
    let agent = Agent::builder(model, registry())
        .instructions("Be brief.")
        .build()
        .unwrap();
    let outcome = agent.run("Count the words.").await.unwrap();
    assert!(
        matches!(outcome.stop, StopReason::Done),
        "{:?}",
        outcome.stop
    );
    assert!(outcome.done);
    assert_eq!(outcome.success, Some(true));
    assert_eq!(outcome.answer.as_deref(), Some("3 words"));
    assert_eq!(outcome.steps, 2);
    assert_eq!(outcome.usage.input_tokens, 20);
    let received = bodies(&server);
    let messages = received[1]["messages"].as_array().unwrap();
    // system, user, assistant (malformed call echoed as {}), two tool messages.
    assert_eq!(messages.len(), 5);
    assert_eq!(messages[2]["tool_calls"][1]["function"]["arguments"], "{}");
    let error = messages[4]["content"].as_str().unwrap();
    assert!(
        error.contains("not valid JSON") && error.contains(r#"{"value"#),
        "{error}"
    );
    assert_eq!(messages[3]["tool_call_id"], "c1");
}

#[tokio::test]
async fn earlier_results_are_sent_unchanged_each_step() {
    let (model, server) = chat_model(vec![
        chat_calls(&[("c1", "word_count", r#"{"text":"a b"}"#)]),
        chat_calls(&[("c2", "word_count", r#"{"text":"a b c"}"#)]),
        chat_text("Done."),
    ]);
    let outcome = Agent::new(model, registry()).run("Count.").await.unwrap();
    assert!(matches!(outcome.stop, StopReason::Answered));
    assert_eq!(outcome.answer.as_deref(), Some("Done."));
    let received = bodies(&server);
    let second = received[1]["messages"].as_array().unwrap().clone();
    let third = received[2]["messages"].as_array().unwrap().clone();
    assert_eq!(&third[..second.len()], &second[..]);
}

#[tokio::test]
async fn approval_denies_and_edits_and_events_stream() {
    let (model, server) = chat_model(vec![
        chat_calls(&[
            ("c1", "word_count", r#"{"text":"a b"}"#),
            ("c2", "create_event", r#"{"title":"x","day":"2026-01-01"}"#),
        ]),
        chat_text("ok"),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let agent = Agent::builder(model, registry())
        .needs_approval("create_event")
        .needs_approval("word_count")
        .approval(move |pending| {
            let call = pending.call;
            log.lock().unwrap().push(call.name.clone());
            let decision = match call.name.as_str() {
                "create_event" => Decision::Deny("no calendar changes today".into()),
                _ => Decision::Edit(call.with_arguments(json!({"text": "one two three four"}))),
            };
            async move { decision }
        })
        .build()
        .unwrap();
    let (run, events) = agent.run("Go.").events();
    let (outcome, events) = tokio::join!(run, events.collect::<Vec<Event>>());
    let outcome = outcome.unwrap();
    assert!(matches!(outcome.stop, StopReason::Answered));
    assert_eq!(*seen.lock().unwrap(), ["word_count", "create_event"]);
    let received = bodies(&server);
    let messages = received[1]["messages"].as_array().unwrap();
    // The edited call's tool message says it ran as the host changed it;
    // its output follows the tool messages, as a note's result's does.
    assert!(
        messages[2]["content"]
            .as_str()
            .unwrap()
            .contains("The host changed `text` of this call before it ran"),
        "{}",
        messages[2]
    );
    assert_eq!(messages[4]["role"], "user", "{}", messages[4]);
    assert_eq!(messages[4]["content"][1]["text"], "4", "{}", messages[4]);
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("no calendar changes today")
    );
    assert!(events.iter().any(|e| matches!(e, Event::Denied { .. })));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::StepStarted { step: 2 }))
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Result { .. }))
            .count(),
        2
    );
}

#[tokio::test]
async fn stop_after_tool_failure_budget_step_limit_and_cancellation() {
    // Stop after a marked tool.
    let (model, _server) = chat_model(vec![chat_calls(&[("c1", "word_count", r#"{"text":"a"}"#)])]);
    let agent = Agent::builder(model, registry())
        .stop_after("word_count")
        .build()
        .unwrap();
    let outcome = agent.run("x").await.unwrap();
    assert!(matches!(outcome.stop, StopReason::StopAfter(ref tool) if tool == "word_count"));

    // Consecutive failures of one tool past the budget.
    let bad = || chat_calls(&[("c", "convert_temperature", r#"{"value":"hot"}"#)]);
    let (model, _server) = chat_model(vec![bad(), bad(), bad()]);
    let agent = Agent::builder(model, registry())
        .limits(Limits::default().max_steps(10).max_failures(2))
        .build()
        .unwrap();
    let outcome = agent.run("x").await.unwrap();
    match outcome.stop {
        StopReason::ToolFailures { tool, last_error } => {
            assert_eq!(tool, "convert_temperature");
            assert!(!last_error.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(outcome.steps, 3);

    // The step limit.
    let ok = || chat_calls(&[("c", "word_count", r#"{"text":"a"}"#)]);
    let (model, _server) = chat_model(vec![ok(), ok()]);
    let agent = Agent::builder(model, registry())
        .limits(Limits::default().max_steps(2))
        .build()
        .unwrap();
    let outcome = agent.run("x").await.unwrap();
    assert!(matches!(outcome.stop, StopReason::StepLimit));
    assert_eq!(outcome.steps, 2);

    // Cancelled before the first request.
    let (model, _server) = chat_model(vec![]);
    let agent = Agent::new(model, registry());
    let cancellation = Cancellation::new();
    cancellation.cancel();
    let outcome = agent.run("x").cancellation(&cancellation).await.unwrap();
    assert!(matches!(outcome.stop, StopReason::Cancelled));
}

/// Runs `Count.` with the model `builder` makes, speaking to `server`, and
/// checks the answer: returns the request bodies the server received.
async fn counted(builder: HttpModelBuilder, server: &TestServer) -> Vec<Value> {
    let model = builder
        .base_url(server.base_url())
        .key("k")
        .build()
        .unwrap();
    let outcome = Agent::new(model, registry()).run("Count.").await.unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("Two."));
    bodies(server)
}

#[tokio::test]
async fn other_providers_run_the_loop() {
    // Anthropic: a documented tool_use turn with thinking, then an answer.
    let server = TestServer::replying(vec![
        Reply::json(
            &json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [
                {"type": "thinking", "thinking": "count", "signature": "sig=="},
                {"type": "tool_use", "id": "toolu_1", "name": "word_count", "input": {"text": "a b"}}],
            "usage": {"input_tokens": 5, "output_tokens": 2}}),
        ),
        Reply::json(
            &json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "Two."}]}),
        ),
    ]);
    let model = HttpModel::anthropic("m")
        .base_url(server.base_url())
        .key("k")
        .build()
        .unwrap();
    let agent = Agent::builder(model, registry())
        .instructions("Be brief.")
        .build()
        .unwrap();
    let outcome = agent.run("Count.").await.unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("Two."));
    let received = bodies(&server);
    let second = &received[1];
    assert_eq!(second["system"], "Be brief.");
    assert_eq!(second["messages"][1]["content"][0]["signature"], "sig==");
    assert_eq!(
        second["messages"][2]["content"][0]["tool_use_id"],
        "toolu_1"
    );

    // Gemini: calls without id and with a thought signature.
    let server = TestServer::replying(vec![
        Reply::json(
            &json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [
            {"functionCall": {"name": "word_count", "args": {"text": "a b"}}, "thoughtSignature": "<Signature_A>"}]}}]}),
        ),
        Reply::json(
            &json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [{"text": "Two."}]}}]}),
        ),
    ]);
    let received = counted(HttpModel::gemini("m"), &server).await;
    let contents = &received[1]["contents"];
    assert_eq!(contents[1]["parts"][0]["thoughtSignature"], "<Signature_A>");
    let response = &contents[2]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "word_count");
    assert!(
        response.get("id").is_none(),
        "an id the API never sent is not sent back"
    );

    // Responses: call_id answers, reasoning echoed.
    let server = TestServer::replying(vec![
        Reply::json(&json!({"status": "completed", "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "word_count", "arguments": "{\"text\":\"a b\"}"}]})),
        Reply::json(&json!({"status": "completed", "output": [
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two."}]}]})),
    ]);
    let received = counted(HttpModel::openai_responses("m"), &server).await;
    let input = received[1]["input"].as_array().unwrap();
    assert_eq!(input[1]["encrypted_content"], "enc");
    assert_eq!(input[3]["type"], "function_call_output");
    assert_eq!(input[3]["call_id"], "call_1");
    assert_eq!(Provider::OpenAiResponses.as_str(), "responses");
}

#[tokio::test]
async fn an_answer_cut_off_at_the_output_limit_is_not_called_answered() {
    let cut = Reply::json(&json!({"choices": [{"index": 0, "finish_reason": "length",
        "message": {"role": "assistant", "content": "The answer is forty"}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 512}}));
    let (model, _server) = chat_model(vec![cut]);
    let outcome = Agent::new(model, registry()).run("Answer.").await.unwrap();
    assert!(
        matches!(outcome.stop, StopReason::Truncated),
        "{:?}",
        outcome.stop
    );
    assert_eq!(outcome.answer.as_deref(), Some("The answer is forty"));
    assert_eq!(
        outcome.stop.to_string(),
        "the model's answer was cut off at its output limit"
    );
}
