//! The HTTP client for servers reached over Streamable HTTP.

/// A client with the toolkit's TLS (`toolkit_http`), keeping no idle
/// connection.
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    toolkit_http::client_builder()
        .map_err(|error| format!("TLS could not be set up: {error}"))?
        // A kept connection whose previous response stream was not read
        // to its end makes the next request wait for the server's delayed
        // ACK (about 40 ms on Linux) on every call after the first; rmcp's
        // own client keeps no idle connection for the same reason.
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|error| format!("the HTTP client could not be made: {error}"))
}
