//! The HTTP client for servers reached over Streamable HTTP.

/// A client whose TLS is rustls on *ring*, certificates checked by the
/// platform's verifier (the system's roots on Linux): the protocols of
/// rustls' default provider, aws-lc, without its C build.
pub(crate) fn http_client() -> Result<reqwest::Client, Box<dyn std::error::Error + Send + Sync>> {
    use rustls_platform_verifier::BuilderVerifierExt as _;

    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth();
    Ok(reqwest::Client::builder()
        .tls_backend_preconfigured(config)
        // A kept connection whose previous response stream was not read
        // to its end makes the next request wait for the server's delayed
        // ACK (about 40 ms on Linux) on every call after the first; rmcp's
        // own client keeps no idle connection for the same reason.
        .pool_max_idle_per_host(0)
        .build()?)
}
