//! The Model Context Protocol both ways, on rmcp, the official Rust SDK:
//! serve any toolkit [`Registry`] to MCP clients, and use any MCP server's
//! tools as tools of a registry.
//!
//! # Serving
//!
//! The guide's chapter (`docs/mcp.md` in the repository) tells the whole
//! story; this is the reference.
//!
//! [`McpServer`] is an rmcp `ServerHandler` around a registry: `tools/list`
//! is the registry's MCP definitions (title, annotations and output schema
//! included), `tools/call` its safe dispatch, and results go through
//! `toolkit_core`'s MCP emitter. Run it on stdio ([`serve_stdio`]) or
//! Streamable HTTP ([`serve_http`], or [`McpServer::router`] to mount in
//! an axum application), for protocol revisions 2025-11-25 (sessions) and
//! 2026-07-28 (stateless).
//!
//! - An unknown tool is a JSON-RPC error (`-32602`); bad arguments and a
//!   tool's failure are results with `isError`, which the model can read
//!   and act on.
//! - `notifications/cancelled`, or a client leaving a stateless HTTP
//!   request, raises the call's [`Cancellation`](toolkit_core::Cancellation),
//!   which the tool sees through its `CallContext`.
//! - A tool's [progress reports](toolkit_core::CallContext::report_progress)
//!   reach a client that asked for them as `notifications/progress`.
//! - Adding, removing, enabling or disabling tools in the registry sends
//!   `notifications/tools/list_changed`.
//! - A tool's [log messages](toolkit_core::CallContext::log) reach the
//!   client as `notifications/message`, at the level it asked for
//!   (`logging/setLevel`, or a 2026-07-28 request's `_meta`); its
//!   [questions](toolkit_core::CallContext::elicit) become
//!   `elicitation/create` and `sampling/createMessage`, refused clearly
//!   when the client lacks the capability.
//! - Resources ([`Resource`], [`ResourceTemplate`], with subscriptions
//!   announced through [`ResourceUpdates`]) and prompts ([`Prompt`]) are
//!   offered beside the tools, on the server's builder
//!   ([`McpServer::with_resource`], [`McpServer::with_prompt`]).
//! - A message that is not JSON, not JSON-RPC or too large gets a JSON-RPC
//!   error, and the server keeps serving.
//! - Every request runs in a span of the OpenTelemetry conventions for MCP
//!   ([`telemetry`]), the registry's `execute_tool` span inside it; with
//!   the `opentelemetry` feature (off by default) a client's trace
//!   context, sent in `params._meta`, is its parent.
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolkit_core::{Registry, tool, tools};
//!
//! /// Adds two numbers.
//! #[tool]
//! fn add(
//!     /// The first number.
//!     a: i64,
//!     /// The second number.
//!     b: i64,
//! ) -> String {
//!     (a + b).to_string()
//! }
//!
//! # async fn run() -> Result<(), toolkit_mcp::ServeError> {
//! let registry = Arc::new(Registry::builder().tools(tools![add]).build().unwrap());
//! toolkit_mcp::serve_stdio(registry).await
//! # }
//! ```
//!
//! # Consuming
//!
//! [`McpClient`] connects to a server (a child process over stdio, or a
//! Streamable HTTP endpoint) and turns its tools into run-time tools of a
//! registry: names prefixed and cleaned to what every provider accepts,
//! schemas checked like any tool's, calls forwarded with their
//! cancellation and progress, results mapped to our blocks, a dead server
//! restarted at the next call, list changes followed, and a tool the
//! registry refuses reported in a [`Synced`] rather than dropped. Given an
//! asker ([`McpClientBuilder::asker`]), it answers the server's questions
//! (elicitation, sampling) too. An HTTP server may be given a bearer token
//! and headers ([`McpClientBuilder::bearer`], [`McpClientBuilder::header`]),
//! or be authorized with OAuth 2.1 when it asks ([`McpClientBuilder::oauth`],
//! [`OAuth`]), the user's approval coming from the host's [`Authorizer`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolkit_core::Registry;
//! use toolkit_mcp::McpClient;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let web = McpClient::http("web", "http://127.0.0.1:8080/mcp").connect().await?;
//! let registry = Arc::new(Registry::builder().tools(web.tools().await?).build()?);
//! web.watch(&registry);
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod client;
mod server;
pub mod telemetry;

use std::fmt;
use std::sync::Arc;

use toolkit_core::Registry;

pub use client::{
    AddressClass, AddressPolicy, Authorizer, Authorizing, ClientError, EndpointRefused,
    FilledMessage, FilledPrompt, ListedArgument, ListedPrompt, ListedTemplate, McpClient,
    McpClientBuilder, OAuth, Refused, STRUCTURED_CONTENT, Synced, UNSHOWN_CONTENT,
};
pub use server::http::{HttpOptions, serve_http};
pub use server::prompt_context::PromptContext;
pub use server::prompts::{Prompt, PromptContent, PromptError, PromptMessage, Role};
pub use server::resources::{
    Resource, ResourceContents, ResourceError, ResourceTemplate, ResourceUpdates,
};
pub use server::{DEFAULT_MAX_REQUEST_BYTES, McpServer};

/// Why serving stopped.
#[derive(Debug)]
pub struct ServeError(String);

impl ServeError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the MCP server stopped: {}", self.0)
    }
}

impl std::error::Error for ServeError {}

/// Serves `registry` over this process's standard input and output until
/// the client disconnects.
pub async fn serve_stdio(registry: Arc<Registry>) -> Result<(), ServeError> {
    McpServer::new(registry).serve_stdio().await
}

/// The guide's chapter on MCP (`docs/mcp.md`): its examples are compiled as
/// doc tests, so they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../docs/mcp.md")]
pub struct McpGuide;
