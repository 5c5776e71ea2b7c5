//! Using an MCP server's tools as tools of a registry.

mod address;
mod auth;
mod content;
mod handler;
mod http;
mod names;
mod offers;
mod questions;
mod synced;

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, PoisonError, Weak};
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    GetPromptRequest, GetPromptRequestParams, ListPromptsRequest, ListResourceTemplatesRequest,
    ListResourcesRequest, ListToolsRequest, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequest, ReadResourceRequestParams, RequestId, ServerNotification, ServerResult,
    SubscriptionFilter,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, Peer, PeerRequestOptions, RoleClient, RunningService,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;
use tokio::sync::{Mutex, watch};
use tokio_util::sync::CancellationToken;
use toolkit_core::{
    Asker, CallContext, EmbeddedResource, Registry, ResourceLink, ToolDef, ToolResult,
};
use tracing::Span;

use crate::telemetry;

pub use self::address::{AddressClass, AddressPolicy, EndpointRefused};
pub use self::auth::{Authorizer, Authorizing, OAuth};
pub use self::content::{STRUCTURED_CONTENT, UNSHOWN_CONTENT};
use self::handler::Handler;
pub use self::offers::{FilledMessage, FilledPrompt, ListedArgument, ListedPrompt, ListedTemplate};
pub use self::synced::{Refused, Synced};

/// A connection to an MCP server, whose tools become tools of a
/// [`Registry`].
///
/// Each of the server's tools becomes a run-time tool ([`ToolDef`]) named
/// `{prefix}_{name}` (the prefix is the server's name unless
/// [set](McpClientBuilder::prefix)), made
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
/// let listing = registry.call("fs_list_directory", r#"{"path": "/tmp"}"#).await;
/// println!("{}", listing.result.to_text());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpClient {
    shared: Arc<Shared>,
}

/// What a server may offer besides tools, declared as a capability.
#[derive(Debug, Clone, Copy)]
enum Offer {
    Resources,
    Prompts,
}

/// How to reach the server.
#[derive(Debug, Clone)]
enum Target {
    Command {
        program: OsString,
        args: Vec<OsString>,
        env: Vec<(OsString, OsString)>,
        dir: Option<PathBuf>,
    },
    Http {
        url: String,
        access: Access,
    },
}

/// What requests to an HTTP server carry besides MCP: headers and
/// credentials, whose values never appear in `Debug` output.
#[derive(Clone, Default)]
struct Access {
    headers: Vec<(String, String)>,
    credentials: Given,
}

/// The credentials the host chose.
#[derive(Clone, Default)]
enum Given {
    #[default]
    None,
    Bearer(String),
    OAuth(OAuth),
}

impl fmt::Debug for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        let credentials: &dyn fmt::Debug = match &self.credentials {
            Given::None => &"none",
            Given::Bearer(_) => &"bearer <hidden>",
            Given::OAuth(oauth) => oauth,
        };
        f.debug_struct("Access")
            .field("headers", &names)
            .field("credentials", credentials)
            .finish()
    }
}

/// Connects to an MCP server: made by [`McpClient::command`] or
/// [`McpClient::http`].
#[derive(Debug)]
#[must_use = "a builder does nothing until `connect`"]
pub struct McpClientBuilder {
    name: String,
    prefix: Option<String>,
    target: Target,
    timeout: Option<Duration>,
    connect_timeout: Duration,
    stateless: bool,
    asker: Option<questions::HostAsker>,
}

impl McpClientBuilder {
    fn new(name: &str, target: Target) -> Self {
        Self {
            name: name.to_owned(),
            prefix: None,
            target,
            timeout: None,
            connect_timeout: Duration::from_secs(60),
            stateless: false,
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
    ///         Box::pin(async { Ok(Elicited { action: ElicitAction::Accept, content: None }) })
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

    /// Sends `Authorization: Bearer {token}` with every request to an HTTP
    /// server (replacing [`oauth`](Self::oauth)). The token never appears in
    /// `Debug` output or `tracing` events. No effect on a child process.
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        if let Target::Http { access, .. } = &mut self.target {
            access.credentials = Given::Bearer(token.into());
        }
        self
    }

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

    /// Authorizes with OAuth 2.1 when an HTTP server asks for it (a `401`
    /// with `WWW-Authenticate: Bearer`), as the MCP authorization
    /// specification describes: the user approves through the
    /// [`Authorizer`], the tokens are refreshed when they expire, and a
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
        if let Target::Command { env, .. } = &mut self.target {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// The working folder of the server's process.
    pub fn current_dir(mut self, path: impl Into<PathBuf>) -> Self {
        if let Target::Command { dir, .. } = &mut self.target {
            *dir = Some(path.into());
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

    /// Speaks revision 2026-07-28 without sessions (`server/discover`, then
    /// every request on its own), for servers that have it: any replica
    /// behind a load balancer may answer each request. By default the
    /// client opens a session with `initialize`, which every server takes.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Starts (or reaches) the server and opens the connection.
    pub async fn connect(self) -> Result<McpClient, ClientError> {
        let prefix = self.prefix.unwrap_or_else(|| names::prefix(&self.name));
        let http = match &self.target {
            Target::Http { url, access } => Some(
                HttpAccess::new(url, access)
                    .map_err(|error| ClientError::new(&self.name, error))?,
            ),
            Target::Command { .. } => None,
        };
        let traced = match &self.target {
            Target::Http { url, .. } => telemetry::Peer::http(url),
            Target::Command { .. } => telemetry::Peer::pipe(),
        };
        let shared = Arc::new(Shared {
            http,
            traced,
            name: self.name,
            prefix,
            target: self.target,
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            stateless: self.stateless,
            handler: Handler::answering(self.asker.map(|asker| questions::Questions {
                asker: asker.0,
                within: self.timeout.unwrap_or(questions::DEFAULT_WITHIN),
            })),
            live: Mutex::new(None),
            generations: AtomicU64::new(0),
            known: StdMutex::new(HashMap::new()),
            synced: watch::Sender::new(Synced::default()),
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

    /// A server at a Streamable HTTP endpoint (`http://host:port/mcp`).
    pub fn http(name: &str, url: impl Into<String>) -> McpClientBuilder {
        McpClientBuilder::new(
            name,
            Target::Http {
                url: url.into(),
                access: Access::default(),
            },
        )
    }

    /// The server's name, as given.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The server's resources (`resources/list`, every page), each as a
    /// link to it, in the server's order. A server that does not offer
    /// resources gives an error saying so.
    pub async fn resources(&self) -> Result<Vec<ResourceLink>, ClientError> {
        let peer = self.shared.offering(Offer::Resources).await?;
        let listed = self
            .shared
            .asked(
                peer.1,
                "listing its resources",
                self.shared
                    .list_all(&peer.0, list_resources, |answer| match answer {
                        ServerResult::ListResourcesResult(page) => {
                            Some((page.resources, page.next_cursor))
                        }
                        _ => None,
                    }),
            )
            .await?;
        Ok(self.shared.each(&listed, offers::resource))
    }

    /// The server's resource templates (`resources/templates/list`, every
    /// page), in the server's order.
    pub async fn resource_templates(&self) -> Result<Vec<ListedTemplate>, ClientError> {
        let peer = self.shared.offering(Offer::Resources).await?;
        let listed = self
            .shared
            .asked(
                peer.1,
                "listing its resource templates",
                self.shared
                    .list_all(&peer.0, list_resource_templates, |answer| match answer {
                        ServerResult::ListResourceTemplatesResult(page) => {
                            Some((page.resource_templates, page.next_cursor))
                        }
                        _ => None,
                    }),
            )
            .await?;
        Ok(self.shared.each(&listed, offers::template))
    }

    /// Reads the resource at `uri` (`resources/read`): its contents, one or
    /// more (a folder's files, say), each with its own URI. Contents that
    /// are neither text nor base64 bytes make an error.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<EmbeddedResource>, ClientError> {
        let peer = self.shared.offering(Offer::Resources).await?;
        let read = self
            .shared
            .asked(
                peer.1,
                &format!("reading <{uri}>"),
                self.shared.send(
                    &peer.0,
                    ClientRequest::ReadResourceRequest(ReadResourceRequest::new(
                        ReadResourceRequestParams::new(uri),
                    )),
                ),
            )
            .await?;
        let ServerResult::ReadResourceResult(read) = read else {
            return Err(self
                .shared
                .error(format!("reading <{uri}> gave another answer")));
        };
        let read = serde_json::to_value(read)
            .map_err(|error| self.shared.error(format!("reading <{uri}>: {error}")))?;
        read.get("contents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|contents| {
                content::embedded(contents).ok_or_else(|| {
                    self.shared
                        .error(format!("reading <{uri}> gave contents that cannot be read"))
                })
            })
            .collect()
    }

    /// The server's prompts (`prompts/list`, every page), in the server's
    /// order. A server that does not offer prompts gives an error saying
    /// so.
    pub async fn prompts(&self) -> Result<Vec<ListedPrompt>, ClientError> {
        let peer = self.shared.offering(Offer::Prompts).await?;
        let listed = self
            .shared
            .asked(
                peer.1,
                "listing its prompts",
                self.shared
                    .list_all(&peer.0, list_prompts, |answer| match answer {
                        ServerResult::ListPromptsResult(page) => {
                            Some((page.prompts, page.next_cursor))
                        }
                        _ => None,
                    }),
            )
            .await?;
        Ok(self.shared.each(&listed, offers::prompt))
    }

    /// Fills in the prompt `name` with `arguments` (`prompts/get`): its
    /// messages, each content block the block of the same kind, as in a
    /// tool's result.
    pub async fn get_prompt<K, V>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<FilledPrompt, ClientError>
    where
        K: Into<String>,
        V: Into<String>,
    {
        let arguments: serde_json::Map<String, Value> = arguments
            .into_iter()
            .map(|(key, value)| (key.into(), Value::String(value.into())))
            .collect();
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        let peer = self.shared.offering(Offer::Prompts).await?;
        let filled = self
            .shared
            .asked(
                peer.1,
                &format!("filling in the prompt `{name}`"),
                self.shared.send(
                    &peer.0,
                    ClientRequest::GetPromptRequest(GetPromptRequest::new(params)),
                ),
            )
            .await?;
        let ServerResult::GetPromptResult(filled) = filled else {
            return Err(self.shared.error(format!(
                "filling in the prompt `{name}` gave another answer"
            )));
        };
        let filled = serde_json::to_value(filled).map_err(|error| {
            self.shared
                .error(format!("filling in the prompt `{name}`: {error}"))
        })?;
        Ok(offers::filled(&filled))
    }

    /// The server's tools, as run-time tools for a registry, in the
    /// server's order.
    pub async fn tools(&self) -> Result<Vec<ToolDef>, ClientError> {
        let listed = self.shared.list().await?;
        let mut known = self.shared.known();
        known.clear();
        Ok(listed
            .into_iter()
            .map(|(name, raw)| {
                let def = self.shared.tool_def(&raw);
                known.insert(name, raw);
                def
            })
            .collect())
    }

    /// Adds the server's tools to `registry` and keeps them following the
    /// server's list ([`watch`](Self::watch)). Tools the registry refuses
    /// (a name taken, a schema a required provider cannot take) are left
    /// out and reported in the returned [`Synced`], which
    /// [`synced`](Self::synced) holds too; the others are added.
    pub async fn attach(&self, registry: &Arc<Registry>) -> Result<Synced, ClientError> {
        let listed = self.shared.list().await?;
        // The tools listed before, if any, were for another registry.
        self.shared.known().clear();
        let synced = self.shared.sync(registry, listed);
        self.watch(registry);
        Ok(synced)
    }

    /// Keeps the tools listed last (by [`tools`](Self::tools) or
    /// [`attach`](Self::attach)) in `registry` following the server's list:
    /// when the server says its list changed (or was restarted), tools it
    /// no longer has are removed, new ones added and changed ones replaced.
    /// What each such sync did, refusals included, is
    /// [`synced`](Self::synced), and a refusal is logged as a `tracing`
    /// warning. Stops when the registry is dropped or the client
    /// [closed](Self::close).
    pub fn watch(&self, registry: &Arc<Registry>) {
        let shared = Arc::clone(&self.shared);
        let registry = Arc::downgrade(registry);
        tokio::spawn(async move { shared.follow(registry).await });
    }

    /// What the latest sync of a registry with the server's list did
    /// ([`attach`](Self::attach), or a list change [followed](Self::watch)):
    /// `borrow()` reads it (empty before the first), `changed().await`
    /// waits for the next. A refusal stays visible here until a sync adds
    /// the tool or the server drops it, as every sync offers the refused
    /// tools again.
    ///
    /// ```no_run
    /// # async fn run(client: toolkit_mcp::McpClient) {
    /// let mut synced = client.synced();
    /// while synced.changed().await.is_ok() {
    ///     for refused in &synced.borrow().refused {
    ///         eprintln!("`{}` left out: {}", refused.original, refused.error);
    ///     }
    /// }
    /// # }
    /// ```
    pub fn synced(&self) -> watch::Receiver<Synced> {
        self.shared.synced.subscribe()
    }

    /// Ends the connection (a child process is stopped); later calls of the
    /// server's tools are error results.
    pub async fn close(&self) {
        self.shared.closed.cancel();
        if let Some(live) = self.shared.live.lock().await.take() {
            let _ = live.running.cancel().await;
        }
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

/// A request's span until its answer comes: a request given up before
/// (cancelled, out of time) ends its span as `cancelled`.
struct Pending {
    span: Option<Span>,
}

impl Pending {
    fn new(span: Option<Span>) -> Self {
        Self { span }
    }

    /// Records the request's id, and the revision the connection speaks.
    fn sent(&self, peer: &Peer<RoleClient>, id: &RequestId) {
        if let Some(span) = &self.span {
            let info = peer.peer_info();
            let version = info.as_ref().map(|info| info.protocol_version.as_str());
            telemetry::record_sent(span, id, version);
        }
    }

    /// A failure to send ends the span with it.
    fn check<T>(&mut self, sent: Result<T, rmcp::ServiceError>) -> Result<T, rmcp::ServiceError> {
        if let Err(error) = &sent
            && let Some(span) = self.span.take()
        {
            telemetry::record_failure(&span, error);
        }
        sent
    }

    fn answered(&mut self, answer: &Result<ServerResult, rmcp::ServiceError>) {
        if let Some(span) = self.span.take() {
            telemetry::record_answer(&span, answer);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(span) = self.span.take() {
            telemetry::record_abandoned(&span, "cancelled");
        }
    }
}

/// One page of a listing: its items, and the cursor of the next page.
type Page<T> = (Vec<T>, Option<String>);

/// The most pages a listing reads: a server that never stops giving a
/// next cursor gets an error rather than a client that loops forever.
const MAX_PAGES: usize = 10_000;

fn list_tools(params: PaginatedRequestParams) -> ClientRequest {
    ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params))
}

fn list_resources(params: PaginatedRequestParams) -> ClientRequest {
    ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params))
}

fn list_resource_templates(params: PaginatedRequestParams) -> ClientRequest {
    ClientRequest::ListResourceTemplatesRequest(ListResourceTemplatesRequest::with_param(params))
}

fn list_prompts(params: PaginatedRequestParams) -> ClientRequest {
    ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(params))
}

/// Tells the server a request was given up, unless disarmed.
struct Abandoned<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl<'a> Abandoned<'a> {
    fn new(peer: &'a Peer<RoleClient>, id: RequestId) -> Self {
        Self { peer, id: Some(id) }
    }

    fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let reason = Some("the call was cancelled".to_owned());
        tokio::spawn(async move {
            let _ = peer
                .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                .await;
        });
    }
}

/// An MCP server that could not be reached or listed.
#[derive(Debug, Clone)]
pub struct ClientError {
    server: String,
    message: String,
    refused: Option<EndpointRefused>,
}

impl ClientError {
    fn new(server: &str, message: impl Into<String>) -> Self {
        Self {
            server: server.to_owned(),
            message: message.into(),
            refused: None,
        }
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The OAuth endpoint the address check refused, when that is why the
    /// server could not be used (see [`OAuth`] and [`AddressPolicy`]).
    pub fn endpoint_refused(&self) -> Option<&EndpointRefused> {
        self.refused.as_ref()
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP server `{}`: {}", self.server, self.message)
    }
}

impl std::error::Error for ClientError {}

type Running = RunningService<RoleClient, Handler>;

/// The most rounds of questions (multi-round input) a call takes.
const MAX_ROUNDS: usize = 8;

/// How a call's exchange ended: the server's answer, or questions the
/// client could not answer.
enum Round {
    Done(Box<ServerResult>),
    Unanswered(String),
}

/// A running connection, numbered so that a call which saw it fail drops
/// that one and not a newer one another call opened meanwhile.
struct Live {
    running: Running,
    generation: u64,
}

/// The HTTP client, headers and credentials of a server reached over HTTP,
/// kept across reconnections (tokens included).
struct HttpAccess {
    client: reqwest::Client,
    headers: HashMap<HeaderName, HeaderValue>,
    credentials: Arc<http::Credentials>,
}

impl HttpAccess {
    fn new(url: &str, access: &Access) -> Result<Self, String> {
        let client = http::http_client()?;
        let mut headers = HashMap::new();
        for (name, value) in &access.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("`{name}` is not an HTTP header name"))?;
            let mut value = HeaderValue::from_str(value)
                .map_err(|_| format!("the value of header `{name}` is not allowed in HTTP"))?;
            // Keeps it out of HTTP/2 header compression tables and debug logs.
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let credentials = match &access.credentials {
            Given::None => http::Credentials::None,
            Given::Bearer(token) => http::Credentials::Bearer(token.clone()),
            Given::OAuth(oauth) => {
                http::Credentials::OAuth(Arc::new(auth::Authorization::new(oauth.clone(), url)?))
            }
        };
        Ok(Self {
            client,
            headers,
            credentials: Arc::new(credentials),
        })
    }
}

struct Shared {
    /// Set when the server is reached over HTTP.
    http: Option<HttpAccess>,
    /// Where the requests go, as their spans name it.
    traced: telemetry::Peer,
    name: String,
    prefix: String,
    target: Target,
    timeout: Option<Duration>,
    connect_timeout: Duration,
    stateless: bool,
    handler: Handler,
    live: Mutex<Option<Live>>,
    generations: AtomicU64,
    /// The tools handed to the registry (by `tools`, or added by a sync),
    /// by our name, as the server described them.
    known: StdMutex<HashMap<String, Value>>,
    /// What the latest sync did.
    synced: watch::Sender<Synced>,
    closed: CancellationToken,
}

impl Shared {
    fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, Value>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn error(&self, message: impl Into<String>) -> ClientError {
        let mut error = ClientError::new(&self.name, message);
        if let Some(access) = &self.http
            && let http::Credentials::OAuth(authorization) = &*access.credentials
            && let Some(refused) = authorization.take_refusal()
            // Only the failure it caused, which tells it.
            && error.message.contains(&refused.to_string())
        {
            // What rmcp's layers wrapped around it says less.
            error.message = format!("OAuth authorization failed: {refused}");
            error.refused = Some(refused);
        }
        error
    }

    /// The live connection's peer, starting the server first if it is not
    /// running.
    async fn peer(&self) -> Result<(Peer<RoleClient>, u64), ClientError> {
        if self.closed.is_cancelled() {
            return Err(self.error("the connection was closed"));
        }
        let mut live = self.live.lock().await;
        if let Some(current) = &*live
            && !current.running.is_closed()
        {
            return Ok((current.running.peer().clone(), current.generation));
        }
        let generation = self.generations.fetch_add(1, Ordering::Relaxed);
        let running = tokio::time::timeout(self.connect_timeout, self.start())
            .await
            .map_err(|_| {
                self.error(format!(
                    "no answer within {} s of starting",
                    self.connect_timeout.as_secs()
                ))
            })??;
        let peer = running.peer().clone();
        self.listen_for_changes(&peer);
        *live = Some(Live {
            running,
            generation,
        });
        if generation > 0 {
            // A server started again may have other tools.
            self.handler.list_changed.notify_one();
        }
        Ok((peer, generation))
    }

    async fn start(&self) -> Result<Running, ClientError> {
        let lifecycle = if self.stateless {
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }
        } else {
            ClientLifecycleMode::Initialize
        };
        let handler = self.handler.clone();
        let started = match &self.target {
            Target::Command {
                program,
                args,
                env,
                dir,
            } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env.iter().cloned());
                if let Some(dir) = dir {
                    command.current_dir(dir);
                }
                let (transport, _) = TokioChildProcess::builder(command)
                    .stderr(Stdio::inherit())
                    .spawn()
                    .map_err(|error| {
                        self.error(format!(
                            "cannot start {}: {error}",
                            program.to_string_lossy()
                        ))
                    })?;
                handler.serve_with_lifecycle(transport, lifecycle).await
            }
            Target::Http { url, .. } => {
                let access = self
                    .http
                    .as_ref()
                    .ok_or_else(|| self.error("no HTTP client"))?;
                let client = http::AuthorizedHttp::new(
                    access.client.clone(),
                    Arc::clone(&access.credentials),
                );
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                config.custom_headers = access.headers.clone();
                let transport = StreamableHttpClientTransport::with_client(client, config);
                handler.serve_with_lifecycle(transport, lifecycle).await
            }
        };
        started.map_err(|error| self.error(format!("the handshake failed: {error}")))
    }

    /// On revision 2026-07-28 a client hears of list changes only on a
    /// `subscriptions/listen` request it holds open.
    fn listen_for_changes(&self, peer: &Peer<RoleClient>) {
        let Some(info) = peer.peer_info() else { return };
        let announces = info
            .capabilities
            .tools
            .as_ref()
            .and_then(|tools| tools.list_changed)
            == Some(true);
        if info.protocol_version.has_initialize() || !announces {
            return;
        }
        let peer = peer.clone();
        let changed = Arc::clone(&self.handler.list_changed);
        tokio::spawn(async move {
            let filter = SubscriptionFilter::builder().tools_list_changed().build();
            let Ok(mut subscription) = peer.listen(filter).await else {
                return;
            };
            while let Ok(Some(notification)) = subscription.next().await {
                if matches!(
                    notification,
                    ServerNotification::ToolListChangedNotification(_)
                ) {
                    changed.notify_one();
                }
            }
        });
    }

    /// Drops connection `generation` if it is still the live one.
    async fn forget(&self, generation: u64) {
        let mut live = self.live.lock().await;
        if live
            .as_ref()
            .is_some_and(|current| current.generation == generation)
        {
            // Dropping the connection ends it, and stops a child process.
            *live = None;
        }
    }

    /// The connection, if the server declared `offer`.
    async fn offering(&self, offer: Offer) -> Result<(Peer<RoleClient>, u64), ClientError> {
        let (peer, generation) = self.peer().await?;
        let info = peer.peer_info();
        let capabilities = info.as_ref().map(|info| &info.capabilities);
        let (declared, what) = match offer {
            Offer::Resources => (
                capabilities.is_some_and(|c| c.resources.is_some()),
                "resources",
            ),
            Offer::Prompts => (capabilities.is_some_and(|c| c.prompts.is_some()), "prompts"),
        };
        if declared {
            Ok((peer, generation))
        } else {
            Err(self.error(format!(
                "offers no {what} (it did not declare the `{what}` capability)"
            )))
        }
    }

    /// The answer to one request, `doing` naming it in errors. A server
    /// that stops answering is started again (or reconnected) at the next
    /// request; one that refuses stays.
    async fn asked<T>(
        &self,
        generation: u64,
        doing: &str,
        request: impl Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, ClientError> {
        let answer = match self.timeout {
            Some(limit) => tokio::time::timeout(limit, request).await.map_err(|_| {
                self.error(format!(
                    "{doing}: no answer within {:.1} s",
                    limit.as_secs_f64()
                ))
            })?,
            None => request.await,
        };
        match answer {
            Ok(answer) => Ok(answer),
            Err(rmcp::ServiceError::McpError(error)) => Err(self.error(format!(
                "{doing} was refused: {} (JSON-RPC error {})",
                error.message, error.code.0
            ))),
            Err(error) => {
                self.forget(generation).await;
                Err(self.error(format!("{doing} failed: {error}")))
            }
        }
    }

    /// One request and its answer, in the request's `mcp.client` span,
    /// carrying the span's trace context; a request given up before its
    /// answer tells the server so.
    async fn send(
        &self,
        peer: &Peer<RoleClient>,
        mut request: ClientRequest,
    ) -> Result<ServerResult, rmcp::ServiceError> {
        let mut pending = Pending::new(telemetry::client_span(&request, &self.traced));
        telemetry::inject(&mut request, pending.span.as_ref());
        let handle = pending.check(
            peer.send_request_with_option(request, PeerRequestOptions::no_options())
                .await,
        )?;
        pending.sent(peer, &handle.id);
        let mut abandoned = Abandoned::new(peer, handle.id.clone());
        let answer = handle.await_response().await;
        abandoned.disarm();
        pending.answered(&answer);
        answer
    }

    /// Every page of a listing, each request sent by [`send`](Self::send).
    async fn list_all<T>(
        &self,
        peer: &Peer<RoleClient>,
        request: fn(PaginatedRequestParams) -> ClientRequest,
        page: fn(ServerResult) -> Option<Page<T>>,
    ) -> Result<Vec<T>, rmcp::ServiceError> {
        let mut items = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let answer = self.send(peer, request(params)).await?;
            let (listed, next) = page(answer).ok_or(rmcp::ServiceError::UnexpectedResponse)?;
            items.extend(listed);
            cursor = next;
            if cursor.is_none() {
                return Ok(items);
            }
        }
        Err(rmcp::ServiceError::UnexpectedResponse)
    }

    /// Each listed item, read from its JSON form.
    fn each<T: serde::Serialize, U>(&self, listed: &[T], read: fn(&Value) -> U) -> Vec<U> {
        listed
            .iter()
            .map(|item| read(&serde_json::to_value(item).unwrap_or_default()))
            .collect()
    }

    /// The server's tools, by our name, as the server described them.
    async fn list(&self) -> Result<Vec<(String, Value)>, ClientError> {
        let (peer, generation) = self.peer().await?;
        let listed = self.list_all(&peer, list_tools, |answer| match answer {
            ServerResult::ListToolsResult(page) => Some((page.tools, page.next_cursor)),
            _ => None,
        });
        let tools = match listed.await {
            Ok(tools) => tools,
            Err(error) => {
                self.forget(generation).await;
                return Err(self.error(format!("listing its tools failed: {error}")));
            }
        };
        tools
            .iter()
            .map(|tool| {
                let raw = serde_json::to_value(tool)
                    .map_err(|error| self.error(format!("a tool it listed: {error}")))?;
                Ok((names::tool_name(&self.prefix, &tool.name), raw))
            })
            .collect()
    }

    /// One of the server's tools (as it described it) as a run-time tool.
    fn tool_def(self: &Arc<Self>, raw: &Value) -> ToolDef {
        let text = |key: &str| raw.get(key).and_then(Value::as_str);
        let original = text("name").unwrap_or_default().to_owned();
        let mut builder = ToolDef::builder(names::tool_name(&self.prefix, &original))
            .description(text("description").unwrap_or_default())
            .source(format!("MCP server `{}`, tool `{original}`", self.name));
        if let Some(schema) = raw.get("inputSchema") {
            builder = builder.input_schema(schema.clone());
        }
        if let Some(schema) = raw.get("outputSchema") {
            builder = builder.output_schema(schema.clone());
        }
        let annotations = raw.get("annotations");
        if let Some(title) = text("title").or_else(|| {
            annotations
                .and_then(|a| a.get("title"))
                .and_then(Value::as_str)
        }) {
            builder = builder.title(title);
        }
        let hint = |key: &str| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
        };
        if let Some(value) = hint("readOnlyHint") {
            builder = builder.read_only(value);
        }
        if let Some(value) = hint("destructiveHint") {
            builder = builder.destructive(value);
        }
        if let Some(value) = hint("idempotentHint") {
            builder = builder.idempotent(value);
        }
        if let Some(value) = hint("openWorldHint") {
            builder = builder.open_world(value);
        }
        let shared = Arc::clone(self);
        let original: Arc<str> = original.into();
        builder.handler(move |arguments: Value, call: CallContext| {
            let shared = Arc::clone(&shared);
            let original = Arc::clone(&original);
            async move { shared.call(&original, arguments, &call).await }
        })
    }

    /// Forwards one call.
    #[allow(clippy::too_many_lines)]
    async fn call(&self, tool: &str, arguments: Value, call: &CallContext) -> ToolResult {
        let (peer, generation) = match self.peer().await {
            Ok(peer) => peer,
            Err(error) => return ToolResult::error(error.to_string()),
        };
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let exchange = async {
            // A server of 2026-07-28 may answer with questions (multi-round
            // input): they are answered, and the call made again with the
            // answers, a few rounds at most.
            for _round in 0..MAX_ROUNDS {
                let mut request =
                    ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
                let mut pending = Pending::new(telemetry::client_span(&request, &self.traced));
                telemetry::inject(&mut request, pending.span.as_ref());
                let handle = pending.check(
                    peer.send_request_with_option(request, PeerRequestOptions::no_options())
                        .await,
                )?;
                pending.sent(&peer, &handle.id);
                // rmcp gives every request a progress token of its own.
                let tracking = call
                    .reports_progress()
                    .then(|| self.handler.track(&handle.progress_token, call));
                let mut abandoned = Abandoned::new(&peer, handle.id.clone());
                let answer = handle.await_response().await;
                abandoned.disarm();
                pending.answered(&answer);
                // Notifications are handled on tasks of their own: the last
                // reports may still be on their way.
                if tracking.is_some() {
                    for _ in 0..4 {
                        tokio::task::yield_now().await;
                    }
                }
                let Ok(ServerResult::InputRequiredResult(questions)) = &answer else {
                    return answer.map(|answer| Round::Done(Box::new(answer)));
                };
                let Some(asker) = self.handler.questions() else {
                    return Ok(Round::Unanswered(
                        "asked for input, and this client has no asker to answer it".to_owned(),
                    ));
                };
                let requests = serde_json::to_value(&questions.input_requests)
                    .ok()
                    .and_then(|requests| requests.as_object().cloned())
                    .unwrap_or_default();
                match asker.fulfill(&requests).await {
                    Ok(answers) => {
                        params.input_responses =
                            (!answers.is_empty()).then(|| answers.into_iter().collect());
                        params.request_state = questions.request_state.clone();
                    }
                    Err(reason) => return Ok(Round::Unanswered(reason)),
                }
            }
            Ok(Round::Unanswered(format!(
                "asked for input {MAX_ROUNDS} times without answering"
            )))
        };
        let limited = async {
            match self.timeout {
                Some(limit) => tokio::time::timeout(limit, exchange).await.ok(),
                None => Some(exchange.await),
            }
        };
        // Dropping the exchange (cancelled, timed out) sends
        // `notifications/cancelled` to the server.
        let answer = tokio::select! {
            answer = limited => answer,
            () = call.cancellation().cancelled() => {
                return ToolResult::error("the call was cancelled");
            }
        };
        let Some(answer) = answer else {
            let limit = self.timeout.unwrap_or_default();
            return ToolResult::error(format!(
                "the MCP server `{}` did not answer within {:.1} s; the call was cancelled",
                self.name,
                limit.as_secs_f64()
            ));
        };
        match answer {
            Ok(Round::Unanswered(reason)) => {
                ToolResult::error(format!("the MCP server `{}` {reason}", self.name))
            }
            Ok(Round::Done(answer)) => match *answer {
                ServerResult::CallToolResult(result) => match serde_json::to_value(&result) {
                    Ok(value) => content::to_result(&value),
                    Err(error) => ToolResult::error(format!("an unreadable result: {error}")),
                },
                _ => ToolResult::error(format!(
                    "the MCP server `{}` started a task, which this client does not follow",
                    self.name
                )),
            },
            Err(rmcp::ServiceError::McpError(error)) => ToolResult::error(format!(
                "the MCP server `{}` refused the call: {} (JSON-RPC error {})",
                self.name, error.message, error.code.0
            )),
            Err(error) => {
                self.forget(generation).await;
                ToolResult::error(format!(
                    "the MCP server `{}` stopped answering ({error}); it is started again at the next call",
                    self.name
                ))
            }
        }
    }

    /// Keeps `registry` following the server's tool list.
    async fn follow(self: Arc<Self>, registry: Weak<Registry>) {
        loop {
            tokio::select! {
                () = self.handler.list_changed.notified() => {}
                () = self.closed.cancelled() => return,
            }
            let Some(registry) = registry.upgrade() else {
                return;
            };
            match self.list().await {
                Ok(listed) => {
                    self.sync(&registry, listed);
                }
                Err(error) => tracing::warn!(
                    server = %self.name,
                    %error,
                    "the tool list could not be read after a change; it is read again at the next one"
                ),
            }
        }
    }

    /// Brings `registry` in line with the server's `listed` tools: removes
    /// the ones gone or changed, offers the others it does not hold (the
    /// ones refused before included), and publishes what it did.
    fn sync(self: &Arc<Self>, registry: &Registry, listed: Vec<(String, Value)>) -> Synced {
        let mut synced = Synced::default();
        let mut known = self.known();
        // Of two tools listed under one name the first counts; the second
        // is offered, and refused as a duplicate.
        let mut first: HashMap<&str, &Value> = HashMap::new();
        for (name, raw) in &listed {
            first.entry(name).or_insert(raw);
        }
        known.retain(|name, raw| {
            let keep = first.get(name.as_str()) == Some(&&*raw);
            if !keep && registry.remove(name) {
                synced.removed.push(name.clone());
            }
            keep
        });
        let mut seen = HashSet::new();
        for (name, raw) in listed {
            if seen.insert(name.clone()) && known.contains_key(&name) {
                continue;
            }
            match registry.add(self.tool_def(&raw)) {
                Ok(()) => {
                    synced.added.push(name.clone());
                    known.insert(name, raw);
                }
                Err(error) => {
                    let original = raw["name"].as_str().unwrap_or_default().to_owned();
                    tracing::warn!(
                        server = %self.name,
                        tool = %original,
                        %error,
                        "the registry refused a tool of the MCP server; it is left out"
                    );
                    synced.refused.push(Refused {
                        name,
                        original,
                        error,
                    });
                }
            }
        }
        drop(known);
        synced.removed.sort();
        self.synced.send_replace(synced.clone());
        synced
    }
}
