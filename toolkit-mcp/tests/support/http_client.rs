//! The HTTP client the tests and the benchmark make for themselves.

/// A reqwest client builder with the toolkit's TLS configuration. This
/// package builds reqwest without a TLS provider of its own (toolkit-http
/// brings rustls on *ring*), so `reqwest::Client::new()` would panic; the
/// client never speaks TLS here.
pub fn plain_http_builder() -> reqwest::ClientBuilder {
    toolkit_http::client_builder().expect("the TLS configuration")
}
