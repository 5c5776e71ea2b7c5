//! Serving a registry: the protocol handler, and the transports it runs on.

mod asking;
#[cfg(feature = "server-auth")]
pub(crate) mod auth;
mod forward;
#[cfg(feature = "http-server")]
pub(crate) mod http;
mod listing;
mod logging;
mod malformed;
#[cfg(unix)]
mod pipes;
mod progress;
pub(crate) mod prompt_context;
pub(crate) mod prompts;
pub(crate) mod publish;
pub(crate) mod resources;
mod rounds;
pub(crate) mod stdio;

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
#[allow(deprecated)] // logging: deprecated by SEP-2577, part of both revisions served
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult,
    CancelledNotificationParam, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, InitializeRequestParams, InitializeResult, InputRequiredResult,
    ListPromptsRequestMethod, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResultType,
    ServerCapabilities, ServerConfig, SubscribeRequestMethod, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestMethod, UnsubscribeRequestParams,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, RoleServer, ServiceExt, SubscriptionContext,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite};
use toolkit_core::emit::{self, EmitOptions, McpRevision};
use toolkit_core::{
    CallHost, Cancellation, LogLevel, Registry, RunState, ToolCall, ToolCallResult, ToolListChanges,
};

use self::listing::Listing;
use self::prompts::{GetError, Prompt};
use self::resources::{
    ReadError, Resource, ResourceTemplate, ResourceUpdates, Resources, Subscriptions,
};
use crate::telemetry::{self, About, Transport};
use tracing::Instrument;

/// An MCP server for a registry: an rmcp `ServerHandler`, which any rmcp
/// transport takes. [`serve_stdio`](crate::serve_stdio) and
/// `HttpOptions` (with the `http-server` feature) run it for you.
///
/// Clones share the registry: a transport that makes one handler per
/// session or per request (Streamable HTTP) clones it.
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct McpServer {
    registry: Arc<Registry>,
    listing: Arc<Listing>,
    identity: Arc<Implementation>,
    max_request_bytes: usize,
    /// How long a 2026-07-28 client may keep the tool list (`ttlMs`).
    tools_ttl: Duration,
    /// Served over stateless HTTP: a client that opened with `initialize`
    /// has no session, so nothing can reach it between its requests.
    stateless: bool,
    /// The log level the session's client set (`logging/setLevel`): one per
    /// session, as [`for_session`](Self::for_session) makes a new one.
    log_level: Arc<logging::SessionLevel>,
    /// The resources offered besides the tools.
    resources: Arc<Resources>,
    /// The prompts offered, in the order added.
    prompts: Arc<Vec<Prompt>>,
    /// The resources the session's client subscribed to: one per session.
    subscriptions: Arc<Subscriptions>,
    /// The session's watch on the tool list, taken at `initialize` so that
    /// a change made before the client's `notifications/initialized` is
    /// announced once it comes (announcing starts only then): one per
    /// session.
    list_watch: Arc<Mutex<Option<ToolListChanges>>>,
    /// How the requests come, as the spans name it: unknown when a host
    /// runs the handler on a transport of its own.
    pub(crate) transport: Option<Transport>,
    /// Bearer tokens required, over HTTP: the tools a request's grant
    /// lists and calls.
    #[cfg(feature = "server-auth")]
    pub(crate) authorization: Option<Arc<auth::Authorization>>,
}

/// Why serving stopped.
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
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
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub async fn serve_stdio(registry: Arc<Registry>) -> Result<(), ServeError> {
    McpServer::new(registry).serve_stdio().await
}

/// The size limit of one request unless set: 4 MiB.
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

impl McpServer {
    /// A server for `registry`, introducing itself as this crate.
    pub fn new(registry: Arc<Registry>) -> Self {
        Self {
            listing: Arc::new(Listing::new(Arc::clone(&registry))),
            registry,
            identity: Arc::new(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            )),
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            tools_ttl: Duration::ZERO,
            stateless: false,
            log_level: Arc::default(),
            resources: Arc::default(),
            prompts: Arc::default(),
            subscriptions: Arc::default(),
            list_watch: Arc::default(),
            transport: None,
            #[cfg(feature = "server-auth")]
            authorization: None,
        }
    }

    /// A handler for one more session: the registry shared, the session's
    /// own settings (its log level) new.
    pub(crate) fn for_session(&self) -> Self {
        Self {
            log_level: Arc::default(),
            subscriptions: Arc::default(),
            list_watch: Arc::default(),
            ..self.clone()
        }
    }

    /// The size limit of one incoming message (a line on stdio, a request
    /// body over HTTP), [`DEFAULT_MAX_REQUEST_BYTES`] unless set. A larger
    /// message is refused (an invalid-request error on stdio, HTTP 413) and
    /// the server goes on serving.
    pub fn max_request_bytes(mut self, limit: usize) -> Self {
        self.max_request_bytes = limit;
        self
    }

    /// How long a 2026-07-28 client may keep the tool list before asking
    /// again (its `ttlMs`, with `cacheScope` `private`: the list is the
    /// registry's enabled tools, which a host may vary by client); zero
    /// (every list is stale at once) unless set. A change of the list is
    /// still announced to the clients that listen.
    pub fn tools_ttl(mut self, ttl: Duration) -> Self {
        self.tools_ttl = ttl;
        self
    }

    #[doc(hidden)]
    #[deprecated(since = "0.2.0", note = "renamed to `max_request_bytes`")]
    pub fn with_max_request_bytes(self, limit: usize) -> Self {
        self.max_request_bytes(limit)
    }

    /// Serves the registry over this process's standard input and output
    /// until the client closes them.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        #[cfg(unix)]
        if let Some((input, output)) = pipes::standard() {
            let input = tokio::io::BufReader::new(input);
            return self.serve_lines(input, output).await;
        }
        let input = tokio::io::BufReader::new(tokio::io::stdin());
        self.serve_lines(input, tokio::io::stdout()).await
    }

    /// Serves the registry over any pair of byte streams, one JSON-RPC
    /// message per line as on stdio (a pipe, a socket), until `input` ends.
    pub async fn serve_lines<R, W>(self, input: R, output: W) -> Result<(), ServeError>
    where
        R: AsyncBufRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let transport = stdio::LineTransport::new(input, output, self.max_request_bytes);
        let mut server = self.for_session();
        server.transport = Some(Transport::Pipe);
        let running = server
            .serve(transport)
            .await
            .map_err(|error| ServeError::new(error.to_string()))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|error| ServeError::new(error.to_string()))
    }

    /// The name and version the server gives clients (`serverInfo`).
    pub fn identity(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        let identity = Arc::make_mut(&mut self.identity);
        identity.name = name.into();
        identity.version = version.into();
        self
    }

    /// What the server does, in a sentence: given to clients in
    /// `serverInfo`, and written in its [`server_json`](Self::server_json).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.identity).description = Some(description.into());
        self
    }

    /// A name to show people (`serverInfo.title`).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.identity).title = Some(title.into());
        self
    }

    /// The server's website (`serverInfo.websiteUrl`).
    pub fn website_url(mut self, url: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.identity).website_url = Some(url.into());
        self
    }

    #[doc(hidden)]
    #[deprecated(since = "0.2.0", note = "renamed to `identity`")]
    pub fn with_identity(self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.identity(name, version)
    }

    /// Offers a resource at a fixed URI (`resources/list`, `resources/read`).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolkit_core::Registry;
    /// use toolkit_mcp::{McpServer, Prompt, PromptMessage, Resource, ResourceContents, ResourceTemplate};
    ///
    /// # fn main() -> Result<(), toolkit_core::RegistryError> {
    /// let registry = Arc::new(Registry::builder().build()?);
    /// let server = McpServer::new(registry)
    ///     .resource(Resource::text("notes://readme", "readme", "text/markdown", "# Notes"))
    ///     .resource_template(ResourceTemplate::new("notes://{day}", "day", |_uri, variables| async move {
    ///         Ok(ResourceContents::text("text/plain", format!("The notes of {}.", variables["day"])))
    ///     }))
    ///     .prompt(Prompt::fixed("greet", [PromptMessage::user("Say hello.")]));
    /// // Later, when `notes://readme` changes:
    /// server.resource_updates().updated("notes://readme");
    /// # Ok(())
    /// # }
    /// ```
    pub fn resource(mut self, resource: Resource) -> Self {
        Arc::make_mut(&mut self.resources).add(resource);
        self
    }

    #[doc(hidden)]
    #[deprecated(since = "0.2.0", note = "renamed to `resource`")]
    pub fn with_resource(self, resource: Resource) -> Self {
        self.resource(resource)
    }

    /// Offers the resources whose URIs follow a template
    /// (`resources/templates/list`, `resources/read`).
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        Arc::make_mut(&mut self.resources).add_template(template);
        self
    }

    #[doc(hidden)]
    #[deprecated(since = "0.2.0", note = "renamed to `resource_template`")]
    pub fn with_resource_template(self, template: ResourceTemplate) -> Self {
        self.resource_template(template)
    }

    /// Offers a prompt (`prompts/list`, `prompts/get`); a prompt of the same
    /// name replaces the one before.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        let prompts = Arc::make_mut(&mut self.prompts);
        prompts.retain(|known| known.name() != prompt.name());
        prompts.push(prompt);
        self
    }

    #[doc(hidden)]
    #[deprecated(since = "0.2.0", note = "renamed to `prompt`")]
    pub fn with_prompt(self, prompt: Prompt) -> Self {
        self.prompt(prompt)
    }

    /// Where to announce that a resource changed, to the clients subscribed
    /// to it.
    pub fn resource_updates(&self) -> ResourceUpdates {
        self.resources.updates().clone()
    }

    /// The registry served.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The least severe log message a call's client wants, `None` for none:
    /// a 2026-07-28 request names its level in `_meta` (no level, no
    /// messages); a 2025-11-25 session's client may set one with
    /// `logging/setLevel`, and hears every message until it does.
    #[allow(deprecated)] // logging: deprecated by SEP-2577, part of both revisions
    fn log_threshold(
        &self,
        revision: McpRevision,
        context: &RequestContext<RoleServer>,
    ) -> Option<LogLevel> {
        match revision {
            McpRevision::V2026_07_28 => context.meta.log_level().map(logging::from_rmcp),
            _ => Some(self.log_level.get().unwrap_or(LogLevel::Debug)),
        }
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("registry", &self.registry)
            .field("name", &self.identity.name)
            .finish_non_exhaustive()
    }
}

/// The revision a result is written for: `structuredContent` may be any
/// value from 2026-07-28 on, only an object before.
fn revision(version: Option<ProtocolVersion>) -> McpRevision {
    match version {
        Some(version) if version.as_str() >= ProtocolVersion::V_2026_07_28.as_str() => {
            McpRevision::V2026_07_28
        }
        _ => McpRevision::default(),
    }
}

/// Awaits a request's handler: in place when no subscriber wants its span,
/// so that an untraced request's future is the handler's alone; in its
/// span, on a boxed path of its own, otherwise. (A future that held both
/// would be moved, whole, each time rmcp spawns a request.)
macro_rules! serve {
    ($span:expr, $handler:expr) => {
        match $span {
            None => $handler.await,
            Some(span) => Box::pin(traced(span, $handler)).await,
        }
    };
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // logging: deprecated by SEP-2577, part of both revisions served
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        if !self.resources.is_empty() {
            capabilities.resources = serde_json::from_value(json!({"subscribe": true})).ok();
        }
        if !self.prompts.is_empty() {
            capabilities.prompts = serde_json::from_value(json!({})).ok();
        }
        ServerConfig::new(capabilities).with_server_info((*self.identity).clone())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let span = telemetry::server_span(&About::new("initialize"), &context, self.transport);
        serve!(span, self.serve_initialize(request, context))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = telemetry::server_span(&About::new("tools/list"), &context, self.transport);
        serve!(span, async {
            let tools = self.listing.tools()?;
            #[cfg(feature = "server-auth")]
            let tools: Vec<Tool> = match &self.authorization {
                // No grant: a request that did not pass the guard sees
                // nothing.
                Some(authorization) => {
                    let grant = auth::grant_of(&context);
                    tools
                        .iter()
                        .filter(|tool| {
                            grant
                                .as_ref()
                                .is_some_and(|grant| authorization.allows_tool(grant, &tool.name))
                        })
                        .cloned()
                        .collect()
                }
                None => tools.to_vec(),
            };
            #[cfg(not(feature = "server-auth"))]
            let tools: Vec<Tool> = tools.to_vec();
            let listed = ListToolsResult::with_all_items(tools);
            Ok(if self.tools_ttl.is_zero() {
                listed
            } else {
                let ttl = u64::try_from(self.tools_ttl.as_millis()).unwrap_or(u64::MAX);
                listed
                    .with_ttl_ms(ttl)
                    .with_cache_scope(CacheScope::Private)
            })
        })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let tools = self.listing.tools().ok()?;
        tools.iter().find(|tool| tool.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let about = About::new("tools/call")
            .tool(&request.name)
            .arguments(request.arguments.as_ref());
        let span = telemetry::server_span(&about, &context, self.transport);
        serve!(span, self.serve_call(request, context))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let span = telemetry::server_span(&About::new("resources/list"), &context, self.transport);
        serve!(span, async {
            from_wire(json!({"resources": self.resources.list()}))
        })
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let about = About::new("resources/templates/list");
        let span = telemetry::server_span(&about, &context, self.transport);
        serve!(span, async {
            from_wire(json!({"resourceTemplates": self.resources.list_templates()}))
        })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let about = About::new("resources/read").uri(&request.uri);
        let span = telemetry::server_span(&about, &context, self.transport);
        serve!(span, self.serve_read(request, context))
    }

    #[allow(deprecated)] // resources/subscribe: 2025-11-25 only
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let about = About::new("resources/subscribe").uri(&request.uri);
        let span = telemetry::server_span(&about, &context, self.transport);
        serve!(span, async {
            if self.resources.is_empty() {
                return Err(ErrorData::method_not_found::<SubscribeRequestMethod>());
            }
            self.subscriptions
                .subscribe(request.uri, self.resources.updates(), context.peer);
            Ok(())
        })
    }

    #[allow(deprecated)] // resources/unsubscribe: 2025-11-25 only
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let about = About::new("resources/unsubscribe").uri(&request.uri);
        let span = telemetry::server_span(&about, &context, self.transport);
        serve!(span, async {
            if self.resources.is_empty() {
                return Err(ErrorData::method_not_found::<UnsubscribeRequestMethod>());
            }
            self.subscriptions.unsubscribe(&request.uri);
            Ok(())
        })
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let span = telemetry::server_span(&About::new("prompts/list"), &context, self.transport);
        serve!(span, async {
            // A server without prompts does not have the method (rmcp would
            // answer an empty list, which the capabilities do not promise).
            if self.prompts.is_empty() {
                return Err(ErrorData::method_not_found::<ListPromptsRequestMethod>());
            }
            let prompts: Vec<Value> = self.prompts.iter().map(Prompt::to_wire).collect();
            from_wire(json!({"prompts": prompts}))
        })
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let about = About::new("prompts/get").prompt(&request.name);
        let span = telemetry::server_span(&about, &context, self.transport);
        serve!(span, self.serve_prompt(request, context))
    }

    #[allow(deprecated)] // logging: deprecated by SEP-2577, part of 2025-11-25
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let span =
            telemetry::server_span(&About::new("logging/setLevel"), &context, self.transport);
        serve!(span, async {
            self.log_level.set(logging::from_rmcp(request.level));
            Ok(())
        })
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        telemetry::notification_received("notifications/initialized", self.transport);
        let watch = self
            .list_watch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let changes = watch.unwrap_or_else(|| self.registry.changes());
        tokio::spawn(announce_changes(changes, context.peer));
    }

    // rmcp itself acts on cancellations (it cancels the request's token);
    // these say only that the notification came.
    async fn on_cancelled(
        &self,
        _notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        telemetry::notification_received("notifications/cancelled", self.transport);
    }

    async fn on_progress(
        &self,
        _notification: ProgressNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        telemetry::notification_received("notifications/progress", self.transport);
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        telemetry::notification_received("notifications/roots/list_changed", self.transport);
    }

    // Revision 2026-07-28 has no sessions: a client that wants to hear of
    // changes holds a `subscriptions/listen` request open.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.registry.changes();
        loop {
            tokio::select! {
                () = subscription.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if !changed || subscription.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// What the handler methods do, each run in its request's span.
impl McpServer {
    async fn serve_initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        *self
            .list_watch
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(self.registry.changes());
        let mut result = self.negotiate_initialize(&request)?;
        // A client that opens with `initialize` (2025-11-25 and before)
        // hears of list changes only on a session's event stream, which a
        // stateless server has none of: promising them would leave it with
        // a stale list. Clients of 2026-07-28 subscribe per request
        // instead, and `server/discover` keeps the promise for them.
        if self.stateless
            && let Some(tools) = result.capabilities.tools.as_mut()
        {
            tools.list_changed = None;
        }
        Ok(result)
    }

    /// The values a call of `name` runs with: the request's grant when
    /// tokens are required, the call refused when that grant does not
    /// allow the tool (checked on the name the call uses).
    fn call_state(
        &self,
        name: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<RunState>, ErrorData> {
        #[cfg(feature = "server-auth")]
        if let Some(authorization) = &self.authorization {
            let grant = auth::grant_of(context)
                .filter(|grant| authorization.allows_tool(grant, name))
                .ok_or_else(|| {
                    ErrorData::invalid_request(
                        format!("the token does not allow calling `{name}`"),
                        None,
                    )
                })?;
            return Ok(Some(RunState::new().with(grant)));
        }
        let _ = (name, context);
        Ok(None)
    }

    async fn serve_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let state = self.call_state(&name, &context)?;
        // MCP reports an unknown tool as a protocol error, not a result.
        if !self.registry.is_enabled(&name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {name}"),
                None,
            ));
        }
        // A 2026-07-28 call may be one more round of a call whose tool
        // asked questions: the answers came with it.
        let (questions, asker) = Questions::open(
            &context,
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let revision = questions.revision;
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = ToolCall::new(context.id.to_string(), name, arguments);
        let cancellation = Cancellation::new();
        let reporter = context
            .meta
            .get_progress_token()
            .map(|token| progress::Reporter::new(token, context.peer.clone()));
        let logger = self
            .log_threshold(revision, &context)
            .map(|least| logging::Logger::new(least, call.name.clone(), context.peer.clone()));
        let mut host = CallHost::new().asker(asker);
        if let Some(reporter) = &reporter {
            host = host.progress(reporter.sink().clone());
        }
        if let Some(logger) = &logger {
            host = host.log(logger.sink().clone());
        }
        let outcome = {
            let mut run = self
                .registry
                .dispatch(&call)
                .cancellation(&cancellation)
                .host(&host);
            if let Some(state) = &state {
                run = run.state(state);
            }
            unless_cancelled(run, &context, &cancellation).await
        };
        // Progress reports reach the client before the result that ends
        // their call.
        if let Some(reporter) = reporter {
            reporter.finish().await;
        }
        if let Some(logger) = logger {
            logger.finish().await;
        }
        if let Some(input_required) = questions.close(outcome.result.is_error())? {
            return Ok(CallToolResponse::InputRequired(input_required));
        }
        let turn = [ToolCallResult::new(call.id, call.name, outcome.result)];
        let options = EmitOptions::default().with_mcp_revision(revision);
        let emitted = emit::mcp(&turn, &options);
        let item = emitted.items.into_iter().next().unwrap_or(Value::Null);
        let mut result: CallToolResult = serde_json::from_value(item)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        // rmcp strips it for clients of earlier revisions.
        result.result_type = Some(ResultType::COMPLETE);
        Ok(CallToolResponse::Complete(result))
    }

    async fn serve_read(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match self.resources.read(&request.uri).await {
            Ok(result) => {
                from_wire::<ReadResourceResult>(result).map(ReadResourceResponse::Complete)
            }
            // 2026-07-28 (SEP-2164) names an unknown resource invalid
            // params; 2025-11-25 has its own code for it.
            Err(ReadError::NotFound) => {
                let data = Some(json!({"uri": request.uri}));
                let message = format!("resource not found: {}", request.uri);
                Err(match revision(context.protocol_version()) {
                    McpRevision::V2026_07_28 => ErrorData::invalid_params(message, data),
                    _ => ErrorData::resource_not_found(message, data),
                })
            }
            Err(ReadError::Failed(error)) => Err(ErrorData::internal_error(
                format!("reading {} failed: {error}", request.uri),
                None,
            )),
        }
    }

    async fn serve_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(prompt) = self.prompts.iter().find(|p| p.name() == request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown prompt: {}", request.name),
                None,
            ));
        };
        let arguments = prompt_arguments(request.arguments.unwrap_or_default())?;
        // As a tool's call: on 2026-07-28 the prompt's questions go back in
        // the answer, and it is asked for again with their answers.
        let (questions, asker) = Questions::open(
            &context,
            request.input_responses,
            request.request_state.as_deref(),
        )?;
        let cancellation = Cancellation::new();
        let ask = prompt_context::PromptContext::new(
            &context.id.to_string(),
            &request.name,
            CallHost::new().asker(asker),
            cancellation.clone(),
        );
        let made = {
            let made = prompt.get(arguments, ask);
            unless_cancelled(made, &context, &cancellation).await
        };
        if let Some(input_required) = questions.close(made.is_err())? {
            return Ok(GetPromptResponse::InputRequired(input_required));
        }
        match made {
            Ok(result) => from_wire::<GetPromptResult>(result).map(GetPromptResponse::Complete),
            Err(GetError::Missing(name)) => Err(ErrorData::invalid_params(
                format!("the prompt `{}` needs the argument `{name}`", request.name),
                None,
            )),
            Err(GetError::Failed(error)) => Err(ErrorData::internal_error(
                format!("the prompt `{}` failed: {error}", request.name),
                None,
            )),
        }
    }
}

/// A prompt's arguments, which MCP gives as strings.
fn prompt_arguments(
    given: serde_json::Map<String, Value>,
) -> Result<std::collections::HashMap<String, String>, ErrorData> {
    given
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(text) => Ok((name, text)),
            other => Err(ErrorData::invalid_params(
                format!("the prompt's argument `{name}` must be a string, got {other}"),
                None,
            )),
        })
        .collect()
}

/// The questions a tool's call or a prompt may ask the client, from the
/// answers its request brought to what goes back unanswered.
struct Questions {
    revision: McpRevision,
    rounds: Option<Arc<rounds::Rounds>>,
    lacking: asking::Lacking,
}

impl Questions {
    /// Reads the answers a request brought (2026-07-28) and gives the asker
    /// the handler puts its questions to.
    fn open(
        context: &RequestContext<RoleServer>,
        responses: Option<std::collections::BTreeMap<String, Value>>,
        state: Option<&str>,
    ) -> Result<(Self, asking::ClientAsker), ErrorData> {
        let revision = revision(context.protocol_version());
        let rounds = rounds::Rounds::for_revision(revision, responses, state)?;
        let lacking = asking::Lacking::default();
        let asker = asking::ClientAsker::new(context, lacking.clone(), rounds.clone());
        let questions = Self {
            revision,
            rounds,
            lacking,
        };
        Ok((questions, asker))
    }

    /// What the handler's end leaves to answer: the questions still without
    /// answers, which go back to the client whatever the handler made of
    /// their absence, or, on 2026-07-28, the error of a failure that came
    /// of a capability the client lacks.
    fn close(&self, failed: bool) -> Result<Option<InputRequiredResult>, ErrorData> {
        if let Some(input_required) = rounds::input_required(self.rounds.as_deref())? {
            return Ok(Some(input_required));
        }
        if self.revision == McpRevision::V2026_07_28 && failed {
            self.lacking.refuse()?;
        }
        Ok(None)
    }
}

/// Runs a handler to its end. When the client cancels, or (over HTTP) goes
/// away, the handler is asked to stop and given the chance to end cleanly;
/// nobody waits for its answer any more.
async fn unless_cancelled<F: Future>(
    work: F,
    context: &RequestContext<RoleServer>,
    cancellation: &Cancellation,
) -> F::Output {
    tokio::pin!(work);
    tokio::select! {
        done = &mut work => done,
        () = context.ct.cancelled() => {
            cancellation.cancel();
            work.await
        }
    }
}

/// Runs a request's handler in its span, and records how it ended.
async fn traced<T: Served>(
    span: tracing::Span,
    handler: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    // Entered while the handler runs: the registry's `execute_tool` span
    // is its child.
    let answer = handler.instrument(span.clone()).await;
    match &answer {
        Ok(answer) => answer.record(&span),
        Err(error) => telemetry::record_error(&span, error),
    }
    answer
}

/// What a span records of a handler's answer besides failure.
trait Served {
    fn record(&self, _span: &tracing::Span) {}
}

impl Served for () {}
impl Served for ListToolsResult {}
impl Served for ListResourcesResult {}
impl Served for ListResourceTemplatesResult {}
impl Served for ListPromptsResult {}
impl Served for ReadResourceResponse {}
impl Served for GetPromptResponse {}

impl Served for InitializeResult {
    fn record(&self, span: &tracing::Span) {
        telemetry::record_version(span, self.protocol_version.as_str());
    }
}

impl Served for CallToolResponse {
    fn record(&self, span: &tracing::Span) {
        if let CallToolResponse::Complete(result) = self {
            telemetry::record_result(span, result);
        }
    }
}

/// How often a watcher of the tool list looks whether its client is gone,
/// when the list does not change.
const CLIENT_CHECK: Duration = Duration::from_secs(30);

/// Sends `notifications/tools/list_changed` to a client of a session for
/// each change of the registry's tool list, until the client goes away.
async fn announce_changes(mut changes: ToolListChanges, peer: Peer<RoleServer>) {
    loop {
        tokio::select! {
            changed = changes.changed() => {
                if !changed || peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
            () = tokio::time::sleep(CLIENT_CHECK) => {
                if peer.is_transport_closed() {
                    return;
                }
            }
        }
    }
}

/// An rmcp result from the JSON MCP has for it: our values are written as
/// the protocol has them, and rmcp reads them into its types. Every result
/// is complete (2026-07-28 says so in `resultType`, which rmcp strips for
/// clients of earlier revisions).
fn from_wire<T: serde::de::DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    value["resultType"] = json!("complete");
    serde_json::from_value(value)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))
}
