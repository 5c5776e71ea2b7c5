//! Using an MCP server's tools as tools of a registry.
//!
//! [`McpClient`] is a handle on one connection (`connection`), reached as
//! its builder says (`builder`, `target`); its requests go out through
//! `requests`. The server's tools are listed and kept in sync with a
//! registry in `tools`, and called in `calling`; its resources and prompts
//! are read in `offers`; what it sends unasked is heard by the `handler`.

#[cfg(feature = "auth")]
mod address;
#[cfg(feature = "auth")]
mod auth;
mod builder;
mod calling;
mod connection;
mod content;
mod error;
mod handler;
#[cfg(feature = "http-client")]
mod http;
mod names;
mod offers;
mod pins;
mod questions;
mod requests;
mod synced;
mod target;
mod tools;

use std::fmt;
use std::sync::Arc;

#[cfg(feature = "auth")]
pub use self::address::{AddressClass, AddressPolicy, EndpointRefused};
#[cfg(feature = "auth")]
pub use self::auth::{Authorizer, Authorizing, OAuth};
pub use self::builder::McpClientBuilder;
use self::connection::Shared;
pub use self::content::{STRUCTURED_CONTENT, UNSHOWN_CONTENT};
pub use self::error::{ClientError, ClientErrorKind};
pub use self::offers::{FilledMessage, FilledPrompt, ListedArgument, ListedPrompt, ListedTemplate};
pub use self::pins::{Held, HeldReason, ToolPart};
pub use self::synced::{Refused, Synced};

/// A connection to an MCP server, whose tools become tools of a
/// [`Registry`](toolkit_core::Registry).
///
/// Each of the server's tools becomes a run-time tool
/// ([`ToolDef`](toolkit_core::ToolDef)) named `{prefix}_{name}` (the
/// prefix is the server's name unless [set](McpClientBuilder::prefix)), made
/// [portable](toolkit_core::name::portable) by the toolkit's one name
/// rule: other characters become `_`, a name that starts with a digit gets
/// a `_` before it (server `1password`, tool `_1password_list`), a long
/// name is cut and ends with a hash. Calls reach the server under the
/// tool's own name. Its schema, title, annotations and output schema come
/// from the server, and are checked like any tool's when a registry takes
/// it: two tools of one name are refused with both sources named. The
/// input schema is kept as the server wrote it for MCP
/// ([`ToolSchema::written`](toolkit_core::ToolSchema::written)), and
/// lowered for every other provider.
///
/// A call is forwarded with the call's cancellation (a cancelled or timed
/// out call sends `notifications/cancelled`) and, when the host listens,
/// its progress. The server's result becomes ours: text, images, audio,
/// embedded resources and resource links as the blocks of their kind
/// (what cannot be read described in text, the raw blocks kept in the
/// [`UNSHOWN_CONTENT`] attribute), `structuredContent` (a JSON block), and
/// `isError`. A server that dies makes its calls error results, and is
/// started again (or, over HTTP, reconnected) at the next call.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolkit_core::Registry;
/// use toolkit_mcp::McpClient;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let files = McpClient::command("fs", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])
///     .connect()
///     .await?;
/// let registry = Arc::new(Registry::builder().tools(files.tools().await?).build()?);
/// files.watch(&registry); // tools the server adds or removes later follow
/// let listing = registry.dispatch(("fs_list_directory", r#"{"path": "/tmp"}"#)).await;
/// println!("{}", listing.result.to_text());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub struct McpClient {
    shared: Arc<Shared>,
}

impl McpClient {
    /// The server's name, as given.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The MCP revision the open connection speaks (`2026-07-28`,
    /// `2025-11-25`, ...), as found when connecting or chosen with
    /// [`stateless`](McpClientBuilder::stateless); `None` while no
    /// connection is open (the server died, or the client was closed).
    pub async fn revision(&self) -> Option<String> {
        let live = self.shared.live.lock().await;
        let running = &live.as_ref()?.running;
        if running.is_closed() {
            return None;
        }
        let info = running.peer().peer_info()?;
        Some(info.protocol_version.as_str().to_owned())
    }

    /// Ends the connection (a child process is stopped); later calls of the
    /// server's tools are error results.
    pub async fn close(&self) {
        self.shared.close().await;
    }
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.shared.name)
            .field("target", &self.shared.target)
            .finish_non_exhaustive()
    }
}
