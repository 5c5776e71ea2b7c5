//! The HTTP client the tests and the benchmark make for themselves.

use std::sync::Arc;

/// A reqwest client builder with *ring*'s TLS configuration. This package
/// builds reqwest without a TLS provider of its own (the MCP client brings
/// rustls on *ring*), so `reqwest::Client::new()` would panic; the client
/// never speaks TLS here.
pub fn plain_http_builder() -> reqwest::ClientBuilder {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring's protocol versions")
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    reqwest::Client::builder().tls_backend_preconfigured(config)
}
