//! The request metrics as an OpenTelemetry backend receives them: real
//! local HTTP servers play the model, `tracing-opentelemetry`'s
//! `MetricsLayer` (the bridge a host installs) turns the toolkit's metric
//! events into instruments of the OpenTelemetry SDK, and the SDK's
//! in-memory exporter hands back the histograms it would export, with
//! the units and bucket boundaries a host's views give them.

use std::collections::BTreeMap;

use opentelemetry_sdk::metrics::data::{AggregatedMetrics, HistogramDataPoint, MetricData};
use opentelemetry_sdk::metrics::{
    Aggregation, InMemoryMetricExporter, Instrument, PeriodicReader, SdkMeterProvider, Stream,
};
use serde_json::json;
use toolkit_agent::telemetry::metrics;
use toolkit_agent::{HttpModel, Model, RetryPolicy};
use toolkit_tests::http::{Reply, TestServer};
use tracing_subscriber::layer::SubscriberExt;

// Only its model: the replies here name a response model.
#[allow(dead_code)]
#[path = "support/chat.rs"]
mod chat;

/// The conventions' unit and boundaries for each histogram, as a host
/// sets them (the bridge creates instruments by name only).
fn view(instrument: &Instrument) -> Option<Stream> {
    let (unit, boundaries) = match instrument.name() {
        metrics::TOKEN_USAGE => (metrics::TOKEN_USAGE_UNIT, metrics::TOKEN_USAGE_BOUNDARIES),
        metrics::OPERATION_DURATION => (
            metrics::OPERATION_DURATION_UNIT,
            metrics::OPERATION_DURATION_BOUNDARIES,
        ),
        _ => return None,
    };
    Stream::builder()
        .with_unit(unit)
        .with_aggregation(Aggregation::ExplicitBucketHistogram {
            boundaries: boundaries.to_vec(),
            record_min_max: true,
        })
        .build()
        .ok()
}

/// A meter provider exporting to memory, and the subscriber that feeds it.
struct Backend {
    provider: SdkMeterProvider,
    exporter: InMemoryMetricExporter,
}

/// One exported data point: its attributes as text, count and sum.
#[derive(Debug, PartialEq)]
struct Point {
    attributes: BTreeMap<String, String>,
    count: u64,
    sum: f64,
    bounds: Vec<f64>,
}

fn point<T: Copy>(point: &HistogramDataPoint<T>, to_f64: fn(T) -> f64) -> Point {
    Point {
        attributes: point
            .attributes()
            .map(|kv| (kv.key.to_string(), kv.value.to_string()))
            .collect(),
        count: point.count(),
        sum: to_f64(point.sum()),
        bounds: point.bounds().collect(),
    }
}

impl Backend {
    fn new() -> Self {
        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .with_view(view)
            .build();
        Self { provider, exporter }
    }

    fn subscriber(&self) -> impl tracing::Subscriber + Send + Sync {
        tracing_subscriber::registry().with(tracing_opentelemetry::MetricsLayer::new(
            self.provider.clone(),
        ))
    }

    /// The histogram `name`'s unit and data points, once exported.
    fn histogram(&self, name: &str) -> Option<(String, Vec<Point>)> {
        self.provider.force_flush().unwrap();
        let exported = self.exporter.get_finished_metrics().unwrap();
        let metric = exported
            .iter()
            .flat_map(|resource| resource.scope_metrics())
            .flat_map(|scope| scope.metrics())
            .filter(|metric| metric.name() == name)
            .last()?;
        let points = match metric.data() {
            AggregatedMetrics::U64(MetricData::Histogram(histogram)) => histogram
                .data_points()
                .map(|p| point(p, |sum| sum as f64))
                .collect(),
            AggregatedMetrics::F64(MetricData::Histogram(histogram)) => histogram
                .data_points()
                .map(|p| point(p, |sum| sum))
                .collect(),
            other => panic!("`{name}` is not a histogram: {other:?}"),
        };
        Some((metric.unit().to_owned(), points))
    }
}

fn attributes(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

fn chat_text(text: &str) -> Reply {
    Reply::json(&json!({
        "id": "chatcmpl-2", "model": "m-2026-01",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3}
    }))
}

fn question() -> serde_json::Value {
    json!({"messages": [{"role": "user", "content": "How many museums?"}]})
}

#[tokio::test]
async fn a_request_records_its_tokens_by_type_and_its_duration() {
    let server = TestServer::replying([chat_text("Three.")]);
    let model = chat::model(&server);
    let backend = Backend::new();
    {
        let _default = tracing::subscriber::set_default(backend.subscriber());
        model.complete(&question()).await.unwrap();
    }
    let port = server.port().to_string();
    let common = [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", "openai"),
        ("gen_ai.request.model", "m"),
        ("gen_ai.response.model", "m-2026-01"),
        ("server.address", "127.0.0.1"),
        ("server.port", port.as_str()),
    ];
    let with = |extra: (&'static str, &'static str)| {
        let mut pairs = common.to_vec();
        pairs.push(extra);
        attributes(&pairs)
    };

    let (unit, mut tokens) = backend.histogram(metrics::TOKEN_USAGE).unwrap();
    assert_eq!(unit, "{token}");
    tokens.sort_by(|a, b| a.attributes.cmp(&b.attributes));
    let bounds = metrics::TOKEN_USAGE_BOUNDARIES.to_vec();
    assert_eq!(
        tokens,
        [
            Point {
                attributes: with(("gen_ai.token.type", "input")),
                count: 1,
                sum: 12.0,
                bounds: bounds.clone(),
            },
            Point {
                attributes: with(("gen_ai.token.type", "output")),
                count: 1,
                sum: 3.0,
                bounds,
            },
        ]
    );

    let (unit, durations) = backend.histogram(metrics::OPERATION_DURATION).unwrap();
    assert_eq!(unit, "s");
    assert_eq!(durations.len(), 1);
    let duration = &durations[0];
    assert_eq!(duration.attributes, attributes(&common));
    assert_eq!(duration.count, 1);
    // A real round trip on the loopback: more than nothing, less than the
    // client's own timeout.
    assert!(duration.sum > 0.0 && duration.sum < 300.0, "{duration:?}");
    assert_eq!(duration.bounds, metrics::OPERATION_DURATION_BOUNDARIES);
}

#[tokio::test]
async fn a_streamed_request_counts_the_usage_its_last_event_reports() {
    let server = TestServer::replying([Reply::sse([
        r#"{"candidates": [{"content": {"role": "model", "parts": [{"text": "he"}]}}], "modelVersion": "gemini-x-001"}"#,
        r#"{"candidates": [{"content": {"role": "model", "parts": [{"text": "llo"}]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 2}}"#,
    ])]);
    let model = HttpModel::gemini("gemini-x")
        .base_url(server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let backend = Backend::new();
    {
        let _default = tracing::subscriber::set_default(backend.subscriber());
        let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
        let turn = model.stream(&body, &mut |_| {}).await.unwrap();
        assert_eq!(turn.text, "hello");
    }
    let (_, tokens) = backend.histogram(metrics::TOKEN_USAGE).unwrap();
    let mut seen: Vec<(String, String, String, f64)> = tokens
        .iter()
        .map(|p| {
            (
                p.attributes["gen_ai.token.type"].clone(),
                p.attributes["gen_ai.operation.name"].clone(),
                p.attributes["gen_ai.response.model"].clone(),
                p.sum,
            )
        })
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    let expected = |kind: &str, sum| {
        (
            kind.to_owned(),
            "generate_content".to_owned(),
            "gemini-x-001".to_owned(),
            sum,
        )
    };
    assert_eq!(seen, [expected("input", 7.0), expected("output", 2.0)]);
    for p in &tokens {
        assert_eq!(p.attributes["gen_ai.provider.name"], "gcp.gemini");
    }
    let (_, durations) = backend.histogram(metrics::OPERATION_DURATION).unwrap();
    assert_eq!(durations.len(), 1);
    assert_eq!(
        durations[0].attributes["gen_ai.operation.name"],
        "generate_content"
    );
}

#[tokio::test]
async fn a_refused_request_records_its_duration_with_the_status_and_no_tokens() {
    let server = TestServer::replying([Reply::status(500, "overloaded")]);
    let model = chat::model(&server);
    let backend = Backend::new();
    {
        let _default = tracing::subscriber::set_default(backend.subscriber());
        model.complete(&question()).await.unwrap_err();
    }
    let (_, durations) = backend.histogram(metrics::OPERATION_DURATION).unwrap();
    assert_eq!(durations.len(), 1);
    let attributes = &durations[0].attributes;
    assert_eq!(attributes["error.type"], "500");
    assert_eq!(attributes["gen_ai.request.model"], "m");
    // No response, so no model that answered.
    assert!(!attributes.contains_key("gen_ai.response.model"));
    assert!(backend.histogram(metrics::TOKEN_USAGE).is_none());
}

#[tokio::test]
async fn a_response_without_usage_records_no_tokens() {
    let server = TestServer::replying([Reply::json(&json!({
        "id": "chatcmpl-3", "model": "m-2026-01",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Three."}}]
    }))]);
    let model = chat::model(&server);
    let backend = Backend::new();
    {
        let _default = tracing::subscriber::set_default(backend.subscriber());
        model.complete(&question()).await.unwrap();
    }
    assert!(backend.histogram(metrics::TOKEN_USAGE).is_none());
    let (_, durations) = backend.histogram(metrics::OPERATION_DURATION).unwrap();
    assert_eq!(durations[0].count, 1);
}
