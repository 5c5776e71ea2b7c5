//! The MCP spans as plain `tracing` sees them (no OpenTelemetry): their
//! names, kinds and attributes on the server and the client, the
//! registry's `execute_tool` span inside the server's, errors by their
//! JSON-RPC code or `tool_error`, and no content unless captured.

use std::process::ExitCode;

use serde_json::json;
use toolkit_core::{Registry, telemetry};
use toolkit_mcp::{HttpOptions, McpClient, McpServer, Prompt, PromptMessage};
use toolkit_tests::runner::{self, Test};
use toolkit_tests::trace::Recorder;

#[path = "support/lines.rs"]
mod lines;
use lines::Lines;

#[path = "support/traced_tools.rs"]
mod traced_tools;

fn server() -> McpServer {
    McpServer::new(traced_tools::registry())
        .prompt(Prompt::fixed("greet", [PromptMessage::user("Say hello.")]))
}

async fn served_over_a_pipe(recorder: &Recorder) {
    let mut lines = Lines::start(server());
    let initialize = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}
    });
    lines.ask(1, "initialize", initialize).await;
    lines
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let call = |name: &str| json!({"name": name, "arguments": {"city": "Lima"}});
    let answer = lines.ask(2, "tools/call", call("weather")).await;
    assert_eq!(answer["result"]["content"][0]["text"], "rainy in Lima");
    lines.ask(3, "tools/call", json!({"name": "broken"})).await;
    let answer = lines.ask(4, "tools/call", call("nothing")).await;
    assert_eq!(answer["error"]["code"], -32602);
    lines.ask(5, "prompts/get", json!({"name": "greet"})).await;
    lines.ask(6, "tools/list", json!({})).await;

    let initialize = recorder.span("initialize");
    assert_eq!(initialize.name, telemetry_name());
    assert_eq!(initialize.target, "toolkit_mcp::telemetry");
    assert_eq!(initialize.field("otel.kind"), Some("server"));
    assert_eq!(initialize.field("mcp.method.name"), Some("initialize"));
    assert_eq!(initialize.field("mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(initialize.field("jsonrpc.request.id"), Some("1"));
    assert_eq!(initialize.field("network.transport"), Some("pipe"));
    assert_eq!(initialize.field("gen_ai.operation.name"), None);

    let called = recorder.span("tools/call weather");
    assert_eq!(called.field("otel.kind"), Some("server"));
    assert_eq!(called.field("mcp.method.name"), Some("tools/call"));
    assert_eq!(called.field("gen_ai.tool.name"), Some("weather"));
    assert_eq!(called.field("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(called.field("jsonrpc.request.id"), Some("2"));
    assert_eq!(called.field("mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(called.field("network.transport"), Some("pipe"));
    // No HTTP, no session.
    assert_eq!(called.field("mcp.session.id"), None);
    assert_eq!(called.field("network.protocol.name"), None);
    assert_eq!(called.field("error.type"), None);
    // Content is off by default.
    assert_eq!(called.field("gen_ai.tool.call.arguments"), None);
    assert_eq!(called.field("gen_ai.tool.call.result"), None);
    // (rmcp's own debug events show the messages; the toolkit's spans do not.)
    for span in recorder.spans() {
        if span.target.starts_with("toolkit") {
            assert!(!format!("{:?}", span.fields).contains("Lima"), "{span:?}");
        }
    }
    // The registry's span is inside the server's.
    let executed = recorder.span("execute_tool weather");
    assert_eq!(recorder.parent(&executed).map(|s| s.id), Some(called.id));

    let failed = recorder.span("tools/call broken");
    assert_eq!(failed.field("error.type"), Some("tool_error"));
    assert_eq!(failed.field("otel.status_code"), Some("ERROR"));
    assert_eq!(failed.field("rpc.response.status_code"), None);
    let refused = recorder.span("tools/call nothing");
    assert_eq!(refused.field("error.type"), Some("-32602"));
    assert_eq!(refused.field("rpc.response.status_code"), Some("-32602"));
    assert_eq!(
        refused.field("otel.status_description"),
        Some("unknown tool: nothing")
    );

    let prompt = recorder.span("prompts/get greet");
    assert_eq!(prompt.field("gen_ai.prompt.name"), Some("greet"));
    assert_eq!(prompt.field("gen_ai.operation.name"), None);
    let listed = recorder.span("tools/list");
    assert_eq!(listed.field("gen_ai.tool.name"), None);
    assert_eq!(listed.field("error.type"), None);
    // A notification is an event.
    assert!(recorder.all_text().contains("notifications/initialized"));

    // With content captured, the call's arguments and result are there.
    recorder.clear();
    telemetry::capture_content(true);
    lines.ask(7, "tools/call", call("weather")).await;
    telemetry::capture_content(false);
    let called = recorder.span("tools/call weather");
    assert_eq!(
        called.field("gen_ai.tool.call.arguments"),
        Some(r#"{"city":"Lima"}"#)
    );
    assert!(
        called
            .field("gen_ai.tool.call.result")
            .is_some_and(|result| result.contains("rainy in Lima"))
    );
}

fn telemetry_name() -> &'static str {
    toolkit_mcp::telemetry::SERVER_SPAN
}

async fn both_ends_over_http(recorder: &Recorder) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("an address");
    let app = server().router(&HttpOptions::new());
    tokio::spawn(async move { axum::serve(listener, app).await });
    // A session, whose id the server's span records.
    let client = McpClient::http("remote", format!("http://{address}/mcp"))
        .stateless(false)
        .connect()
        .await
        .expect("connected");
    // The opening of the connection, in a span of its own.
    let opened = recorder.span(toolkit_mcp::telemetry::CONNECT_SPAN);
    assert_eq!(opened.field("otel.kind"), Some("client"));
    assert_eq!(opened.field("mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(opened.field("network.transport"), Some("tcp"));
    assert_eq!(opened.field("error.type"), None);
    let tools = client.tools().await.expect("its tools");
    let ours = Registry::builder()
        .tools(tools)
        .build()
        .expect("valid tools");
    recorder.clear();
    // A server that cannot be reached: the span says so.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port");
    McpClient::http("gone", format!("http://{closed}/mcp"))
        .connect()
        .await
        .expect_err("nothing listens");
    let failed = recorder.span(toolkit_mcp::telemetry::CONNECT_SPAN);
    assert_eq!(failed.field("error.type"), Some("unreachable"));
    assert_eq!(failed.field("otel.status_code"), Some("ERROR"));
    recorder.clear();
    let outcome = ours
        .dispatch(("remote_weather", r#"{"city": "Oslo"}"#))
        .await;
    assert_eq!(outcome.result.as_text(), Ok("rainy in Oslo"));
    let spans = recorder.spans_named("tools/call weather");
    let kind = |kind: &str| {
        spans
            .iter()
            .find(|span| span.field("otel.kind") == Some(kind))
            .unwrap_or_else(|| panic!("a {kind} span among {spans:?}"))
            .clone()
    };
    let (sent, served) = (kind("client"), kind("server"));
    assert_eq!(sent.name, toolkit_mcp::telemetry::CLIENT_SPAN);
    // The client's span is inside the call of the registry it serves.
    let calling = recorder.span("execute_tool remote_weather");
    assert_eq!(recorder.parent(&sent).map(|s| s.id), Some(calling.id));
    for span in [&sent, &served] {
        assert_eq!(span.field("mcp.method.name"), Some("tools/call"));
        assert_eq!(span.field("gen_ai.tool.name"), Some("weather"));
        assert_eq!(span.field("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(span.field("network.transport"), Some("tcp"));
        assert_eq!(span.field("network.protocol.name"), Some("http"));
        assert_eq!(span.field("mcp.protocol.version"), Some("2025-11-25"));
        assert!(span.field("jsonrpc.request.id").is_some());
    }
    assert_eq!(
        sent.field("jsonrpc.request.id"),
        served.field("jsonrpc.request.id")
    );
    assert_eq!(sent.field("server.address"), Some("127.0.0.1"));
    assert_eq!(
        sent.field("server.port"),
        Some(address.port().to_string().as_str())
    );
    assert!(
        served
            .field("mcp.session.id")
            .is_some_and(|id| !id.is_empty())
    );
    // Without OpenTelemetry nothing is propagated, and nothing is said to be.
    assert!(!recorder.all_text().contains("traceparent"));
    client.close().await;
}

/// Runs a scenario under a recorder of its own, on one thread, so that
/// every task (both ends) is seen by the recorder this thread set.
fn recorded(scenario: impl AsyncFnOnce(&Recorder)) {
    let recorder = Recorder::default();
    let _default = tracing::subscriber::set_default(recorder.clone());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(scenario(&recorder));
}

fn main() -> ExitCode {
    runner::run(vec![
        Test::new("served_over_a_pipe", || recorded(served_over_a_pipe)),
        Test::new("both_ends_over_http", || recorded(both_ends_over_http)),
    ])
}
