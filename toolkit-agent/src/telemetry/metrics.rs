//! The conventions' client metrics, `gen_ai.client.token.usage` and
//! `gen_ai.client.operation.duration`, one measurement per request an
//! [`HttpModel`](crate::HttpModel) sends, as `tracing` events in the
//! form `tracing-opentelemetry`'s `MetricsLayer` turns into histograms
//! (docs/observability.md, "Metrics").
//!
//! Each measurement is an event of target [`TARGET`] with no parent span
//! and no message: a field named `histogram.{metric}` holds the value, and
//! every other field becomes one of the metric's attributes. With no
//! subscriber that wants them, a request pays one load of `tracing`'s
//! interest for them and nothing else.
//!
//! ```
//! use toolkit_agent::telemetry::metrics;
//!
//! assert_eq!(metrics::TOKEN_USAGE, "gen_ai.client.token.usage");
//! assert_eq!(metrics::TOKEN_USAGE_UNIT, "{token}");
//! assert_eq!(metrics::OPERATION_DURATION_UNIT, "s");
//! assert_eq!(metrics::OPERATION_DURATION_BOUNDARIES[0], 0.01);
//! ```

use std::time::Instant;

use toolkit_core::Provider;
use toolkit_core::response::Turn;
use tracing::Level;
use tracing::metadata::Kind;

use super::{model_error_kind, operation, provider_name};
use crate::model::ModelError;

/// The target of every metric event, so that a filter can keep or drop
/// the metrics apart from the spans (`toolkit_agent::metrics=off`).
pub const TARGET: &str = "toolkit_agent::metrics";

/// The histogram of tokens per request, one measurement per token type.
pub const TOKEN_USAGE: &str = "gen_ai.client.token.usage";
/// [`TOKEN_USAGE`]'s unit (UCUM).
pub const TOKEN_USAGE_UNIT: &str = "{token}";
/// The bucket boundaries the conventions give [`TOKEN_USAGE`]: powers of
/// four from 1 to 4^13.
pub const TOKEN_USAGE_BOUNDARIES: [f64; 14] = [
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0, 67108864.0,
];

/// The histogram of how long each request took, answer read to its end.
pub const OPERATION_DURATION: &str = "gen_ai.client.operation.duration";
/// [`OPERATION_DURATION`]'s unit: seconds.
pub const OPERATION_DURATION_UNIT: &str = "s";
/// The bucket boundaries the conventions give [`OPERATION_DURATION`]:
/// doublings from 10 ms to 81.92 s.
pub const OPERATION_DURATION_BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/// The token type of a [`TOKEN_USAGE`] measurement: `input` or `output`.
pub const TOKEN_TYPE: &str = "gen_ai.token.type";

/// Whether a subscriber wants the metric events: asked once before a
/// request, so that the clock is read and the response's model looked for
/// only then.
///
/// The question is put as an event with a histogram field, which is what
/// `MetricsLayer`'s filter looks for.
#[inline]
pub(crate) fn wanted() -> bool {
    tracing::enabled!(
        kind: Kind::EVENT,
        target: TARGET,
        Level::INFO,
        { histogram.gen_ai.client.operation.duration }
    )
}

/// What a request's measurements are told about it.
pub(crate) struct Request<'a> {
    /// The provider.
    pub(crate) provider: Provider,
    /// The model asked for.
    pub(crate) model: &'a str,
    /// The endpoint's base URL (only its host and port are recorded).
    pub(crate) base_url: &'a str,
    /// When the request started.
    pub(crate) start: Instant,
}

/// Records a finished request: its duration (with `error.type` when it
/// failed) and, on success with reported usage, its input and output
/// tokens.
pub(crate) fn record(request: &Request<'_>, outcome: Result<&Turn, &ModelError>) {
    let seconds = request.start.elapsed().as_secs_f64();
    let (host, port) = server(request.base_url);
    let operation = operation(request.provider);
    let provider = provider_name(request.provider);
    let (response_model, error) = match outcome {
        Ok(turn) => (turn.response_model.as_deref(), None),
        Err(error) => (None, Some(model_error_kind(error))),
    };
    tracing::event!(target: TARGET, parent: None, Level::INFO, {
        "histogram.gen_ai.client.operation.duration" = seconds,
        "gen_ai.operation.name" = operation,
        "gen_ai.provider.name" = provider,
        "gen_ai.request.model" = request.model,
        "gen_ai.response.model" = response_model,
        "server.address" = host.as_deref(),
        "server.port" = port,
        "error.type" = error.as_deref(),
    });
    let Ok(turn) = outcome else {
        return;
    };
    // The conventions forbid a count the provider did not report.
    let Some(usage) = turn.usage else {
        return;
    };
    for (kind, tokens) in [
        ("input", usage.input_tokens),
        ("output", usage.output_tokens),
    ] {
        tracing::event!(target: TARGET, parent: None, Level::INFO, {
            "histogram.gen_ai.client.token.usage" = tokens,
            "gen_ai.token.type" = kind,
            "gen_ai.operation.name" = operation,
            "gen_ai.provider.name" = provider,
            "gen_ai.request.model" = request.model,
            "gen_ai.response.model" = response_model,
            "server.address" = host.as_deref(),
            "server.port" = port,
        });
    }
}

/// The endpoint's host and port, never its path or query.
fn server(base_url: &str) -> (Option<String>, Option<u64>) {
    match reqwest::Url::parse(base_url) {
        Ok(url) => (
            url.host_str().map(str::to_owned),
            url.port_or_known_default().map(u64::from),
        ),
        Err(_) => (None, None),
    }
}
