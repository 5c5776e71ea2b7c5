//! Scenarios that need several of the toolkit's crates at once: an agent
//! calling an MCP server's tools, traces across processes into an
//! OpenTelemetry backend, the browser toolbox served over MCP and driven
//! by a model. They live in this package so that each crate's own tests
//! stop at the layer below it (this package's `Cargo.toml` says which).
//!
//! The package has no code of its own: see its `tests/` and `examples/`
//! (`cargo run -p toolkit-e2e --example agent`, `browser_agent`,
//! `serve_browser`).

/// The guide's chapter on the browser toolkit (`docs/browser.md`): its
/// examples are compiled as doc tests (those that launch Chromium are not
/// run), so they cannot drift from the API. Compiled here, not in
/// toolkit-browser, because its agent loop needs toolkit-agent as well.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/browser.md")]
pub struct BrowserGuide;
