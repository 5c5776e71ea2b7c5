//! Serve any toolkit [`Registry`] over the Model Context Protocol, on rmcp,
//! the official Rust SDK.
//!
//! [`McpServer`] is an rmcp `ServerHandler` around a registry: `tools/list`
//! is the registry's MCP definitions (title, annotations and output schema
//! included), `tools/call` its safe dispatch, and results go through
//! `toolkit_core`'s MCP emitter. Run it with [`serve_stdio`], or hand it to
//! any rmcp transport.
//!
//! - An unknown tool is a JSON-RPC error (`-32602`); bad arguments and a
//!   tool's failure are results with `isError`, which the model can read
//!   and act on.
//! - `notifications/cancelled` raises the call's [`Cancellation`], which the
//!   tool sees through its `CallContext`.
//! - Adding, removing, enabling or disabling tools in the registry sends
//!   `notifications/tools/list_changed` to the client.
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

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::fmt;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, ServiceExt};
use serde_json::Value;
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{Cancellation, Provider, Registry, ToolCall, ToolCallResult};

/// An MCP server for a registry: an rmcp `ServerHandler`.
#[derive(Clone)]
pub struct McpServer {
    registry: Arc<Registry>,
    name: String,
    version: String,
}

impl McpServer {
    /// A server for `registry`, introducing itself as this crate.
    pub fn new(registry: Arc<Registry>) -> Self {
        Self {
            registry,
            name: env!("CARGO_PKG_NAME").to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }

    /// The name and version the server gives clients in `initialize`.
    pub fn with_identity(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// The registry's enabled tools as rmcp's `Tool`s.
    fn tools(&self) -> Result<Vec<Tool>, ErrorData> {
        let definitions = self
            .registry
            .definitions(Provider::Mcp)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        serde_json::from_value(definitions.to_value())
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("registry", &self.registry)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(self.name.clone(), self.version.clone()))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()?))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools()
            .ok()?
            .into_iter()
            .find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        // MCP reports an unknown tool as a protocol error, not a result.
        if !self.registry.is_enabled(&name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {name}"),
                None,
            ));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = ToolCall::new(context.id.to_string(), name, arguments);
        let cancellation = Cancellation::new();
        let outcome = {
            let run = self.registry.run(&call, &cancellation);
            tokio::pin!(run);
            tokio::select! {
                outcome = &mut run => outcome,
                () = context.ct.cancelled() => {
                    // The tool is asked to stop and given the chance to
                    // answer; the client no longer waits for the answer.
                    cancellation.cancel();
                    run.await
                }
            }
        };
        let turn = [ToolCallResult::new(call.id, call.name, outcome.result)];
        let emitted = emit::mcp(&turn, &EmitOptions::default());
        let item = emitted.items.into_iter().next().unwrap_or(Value::Null);
        let result: CallToolResult = serde_json::from_value(item)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(CallToolResponse::Complete(result))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut changes = self.registry.changes();
        let peer = context.peer;
        tokio::spawn(async move {
            while changes.changed().await {
                if peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
            }
        });
    }
}

/// Why serving stopped.
#[derive(Debug)]
pub struct ServeError(String);

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the MCP server stopped: {}", self.0)
    }
}

impl std::error::Error for ServeError {}

/// Serves `registry` over this process's standard input and output until
/// the client disconnects.
pub async fn serve_stdio(registry: Arc<Registry>) -> Result<(), ServeError> {
    let running = McpServer::new(registry)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| ServeError(error.to_string()))?;
    running
        .waiting()
        .await
        .map(drop)
        .map_err(|error| ServeError(error.to_string()))
}
