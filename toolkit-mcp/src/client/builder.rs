//! Setting up a connection: the builder, and the two ways to reach a
//! server.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use tokio::sync::{Mutex, watch};
use tokio_util::sync::CancellationToken;
use toolkit_core::Asker;

#[cfg(feature = "auth")]
use super::auth::OAuth;
use super::connection::Shared;
use super::error::ClientError;
use super::handler::Handler;
#[cfg(feature = "http-client")]
use super::http::HttpAccess;
use super::pins::Pins;
#[cfg(feature = "http-client")]
use super::target::Given;
use super::target::Target;
use super::{McpClient, Synced, names, questions};
use crate::telemetry;

/// Connects to an MCP server: made by [`McpClient::command`] or
/// [`McpClient::http`].
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
#[must_use = "a builder does nothing until `connect`"]
pub struct McpClientBuilder {
    name: String,
    prefix: Option<String>,
    target: Target,
    timeout: Option<Duration>,
    connect_timeout: Duration,
    stateless: Option<bool>,
    pins: Option<PathBuf>,
    defer_tools: bool,
    asker: Option<questions::HostAsker>,
}

impl McpClientBuilder {
    pub(super) fn new(name: &str, target: Target) -> Self {
        Self {
            name: name.to_owned(),
            prefix: None,
            target,
            timeout: None,
            connect_timeout: Duration::from_secs(60),
            stateless: None,
            pins: None,
            defer_tools: false,
            asker: None,
        }
    }

    /// Who answers the server's questions: its `elicitation/create`
    /// requests (an answer that leaves out a field the schema gives a
    /// `default` gets the default), its `sampling/createMessage` requests
    /// and its `roots/list` requests, each within the client's
    /// [`timeout`](Self::timeout) (five minutes unless set). The client then
    /// declares the `elicitation`, `sampling` and `roots` capabilities;
    /// without an asker it declares none, and declines an elicitation a
    /// server sends anyway.
    ///
    /// ```no_run
    /// use toolkit_core::{Asker, Asking, ElicitAction, ElicitRequest, Elicited};
    /// use toolkit_mcp::McpClient;
    ///
    /// /// Accepts every question with the schema's defaults.
    /// struct Defaults;
    ///
    /// impl Asker for Defaults {
    ///     fn elicit(&self, _request: ElicitRequest) -> Asking<'_, Elicited> {
    ///         Box::pin(async { Ok(Elicited::new(ElicitAction::Accept)) })
    ///     }
    /// }
    ///
    /// # async fn run() -> Result<(), toolkit_mcp::ClientError> {
    /// let client = McpClient::http("forms", "http://127.0.0.1:8080/mcp").asker(Defaults).connect().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn asker(mut self, asker: impl Asker + 'static) -> Self {
        self.asker = Some(questions::HostAsker(Arc::new(asker)));
        self
    }

    #[cfg(feature = "http-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-client")))]
    /// Sends `Authorization: Bearer {token}` with every request to an HTTP
    /// server (replacing [`oauth`](Self::oauth)). The token never appears in
    /// `Debug` output or `tracing` events. No effect on a child process.
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        if let Target::Http { access, .. } = &mut self.target {
            access.credentials = Given::Bearer(token.into());
        }
        self
    }

    #[cfg(feature = "http-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-client")))]
    /// Sends a header with every request to an HTTP server (an API key, a
    /// routing hint). A name or value HTTP does not allow, or a header the
    /// transport sets itself (`Mcp-Session-Id`, `Accept`, ...), makes
    /// [`connect`](Self::connect) fail. Values never appear in `Debug`
    /// output. No effect on a child process.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Http { access, .. } = &mut self.target {
            access.headers.push((name.into(), value.into()));
        }
        self
    }

    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    /// Authorizes with OAuth 2.1 when an HTTP server asks for it (a `401`
    /// with `WWW-Authenticate: Bearer`), as the MCP authorization
    /// specification describes: the user approves through the
    /// [`Authorizer`](crate::Authorizer), the tokens are refreshed when they expire, and a
    /// `403 insufficient_scope` asks for the scope the server names
    /// (replacing [`bearer`](Self::bearer)). No effect on a child process.
    /// See [`OAuth`].
    pub fn oauth(mut self, oauth: OAuth) -> Self {
        if let Target::Http { access, .. } = &mut self.target {
            access.credentials = Given::OAuth(oauth);
        }
        self
    }

    /// Sets an environment variable of the server's process.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        match &mut self.target {
            Target::Command { env, .. } => env.push((key.into(), value.into())),
            #[cfg(feature = "http-client")]
            Target::Http { .. } => {}
        }
        self
    }

    /// The working folder of the server's process.
    pub fn current_dir(mut self, path: impl Into<PathBuf>) -> Self {
        match &mut self.target {
            Target::Command { dir, .. } => *dir = Some(path.into()),
            #[cfg(feature = "http-client")]
            Target::Http { .. } => {}
        }
        self
    }

    /// What the tools' names start with (followed by `_`), instead of the
    /// server's name; empty for none. The joined name is made portable
    /// like any other.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// A time limit for each call: past it the call is cancelled at the
    /// server and the model gets an error result. (The registry's own
    /// limits apply too.)
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// A time limit for starting the server and the protocol handshake
    /// (60 s unless set).
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.connect_timeout = limit;
        self
    }

    /// Chooses the revision instead of finding it: `true` speaks 2026-07-28
    /// without sessions (`server/discover`, then every request on its own,
    /// so that any replica behind a load balancer may answer each), `false`
    /// opens a 2025-11-25 session with `initialize`, even with a server
    /// that speaks 2026-07-28 too.
    ///
    /// Unless set, the client finds the revision itself when it first
    /// connects: it asks `server/discover`, and opens a session with
    /// `initialize` when the server answers as only a 2025-11-25 (or older)
    /// server does, a JSON-RPC error that is not a 2026-07-28 refusal (over
    /// HTTP, a `4xx`), or over stdio silence for ten seconds. A server that
    /// cannot be reached or fails mid-way is an error of kind
    /// [`Unreachable`](crate::ClientErrorKind::Unreachable), never taken
    /// for an old one. What it learned (the server's era) is kept for the
    /// client's life, across restarts of the server's process and
    /// reconnections, and dropped to probe again when the server stops
    /// answering as that era does.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = Some(stateless);
        self
    }

    /// Pins the server's tools in the lock file at `path`, which the host
    /// keeps (in its repository, beside its configuration): a fingerprint
    /// of each tool's name, description, input and output schemas and
    /// annotations, under the server's name (the one given to
    /// [`McpClient::command`] or [`McpClient::http`]), so that one file can
    /// pin several servers.
    ///
    /// The first listing of a server the file holds nothing for is pinned
    /// as it is, and written (trust on first use). From then on a tool that
    /// is new, or whose fingerprint differs from the pinned one, is held
    /// back: never handed to a registry, and reported in
    /// [`Synced::held`](crate::Synced::held) with the reason (new, or the
    /// parts that changed), until [`McpClient::pin`] pins the server's list
    /// again. A tool the server drops is simply gone. A lock file that
    /// cannot be read, or is of another format, makes
    /// [`connect`](Self::connect) fail; the file is never written in part
    /// (a new one is written beside it and renamed over it).
    ///
    /// The file is JSON, `"format": "toolkit-mcp.pins"`, `"version": 1`,
    /// then `"servers"` → server name → `"tools"` → tool name →
    /// `"fingerprint"` (`sha256:` and 64 hex digits) and `"parts"` (the same
    /// for each part, by its MCP key). A fingerprint is SHA-256 over the
    /// canonical JSON (keys sorted by UTF-16 code units, no spaces) of
    /// the five parts, an absent part counted as `null`.
    ///
    /// ```no_run
    /// use toolkit_mcp::McpClient;
    ///
    /// # async fn run(registry: std::sync::Arc<toolkit_core::Registry>) -> Result<(), toolkit_mcp::ClientError> {
    /// let files = McpClient::command("fs", "mcp-server-filesystem", ["/srv/notes"])
    ///     .pinned("mcp-tools.lock")
    ///     .connect()
    ///     .await?;
    /// let synced = files.attach(&registry).await?;
    /// for held in &synced.held {
    ///     eprintln!("`{}` held back: {}", held.original, held.reason);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn pinned(mut self, path: impl Into<PathBuf>) -> Self {
        self.pins = Some(path.into());
        self
    }

    /// Defers every tool of the server: an agent leaves their definitions
    /// out of its requests until the model finds them with tool search
    /// ([`ToolDef::is_deferred`](toolkit_core::ToolDef::is_deferred)).
    pub fn defer_tools(mut self, defer: bool) -> Self {
        self.defer_tools = defer;
        self
    }

    /// Starts (or reaches) the server and opens the connection.
    pub async fn connect(self) -> Result<McpClient, ClientError> {
        let prefix = self.prefix.unwrap_or_else(|| names::prefix(&self.name));
        let pins = match self.pins {
            Some(path) => Some(
                Pins::load(path, &self.name)
                    .map_err(|error| ClientError::new(&self.name, error))?,
            ),
            None => None,
        };
        #[cfg(feature = "http-client")]
        let http = match &self.target {
            Target::Http { url, access } => Some(
                HttpAccess::new(url, access)
                    .map_err(|error| ClientError::new(&self.name, error))?,
            ),
            Target::Command { .. } => None,
        };
        let traced = match &self.target {
            #[cfg(feature = "http-client")]
            Target::Http { url, .. } => telemetry::Peer::http(url),
            Target::Command { .. } => telemetry::Peer::pipe(),
        };
        let shared = Arc::new(Shared {
            #[cfg(feature = "http-client")]
            http,
            traced,
            name: self.name,
            prefix,
            target: self.target,
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            stateless: self.stateless,
            defer_tools: self.defer_tools,
            era: StdMutex::new(None),
            handler: Handler::answering(self.asker.map(|asker| questions::Questions {
                asker: asker.0,
                within: self.timeout.unwrap_or(questions::DEFAULT_WITHIN),
            })),
            live: Mutex::new(None),
            generations: AtomicU64::new(0),
            known: StdMutex::new(HashMap::new()),
            synced: watch::Sender::new(Synced::default()),
            pins,
            attached: StdMutex::new(None),
            listing: StdMutex::new(None),
            listening: StdMutex::new(None),
            closed: CancellationToken::new(),
        });
        shared.peer().await?;
        Ok(McpClient { shared })
    }
}

impl McpClient {
    /// A server started as a child process, speaking MCP on its standard
    /// input and output; `name` names it in messages and prefixes its
    /// tools.
    pub fn command<S: Into<OsString>>(
        name: &str,
        program: impl Into<OsString>,
        args: impl IntoIterator<Item = S>,
    ) -> McpClientBuilder {
        McpClientBuilder::new(
            name,
            Target::Command {
                program: program.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: Vec::new(),
                dir: None,
            },
        )
    }

    #[cfg(feature = "http-client")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http-client")))]
    /// A server at a Streamable HTTP endpoint (`http://host:port/mcp`).
    pub fn http(name: &str, url: impl Into<String>) -> McpClientBuilder {
        McpClientBuilder::new(
            name,
            Target::Http {
                url: url.into(),
                access: Default::default(),
            },
        )
    }
}
