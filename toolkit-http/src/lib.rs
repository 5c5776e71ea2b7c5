//! The one HTTPS client setup of the toolkit's crates: reqwest on rustls
//! with the *ring* provider, certificates checked by the platform's
//! verifier (the system's roots on Linux, the platform's own checks
//! elsewhere).
//!
//! *ring* rather than rustls' default provider, aws-lc: the same
//! protocols, and every cold build about 34 s of CPU shorter (aws-lc-sys
//! compiles a large C library). reqwest is built with
//! `rustls-no-provider`, so a client made without this configuration
//! panics: make every client from [`client_builder`].
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let client = toolkit_http::client_builder()?
//!     .timeout(std::time::Duration::from_secs(30))
//!     .build()?;
//! # let _ = client;
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::sync::Arc;

use rustls_platform_verifier::BuilderVerifierExt as _;

/// The TLS configuration of every client: rustls on *ring*, its safe
/// default protocol versions (TLS 1.2 and 1.3), the platform's
/// certificate verifier, no client certificate.
pub fn tls_config() -> Result<rustls::ClientConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth())
}

/// A reqwest client builder with [`tls_config`]; set its time limits and
/// pool, then build.
pub fn client_builder() -> Result<reqwest::ClientBuilder, rustls::Error> {
    Ok(reqwest::Client::builder().tls_backend_preconfigured(tls_config()?))
}

/// The README's example, compiled as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct Readme;
