//! `HttpModel` against a real local HTTP server answering with response
//! bodies from the providers' documentation, and streamed runs whose
//! pieces reach the host as events.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
use toolkit_agent::{Agent, Event, HttpModel, Model, ModelError, Provider, RetryPolicy};
use toolkit_tests::http::{Reply, TestServer};

fn quick_retries() -> RetryPolicy {
    RetryPolicy::default()
        .max_retries(2)
        .initial(Duration::from_millis(10))
        .max_delay(Duration::from_secs(2))
}

#[tokio::test]
async fn each_provider_posts_to_its_endpoint_with_its_key_and_reads_the_turn() {
    let cases = [
        (
            Provider::OpenAi,
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}]}),
            "POST /chat/completions",
            "authorization: Bearer k1",
        ),
        (
            Provider::OpenAiResponses,
            json!({"status": "completed", "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}]}),
            "POST /responses",
            "authorization: Bearer k1",
        ),
        (
            Provider::Anthropic,
            json!({"type": "message", "role": "assistant", "stop_reason": "tool_use", "content": [
                {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}}]}),
            "POST /messages",
            "x-api-key: k1",
        ),
        (
            Provider::Gemini,
            json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [
                {"functionCall": {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}}]}}]}),
            "POST /models/m:generateContent",
            "x-goog-api-key: k1",
        ),
    ];
    for (provider, body, line, auth) in cases {
        let server = TestServer::replying(vec![Reply::json(&body)]);
        let model = HttpModel::for_provider(provider, "m")
            .base_url(server.base_url())
            .key("k1")
            .build()
            .unwrap();
        let turn = model.complete(&json!({"messages": []})).await.unwrap();
        assert_eq!(turn.calls[0].id, "call_1", "{provider}");
        assert_eq!(turn.calls[0].name, "get_weather");
        let received = server.requests().remove(0);
        assert!(
            received.head.starts_with(line),
            "{provider}: {}",
            received.head
        );
        assert!(
            received
                .head
                .to_ascii_lowercase()
                .contains(&auth.to_ascii_lowercase()),
            "{provider}: {}",
            received.head
        );
        if provider == Provider::Gemini {
            assert!(received.json().get("model").is_none());
        } else {
            assert_eq!(received.json()["model"], "m");
        }
    }
}

/// A Chat Completions model at `base_url`, without a key, retrying by
/// `retry`.
fn chat_model(base_url: &str, retry: RetryPolicy) -> HttpModel {
    HttpModel::openai_chat("m")
        .base_url(base_url)
        .no_key()
        .retry(retry)
        .build()
        .unwrap()
}

#[tokio::test]
async fn retries_429_honouring_retry_after_then_succeeds() {
    let busy = Reply::status(429, r#"{"error":{"message":"Rate limit reached"}}"#)
        .with_header("retry-after", "1");
    let ok = Reply::json(&json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "done"}}]}));
    let server = TestServer::replying(vec![busy, ok]);
    let model = chat_model(&server.base_url(), quick_retries());
    let started = Instant::now();
    let turn = model.complete(&json!({"messages": []})).await.unwrap();
    assert_eq!(turn.text, "done");
    // The backoff alone would have waited 10 ms.
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_carry_the_body() {
    let body = r#"{"error":{"message":"Invalid 'messages[1]'","type":"invalid_request_error"}}"#;
    let server = TestServer::replying(vec![Reply::status(400, body)]);
    let model = chat_model(&server.base_url(), quick_retries());
    match model.complete(&json!({})).await {
        Err(ModelError::Status {
            status: 400,
            body: sent,
            attempts: 1,
            ..
        }) => assert_eq!(sent, body),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn server_errors_are_retried_up_to_the_budget() {
    let server = TestServer::replying((0..3).map(|_| Reply::status(503, "overloaded")));
    let model = HttpModel::anthropic("m")
        .base_url(server.base_url())
        .key("k")
        .retry(quick_retries())
        .build()
        .unwrap();
    match model.complete(&json!({})).await {
        Err(ModelError::Status {
            status: 503,
            attempts: 3,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn missing_key_and_refused_connection_are_typed() {
    let error = HttpModel::gemini("m")
        .key_env("TOOLKIT_TEST_NO_SUCH_KEY")
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("TOOLKIT_TEST_NO_SUCH_KEY"));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let model = chat_model(&format!("http://{address}"), RetryPolicy::none());
    assert!(matches!(
        model.complete(&json!({})).await,
        Err(ModelError::Transport { attempts: 1, .. })
    ));
}

/// `https://` goes through the TLS stack (rustls on *ring*): against a
/// server that answers in plain HTTP the handshake fails, as a typed
/// transport error, never a panic.
#[tokio::test]
async fn https_handshakes_through_rustls_and_fails_cleanly() {
    use tokio::io::AsyncWriteExt;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        if let Ok((mut socket, _)) = listener.accept().await {
            let _ = socket
                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                .await;
            let _ = socket.shutdown().await;
        }
    });
    let model = chat_model(&format!("https://{address}"), RetryPolicy::none());
    match model.complete(&json!({})).await {
        Err(ModelError::Transport { message, .. }) => {
            assert!(message.contains("https://127.0.0.1"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn streams_through_the_accumulator_and_reports_progress() {
    let chunks: Vec<String> = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": ""}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]}, "finish_reason": "tool_calls"}]}),
    ]
    .iter()
    .map(|chunk| chunk.to_string())
    .chain(["[DONE]".to_owned()])
    .collect();
    let server = TestServer::replying(vec![Reply::sse(&chunks)]);
    let model = HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .build()
        .unwrap();
    let mut seen = Vec::new();
    let request = json!({"messages": []});
    let mut progress = |stream: &toolkit_core::response::Accumulator| {
        if let Some(call) = stream.partial_calls().first() {
            seen.push(call.arguments.clone());
        }
    };
    let turn = model.stream(&request, &mut progress).await.unwrap();
    assert_eq!(turn.calls[0].arguments_text(), Some("{\"city\":\"Paris\"}"));
    assert!(seen.contains(&"{\"city\":".to_owned()), "{seen:?}");
    let received = server.requests().remove(0);
    assert_eq!(received.json()["stream"], true);
}

/// What a streamed step carries, piece by piece.
struct Script<'a> {
    reasoning: &'a [&'a str],
    text: &'a [&'a str],
    /// The call's id and its arguments' pieces (`word_count`).
    call: Option<(&'a str, &'a [&'a str])>,
}

impl Script<'_> {
    fn text(&self) -> String {
        self.text.concat()
    }

    fn arguments(&self) -> String {
        self.call
            .map(|(_, pieces)| pieces.concat())
            .unwrap_or_default()
    }
}

/// The script as `provider` streams it: one event per piece, shaped as in
/// each provider's streaming documentation, with the events around them
/// (starts, stops, usage, pings) that add nothing.
fn sse(provider: Provider, script: &Script) -> Reply {
    let mut events: Vec<Value> = Vec::new();
    match provider {
        Provider::OpenAi => {
            for piece in script.reasoning {
                events.push(json!({"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": piece}}]}));
            }
            for piece in script.text {
                events.push(json!({"choices": [{"index": 0, "delta": {"content": piece}}]}));
            }
            if let Some((id, pieces)) = script.call {
                events.push(
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": id,
                    "type": "function", "function": {"name": "word_count", "arguments": ""}}]}}]}),
                );
                for piece in pieces {
                    events.push(
                        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                        "function": {"arguments": piece}}]}}]}),
                    );
                }
            }
            let reason = if script.call.is_some() {
                "tool_calls"
            } else {
                "stop"
            };
            events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}));
            events.push(
                json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}}),
            );
        }
        Provider::OpenAiResponses => {
            let mut output = Vec::new();
            events.push(json!({"type": "response.created", "response": {"status": "in_progress", "output": []}}));
            let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [
                {"type": "summary_text", "text": script.reasoning.concat()}]});
            events.push(
                json!({"type": "response.output_item.added", "output_index": 0,
                "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
            );
            for piece in script.reasoning {
                events.push(
                    json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1",
                    "output_index": 0, "summary_index": 0, "delta": piece}),
                );
            }
            events.push(
                json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning}),
            );
            output.push(reasoning);
            let message = json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": script.text(), "annotations": []}]});
            events.push(
                json!({"type": "response.output_item.added", "output_index": 1,
                "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}}),
            );
            for piece in script.text {
                events.push(
                    json!({"type": "response.output_text.delta", "item_id": "msg_1",
                    "output_index": 1, "content_index": 0, "delta": piece}),
                );
            }
            events.push(
                json!({"type": "response.output_item.done", "output_index": 1, "item": message}),
            );
            output.push(message);
            if let Some((id, pieces)) = script.call {
                let call = json!({"type": "function_call", "id": "fc_1", "call_id": id,
                    "name": "word_count", "arguments": script.arguments(), "status": "completed"});
                events.push(json!({"type": "response.output_item.added", "output_index": 2,
                    "item": {"type": "function_call", "id": "fc_1", "call_id": id, "name": "word_count", "arguments": ""}}));
                for piece in pieces {
                    events.push(
                        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                        "output_index": 2, "delta": piece}),
                    );
                }
                events.push(
                    json!({"type": "response.function_call_arguments.done", "item_id": "fc_1",
                    "output_index": 2, "arguments": script.arguments()}),
                );
                events.push(
                    json!({"type": "response.output_item.done", "output_index": 2, "item": call}),
                );
                output.push(call);
            }
            events.push(
                json!({"type": "response.completed", "response": {"status": "completed",
                "output": output, "usage": {"input_tokens": 9, "output_tokens": 4}}}),
            );
        }
        Provider::Anthropic => {
            events.push(json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                "role": "assistant", "content": [], "usage": {"input_tokens": 9, "output_tokens": 1}}}));
            events.push(json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""}}));
            for piece in script.reasoning {
                events.push(json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "thinking_delta", "thinking": piece}}));
            }
            events.push(json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "signature_delta", "signature": "sig=="}}));
            events.push(json!({"type": "content_block_stop", "index": 0}));
            events.push(json!({"type": "content_block_start", "index": 1,
                "content_block": {"type": "text", "text": ""}}));
            for piece in script.text {
                events.push(json!({"type": "content_block_delta", "index": 1,
                    "delta": {"type": "text_delta", "text": piece}}));
                events.push(json!({"type": "ping"}));
            }
            events.push(json!({"type": "content_block_stop", "index": 1}));
            if let Some((id, pieces)) = script.call {
                events.push(json!({"type": "content_block_start", "index": 2,
                    "content_block": {"type": "tool_use", "id": id, "name": "word_count", "input": {}}}));
                for piece in pieces {
                    events.push(json!({"type": "content_block_delta", "index": 2,
                        "delta": {"type": "input_json_delta", "partial_json": piece}}));
                }
                events.push(json!({"type": "content_block_stop", "index": 2}));
            }
            let reason = if script.call.is_some() {
                "tool_use"
            } else {
                "end_turn"
            };
            events.push(json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 4}}));
            events.push(json!({"type": "message_stop"}));
        }
        Provider::Gemini => {
            for piece in script.reasoning {
                events.push(
                    json!({"candidates": [{"content": {"role": "model", "parts": [
                    {"text": piece, "thought": true}]}}]}),
                );
            }
            for piece in script.text {
                events.push(json!({"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}}]}));
            }
            // Gemini sends a call whole, in one part; this one without an id.
            let mut last = json!({"candidates": [{"content": {"role": "model", "parts": []},
                "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 4}});
            if script.call.is_some() {
                let args: Value = serde_json::from_str(&script.arguments()).unwrap();
                last["candidates"][0]["content"]["parts"] =
                    json!([{"functionCall": {"name": "word_count", "args": args}}]);
            }
            events.push(last);
        }
        other => unreachable!("{other}"),
    }
    let mut data: Vec<String> = events.iter().map(Value::to_string).collect();
    if matches!(provider, Provider::OpenAi) {
        data.push("[DONE]".into());
    }
    Reply::sse(data)
}

/// The events of one step.
fn of_step(events: &[Event], step: usize) -> Vec<&Event> {
    events
        .iter()
        .filter(|event| match event {
            Event::StepStarted { step: s }
            | Event::StepEnded { step: s }
            | Event::Text { step: s, .. }
            | Event::TextDelta { step: s, .. }
            | Event::ReasoningDelta { step: s, .. }
            | Event::ArgumentsDelta { step: s, .. }
            | Event::Call { step: s, .. }
            | Event::Result { step: s, .. }
            | Event::Usage { step: s, .. } => *s == step,
            _ => false,
        })
        .collect()
}

#[tokio::test]
async fn streamed_runs_send_each_piece_as_it_arrives_in_every_dialect() {
    let first = Script {
        reasoning: &["The user wants ", "a word count."],
        text: &["Count", "ing the", " words… ", "✓"],
        call: Some(("call_1", &[r#"{"te"#, r#"xt": "a b"#, r#" c"}"#])),
    };
    let second = Script {
        reasoning: &[],
        text: &["There are ", "3 words."],
        call: None,
    };
    for provider in [
        Provider::OpenAi,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ] {
        let server = TestServer::replying(vec![sse(provider, &first), sse(provider, &second)]);
        let model = HttpModel::for_provider(provider, "m")
            .base_url(server.base_url())
            .key("k")
            .build()
            .unwrap();
        let agent = Agent::builder(model, toolkit_example_tools::registry().unwrap())
            .streaming(true)
            .build()
            .unwrap();
        let (run, events) = agent.run("Count the words of 'a b c'.").events();
        let (outcome, events) = tokio::join!(run, events.collect::<Vec<Event>>());
        let outcome = outcome.unwrap();
        let log: Vec<String> = events.iter().map(|e| format!("{e:?}")).collect();
        let log = log.join("\n");
        assert_eq!(
            outcome.answer.as_deref(),
            Some("There are 3 words."),
            "{provider}\n{log}"
        );
        assert_eq!(outcome.steps, 2, "{provider}\n{log}");
        assert!(
            server
                .requests()
                .iter()
                .all(|r| r.json()["stream"] == true
                    || r.head.contains(":streamGenerateContent?alt=sse")),
            "{provider}: every request streamed"
        );

        for (step, script) in [(1, &first), (2, &second)] {
            let events = of_step(&events, step);
            // Each piece as its own event, in the order sent.
            let texts: Vec<&str> = events
                .iter()
                .filter_map(|event| match event {
                    Event::TextDelta { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(texts, script.text, "{provider} step {step}\n{log}");
            let whole = events.iter().find_map(|event| match event {
                Event::Text { text, .. } => Some(text.clone()),
                _ => None,
            });
            assert_eq!(whole, Some(texts.concat()), "{provider} step {step}");
            let reasoning: Vec<&str> = events
                .iter()
                .filter_map(|event| match event {
                    Event::ReasoningDelta { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(reasoning, script.reasoning, "{provider} step {step}\n{log}");
            let arguments: Vec<(usize, Option<&str>, Option<&str>, &str)> = events
                .iter()
                .filter_map(|event| match event {
                    Event::ArgumentsDelta {
                        index,
                        call_id,
                        tool,
                        text,
                        ..
                    } => Some((*index, call_id.as_deref(), tool.as_deref(), text.as_str())),
                    _ => None,
                })
                .collect();
            match script.call {
                None => assert!(arguments.is_empty(), "{provider} step {step}\n{log}"),
                Some((id, pieces)) => {
                    let pieces: Vec<&str> = match provider {
                        // Whole, written out from the part's object.
                        Provider::Gemini => vec![r#"{"text":"a b c"}"#],
                        // The call's start, then each piece.
                        _ => [""].iter().chain(pieces).copied().collect(),
                    };
                    let id = (provider != Provider::Gemini).then_some(id);
                    let expected: Vec<_> = pieces
                        .iter()
                        .map(|piece| (0, id, Some("word_count"), *piece))
                        .collect();
                    assert_eq!(arguments, expected, "{provider}\n{log}");
                    // The pieces make the arguments the call ran with.
                    let written: String = arguments.iter().map(|(.., text)| *text).collect();
                    let call = events.iter().find_map(|event| match event {
                        Event::Call { call, .. } => Some(call),
                        _ => None,
                    });
                    let call = call.expect("the call is reported whole");
                    assert_eq!(
                        call.arguments().clone(),
                        serde_json::from_str::<Value>(&written).unwrap(),
                        "{provider}"
                    );
                }
            }
            // Deltas come after the step starts and before the step's
            // whole text, calls and end.
            let kinds: Vec<&str> = events
                .iter()
                .map(|event| match event {
                    Event::StepStarted { .. } => "start",
                    Event::TextDelta { .. }
                    | Event::ReasoningDelta { .. }
                    | Event::ArgumentsDelta { .. } => "delta",
                    Event::StepEnded { .. } => "end",
                    _ => "other",
                })
                .collect();
            let deltas = kinds.iter().filter(|kind| **kind == "delta").count();
            assert_eq!(kinds[0], "start", "{provider}\n{log}");
            assert!(
                kinds[1..=deltas].iter().all(|kind| *kind == "delta"),
                "{provider}\n{log}"
            );
            assert_eq!(kinds.last(), Some(&"end"), "{provider}\n{log}");
            assert_eq!(kinds.iter().filter(|kind| **kind == "end").count(), 1);
        }
    }
}

#[tokio::test]
async fn extra_headers_and_query_go_with_every_request_streamed_or_not() {
    let text = json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "hi"}}]});
    let chunk = json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"},
        "finish_reason": "stop"}]});
    let gemini = json!({"candidates": [{"finishReason": "STOP",
        "content": {"role": "model", "parts": [{"text": "hi"}]}}]});
    let cases = [
        (
            Provider::OpenAi,
            vec![
                Reply::json(&text),
                Reply::sse([chunk.to_string(), "[DONE]".to_owned()]),
            ],
        ),
        (
            Provider::Gemini,
            vec![Reply::json(&gemini), Reply::sse([gemini.to_string()])],
        ),
    ];
    for (provider, replies) in cases {
        let server = TestServer::replying(replies);
        // An Azure-style deployment: the key in `api-key`, the API version
        // in the query.
        let model = HttpModel::for_provider(provider, "m")
            .base_url(server.base_url())
            .no_key()
            .header("api-key", "secret-key-1")
            .header("x-trace", "a b")
            .query("api-version", "2024-10-21")
            .query("tag", "a&b c")
            .build()
            .unwrap();
        let request = json!({"messages": [{"role": "user", "content": "hi"}]});
        model.complete(&request).await.unwrap();
        model.stream(&request, &mut |_| {}).await.unwrap();
        let received = server.requests();
        assert_eq!(received.len(), 2);
        for (request, streamed) in received.iter().zip([false, true]) {
            let case = format!("{provider}, streamed: {streamed}: {}", request.head);
            assert_eq!(request.header("api-key"), Some("secret-key-1"), "{case}");
            assert_eq!(request.header("x-trace"), Some("a b"), "{case}");
            assert!(request.header("authorization").is_none(), "{case}");
            let query: Vec<&str> = request.query().split('&').collect();
            assert!(query.contains(&"api-version=2024-10-21"), "{case}");
            assert!(query.contains(&"tag=a%26b+c"), "{case}");
            if provider == Provider::Gemini && streamed {
                assert!(query.contains(&"alt=sse"), "{case}");
            }
        }
        // No value shows in `Debug`, of the builder or the model.
        let debug = format!("{model:?}");
        assert!(
            debug.contains("api-key") && debug.contains("api-version"),
            "{debug}"
        );
        for secret in ["secret-key-1", "2024-10-21", "a&b"] {
            assert!(!debug.contains(secret), "{debug}");
        }
    }
    let builder = HttpModel::openai_chat("m")
        .key("sk-secret")
        .header("api-key", "secret-key-1")
        .query("key", "q-secret");
    let debug = format!("{builder:?}");
    for secret in ["sk-secret", "secret-key-1", "q-secret"] {
        assert!(!debug.contains(secret), "{debug}");
    }
}

#[tokio::test]
async fn an_extra_header_replaces_the_one_the_model_sends() {
    let body = json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "hi"}]});
    let server = TestServer::replying(vec![Reply::json(&body)]);
    let model = HttpModel::anthropic("m")
        .base_url(server.base_url())
        .key("k1")
        .header("anthropic-version", "2099-01-01")
        .build()
        .unwrap();
    model.complete(&json!({"messages": []})).await.unwrap();
    let received = server.requests().remove(0);
    assert_eq!(received.header("anthropic-version"), Some("2099-01-01"));
    assert_eq!(
        received.head.matches("anthropic-version").count(),
        1,
        "{}",
        received.head
    );
    assert_eq!(received.header("x-api-key"), Some("k1"));
}

#[test]
fn a_bad_header_or_query_name_is_a_build_error_that_shows_no_value() {
    let build = |name: &str, value: &str| {
        HttpModel::openai_chat("m")
            .no_key()
            .header(name, value)
            .build()
            .unwrap_err()
            .to_string()
    };
    let error = build("api-key", "line\r\nbreak-secret");
    assert!(error.contains("`api-key`"), "{error}");
    assert!(!error.contains("secret"), "{error}");
    let error = build("bad name", "v");
    assert!(error.contains("not a valid HTTP header name"), "{error}");
    let error = build("", "v");
    assert!(error.contains("header name"), "{error}");
    let error = HttpModel::openai_chat("m")
        .no_key()
        .query("", "v")
        .build()
        .unwrap_err()
        .to_string();
    assert!(error.contains("empty name"), "{error}");
}

/// Reads one HTTP/1.1 request (headers and a `Content-Length` body) off
/// the connection; `None` when the client closed it first.
async fn read_request(connection: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt;
    let mut data = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |value| value.trim().parse().unwrap());
            if data.len() >= end + 4 + length {
                return Some(data);
            }
        }
        let read = connection.read(&mut buffer).await.ok()?;
        if read == 0 {
            return None;
        }
        data.extend_from_slice(&buffer[..read]);
    }
}

/// A Chat Completions answer saying `text`, whole.
fn chat_answer(text: &str) -> String {
    let body = json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}]
    })
    .to_string();
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A server that closes a kept-alive connection after a streamed answer,
/// as llama.cpp's server does, while advertising keep-alive: the next
/// request goes out on that connection and gets no answer. The model
/// sends it again on a new connection, retries turned off or not.
#[tokio::test]
async fn a_request_lost_to_a_connection_the_server_closed_is_sent_again() {
    use tokio::io::AsyncWriteExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut requests = 0;
        // The first connection: a streamed answer, then the next request
        // read and the connection closed without a word.
        let (mut first, _) = listener.accept().await.unwrap();
        read_request(&mut first).await.unwrap();
        requests += 1;
        let event = json!({
            "id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"},
                         "finish_reason": "stop"}]
        });
        let events = format!("data: {event}\n\ndata: [DONE]\n\n");
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nkeep-alive: timeout=5, max=100\r\n\
             transfer-encoding: chunked\r\n\r\n{:x}\r\n{events}\r\n0\r\n\r\n",
            events.len()
        );
        first.write_all(reply.as_bytes()).await.unwrap();
        if read_request(&mut first).await.is_some() {
            requests += 1;
        }
        drop(first);
        // The request again, on a new connection: answered.
        let (mut second, _) = listener.accept().await.unwrap();
        read_request(&mut second).await.unwrap();
        requests += 1;
        second
            .write_all(chat_answer("again").as_bytes())
            .await
            .unwrap();
        requests
    });
    let model = chat_model(&format!("http://{address}"), RetryPolicy::none());
    let streamed = model.stream(&json!({}), &mut |_| {}).await.unwrap();
    assert_eq!(streamed.text, "hi");
    let turn = model.complete(&json!({})).await.unwrap();
    assert_eq!(turn.text, "again");
    assert_eq!(server.await.unwrap(), 3, "the lost request, then once more");
}

/// A server that closes every connection without answering: the request
/// is sent again once, not in a loop, and the host gets a transport error
/// that counts both attempts.
#[tokio::test]
async fn a_server_that_never_answers_is_not_asked_forever() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let mut requests = 0;
        while let Ok(Ok((mut connection, _))) =
            tokio::time::timeout(Duration::from_secs(2), listener.accept()).await
        {
            if read_request(&mut connection).await.is_some() {
                requests += 1;
            }
        }
        requests
    });
    let model = chat_model(&format!("http://{address}"), RetryPolicy::none());
    match model.complete(&json!({})).await {
        Err(ModelError::Transport { attempts: 2, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(server.await.unwrap(), 2);
}
