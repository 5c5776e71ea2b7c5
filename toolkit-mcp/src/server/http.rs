//! Streamable HTTP: rmcp's `StreamableHttpService` in an axum router.
//!
//! rmcp serves both revisions on one endpoint: a client of 2025-11-25 gets
//! a session (`Mcp-Session-Id`) unless the server is stateless; a request
//! of 2026-07-28 carries its version and capabilities in `_meta` and is
//! answered on its own. Either way a call's progress notifications travel
//! on the response's event stream, and a client that disconnects cancels
//! its call.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::serve::ListenerExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::McpServer;
#[cfg(feature = "server-auth")]
use super::auth::Authorization;
use super::malformed::{is_plain_call, read_message};
use crate::ServeError;

/// How a registry is served over Streamable HTTP.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolkit_core::Registry;
/// use axum::serve::ListenerExt;
/// use toolkit_mcp::{HttpOptions, McpServer};
///
/// # async fn run(registry: Arc<Registry>) -> Result<(), Box<dyn std::error::Error>> {
/// // Any replica may answer any request: fit for a load balancer.
/// let options = HttpOptions::new().stateless(true).allowed_hosts(["tools.example.com"]);
/// let app = McpServer::new(registry).router(&options); // mount it beside other routes
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
/// // Small writes go out at once (see `McpServer::serve_http`).
/// let listener = listener.tap_io(|stream| {
///     let _ = stream.set_nodelay(true);
/// });
/// axum::serve(listener, app).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
pub struct HttpOptions {
    path: String,
    stateless: bool,
    allowed_hosts: Option<Vec<String>>,
    keep_alive: Option<Duration>,
    #[cfg(feature = "server-auth")]
    authorization: Option<Arc<Authorization>>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpOptions {
    /// The defaults: the endpoint at `/mcp`, sessions for clients of
    /// revisions that have them, requests accepted only for a loopback
    /// `Host`.
    pub fn new() -> Self {
        Self {
            path: "/mcp".to_owned(),
            stateless: false,
            allowed_hosts: None,
            keep_alive: Some(Duration::from_secs(15)),
            #[cfg(feature = "server-auth")]
            authorization: None,
        }
    }

    /// The endpoint's path (`/mcp` unless set).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Serves every request on its own, without sessions, even for clients
    /// of 2025-11-25 (which then get no `Mcp-Session-Id`): any number of
    /// replicas behind an ordinary load balancer can serve one client. Such
    /// clients hear of tool-list changes only by listing again.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// The `Host` headers accepted (names, or `name:port`). By default only
    /// loopback names are, which keeps a web page from reaching a local
    /// server through DNS rebinding; a public deployment names its hosts.
    pub fn allowed_hosts<S: Into<String>>(mut self, hosts: impl IntoIterator<Item = S>) -> Self {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// How often an idle event stream gets a keep-alive comment (`None`:
    /// never).
    pub fn keep_alive(mut self, every: Option<Duration>) -> Self {
        self.keep_alive = every;
        self
    }

    /// Requires a bearer token on every request, checked as
    /// `authorization` says, and serves the protected-resource metadata
    /// that tells clients where to get one.
    #[cfg(feature = "server-auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "server-auth")))]
    pub fn authorization(mut self, authorization: Authorization) -> Self {
        self.authorization = Some(Arc::new(authorization));
        self
    }

    fn config(&self, max_request_bytes: usize) -> StreamableHttpServerConfig {
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(!self.stateless)
            .with_sse_keep_alive(self.keep_alive)
            .with_max_request_body_bytes(max_request_bytes);
        if let Some(hosts) = &self.allowed_hosts {
            config = config.with_allowed_hosts(hosts.clone());
        }
        config
    }
}

impl McpServer {
    /// An axum router serving this server's registry at the options' path,
    /// to serve alone or merge into an application's router.
    #[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
    pub fn router(mut self, options: &HttpOptions) -> Router {
        self.stateless = options.stateless;
        self.transport = Some(crate::telemetry::Transport::Tcp);
        #[cfg(feature = "server-auth")]
        {
            self.authorization = options.authorization.clone();
        }
        let config = options.config(self.max_request_bytes);
        let limit = self.max_request_bytes;
        let sessions = Arc::new(LocalSessionManager::default());
        let service = StreamableHttpService::new(
            move || Ok(self.for_session()),
            Arc::clone(&sessions),
            config,
        );
        // One handler, holding rmcp's service: rmcp's own tower `call` and
        // a middleware layer would each clone or box per request what is
        // shared here.
        let service = Arc::new(service);
        #[cfg(feature = "server-auth")]
        if let Some(authorization) = options.authorization.clone() {
            let sessions = (!options.stateless).then_some(sessions);
            return guarded(service, sessions, limit, authorization, &options.path);
        }
        Router::new().route(
            &options.path,
            any(move |request: Request| {
                let service = Arc::clone(&service);
                async move { answer(&service, limit, request).await }
            }),
        )
    }

    /// Serves the registry over Streamable HTTP on `listener` until the
    /// listener fails.
    ///
    /// Every connection is set to `TCP_NODELAY`. An answer travels as an
    /// event stream in several small writes; with Nagle's algorithm on,
    /// the last of them waits for the client to acknowledge the first,
    /// and a client that delays its acknowledgements (Linux does, on a
    /// kept-alive connection) then waits 40 ms for every call. A router
    /// served by other means wants the same: `axum::serve::ListenerExt::tap_io`.
    #[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
    pub async fn serve_http(
        self,
        listener: TcpListener,
        options: &HttpOptions,
    ) -> Result<(), ServeError> {
        let listener = listener.tap_io(|stream| {
            // A socket that refuses the option still serves, only slower.
            let _ = stream.set_nodelay(true);
        });
        axum::serve(listener, self.router(options))
            .await
            .map_err(|error| ServeError::new(error.to_string()))
    }
}

/// rmcp's service, which answers every request the handler passes on.
type Service = StreamableHttpService<McpServer, LocalSessionManager>;

/// Passes a request to rmcp, except a POST whose body is not a readable
/// JSON-RPC message: that gets the JSON-RPC error it deserves (HTTP 400),
/// as on the stdio transport, where rmcp answers a body that is not JSON
/// with a plain-text 415, and a standard request with unreadable
/// parameters as an unknown method.
///
/// A request that rmcp refuses for its headers (a `Host` not allowed: a
/// DNS-rebinding attempt) keeps rmcp's refusal whatever its body: see
/// [`refused_headers`].
async fn answer(service: &Service, limit: usize, request: Request) -> Response {
    if request.method() == Method::DELETE {
        // rmcp ends a session with 202 Accepted; the official Python
        // client takes only 200 or 204 as success there and logs a
        // failure for every session it closes. The session is ended by
        // then: 200 says so.
        let mut response = service.handle(request).await.into_response();
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        return response;
    }
    if request.method() != Method::POST {
        return service.handle(request).await.into_response();
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        if let Some(refusal) = refused_headers(service, &parts).await {
            return refusal;
        }
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: request body exceeds {limit} bytes"),
        )
            .into_response();
    };
    if is_plain_call(&bytes) {
        return pass(service, parts, bytes).await;
    }
    if let Err(malformed) = read_message(&bytes) {
        if let Some(refusal) = refused_headers(service, &parts).await {
            return refusal;
        }
        let status = if malformed.is_unknown_method() {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::BAD_REQUEST
        };
        return (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            malformed.to_response().to_string(),
        )
            .into_response();
    }
    pass(service, parts, bytes).await
}

/// rmcp's answer to a POST whose body was read.
async fn pass(service: &Service, parts: Parts, bytes: axum::body::Bytes) -> Response {
    service
        .handle(Request::from_parts(parts, Body::from(bytes)))
        .await
        .into_response()
}

/// rmcp's answer when it refuses a request for its headers alone, `None`
/// when it would take them.
///
/// rmcp checks `Host` (and `Origin`, where configured) before anything
/// else, refusing with 403, or 400 for a missing or unreadable `Host`; only
/// then does it answer a method it does not serve (405). So the request's
/// own URI and headers, sent as a `PUT` without a body, come back 403 or
/// 400 exactly when they fail. Any other answer, such as a later rmcp
/// serving `PUT`, counts as passing, so that our own answer for the body
/// stands. Asking rmcp, rather than checking a copy of its rules here,
/// keeps one rule for every request: a foreign page cannot learn through
/// a malformed or oversized body that the endpoint exists.
async fn refused_headers(service: &Service, parts: &Parts) -> Option<Response> {
    let mut probe = Request::new(Body::empty());
    *probe.method_mut() = Method::PUT;
    *probe.uri_mut() = parts.uri.clone();
    *probe.version_mut() = parts.version;
    *probe.headers_mut() = parts.headers.clone();
    probe.headers_mut().remove(header::CONTENT_LENGTH);
    let answer = service.handle(probe).await;
    matches!(
        answer.status(),
        StatusCode::FORBIDDEN | StatusCode::BAD_REQUEST
    )
    .then(|| answer.into_response())
}

/// Serves `registry` over Streamable HTTP at `http://{addr}/mcp`, with the
/// default [`HttpOptions`], until the listener fails.
///
/// ```no_run
/// # async fn run(registry: std::sync::Arc<toolkit_core::Registry>) -> Result<(), toolkit_mcp::ServeError> {
/// toolkit_mcp::serve_http(registry, "127.0.0.1:8080".parse().unwrap()).await
/// # }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
pub async fn serve_http(
    registry: Arc<toolkit_core::Registry>,
    addr: SocketAddr,
) -> Result<(), ServeError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|error| ServeError::new(format!("cannot listen on {addr}: {error}")))?;
    McpServer::new(registry)
        .serve_http(listener, &HttpOptions::new())
        .await
}

/// The router of an endpoint that requires bearer tokens: the endpoint,
/// guarded, and the protected-resource metadata, open to all.
#[cfg(feature = "server-auth")]
fn guarded(
    service: Arc<Service>,
    sessions: Option<Arc<LocalSessionManager>>,
    limit: usize,
    authorization: Arc<Authorization>,
    path: &str,
) -> Router {
    use axum::routing::get;

    // The specification has the metadata name at least one; without one a
    // client that meets the 401 has nowhere to get a token.
    if authorization.servers.is_empty() {
        tracing::warn!(
            resource = %authorization.resource,
            "tokens are required but no authorization server is named: clients cannot find where to get one"
        );
    }

    let document = Arc::new(authorization.metadata().to_string());
    let metadata = move || {
        let document = Arc::clone(&document);
        async move {
            (
                [(header::CONTENT_TYPE, "application/json")],
                document.as_str().to_owned(),
            )
        }
    };
    let metadata_url = super::auth::metadata_url(&authorization.resource, path);
    let guard = Arc::new(Guard {
        authorization,
        metadata_url,
        limit,
        sessions: sessions.map(Holders::new),
    });
    let mut router = Router::new()
        .route(
            path,
            any(move |request: Request| {
                let service = Arc::clone(&service);
                let guard = Arc::clone(&guard);
                async move {
                    match guard.admit(&service, request).await {
                        Ok((request, holder)) => guard.serve(&service, request, holder).await,
                        Err(refusal) => refusal,
                    }
                }
            }),
        )
        .route(&super::auth::metadata_path(path), get(metadata.clone()));
    // Clients that find no document under the endpoint's path look at the
    // root (RFC 9728, section 3.1, and MCP's discovery order).
    if super::auth::metadata_path(path) != super::auth::metadata_path("") {
        router = router.route(&super::auth::metadata_path(""), get(metadata));
    }
    router
}

/// Whom a token speaks for, as far as a session goes: its subject and
/// the client it was issued to.
#[cfg(feature = "server-auth")]
type Holder = (Option<String>, Option<String>);

#[cfg(feature = "server-auth")]
const SESSION_ID: &str = "mcp-session-id";

/// Admits requests whose token the validator accepts, and whose grant
/// has the scopes the request needs.
#[cfg(feature = "server-auth")]
struct Guard {
    authorization: Arc<Authorization>,
    metadata_url: String,
    /// The server's limit on a request's size.
    limit: usize,
    /// Who opened each session (none when the server is stateless).
    sessions: Option<Holders>,
}

/// The holder of each open session. A session id travels in a header
/// and can leak (a log, a proxy); bound to the token that opened it, it
/// serves no one else's token (MCP's security best practices, "Session
/// Hijacking").
#[cfg(feature = "server-auth")]
struct Holders {
    manager: Arc<LocalSessionManager>,
    by_session: std::sync::Mutex<std::collections::HashMap<String, Holder>>,
    /// How many entries there may be before those of sessions rmcp has
    /// since ended (idle, or their client gone) are dropped.
    prune_at: std::sync::atomic::AtomicUsize,
}

#[cfg(feature = "server-auth")]
impl Holders {
    const FIRST_PRUNE: usize = 1024;

    fn new(manager: Arc<LocalSessionManager>) -> Self {
        Self {
            manager,
            by_session: std::sync::Mutex::default(),
            prune_at: std::sync::atomic::AtomicUsize::new(Self::FIRST_PRUNE),
        }
    }

    fn holder(&self, session: &str) -> Option<Holder> {
        self.by_session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(session)
            .cloned()
    }

    fn end(&self, session: &str) {
        self.by_session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(session);
    }

    async fn bind(&self, session: String, holder: Holder) {
        use rmcp::transport::streamable_http_server::SessionManager as _;
        use std::sync::atomic::Ordering;

        let sessions: Vec<String> = {
            let mut by_session = self.by_session.lock().unwrap_or_else(|e| e.into_inner());
            by_session.insert(session, holder);
            if by_session.len() < self.prune_at.load(Ordering::Relaxed) {
                return;
            }
            by_session.keys().cloned().collect()
        };
        let mut ended = Vec::new();
        for session in sessions {
            let id: rmcp::transport::streamable_http_server::SessionId = session.as_str().into();
            if !self.manager.has_session(&id).await.unwrap_or(true) {
                ended.push(session);
            }
        }
        let mut by_session = self.by_session.lock().unwrap_or_else(|e| e.into_inner());
        for session in ended {
            by_session.remove(&session);
        }
        self.prune_at.store(
            (by_session.len() * 2).max(Self::FIRST_PRUNE),
            Ordering::Relaxed,
        );
    }
}

#[cfg(feature = "server-auth")]
impl Guard {
    /// The request, with its grant, and who it comes from; or the answer
    /// refusing it.
    async fn admit(
        &self,
        service: &Service,
        request: Request,
    ) -> Result<(Request, Holder), Response> {
        use super::auth::{Grant, challenge};

        let (mut parts, body) = request.into_parts();
        // Whatever is wrong with the token, a request refused for its
        // headers (a DNS-rebinding page) gets that refusal, and is told
        // nothing about the endpoint or its token.
        let refuse = async |parts: &Parts, refusal: Response| {
            refused_headers(service, parts).await.unwrap_or(refusal)
        };
        let required = join(&self.authorization.required);
        let refused = |status: StatusCode, parameters: Vec<(&str, &str)>| {
            let mut all = vec![("resource_metadata", self.metadata_url.as_str())];
            all.extend(parameters);
            (
                status,
                [(header::WWW_AUTHENTICATE, challenge(&all))],
                status.canonical_reason().unwrap_or_default().to_owned(),
            )
                .into_response()
        };
        let mut authorizations = parts.headers.get_all(header::AUTHORIZATION).iter();
        let (first, second) = (authorizations.next(), authorizations.next());
        if second.is_some() {
            // Which of them a proxy in front checked is unknown.
            let refusal = refused(
                StatusCode::BAD_REQUEST,
                vec![
                    ("error", "invalid_request"),
                    ("error_description", "more than one Authorization header"),
                ],
            );
            return Err(refuse(&parts, refusal).await);
        }
        let token = first
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                let (scheme, token) = value.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|token| !token.is_empty());
        let Some(token) = token else {
            let mut parameters = Vec::new();
            if !required.is_empty() {
                parameters.push(("scope", required.as_str()));
            }
            let refusal = refused(StatusCode::UNAUTHORIZED, parameters);
            return Err(refuse(&parts, refusal).await);
        };
        let grant: Grant = match self.authorization.validator.validate(token).await {
            Ok(grant) => grant,
            Err(refusal) => {
                tracing::debug!(reason = %refusal, "a bearer token was refused");
                let reason = refusal.to_string();
                let refusal = refused(
                    StatusCode::UNAUTHORIZED,
                    vec![
                        ("error", "invalid_token"),
                        ("error_description", reason.as_str()),
                    ],
                );
                return Err(refuse(&parts, refusal).await);
            }
        };
        if !grant.has_all(&self.authorization.required) {
            let refusal = refused(
                StatusCode::FORBIDDEN,
                vec![
                    ("error", "insufficient_scope"),
                    ("scope", required.as_str()),
                    (
                        "error_description",
                        "the token lacks scopes every request needs",
                    ),
                ],
            );
            return Err(refuse(&parts, refusal).await);
        }
        let holder: Holder = (grant.subject.clone(), grant.client_id.clone());
        if let Some(sessions) = &self.sessions
            && let Some(session) = parts.headers.get(SESSION_ID)
        {
            // Every session was opened through here: one with no holder
            // was never opened, or has ended.
            let session = session.to_str().unwrap_or_default();
            if sessions.holder(session).as_ref() != Some(&holder) {
                let refusal =
                    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
                return Err(refuse(&parts, refusal).await);
            }
        }
        let request = if parts.method == Method::POST && !self.authorization.tools.is_empty() {
            // The tool a call names is checked here, where a refusal can
            // be the 403 a client steps up from; the handler checks it
            // again on the same bytes rmcp reads.
            let limit = self.limit;
            let bytes = match axum::body::to_bytes(body, limit).await {
                Ok(bytes) => bytes,
                Err(_) => {
                    let refusal = (
                        StatusCode::PAYLOAD_TOO_LARGE,
                        format!("Payload Too Large: request body exceeds {limit} bytes"),
                    )
                        .into_response();
                    return Err(refuse(&parts, refusal).await);
                }
            };
            for name in called_tools(&bytes) {
                if !self.authorization.allows_tool(&grant, &name) {
                    let scopes = join(&self.authorization.scopes_for_tool(&name));
                    let description = format!("calling `{name}` needs the scopes: {scopes}");
                    let refusal = refused(
                        StatusCode::FORBIDDEN,
                        vec![
                            ("error", "insufficient_scope"),
                            ("scope", scopes.as_str()),
                            ("error_description", description.as_str()),
                        ],
                    );
                    return Err(refuse(&parts, refusal).await);
                }
            }
            parts.extensions.insert(grant);
            Request::from_parts(parts, Body::from(bytes))
        } else {
            parts.extensions.insert(grant);
            Request::from_parts(parts, body)
        };
        Ok((request, holder))
    }

    /// rmcp's answer to an admitted request, noting who opens a session
    /// and forgetting one that ends.
    async fn serve(&self, service: &Service, request: Request, holder: Holder) -> Response {
        let Some(sessions) = &self.sessions else {
            return answer(service, self.limit, request).await;
        };
        let session = request
            .headers()
            .get(SESSION_ID)
            .and_then(|id| id.to_str().ok())
            .map(str::to_owned);
        let ending = request.method() == Method::DELETE;
        let response = answer(service, self.limit, request).await;
        match session {
            None => {
                if let Some(opened) = response
                    .headers()
                    .get(SESSION_ID)
                    .and_then(|id| id.to_str().ok())
                {
                    sessions.bind(opened.to_owned(), holder).await;
                }
            }
            Some(session) if ending && response.status().is_success() => sessions.end(&session),
            Some(_) => {}
        }
        response
    }
}

#[cfg(feature = "server-auth")]
fn join(scopes: &std::collections::BTreeSet<String>) -> String {
    scopes
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tools a body calls: one for a `tools/call` request, each of a
/// batch's; none for a body that is not JSON-RPC (rmcp refuses it).
#[cfg(feature = "server-auth")]
fn called_tools(bytes: &[u8]) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Message {
        method: Option<String>,
        params: Option<Params>,
    }
    #[derive(serde::Deserialize)]
    struct Params {
        name: Option<String>,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Body {
        One(Message),
        Many(Vec<Message>),
    }
    let messages = match serde_json::from_slice::<Body>(bytes) {
        Ok(Body::One(message)) => vec![message],
        Ok(Body::Many(messages)) => messages,
        Err(_) => return Vec::new(),
    };
    messages
        .into_iter()
        .filter(|message| message.method.as_deref() == Some("tools/call"))
        .map(|message| {
            message
                .params
                .and_then(|params| params.name)
                .unwrap_or_default()
        })
        .collect()
}
