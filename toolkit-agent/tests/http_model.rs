//! `HttpModel` against a real local HTTP server answering with response
//! bodies from the providers' documentation.

use std::time::{Duration, Instant};

use serde_json::json;
use toolkit_agent::{HttpModel, Model, ModelError, Provider, RetryPolicy};
use toolkit_tests::http::{Reply, TestServer};

fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        initial: Duration::from_millis(10),
        max_delay: Duration::from_secs(2),
    }
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

#[tokio::test]
async fn retries_429_honouring_retry_after_then_succeeds() {
    let busy = Reply::status(429, r#"{"error":{"message":"Rate limit reached"}}"#)
        .with_header("retry-after", "1");
    let ok = Reply::json(&json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": "done"}}]}));
    let server = TestServer::replying(vec![busy, ok]);
    let model = HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .retry(quick_retries())
        .build()
        .unwrap();
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
    let model = HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .retry(quick_retries())
        .build()
        .unwrap();
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
    let model = HttpModel::openai_chat("m")
        .base_url(format!("http://{address}"))
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
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
    let model = HttpModel::openai_chat("m")
        .base_url(format!("https://{address}"))
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
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
    assert_eq!(turn.calls[0].arguments, "{\"city\":\"Paris\"}");
    assert!(seen.contains(&"{\"city\":".to_owned()), "{seen:?}");
    let received = server.requests().remove(0);
    assert_eq!(received.json()["stream"], true);
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
