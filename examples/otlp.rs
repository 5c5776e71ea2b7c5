//! Sends the toolkit's spans to an OpenTelemetry collector over OTLP/HTTP
//! (protobuf bodies): the setup behind the examples' `--otlp URL` flag.
//! Built only with the `otlp` feature, so that the quickstart builds none
//! of the OpenTelemetry crates.
//!
//! ```no_run
//! # fn main() -> Result<(), toolkit_examples::otlp::OtlpError> {
//! // Phoenix, Jaeger (with OTLP on) or a collector, on its OTLP/HTTP path.
//! let export = toolkit_examples::otlp::install("http://127.0.0.1:6006/v1/traces", "my-agent")?;
//! // ... runs and calls: their spans go out in batches ...
//! drop(export); // sends what is left and waits for it
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// How long one export may take before it is given up.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The installed export: dropping it sends the spans still waiting in the
/// batch and shuts the exporter down.
#[must_use = "dropping the guard shuts the export down at once"]
pub struct Otlp {
    provider: SdkTracerProvider,
}

impl Otlp {
    /// Sends the spans ended so far, and waits for the collector's answer.
    pub fn flush(&self) -> Result<(), OtlpError> {
        self.provider
            .force_flush()
            .map_err(|error| OtlpError(format!("flushing the spans: {error}")))
    }
}

impl Drop for Otlp {
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown() {
            eprintln!("otlp: the last spans were not sent: {error}");
        }
    }
}

impl fmt::Debug for Otlp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Otlp").finish_non_exhaustive()
    }
}

/// Why the export could not be installed.
#[derive(Debug)]
pub struct OtlpError(String);

impl fmt::Display for OtlpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OtlpError {}

/// Installs, as the process's `tracing` subscriber, a layer that turns
/// the toolkit's spans (targets `toolkit_*`) into OpenTelemetry spans of
/// the service `service` and sends them in batches to `endpoint`, the
/// collector's whole OTLP/HTTP traces URL (`http://host:4318/v1/traces`,
/// Phoenix's `http://host:6006/v1/traces`). Also installs the W3C trace
/// context propagator, through which a trace continues in an MCP server
/// in another process. `OTEL_RESOURCE_ATTRIBUTES` adds resource
/// attributes (`openinference.project.name=...` picks Phoenix's project).
///
/// Fails when a subscriber is already installed or the endpoint is not a
/// URL.
pub fn install(endpoint: &str, service: &str) -> Result<Otlp, OtlpError> {
    let url = reqwest::Url::parse(endpoint)
        .map_err(|error| OtlpError(format!("`{endpoint}` is not a URL: {error}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(OtlpError(format!(
            "`{endpoint}` is not an http or https URL"
        )));
    }
    // reqwest's blocking client runs a runtime of its own, which may not be
    // started (nor later dropped) on a thread inside an async runtime, as
    // the examples' `main` is: so it is built on a thread of its own, and
    // lives on in the batch processor's thread.
    let client = std::thread::spawn(|| -> Result<reqwest::blocking::Client, String> {
        let tls = toolkit_http::tls_config().map_err(|error| error.to_string())?;
        reqwest::blocking::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|error| error.to_string())
    })
    .join()
    .map_err(|_| OtlpError("building the HTTP client panicked".into()))?
    .map_err(|error| OtlpError(format!("building the HTTP client: {error}")))?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|error| OtlpError(format!("building the OTLP exporter: {error}")))?;
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(
            Resource::builder()
                .with_service_name(service.to_owned())
                .build(),
        )
        .build();
    let tracer = provider.tracer("toolkit");
    opentelemetry::global::set_tracer_provider(provider.clone());
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    // Only the toolkit's spans: the HTTP clients' and the MCP SDK's own
    // spans and events (hyper, reqwest, rmcp) would bury them, and the
    // exporter's own requests would be traced in turn.
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(tracing_subscriber::filter::filter_fn(|metadata| {
            metadata.target().starts_with("toolkit")
        }));
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::set_global_default(subscriber)
        .map_err(|error| OtlpError(format!("installing the subscriber: {error}")))?;
    Ok(Otlp { provider })
}
