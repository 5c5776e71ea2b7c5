//! Trace context across MCP, with the `opentelemetry` feature: a real
//! OpenTelemetry SDK (its in-memory exporter) under `tracing-opentelemetry`
//! records both ends of each call, and the server's span must be the
//! child of the client's, in the same trace.

use std::process::ExitCode;
use std::sync::Arc;

use opentelemetry::trace::{SpanId, SpanKind, TraceId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use toolkit_core::{Registry, telemetry};
use toolkit_mcp::{HttpOptions, McpClient, McpServer};
use toolkit_tests::runner::{self, Test};
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

#[path = "support/lines.rs"]
mod lines;
use lines::Lines;

#[path = "support/traced_tools.rs"]
mod traced_tools;
use traced_tools::registry;

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|pair| pair.key.as_str() == key)
        .map(|pair| pair.value.to_string())
}

fn only(spans: &[SpanData], name: &str, kind: &SpanKind) -> SpanData {
    let found: Vec<&SpanData> = spans
        .iter()
        .filter(|span| span.name == name && &span.span_kind == kind)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {kind:?} span `{name}` among {:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    found[0].clone()
}

/// A client call over Streamable HTTP to a server of the same process.
async fn over_http(exporter: &InMemorySpanExporter) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let app = McpServer::new(registry()).router(&HttpOptions::new());
    tokio::spawn(async move { axum::serve(listener, app).await });
    // A session, whose id the server's span records.
    let client = McpClient::http("remote", &url)
        .stateless(false)
        .connect()
        .await
        .expect("connected");
    let ours = Arc::new(
        Registry::builder()
            .tools(client.tools().await.expect("its tools"))
            .build()
            .expect("valid tools"),
    );
    exporter.reset();

    let outcome = ours
        .dispatch(("remote_weather", r#"{"city": "Paris"}"#))
        .instrument(tracing::info_span!("request"))
        .await;
    assert_eq!(outcome.result.as_text(), Ok("rainy in Paris"));
    let spans = exporter.get_finished_spans().expect("the spans");
    let client_span = only(&spans, "tools/call weather", &SpanKind::Client);
    let server_span = only(&spans, "tools/call weather", &SpanKind::Server);
    let request = only(&spans, "request", &SpanKind::Internal);
    let served = only(&spans, "execute_tool weather", &SpanKind::Internal);
    // One trace, from the caller's span to the tool that ran remotely.
    let trace = request.span_context.trace_id();
    assert_ne!(trace, TraceId::INVALID);
    for span in [&client_span, &server_span, &served] {
        assert_eq!(span.span_context.trace_id(), trace, "{}", span.name);
    }
    assert_eq!(
        server_span.parent_span_id,
        client_span.span_context.span_id()
    );
    assert!(server_span.parent_span_is_remote);
    assert_eq!(served.parent_span_id, server_span.span_context.span_id());
    for span in [&client_span, &server_span] {
        assert_eq!(
            attribute(span, "mcp.method.name").as_deref(),
            Some("tools/call")
        );
        assert_eq!(
            attribute(span, "gen_ai.tool.name").as_deref(),
            Some("weather")
        );
        assert_eq!(
            attribute(span, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(attribute(span, "network.transport").as_deref(), Some("tcp"));
        assert!(attribute(span, "jsonrpc.request.id").is_some());
        assert!(attribute(span, "mcp.protocol.version").is_some());
        // Content is off by default.
        assert_eq!(attribute(span, "gen_ai.tool.call.arguments"), None);
        assert_eq!(attribute(span, "gen_ai.tool.call.result"), None);
        assert_eq!(attribute(span, "error.type"), None);
    }
    assert!(attribute(&server_span, "mcp.session.id").is_some());
    assert_eq!(
        attribute(&client_span, "jsonrpc.request.id"),
        attribute(&server_span, "jsonrpc.request.id")
    );

    // A tool's error result is `tool_error` at both ends.
    exporter.reset();
    let outcome = ours.dispatch(("remote_broken", "{}")).await;
    assert!(outcome.result.is_error());
    let spans = exporter.get_finished_spans().expect("the spans");
    for kind in [SpanKind::Client, SpanKind::Server] {
        let span = only(&spans, "tools/call broken", &kind);
        assert_eq!(
            attribute(&span, "error.type").as_deref(),
            Some("tool_error")
        );
    }

    // Listings are traced and carried too.
    exporter.reset();
    client.tools().await.expect("its tools");
    let spans = exporter.get_finished_spans().expect("the spans");
    let listed = only(&spans, "tools/list", &SpanKind::Client);
    let served = only(&spans, "tools/list", &SpanKind::Server);
    assert_eq!(served.parent_span_id, listed.span_context.span_id());

    // With content captured, the call's arguments and result are recorded.
    telemetry::capture_content(true);
    exporter.reset();
    ours.dispatch(("remote_weather", r#"{"city": "Oslo"}"#))
        .await;
    telemetry::capture_content(false);
    let spans = exporter.get_finished_spans().expect("the spans");
    for kind in [SpanKind::Client, SpanKind::Server] {
        let span = only(&spans, "tools/call weather", &kind);
        assert_eq!(
            attribute(&span, "gen_ai.tool.call.arguments").as_deref(),
            Some(r#"{"city":"Oslo"}"#)
        );
        let result = attribute(&span, "gen_ai.tool.call.result").expect("a result");
        assert!(result.contains("rainy in Oslo"), "{result}");
    }
    client.close().await;
}

/// Calls `weather` for Lima with `meta` as the request's `_meta`.
async fn call(lines: &mut Lines, id: u64, meta: Value) -> Value {
    lines
        .send(json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "weather", "arguments": {"city": "Lima"}, "_meta": meta}
        }))
        .await;
    lines.answer().await
}

/// Over a pipe (`serve_lines`): a valid `traceparent` is the server span's
/// parent; a malformed one is ignored, and the call served.
async fn over_lines(exporter: &InMemorySpanExporter) {
    let mut lines = Lines::start(McpServer::new(registry()));
    lines
        .ask(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}
            }),
        )
        .await;
    lines
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    exporter.reset();
    let answer = call(
        &mut lines,
        2,
        json!({
            "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "tracestate": "rojo=00f067aa0ba902b7"
        }),
    )
    .await;
    assert_eq!(answer["result"]["content"][0]["text"], "rainy in Lima");
    let spans = exporter.get_finished_spans().expect("the spans");
    let server_span = only(&spans, "tools/call weather", &SpanKind::Server);
    assert_eq!(
        server_span.span_context.trace_id(),
        TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").expect("hex")
    );
    assert_eq!(
        server_span.parent_span_id,
        SpanId::from_hex("00f067aa0ba902b7").expect("hex")
    );
    assert_eq!(
        server_span.span_context.trace_state().get("rojo"),
        Some("00f067aa0ba902b7")
    );
    assert_eq!(
        attribute(&server_span, "network.transport").as_deref(),
        Some("pipe")
    );
    assert_eq!(attribute(&server_span, "mcp.session.id"), None);
    assert_eq!(
        attribute(&server_span, "jsonrpc.request.id").as_deref(),
        Some("2")
    );

    for (id, malformed) in [
        (
            3,
            json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"),
        ),
        (
            4,
            json!("00-00000000000000000000000000000000-00f067aa0ba902b7-01"),
        ),
        (5, json!("not a traceparent at all \u{1F600}")),
        (6, json!(42)),
        (7, json!({"traceparent": "nested"})),
    ] {
        exporter.reset();
        let answer = call(&mut lines, id, json!({"traceparent": malformed})).await;
        assert_eq!(
            answer["result"]["content"][0]["text"], "rainy in Lima",
            "{malformed}: {answer}"
        );
        let spans = exporter.get_finished_spans().expect("the spans");
        let server_span = only(&spans, "tools/call weather", &SpanKind::Server);
        // A fresh trace: no parent.
        assert_eq!(server_span.parent_span_id, SpanId::INVALID, "{malformed}");
        assert_ne!(
            server_span.span_context.trace_id(),
            TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").expect("hex")
        );
    }
}

fn main() -> ExitCode {
    // One subscriber for the process, set before any scenario: the
    // scenarios share its exporter, each emptying it before it looks.
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("trace_context"));
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
        .expect("the only subscriber");
    let over_http_exporter = exporter.clone();
    runner::run(vec![
        Test::new("over_http", move || {
            block_on(over_http(&over_http_exporter))
        }),
        Test::new("over_lines", move || block_on(over_lines(&exporter))),
    ])
}

/// A scenario on a runtime of its own (multi-threaded, as a host's).
fn block_on(future: impl std::future::Future<Output = ()>) {
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(future);
}
