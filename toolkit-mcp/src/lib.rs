//! The Model Context Protocol both ways, on rmcp, the official Rust SDK:
//! serve any toolkit [`Registry`](toolkit_core::Registry) to MCP clients,
//! and use any MCP server's tools as tools of a registry.
//!
//! # Features
//!
//! Each half of the crate is a feature, so that a build takes only what it
//! uses; all are on by default, so that `toolkit-mcp = "..."` serves and
//! consumes over stdio and HTTP, with OAuth.
//!
//! | feature | brings | builds |
//! |---|---|---|
//! | `server` | [`McpServer`], [`serve_stdio`], resources and prompts to serve | rmcp's server role |
//! | `client` | [`McpClient`] of a server run as a child process ([`McpClient::command`]) | rmcp's client role, its child-process transport |
//! | `http` | Streamable HTTP for whichever of `server` and `client` is on: `http-server` and `http-client` together | |
//! | `http-server` | with `server`: [`serve_http`], [`HttpOptions`], [`McpServer::router`] | axum, hyper, rmcp's HTTP server |
//! | `http-client` | with `client`: [`McpClient::http`], [`McpClientBuilder::bearer`], [`McpClientBuilder::header`] | reqwest with toolkit-http's TLS (rustls) |
//! | `auth` | `client` and `http-client`, and OAuth 2.1: [`McpClientBuilder::oauth`], [`OAuth`], [`Authorizer`], [`AddressPolicy`] | oauth2, rmcp's authorization |
//! | `opentelemetry` (off) | W3C trace context across MCP, both ways ([`telemetry`]) | opentelemetry, tracing-opentelemetry |
//!
//! A server for stdio alone, with no HTTP stack in its build:
//!
//! ```toml
//! toolkit-mcp = { version = "...", default-features = false, features = ["server"] }
//! ```
//!
//! The [`telemetry`] module's names are there in every build.
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
//! Streamable HTTP endpoint), finding the revision it speaks
//! (`server/discover`, else a 2025-11-25 session), and turns its tools into
//! run-time tools of a registry: names prefixed and cleaned to what every provider accepts,
//! schemas checked like any tool's, calls forwarded with their
//! cancellation and progress, results mapped to our blocks, a dead server
//! restarted at the next call, list changes followed, and a tool the
//! registry refuses reported in a [`Synced`] rather than dropped; with
//! [pinned](McpClientBuilder::pinned) tools, a tool that changed or
//! appeared is held back until the host pins it again. Given an
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
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "client")]
mod client;
#[cfg(any(feature = "client", feature = "server"))]
mod role;
#[cfg(feature = "server")]
mod server;
pub mod telemetry;

#[cfg(feature = "auth")]
pub use client::{AddressClass, AddressPolicy, Authorizer, Authorizing, EndpointRefused, OAuth};
#[cfg(feature = "client")]
pub use client::{
    ClientError, ClientErrorKind, FilledMessage, FilledPrompt, Held, HeldReason, ListedArgument,
    ListedPrompt, ListedTemplate, McpClient, McpClientBuilder, Refused, STRUCTURED_CONTENT, Synced,
    ToolPart, UNSHOWN_CONTENT,
};
#[cfg(any(feature = "client", feature = "server"))]
pub use role::Role;
#[cfg(feature = "server-auth")]
pub use server::auth::jwt::{JwksError, JwtValidator};
#[cfg(feature = "server-auth")]
pub use server::auth::{Authorization, Grant, RefusalKind, TokenRefusal, TokenValidator};
#[cfg(all(feature = "server", feature = "http-server"))]
pub use server::http::{HttpOptions, serve_http};
#[cfg(feature = "server")]
pub use server::prompt_context::PromptContext;
#[cfg(feature = "server")]
pub use server::prompts::{Prompt, PromptContent, PromptError, PromptMessage};
#[cfg(feature = "server")]
pub use server::publish::{SERVER_JSON_SCHEMA, ServerJson, ServerJsonError};
#[cfg(feature = "server")]
pub use server::resources::{
    Resource, ResourceContents, ResourceError, ResourceTemplate, ResourceUpdates,
};
#[cfg(feature = "server")]
pub use server::{DEFAULT_MAX_REQUEST_BYTES, McpServer, ServeError, serve_stdio};

/// The guide's chapter on MCP (`docs/mcp.md`): its examples are compiled as
/// doc tests, so they cannot drift from the API.
#[cfg(all(doctest, feature = "server", feature = "http", feature = "auth"))]
#[doc = include_str!("../../docs/mcp.md")]
pub struct McpGuide;
