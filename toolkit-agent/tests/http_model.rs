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
