//! The `execute_tool` span every call runs in: its name and attributes in
//! the OpenTelemetry GenAI conventions, `error.type` for each kind of
//! failure, the tool's own spans inside it, and content (arguments,
//! results) recorded only while capture is on.

use std::time::Duration;

use toolkit_core::telemetry::{self, attr};
use toolkit_core::{CallHost, Cancellation, Registry, RunState, ToolCall, ToolResult, tool, tools};
use toolkit_tests::trace::Recorder;

/// Finds a city's weather.
#[tool(catalogue = false)]
fn weather(
    /// The city.
    city: String,
) -> String {
    format!("sunny in {city}")
}

/// Logs inside its own span.
#[tool(catalogue = false)]
async fn nested() -> String {
    tracing::info_span!("inside_the_tool").in_scope(|| tracing::info!("working"));
    tokio::task::yield_now().await;
    "done".to_owned()
}

/// Refuses.
#[tool(catalogue = false)]
fn refuse() -> ToolResult {
    ToolResult::error("no")
}

/// Panics.
#[tool(catalogue = false)]
async fn explode() -> String {
    panic!("boom")
}

/// Never finishes in time.
#[tool(catalogue = false)]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "late".to_owned()
}

/// Says where it went, on its span.
#[tool(catalogue = false)]
async fn visit(
    /// The address.
    url: String,
) -> String {
    tokio::task::yield_now().await;
    telemetry::record_url(&url);
    format!("recorded: {}", telemetry::in_recorded_call())
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![weather, nested, refuse, explode, slow])
        .tool_timeout("slow", Duration::from_millis(20))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_call_runs_in_an_execute_tool_span_with_the_conventions_attributes() {
    let recorder = Recorder::default();
    let _default = tracing::subscriber::set_default(recorder.clone());
    let registry = registry();
    let call = ToolCall::new("call_7", "weather", r#"{"city": "Oslo"}"#.into());
    let outcome = registry.dispatch(&call).await;
    assert_eq!(outcome.result.as_text(), Ok("sunny in Oslo"));

    let span = recorder.span("execute_tool weather");
    assert_eq!(span.name, "execute_tool");
    assert_eq!(span.field(attr::OPERATION_NAME), Some("execute_tool"));
    assert_eq!(span.field(attr::TOOL_NAME), Some("weather"));
    assert_eq!(span.field(attr::TOOL_CALL_ID), Some("call_7"));
    assert_eq!(
        span.field(attr::TOOL_DESCRIPTION),
        Some("Finds a city's weather.")
    );
    assert_eq!(span.field(attr::TOOL_TYPE), Some("function"));
    assert_eq!(span.field(attr::OTEL_KIND), Some("internal"));
    assert_eq!(span.field(attr::ERROR_TYPE), None);
    assert!(span.target.starts_with("toolkit_core"), "{}", span.target);
}

#[tokio::test]
async fn every_dispatch_path_is_traced_and_the_tools_spans_are_its_children() {
    let recorder = Recorder::default();
    let _default = tracing::subscriber::set_default(recorder.clone());
    let registry = registry();
    let call = ToolCall::new("c1", "nested", "{}".into());
    let cancellation = Cancellation::new();

    registry.dispatch(("nested", "{}")).await;
    registry.dispatch(&call).cancellation(&cancellation).await;
    registry
        .dispatch(&call)
        .cancellation(&cancellation)
        .state(&RunState::new())
        .await;
    registry
        .dispatch(&call)
        .cancellation(&cancellation)
        .host(&CallHost::new())
        .await;
    registry
        .dispatch(&call)
        .cancellation(&cancellation)
        .host(&CallHost::new())
        .state(&RunState::new())
        .await;
    registry.dispatch_turn(&[call.clone(), call.clone()]).await;
    let action = serde_json::json!({"nested": {}});
    registry.dispatch(registry.action(&action).unwrap()).await;

    let calls = recorder.spans_named("execute_tool nested");
    assert_eq!(calls.len(), 8, "one span per call");
    // A host's call by name and an action have no call id; the others
    // carry the model's.
    let with_id = calls
        .iter()
        .filter(|s| s.field(attr::TOOL_CALL_ID) == Some("c1"));
    assert_eq!(with_id.count(), 6);
    let inner = recorder.spans_named("inside_the_tool");
    assert_eq!(inner.len(), 8);
    for (tool_span, call_span) in inner.iter().zip(&calls) {
        assert_eq!(tool_span.parent, Some(call_span.id), "{inner:#?}");
        assert_eq!(tool_span.events[0].fields["message"], "working");
    }

    // Calls outside any span are roots; inside one, children of it.
    assert!(calls.iter().all(|s| s.parent.is_none()));
    let turn = tracing::info_span!("turn");
    let outer = turn.id().unwrap().into_u64();
    {
        use tracing::Instrument;
        registry
            .dispatch_turn(std::slice::from_ref(&call))
            .instrument(turn)
            .await;
    }
    let last = recorder.spans_named("execute_tool nested").pop().unwrap();
    assert_eq!(last.parent, Some(outer));
}

#[tokio::test]
async fn each_failure_sets_error_type_to_its_kind() {
    let recorder = Recorder::default();
    let _default = tracing::subscriber::set_default(recorder.clone());
    let registry = registry();

    let cases = [
        ("weather", r#"{"city": 3}"#, "invalid_arguments"),
        ("weathr", "{}", "unknown_tool"),
        ("explode", "{}", "panic"),
        ("slow", "{}", "timeout"),
        ("refuse", "{}", "tool_error"),
    ];
    for (name, arguments, _) in cases {
        let outcome = registry.dispatch((name, arguments)).await;
        assert!(outcome.result.is_error(), "{name}");
    }
    registry.set_enabled("weather", false);
    registry.dispatch(("weather", r#"{"city": "Oslo"}"#)).await;

    let spans = recorder.spans();
    let kinds: Vec<(&str, Option<&str>)> = spans
        .iter()
        .map(|s| (s.field(attr::TOOL_NAME).unwrap(), s.field(attr::ERROR_TYPE)))
        .collect();
    let mut expected: Vec<(&str, Option<&str>)> = cases
        .iter()
        .map(|(name, _, kind)| (*name, Some(*kind)))
        .collect();
    expected.push(("weather", Some("disabled_tool")));
    assert_eq!(kinds, expected);
    // An unknown tool has no description to give.
    let unknown = recorder.span("execute_tool weathr");
    assert_eq!(unknown.field(attr::TOOL_DESCRIPTION), None);

    // A name of a million characters is cut in the span, as in the error.
    let huge = format!("weather{}", "x".repeat(1_000_000));
    let outcome = registry.dispatch((&huge, "{}")).await;
    assert_eq!(outcome.error.unwrap().kind(), "unknown_tool");
    let span = recorder.spans().pop().unwrap();
    let name = span.field(attr::TOOL_NAME).unwrap();
    assert!(
        name.starts_with("weatherxxx") && name.len() < 300,
        "{} bytes",
        name.len()
    );
    assert!(span.otel_name().len() < 320);
}

/// Content capture is one process-wide switch, so both of its states are
/// checked in this one test: no other test in this binary turns it on.
#[tokio::test]
async fn arguments_and_results_are_recorded_only_while_capture_is_on() {
    const SECRET: &str = "hunter2-7f3a9c";
    let registry = registry();
    let arguments = format!(r#"{{"city": "{SECRET}"}}"#);

    let recorder = Recorder::default();
    {
        let _default = tracing::subscriber::set_default(recorder.clone());
        assert!(!telemetry::captures_content(), "off by default");
        let outcome = registry.dispatch(("weather", &arguments)).await;
        assert!(outcome.result.as_text().unwrap().contains(SECRET));
        let value = serde_json::json!({"city": SECRET});
        registry.dispatch(("weather", &value)).await;
        registry.dispatch(("weather", r#"{"city": 3}"#)).await;
    }
    let span = &recorder.spans_named("execute_tool weather")[0];
    assert_eq!(span.field(attr::TOOL_CALL_ARGUMENTS), None);
    assert_eq!(span.field(attr::TOOL_CALL_RESULT), None);
    let everything = recorder.all_text();
    assert!(!everything.contains(SECRET), "{everything}");

    let recorder = Recorder::default();
    telemetry::capture_content(true);
    {
        let _default = tracing::subscriber::set_default(recorder.clone());
        registry.dispatch(("weather", &arguments)).await;
        let value = serde_json::json!({"city": SECRET});
        registry.dispatch(("weather", &value)).await;
        registry.dispatch(("refuse", "{}")).await;
    }
    telemetry::capture_content(false);
    let spans = recorder.spans_named("execute_tool weather");
    assert_eq!(
        spans[0].field(attr::TOOL_CALL_ARGUMENTS),
        Some(arguments.as_str())
    );
    assert_eq!(
        spans[0].field(attr::TOOL_CALL_RESULT),
        Some(format!("sunny in {SECRET}").as_str())
    );
    let parsed: serde_json::Value =
        serde_json::from_str(spans[1].field(attr::TOOL_CALL_ARGUMENTS).unwrap()).unwrap();
    assert_eq!(parsed, serde_json::json!({"city": SECRET}));
    // A failed call has no result to record.
    let refused = recorder.span("execute_tool refuse");
    assert_eq!(refused.field(attr::TOOL_CALL_RESULT), None);
    assert_eq!(refused.field(attr::TOOL_CALL_ARGUMENTS), Some("{}"));

    // A registry that redacts: what its spans capture goes through it,
    // arguments given as text or as a value, and the result; what the
    // tool and the caller get is untouched.
    let redacting = Registry::builder()
        .tools(tools![weather])
        .redact_captured(|text| text.replace(SECRET, "[secret]"))
        .build()
        .unwrap();
    let recorder = Recorder::default();
    telemetry::capture_content(true);
    {
        let _default = tracing::subscriber::set_default(recorder.clone());
        let outcome = redacting.dispatch(("weather", &arguments)).await;
        assert_eq!(
            outcome.result.as_text(),
            Ok(format!("sunny in {SECRET}").as_str())
        );
        redacting
            .dispatch(("weather", &serde_json::json!({"city": SECRET})))
            .await;
    }
    telemetry::capture_content(false);
    let spans = recorder.spans_named("execute_tool weather");
    assert_eq!(
        spans[0].field(attr::TOOL_CALL_ARGUMENTS),
        Some(r#"{"city": "[secret]"}"#)
    );
    assert_eq!(
        spans[0].field(attr::TOOL_CALL_RESULT),
        Some("sunny in [secret]")
    );
    assert_eq!(
        spans[1].field(attr::TOOL_CALL_ARGUMENTS),
        Some(r#"{"city":"[secret]"}"#)
    );
    let everything = recorder.all_text();
    assert!(!everything.contains(SECRET), "{everything}");
}

#[tokio::test]
async fn a_tool_records_the_address_it_acted_on_only_on_a_recorded_call() {
    let visits = Registry::builder().tools(tools![visit]).build().unwrap();
    let arguments = serde_json::json!({"url": "https://example.com/a?q=1"});
    let outcome = visits.dispatch(("visit", &arguments)).await;
    assert_eq!(outcome.result.as_text(), Ok("recorded: false"));

    let recorder = Recorder::default();
    {
        let _default = tracing::subscriber::set_default(recorder.clone());
        let outcome = visits.dispatch(("visit", &arguments)).await;
        assert_eq!(outcome.result.as_text(), Ok("recorded: true"));
        // Outside any call: nothing to record on, and no span made.
        telemetry::record_url("https://example.com/outside");
        assert!(!telemetry::in_recorded_call());
    }
    let span = recorder.span("execute_tool visit");
    assert_eq!(
        span.field(attr::URL_FULL),
        Some("https://example.com/a?q=1")
    );
    assert_eq!(recorder.span_count(), 1);
    // A span with no address says none.
    let recorder = Recorder::default();
    {
        let _default = tracing::subscriber::set_default(recorder.clone());
        registry()
            .dispatch(("weather", r#"{"city": "Oslo"}"#))
            .await;
    }
    assert_eq!(
        recorder.span("execute_tool weather").field(attr::URL_FULL),
        None
    );
}

#[tokio::test]
async fn without_a_subscriber_calls_are_unchanged() {
    let registry = registry();
    let outcome = registry.dispatch(("weather", r#"{"city": "Oslo"}"#)).await;
    assert_eq!(outcome.result.as_text(), Ok("sunny in Oslo"));
    let outcome = registry.dispatch(("explode", "{}")).await;
    assert_eq!(outcome.error.unwrap().kind(), "panic");
}
