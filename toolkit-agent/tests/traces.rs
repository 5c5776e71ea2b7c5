//! The agent's spans, as a recording subscriber sees them while real
//! local HTTP servers play the model: `invoke_agent` around a run with the
//! model's `chat` spans and the tools' `execute_tool` spans inside it; the
//! request's settings, the response's id, model, finish reasons and token
//! counts; retries, decisions and resumes as events; and content recorded
//! only while capture is on.
//!
//! A binary of its own: content capture is one switch for the process, and
//! no other test may turn it on while these check that nothing leaked.

use std::time::Duration;

use serde_json::{Value, json};
use toolkit_agent::telemetry::attr;
use toolkit_agent::{Agent, Decision, HttpModel, Model, RetryPolicy, StopReason};
use toolkit_core::telemetry::{self, attr as core_attr};
use toolkit_core::{Registry, tool, tools};
use toolkit_tests::http::{Reply, TestServer};
use toolkit_tests::trace::{Recorder, SpanRecord};

mod support;
use support::chat::model;

const SECRET: &str = "hunter2-7f3a9c";

/// Held by the tests that turn content capture on, one switch for the
/// process: one of them checks that nothing leaked while it was off.
static CAPTURE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Looks a city up.
#[tool(catalogue = false)]
fn lookup(
    /// The city.
    city: String,
) -> String {
    format!("{city} has 3 museums")
}

fn registry() -> Registry {
    Registry::builder().tools(tools![lookup]).build().unwrap()
}

fn chat_call(id: &str, arguments: &Value) -> Reply {
    Reply::json(&json!({
        "id": "chatcmpl-1", "model": "m-2026-01",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function",
                 "function": {"name": "lookup", "arguments": arguments.to_string()}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    }))
}

fn chat_text(text: &str) -> Reply {
    Reply::json(&json!({
        "id": "chatcmpl-2", "model": "m-2026-01",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 8},
            "completion_tokens_details": {"reasoning_tokens": 2}}
    }))
}

fn field<'s>(span: &'s SpanRecord, name: &str) -> &'s str {
    span.field(name)
        .unwrap_or_else(|| panic!("no `{name}` in {span:#?}"))
}

/// One run: a call of `lookup` whose argument is the secret, then an
/// answer. Returns what was recorded.
async fn traced_run() -> (Recorder, String, u16) {
    let server = TestServer::replying([
        chat_call("call_1", &json!({"city": SECRET})),
        chat_text("Three museums."),
    ]);
    let agent = Agent::builder(model(&server), registry())
        .name("Guide")
        .instructions(format!("Never say {SECRET}-sys."))
        .build()
        .unwrap();
    let recorder = Recorder::default();
    let outcome = {
        let _default = tracing::subscriber::set_default(recorder.clone());
        agent.run("How many museums?").await.unwrap()
    };
    assert_eq!(outcome.stop, StopReason::Answered);
    (recorder, outcome.session_id, server.port())
}

#[tokio::test]
async fn a_run_is_an_invoke_agent_span_holding_its_requests_and_calls() {
    let (recorder, session_id, port) = traced_run().await;

    let run = recorder.span("invoke_agent Guide");
    assert_eq!(run.name, "invoke_agent");
    assert_eq!(field(&run, core_attr::OPERATION_NAME), "invoke_agent");
    assert_eq!(field(&run, attr::AGENT_NAME), "Guide");
    assert_eq!(field(&run, attr::CONVERSATION_ID), session_id);
    assert_eq!(field(&run, attr::PROVIDER_NAME), "openai");
    assert_eq!(field(&run, attr::RUN_STEPS), "2");
    assert_eq!(field(&run, attr::RUN_STOP_REASON), "answered");
    assert_eq!(field(&run, attr::USAGE_INPUT_TOKENS), "22");
    assert_eq!(field(&run, attr::USAGE_OUTPUT_TOKENS), "8");
    assert_eq!(run.parent, None);
    let steps: Vec<&str> = run
        .events
        .iter()
        .filter(|e| e.fields.get("event.name").map(String::as_str) == Some("toolkit.step"))
        .map(|e| e.fields["toolkit.run.step"].as_str())
        .collect();
    assert_eq!(steps, ["1", "2"]);

    let requests = recorder.spans_named("chat m");
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.parent, Some(run.id));
        assert_eq!(field(request, core_attr::OTEL_KIND), "client");
        assert_eq!(field(request, core_attr::OPERATION_NAME), "chat");
        assert_eq!(field(request, attr::PROVIDER_NAME), "openai");
        assert_eq!(field(request, attr::REQUEST_MODEL), "m");
        assert_eq!(field(request, attr::RESPONSE_MODEL), "m-2026-01");
        assert_eq!(field(request, attr::SERVER_ADDRESS), "127.0.0.1");
        assert_eq!(field(request, attr::SERVER_PORT), port.to_string());
        assert_eq!(field(request, attr::REQUEST_STREAM), "false");
    }
    assert_eq!(field(&requests[0], attr::RESPONSE_ID), "chatcmpl-1");
    assert_eq!(
        field(&requests[0], attr::RESPONSE_FINISH_REASONS),
        r#"["tool_calls"]"#
    );
    assert_eq!(field(&requests[0], attr::USAGE_INPUT_TOKENS), "10");
    assert_eq!(field(&requests[0], attr::USAGE_OUTPUT_TOKENS), "5");
    assert_eq!(requests[0].field(attr::USAGE_CACHE_READ_INPUT_TOKENS), None);
    assert_eq!(field(&requests[1], attr::RESPONSE_ID), "chatcmpl-2");
    assert_eq!(
        field(&requests[1], attr::RESPONSE_FINISH_REASONS),
        r#"["stop"]"#
    );
    assert_eq!(
        field(&requests[1], attr::USAGE_CACHE_READ_INPUT_TOKENS),
        "8"
    );
    assert_eq!(
        field(&requests[1], attr::USAGE_REASONING_OUTPUT_TOKENS),
        "2"
    );

    let call = recorder.span("execute_tool lookup");
    assert!(recorder.is_within(&call, &run), "{call:#?}");
    assert_eq!(field(&call, core_attr::TOOL_CALL_ID), "call_1");
    assert_eq!(
        field(&call, core_attr::TOOL_DESCRIPTION),
        "Looks a city up."
    );
}

/// Both states of the process-wide switch, in one test.
#[tokio::test]
async fn content_is_recorded_only_while_capture_is_on() {
    let _capture = CAPTURE.lock().await;
    let (recorder, _, _) = traced_run().await;
    let everything = recorder.all_text();
    assert!(!everything.is_empty());
    assert!(!everything.contains(SECRET), "{everything}");
    assert!(!everything.contains("museums"), "{everything}");

    telemetry::capture_content(true);
    let (recorder, _, _) = traced_run().await;
    telemetry::capture_content(false);

    let requests = recorder.spans_named("chat m");
    let json = |span: &SpanRecord, name: &str| -> Value {
        serde_json::from_str(field(span, name)).unwrap()
    };
    assert_eq!(
        json(&requests[0], attr::SYSTEM_INSTRUCTIONS),
        json!([{"type": "text", "content": format!("Never say {SECRET}-sys.")}])
    );
    assert_eq!(
        json(&requests[0], attr::INPUT_MESSAGES),
        json!([{"role": "user", "parts": [{"type": "text", "content": "How many museums?"}]}])
    );
    let definitions = json(&requests[0], attr::TOOL_DEFINITIONS);
    assert_eq!(definitions[0]["type"], "function");
    assert_eq!(definitions[0]["name"], "lookup");
    assert_eq!(definitions[0]["description"], "Looks a city up.");
    assert_eq!(definitions[0]["parameters"]["type"], "object");
    assert_eq!(
        json(&requests[0], attr::OUTPUT_MESSAGES),
        json!([{"role": "assistant", "finish_reason": "tool_calls", "parts": [
            {"type": "tool_call", "id": "call_1", "name": "lookup", "arguments": {"city": SECRET}}]}])
    );
    // The second request carries the call and its result back.
    let input = json(&requests[1], attr::INPUT_MESSAGES);
    assert_eq!(input[1]["parts"][0]["type"], "tool_call");
    assert_eq!(
        input[2],
        json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
            "response": format!("{SECRET} has 3 museums")}]})
    );
    assert_eq!(
        json(&requests[1], attr::OUTPUT_MESSAGES),
        json!([{"role": "assistant", "finish_reason": "stop",
            "parts": [{"type": "text", "content": "Three museums."}]}])
    );
    let call = recorder.span("execute_tool lookup");
    assert_eq!(
        json(&call, core_attr::TOOL_CALL_ARGUMENTS),
        json!({"city": SECRET})
    );
}

#[tokio::test]
async fn retries_are_events_and_a_refusal_sets_error_type() {
    let server = TestServer::replying([
        Reply::status(503, r#"{"error": "busy"}"#),
        chat_text("fine"),
        Reply::status(400, r#"{"error": "bad"}"#),
    ]);
    let model = HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .retry(
            RetryPolicy::default()
                .max_retries(1)
                .initial(Duration::from_millis(1))
                .max_delay(Duration::from_millis(1)),
        )
        .build()
        .unwrap();
    let body = json!({"messages": [{"role": "user", "content": "hi"}],
        "max_completion_tokens": 50, "temperature": 0.25, "top_p": 0.5, "seed": 7,
        "stop": "END", "frequency_penalty": -0.5});
    let recorder = Recorder::default();
    {
        let _default = tracing::subscriber::set_default(recorder.clone());
        model.complete(&body).await.unwrap();
        assert!(model.complete(&body).await.is_err());
    }
    let spans = recorder.spans_named("chat m");
    let (ok, refused) = (&spans[0], &spans[1]);
    assert_eq!(ok.field(core_attr::ERROR_TYPE), None);
    // The HTTP client's own events (hyper's) are there too: the toolkit's
    // are those with an `event.name`.
    let ours = |span: &SpanRecord| -> Vec<_> {
        span.events
            .iter()
            .filter(|e| e.fields.contains_key("event.name"))
            .cloned()
            .collect()
    };
    let retries = ours(ok);
    assert_eq!(retries.len(), 1, "{retries:#?}");
    let retry = &retries[0].fields;
    assert_eq!(retry["event.name"], "toolkit.retry");
    assert_eq!(retry["toolkit.retry.attempt"], "1");
    assert_eq!(retry["toolkit.retry.reason"], "503");
    assert_eq!(retry["http.response.status_code"], "503");
    assert_eq!(field(ok, attr::REQUEST_MAX_TOKENS), "50");
    assert_eq!(field(ok, attr::REQUEST_TEMPERATURE), "0.25");
    assert_eq!(field(ok, attr::REQUEST_TOP_P), "0.5");
    assert_eq!(field(ok, attr::REQUEST_SEED), "7");
    assert_eq!(field(ok, attr::REQUEST_STOP_SEQUENCES), r#"["END"]"#);
    assert_eq!(field(ok, attr::REQUEST_FREQUENCY_PENALTY), "-0.5");
    assert_eq!(ok.field(attr::REQUEST_TOP_K), None);
    assert_eq!(field(refused, core_attr::ERROR_TYPE), "400");
    assert!(ours(refused).is_empty(), "400 is not retried");
}

#[tokio::test]
async fn anthropic_and_streamed_gemini_requests_say_what_their_responses_did() {
    let server = TestServer::replying([Reply::json(&json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x-1",
        "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 30, "output_tokens": 4,
            "cache_read_input_tokens": 20, "cache_creation_input_tokens": 6}
    }))]);
    let anthropic = HttpModel::anthropic("claude-x")
        .base_url(server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let gemini_server = TestServer::replying([Reply::sse([
        r#"{"candidates": [{"content": {"role": "model", "parts": [{"text": "he"}]}}], "responseId": "r-9", "modelVersion": "gemini-x-001"}"#,
        r#"{"candidates": [{"content": {"role": "model", "parts": [{"text": "llo"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 2, "thoughtsTokenCount": 5}, "responseId": "r-9"}"#,
    ])]);
    let gemini = HttpModel::gemini("gemini-x")
        .base_url(gemini_server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let recorder = Recorder::default();
    {
        let _default = tracing::subscriber::set_default(recorder.clone());
        let body = json!({"max_tokens": 64, "top_k": 5,
            "messages": [{"role": "user", "content": "hi"}]});
        anthropic.complete(&body).await.unwrap();
        let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"maxOutputTokens": 32, "temperature": 1}});
        let turn = gemini.stream(&body, &mut |_| {}).await.unwrap();
        assert_eq!(turn.text, "hello");
    }
    let claude = recorder.span("chat claude-x");
    assert_eq!(field(&claude, attr::PROVIDER_NAME), "anthropic");
    assert_eq!(field(&claude, attr::RESPONSE_ID), "msg_1");
    assert_eq!(field(&claude, attr::RESPONSE_MODEL), "claude-x-1");
    assert_eq!(
        field(&claude, attr::RESPONSE_FINISH_REASONS),
        r#"["end_turn"]"#
    );
    assert_eq!(field(&claude, attr::USAGE_CACHE_READ_INPUT_TOKENS), "20");
    assert_eq!(field(&claude, attr::USAGE_CACHE_CREATION_INPUT_TOKENS), "6");
    assert_eq!(field(&claude, attr::REQUEST_MAX_TOKENS), "64");
    assert_eq!(field(&claude, attr::REQUEST_TOP_K), "5");

    let streamed = recorder.span("generate_content gemini-x");
    assert_eq!(
        field(&streamed, core_attr::OPERATION_NAME),
        "generate_content"
    );
    assert_eq!(field(&streamed, attr::PROVIDER_NAME), "gcp.gemini");
    assert_eq!(field(&streamed, attr::REQUEST_STREAM), "true");
    assert_eq!(field(&streamed, attr::RESPONSE_ID), "r-9");
    assert_eq!(field(&streamed, attr::RESPONSE_MODEL), "gemini-x-001");
    assert_eq!(field(&streamed, attr::USAGE_OUTPUT_TOKENS), "2");
    assert_eq!(field(&streamed, attr::USAGE_REASONING_OUTPUT_TOKENS), "5");
    assert_eq!(field(&streamed, attr::REQUEST_MAX_TOKENS), "32");
    assert_eq!(field(&streamed, attr::REQUEST_TEMPERATURE), "1");
}

#[tokio::test]
async fn decisions_pauses_and_resumes_are_events_of_the_run() {
    let server = TestServer::replying([
        chat_call("call_1", &json!({"city": "Oslo"})),
        chat_text("Done."),
    ]);
    let agent = Agent::builder(model(&server), registry())
        .needs_approval("lookup")
        .build()
        .unwrap();
    let recorder = Recorder::default();
    let _default = tracing::subscriber::set_default(recorder.clone());
    let mut session = agent.session();
    let paused = agent.send(&mut session, "Museums?").await.unwrap();
    assert_eq!(paused.stop, StopReason::Paused);
    session.decide("call_1", Decision::Approve).unwrap();
    let done = agent.resume(&mut session).await.unwrap();
    assert_eq!(done.stop, StopReason::Answered);

    let runs = recorder.spans_named("invoke_agent");
    assert_eq!(runs.len(), 2);
    let names = |span: &SpanRecord| -> Vec<String> {
        span.events
            .iter()
            .filter_map(|e| e.fields.get("event.name").cloned())
            .collect()
    };
    assert_eq!(
        names(&runs[0]),
        ["toolkit.step", "toolkit.approval", "toolkit.pause"]
    );
    let decision = &runs[0]
        .events
        .iter()
        .find(|e| e.fields.contains_key("toolkit.approval.decision"))
        .unwrap()
        .fields;
    assert_eq!(decision["toolkit.approval.decision"], "defer");
    assert_eq!(decision["gen_ai.tool.call.id"], "call_1");
    assert_eq!(field(&runs[0], attr::RUN_STOP_REASON), "paused");
    assert_eq!(names(&runs[1]), ["toolkit.resume", "toolkit.step"]);
    let resume = runs[1]
        .events
        .iter()
        .find(|e| e.fields.get("event.name").map(String::as_str) == Some("toolkit.resume"))
        .unwrap();
    assert_eq!(resume.fields["toolkit.run.step"], "1");
    assert_eq!(
        field(&runs[0], attr::CONVERSATION_ID),
        field(&runs[1], attr::CONVERSATION_ID)
    );
    // Unnamed, the span is the operation alone.
    assert_eq!(runs[0].otel_name(), "invoke_agent");
    let call = recorder.span("execute_tool lookup");
    assert!(recorder.is_within(&call, &runs[1]));
}

#[tokio::test]
async fn keys_headers_and_query_values_are_never_recorded() {
    let _capture = CAPTURE.lock().await;
    const KEY: &str = "sk-key-5b1e0d";
    const HEADER: &str = "header-value-93ac2f";
    const QUERY: &str = "query-value-c4d7e1";
    let server = TestServer::replying([chat_text("hi"), chat_text("hi")]);
    let model = HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .key(KEY)
        .header("api-key", HEADER)
        .query("api-version", QUERY)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let body = json!({"messages": [{"role": "user", "content": "hi"}]});
    let recorder = Recorder::default();
    {
        let _default = tracing::subscriber::set_default(recorder.clone());
        model.complete(&body).await.unwrap();
        // Not even while content is captured: a key is no content.
        telemetry::capture_content(true);
        model.complete(&body).await.unwrap();
        telemetry::capture_content(false);
    }
    assert_eq!(server.requests()[0].header("api-key"), Some(HEADER));
    let everything = recorder.all_text();
    for secret in [KEY, HEADER, QUERY] {
        assert!(!everything.contains(secret), "{secret} in {everything}");
    }
}

#[tokio::test]
async fn streamed_chat_and_responses_usage_details_reach_the_turn_and_the_span() {
    let chat_server = TestServer::replying([Reply::sse([
        r#"{"id":"chatcmpl-9","model":"m-2026-02","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}],"usage":null}"#,
        r#"{"id":"chatcmpl-9","model":"m-2026-02","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#,
        r#"{"id":"chatcmpl-9","model":"m-2026-02","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":32},"completion_tokens_details":{"reasoning_tokens":6}}}"#,
        "[DONE]",
    ])]);
    let chat = HttpModel::openai_chat("m")
        .base_url(chat_server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let responses_server = TestServer::replying([Reply::json(&json!({
        "id": "resp_1", "object": "response", "model": "r-2026-03", "status": "completed",
        "output": [{"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}]}],
        "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 4}}
    }))]);
    let responses = HttpModel::openai_responses("r")
        .base_url(responses_server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let recorder = Recorder::default();
    let (streamed, read) = {
        let _default = tracing::subscriber::set_default(recorder.clone());
        let body = json!({"messages": [{"role": "user", "content": "hi"}]});
        let streamed = chat.stream(&body, &mut |_| {}).await.unwrap();
        let body = json!({"input": [{"role": "user", "content": "hi"}]});
        (streamed, responses.complete(&body).await.unwrap())
    };
    let usage = streamed.usage.expect("the final chunk's usage");
    assert_eq!((usage.input_tokens, usage.output_tokens), (40, 9));
    assert_eq!(usage.cache_read_tokens, Some(32));
    assert_eq!(usage.cache_write_tokens, None);
    assert_eq!(usage.reasoning_tokens, Some(6));
    assert_eq!(streamed.response_id.as_deref(), Some("chatcmpl-9"));
    let chat_span = recorder.span("chat m");
    assert_eq!(field(&chat_span, attr::RESPONSE_ID), "chatcmpl-9");
    assert_eq!(field(&chat_span, attr::RESPONSE_MODEL), "m-2026-02");
    assert_eq!(field(&chat_span, attr::USAGE_CACHE_READ_INPUT_TOKENS), "32");
    assert_eq!(field(&chat_span, attr::USAGE_REASONING_OUTPUT_TOKENS), "6");
    // A count the provider did not report is not recorded.
    assert_eq!(
        chat_span.field(attr::USAGE_CACHE_CREATION_INPUT_TOKENS),
        None
    );

    let usage = read.usage.expect("the response's usage");
    assert_eq!(usage.cache_read_tokens, Some(0));
    assert_eq!(usage.reasoning_tokens, Some(4));
    let responses_span = recorder.span("chat r");
    assert_eq!(field(&responses_span, attr::RESPONSE_ID), "resp_1");
    assert_eq!(field(&responses_span, attr::RESPONSE_MODEL), "r-2026-03");
    assert_eq!(
        field(&responses_span, attr::USAGE_CACHE_READ_INPUT_TOKENS),
        "0"
    );
    assert_eq!(
        field(&responses_span, attr::USAGE_REASONING_OUTPUT_TOKENS),
        "4"
    );
}
