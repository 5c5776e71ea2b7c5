//! MCP spans, in the names of the OpenTelemetry GenAI semantic conventions
//! for the Model Context Protocol (docs/observability.md, "MCP").
//!
//! Every request the server handles runs in a span of kind server, static
//! name `mcp.server`; every request an [`McpClient`](crate::McpClient)
//! sends runs in one of kind client, static name `mcp.client`, and its
//! opening of a connection (the handshake, with the probe of the server's
//! revision) in one of static name `mcp.client.connect`. The request
//! spans carry the conventions' name in `otel.name`: `{mcp.method.name} {target}`, the
//! target being the tool's or the prompt's name (`tools/call get_weather`,
//! `prompts/get greet`), the method alone otherwise (`tools/list`). The
//! registry's `execute_tool` span of a served call is a child of the
//! server's span.
//!
//! | field | value |
//! |---|---|
//! | `mcp.method.name` | `tools/call`, `tools/list`, `resources/read`, `initialize`, ... |
//! | `mcp.protocol.version` | the revision the request is served under, when known |
//! | `mcp.session.id` | the HTTP session's id (`Mcp-Session-Id`), when there is one |
//! | `mcp.resource.uri` | the resource's URI on `resources/read`, `subscribe`, `unsubscribe` |
//! | `jsonrpc.request.id` | the request's id |
//! | `gen_ai.operation.name` | `execute_tool`, on `tools/call` only |
//! | `gen_ai.tool.name` | the tool's name, on `tools/call` |
//! | `gen_ai.prompt.name` | the prompt's name, on `prompts/get` |
//! | `network.transport` | `pipe` (stdio, a child process), `tcp` (Streamable HTTP) |
//! | `network.protocol.name` | `http` over Streamable HTTP |
//! | `server.address`, `server.port` | client spans over HTTP: the endpoint's host and port |
//! | `error.type` | on failure: the JSON-RPC error code (`-32602`), `tool_error` for a result with `isError`, or the client's own failure (`timeout`, `transport`, `cancelled`, `unexpected_response`) |
//! | `rpc.response.status_code` | the JSON-RPC error code, when the answer was one |
//! | `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result` | captured content only ([`capture_content`](toolkit_core::telemetry::capture_content)), as JSON text |
//!
//! With the crate's `opentelemetry` feature, a client writes its span's W3C
//! trace context into each request's `params._meta` (`traceparent`, and
//! `tracestate` when there is one), and the server makes its span a child
//! of the context it receives. Without the feature nothing is propagated.
//!
//! ```
//! use toolkit_mcp::telemetry::{self, attr};
//!
//! assert_eq!(attr::METHOD_NAME, "mcp.method.name");
//! assert_eq!(telemetry::SERVER_SPAN, "mcp.server");
//! // Whether this build carries trace context across MCP.
//! assert_eq!(telemetry::PROPAGATES, cfg!(feature = "opentelemetry"));
//! ```

// What records the spans exists with the half of the crate that makes
// them; the names above are there in every build.
#[cfg(any(feature = "client", feature = "server"))]
use std::borrow::Cow;

#[cfg(any(feature = "client", feature = "server"))]
use rmcp::ErrorData;
#[cfg(any(feature = "client", feature = "server"))]
use rmcp::model::JsonObject;
#[cfg(feature = "client")]
use rmcp::model::{ClientRequest, GetMeta, RequestMetaObject, ServerResult};
#[cfg(feature = "server")]
use rmcp::service::{RequestContext, RoleServer};
#[cfg(any(feature = "client", feature = "server"))]
use toolkit_core::telemetry::{EXECUTE_TOOL, SpanName, captures_content};
#[cfg(any(feature = "client", feature = "server"))]
use tracing::Span;
#[cfg(any(feature = "client", feature = "server"))]
use tracing::field::Empty;

/// The static name of a server's span (`tracing`'s name; `otel.name` holds
/// the exported one).
pub const SERVER_SPAN: &str = "mcp.server";

/// The static name of a client's span.
pub const CLIENT_SPAN: &str = "mcp.client";

/// The static name of the span of a client's opening of a connection: the
/// handshake, with the probe of the server's revision when the client
/// finds it itself. It records `mcp.protocol.version` agreed, or on
/// failure `error.type` (`unreachable`, `incompatible`).
pub const CONNECT_SPAN: &str = "mcp.client.connect";

/// Whether this build carries W3C trace context in `params._meta` (the
/// crate's `opentelemetry` feature).
pub const PROPAGATES: bool = cfg!(feature = "opentelemetry");

/// The conventions' attribute names the MCP spans record besides
/// toolkit-core's ([`toolkit_core::telemetry::attr`]).
pub mod attr {
    /// The request's method: `tools/call`, `initialize`, ...
    pub const METHOD_NAME: &str = "mcp.method.name";
    /// The MCP revision: `2025-11-25`, `2026-07-28`.
    pub const PROTOCOL_VERSION: &str = "mcp.protocol.version";
    /// The HTTP session's id.
    pub const SESSION_ID: &str = "mcp.session.id";
    /// The resource's URI.
    pub const RESOURCE_URI: &str = "mcp.resource.uri";
    /// The JSON-RPC request's id.
    pub const REQUEST_ID: &str = "jsonrpc.request.id";
    /// The prompt's name.
    pub const PROMPT_NAME: &str = "gen_ai.prompt.name";
    /// `pipe` or `tcp`.
    pub const NETWORK_TRANSPORT: &str = "network.transport";
    /// `http` over Streamable HTTP.
    pub const NETWORK_PROTOCOL_NAME: &str = "network.protocol.name";
    /// The JSON-RPC error code of an answer that was an error.
    pub const RPC_STATUS_CODE: &str = "rpc.response.status_code";
    /// The server's host, on a client's span over HTTP.
    pub const SERVER_ADDRESS: &str = "server.address";
    /// The server's port, on a client's span over HTTP.
    pub const SERVER_PORT: &str = "server.port";
}

/// How the messages travel: `network.transport`.
#[cfg(any(feature = "client", feature = "server"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// stdio, a child process, any pair of byte streams.
    Pipe,
    /// Streamable HTTP.
    #[cfg(any(
        all(feature = "server", feature = "http-server"),
        all(feature = "client", feature = "http-client")
    ))]
    Tcp,
}

#[cfg(any(feature = "client", feature = "server"))]
impl Transport {
    fn name(self) -> &'static str {
        match self {
            Self::Pipe => "pipe",
            #[cfg(any(
                all(feature = "server", feature = "http-server"),
                all(feature = "client", feature = "http-client")
            ))]
            Self::Tcp => "tcp",
        }
    }

    fn protocol(self) -> Option<&'static str> {
        match self {
            Self::Pipe => None,
            #[cfg(any(
                all(feature = "server", feature = "http-server"),
                all(feature = "client", feature = "http-client")
            ))]
            Self::Tcp => Some("http"),
        }
    }
}

/// The most characters of a name, a URI or an id a span holds: a peer may
/// send any length, and a span must not become a megabyte.
#[cfg(any(feature = "client", feature = "server"))]
const MAX_CHARS: usize = 200;

#[cfg(any(feature = "client", feature = "server"))]
fn bounded(text: &str) -> Cow<'_, str> {
    toolkit_core::text::cut(text, MAX_CHARS)
}

/// What a request is about, as its span names it.
#[cfg(any(feature = "client", feature = "server"))]
#[derive(Clone, Copy, Default)]
pub(crate) struct About<'a> {
    method: &'a str,
    tool: Option<&'a str>,
    prompt: Option<&'a str>,
    uri: Option<&'a str>,
    arguments: Option<&'a JsonObject>,
}

#[cfg(any(feature = "client", feature = "server"))]
impl<'a> About<'a> {
    /// A request of `method`.
    pub(crate) fn new(method: &'a str) -> Self {
        Self {
            method,
            ..Self::default()
        }
    }

    /// The tool a `tools/call` calls.
    pub(crate) fn tool(mut self, name: &'a str) -> Self {
        self.tool = Some(name);
        self
    }

    /// A call's arguments, recorded only while content is captured.
    pub(crate) fn arguments(mut self, arguments: Option<&'a JsonObject>) -> Self {
        self.arguments = arguments;
        self
    }

    /// The prompt a `prompts/get` fills in.
    pub(crate) fn prompt(mut self, name: &'a str) -> Self {
        self.prompt = Some(name);
        self
    }

    /// The resource a request is about.
    pub(crate) fn uri(mut self, uri: &'a str) -> Self {
        self.uri = Some(uri);
        self
    }

    /// `{mcp.method.name} {target}`, the target a tool's or a prompt's name.
    fn span_name(&self) -> String {
        let target = self.tool.or(self.prompt).unwrap_or_default();
        SpanName(&bounded(self.method), &bounded(target)).to_string()
    }

    /// The call's arguments, as JSON text, if content is captured.
    fn captured_arguments(&self) -> Option<String> {
        if self.tool.is_none() || !captures_content() {
            return None;
        }
        let arguments = self.arguments.cloned().unwrap_or_default();
        Some(serde_json::Value::Object(arguments).to_string())
    }
}

/// What a request a client sends is about.
#[cfg(feature = "client")]
#[allow(deprecated)] // resources/subscribe: 2025-11-25 only
fn about(request: &ClientRequest) -> About<'_> {
    let about = About::new(request.method());
    match request {
        ClientRequest::CallToolRequest(call) => about
            .tool(&call.params.name)
            .arguments(call.params.arguments.as_ref()),
        ClientRequest::GetPromptRequest(get) => about.prompt(&get.params.name),
        ClientRequest::ReadResourceRequest(read) => about.uri(&read.params.uri),
        ClientRequest::SubscribeRequest(subscribe) => about.uri(&subscribe.params.uri),
        ClientRequest::UnsubscribeRequest(unsubscribe) => about.uri(&unsubscribe.params.uri),
        _ => about,
    }
}

/// The span of one request the server handles, or `None` when no
/// subscriber wants it (then a load of tracing's interest in the call
/// site, nothing else). Its parent is the trace context in the request's
/// `_meta` when the `opentelemetry` feature is on and the context is valid.
#[cfg(feature = "server")]
#[inline]
pub(crate) fn server_span(
    about: &About<'_>,
    context: &RequestContext<RoleServer>,
    transport: Option<Transport>,
) -> Option<Span> {
    // The fields are computed only when a subscriber wants the span.
    // A root unless the request carries a trace context: the spans around
    // it are rmcp's, which last as long as the connection, and a trace
    // rooted there would hold every request of a session and never end.
    let span = tracing::info_span!(
        target: "toolkit_mcp::telemetry",
        parent: None,
        "mcp.server",
        "otel.name" = %about.span_name(),
        "otel.kind" = "server",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "mcp.method.name" = &*bounded(about.method),
        "mcp.protocol.version" = context.protocol_version().as_ref().map(|version| version.as_str()),
        "mcp.session.id" = session_id(context).as_deref(),
        "mcp.resource.uri" = about.uri.map(bounded).as_deref(),
        "jsonrpc.request.id" = &*bounded(&context.id.to_string()),
        "gen_ai.operation.name" = about.tool.map(|_| EXECUTE_TOOL),
        "gen_ai.tool.name" = about.tool.map(bounded).as_deref(),
        "gen_ai.prompt.name" = about.prompt.map(bounded).as_deref(),
        "network.transport" = transport.map(Transport::name),
        "network.protocol.name" = transport.and_then(Transport::protocol),
        "error.type" = Empty,
        "rpc.response.status_code" = Empty,
        "gen_ai.tool.call.arguments" = about.captured_arguments().as_deref(),
        "gen_ai.tool.call.result" = Empty,
    );
    if span.is_disabled() {
        return None;
    }
    propagation::adopt(&span, &context.meta);
    Some(span)
}

/// The HTTP session's id, from the request's headers (rmcp hands the
/// request's parts to the handler).
#[cfg(all(feature = "server", feature = "http-server"))]
fn session_id(context: &RequestContext<RoleServer>) -> Option<String> {
    let parts = context.extensions.get::<axum::http::request::Parts>()?;
    let id = parts.headers.get("mcp-session-id")?.to_str().ok()?;
    Some(bounded(id).into_owned())
}

/// Without the HTTP server there are no sessions.
#[cfg(all(feature = "server", not(feature = "http-server")))]
fn session_id(_context: &RequestContext<RoleServer>) -> Option<String> {
    None
}

/// Records the revision an `initialize` (or a client's opening) agreed on.
#[cfg(any(feature = "client", feature = "server"))]
pub(crate) fn record_version(span: &Span, version: &str) {
    span.record(attr::PROTOCOL_VERSION, version);
}

/// Records a JSON-RPC error answer.
#[cfg(any(feature = "client", feature = "server"))]
pub(crate) fn record_error(span: &Span, error: &ErrorData) {
    let code = error.code.0.to_string();
    span.record(toolkit_core::telemetry::attr::ERROR_TYPE, code.as_str());
    span.record(attr::RPC_STATUS_CODE, code.as_str());
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", &*bounded(&error.message));
}

/// Records a call's result: `tool_error` if it is an error, its JSON if
/// content is captured.
#[cfg(any(feature = "client", feature = "server"))]
pub(crate) fn record_result(span: &Span, result: &rmcp::model::CallToolResult) {
    if result.is_error == Some(true) {
        span.record(toolkit_core::telemetry::attr::ERROR_TYPE, "tool_error");
        span.record("otel.status_code", "ERROR");
    } else if captures_content()
        && let Ok(text) = serde_json::to_string(result)
    {
        span.record(
            toolkit_core::telemetry::attr::TOOL_CALL_RESULT,
            text.as_str(),
        );
    }
}

/// A notification the server received: an event (`mcp.notification`)
/// rather than a span, as it has no answer to wait for.
#[cfg(feature = "server")]
pub(crate) fn notification_received(method: &str, transport: Option<Transport>) {
    let transport = transport.map(Transport::name);
    // The target is this module's path, `toolkit_mcp::telemetry`, as the
    // spans'.
    tracing::debug!(
        mcp.method.name = %bounded(method),
        network.transport = transport,
        "mcp.notification"
    );
}

/// Where a client sends its requests, as its spans name it.
#[cfg(feature = "client")]
#[derive(Debug, Clone)]
pub(crate) struct Peer {
    transport: Transport,
    address: Option<(String, u16)>,
}

#[cfg(feature = "client")]
impl Peer {
    /// A server run as a child process.
    pub(crate) fn pipe() -> Self {
        Self {
            transport: Transport::Pipe,
            address: None,
        }
    }

    /// A server at a Streamable HTTP endpoint.
    #[cfg(feature = "http-client")]
    pub(crate) fn http(url: &str) -> Self {
        let address = reqwest::Url::parse(url).ok().and_then(|url| {
            let host = url.host_str()?.to_owned();
            Some((host, url.port_or_known_default()?))
        });
        Self {
            transport: Transport::Tcp,
            address,
        }
    }
}

/// The span of one request a client sends, or `None` when no subscriber
/// wants it.
#[cfg(feature = "client")]
#[inline]
pub(crate) fn client_span(request: &ClientRequest, peer: &Peer) -> Option<Span> {
    // A match on the request's kind; the fields' values are computed only
    // when a subscriber wants the span.
    let about = about(request);
    let span = tracing::info_span!(
        target: "toolkit_mcp::telemetry",
        "mcp.client",
        "otel.name" = %about.span_name(),
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "mcp.method.name" = &*bounded(about.method),
        "mcp.protocol.version" = Empty,
        "mcp.resource.uri" = about.uri.map(bounded).as_deref(),
        "jsonrpc.request.id" = Empty,
        "gen_ai.operation.name" = about.tool.map(|_| EXECUTE_TOOL),
        "gen_ai.tool.name" = about.tool.map(bounded).as_deref(),
        "gen_ai.prompt.name" = about.prompt.map(bounded).as_deref(),
        "network.transport" = peer.transport.name(),
        "network.protocol.name" = peer.transport.protocol(),
        "server.address" = peer.address.as_ref().map(|(host, _)| host.as_str()),
        "server.port" = peer.address.as_ref().map(|(_, port)| *port),
        "error.type" = Empty,
        "rpc.response.status_code" = Empty,
        "gen_ai.tool.call.arguments" = about.captured_arguments().as_deref(),
        "gen_ai.tool.call.result" = Empty,
    );
    (!span.is_disabled()).then_some(span)
}

/// Records what is known once the request is sent: its id, and the
/// revision the connection speaks.
#[cfg(feature = "client")]
pub(crate) fn record_sent(span: &Span, id: &rmcp::model::RequestId, version: Option<&str>) {
    span.record(attr::REQUEST_ID, &*bounded(&id.to_string()));
    if let Some(version) = version {
        span.record(attr::PROTOCOL_VERSION, version);
    }
}

/// Records how a request the client sent ended.
#[cfg(feature = "client")]
pub(crate) fn record_answer(span: &Span, answer: &Result<ServerResult, rmcp::ServiceError>) {
    match answer {
        Ok(ServerResult::CallToolResult(result)) => record_result(span, result),
        Ok(_) => {}
        Err(error) => record_failure(span, error),
    }
}

/// The span of opening a connection to a server.
#[cfg(feature = "client")]
pub(crate) fn connect_span(peer: &Peer) -> Span {
    tracing::info_span!(
        target: "toolkit_mcp::telemetry",
        "mcp.client.connect",
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "mcp.protocol.version" = Empty,
        "network.transport" = peer.transport.name(),
        "network.protocol.name" = peer.transport.protocol(),
        "server.address" = peer.address.as_ref().map(|(host, _)| host.as_str()),
        "server.port" = peer.address.as_ref().map(|(_, port)| *port),
        "error.type" = Empty,
    )
}

/// Records why a connection could not be opened.
#[cfg(feature = "client")]
pub(crate) fn record_connect_failure(span: &Span, kind: crate::ClientErrorKind) {
    let kind = match kind {
        crate::ClientErrorKind::Unreachable => "unreachable",
        crate::ClientErrorKind::Incompatible => "incompatible",
        _ => "other",
    };
    record_abandoned(span, kind);
}

/// Records why a request the client sent got no answer.
#[cfg(feature = "client")]
pub(crate) fn record_failure(span: &Span, error: &rmcp::ServiceError) {
    use rmcp::ServiceError;
    let kind = match error {
        ServiceError::McpError(error) => return record_error(span, error),
        ServiceError::Timeout { .. } => "timeout",
        ServiceError::Cancelled { .. } => "cancelled",
        ServiceError::UnexpectedResponse => "unexpected_response",
        _ => "transport",
    };
    record_abandoned(span, kind);
}

/// Records that a request was given up before its answer: timed out, or
/// cancelled by the caller.
#[cfg(feature = "client")]
pub(crate) fn record_abandoned(span: &Span, kind: &'static str) {
    span.record(toolkit_core::telemetry::attr::ERROR_TYPE, kind);
    span.record("otel.status_code", "ERROR");
}

/// The `_meta` entries that carry the trace context of `span` (or of the
/// current span, when the client's own span is not wanted) to the server:
/// `None` without the `opentelemetry` feature, or without a valid context.
#[cfg(feature = "client")]
pub(crate) fn outgoing_meta(span: Option<&Span>) -> Option<RequestMetaObject> {
    propagation::meta(span)
}

/// Puts the trace context's entries into a request's own `_meta`.
#[cfg(feature = "client")]
pub(crate) fn inject(request: &mut ClientRequest, span: Option<&Span>) {
    if let Some(meta) = outgoing_meta(span) {
        request.get_meta_mut().extend(meta);
    }
}

#[cfg(all(feature = "opentelemetry", any(feature = "client", feature = "server")))]
mod propagation {
    //! W3C trace context in `params._meta`, written and read by hand:
    //! opentelemetry's `TraceContextPropagator` lives in the SDK, which a
    //! library should not pull into its users' builds, and the global
    //! propagator is a no-op until the host sets one, which would leave
    //! traces silently cut at every MCP hop.

    #[cfg(feature = "server")]
    use std::str::FromStr;

    #[cfg(feature = "server")]
    use opentelemetry::Context;
    use opentelemetry::trace::TraceContextExt;
    #[cfg(feature = "server")]
    use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
    use rmcp::model::RequestMetaObject;
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    #[cfg(feature = "client")]
    pub(super) fn meta(span: Option<&Span>) -> Option<RequestMetaObject> {
        let context = match span {
            Some(span) => span.context(),
            None => Span::current().context(),
        };
        let span = context.span();
        let found = span.span_context();
        if !found.is_valid() {
            return None;
        }
        let mut meta = RequestMetaObject::new();
        meta.set_traceparent(format!(
            "00-{}-{}-{:02x}",
            found.trace_id(),
            found.span_id(),
            found.trace_flags().to_u8()
        ));
        let state = found.trace_state().header();
        if !state.is_empty() {
            meta.set_tracestate(state);
        }
        Some(meta)
    }

    /// Makes the trace context in `meta` the parent of `span`, if it is
    /// valid; anything else leaves the span where it was (a fresh trace, or
    /// the ambient parent).
    #[cfg(feature = "server")]
    pub(super) fn adopt(span: &Span, meta: &RequestMetaObject) {
        let Some(parent) = meta
            .get_traceparent()
            .and_then(|traceparent| parse(traceparent, meta.get_tracestate()))
        else {
            return;
        };
        // Fails only without an OpenTelemetry layer: nothing to parent then.
        let _ = span.set_parent(Context::new().with_remote_span_context(parent));
    }

    /// A `traceparent` (and its `tracestate`) as W3C Trace Context reads
    /// them; `None` for anything malformed.
    #[cfg(feature = "server")]
    pub(crate) fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<SpanContext> {
        let traceparent = traceparent.trim();
        let mut parts = traceparent.splitn(5, '-');
        let version = parts.next()?;
        let trace_id = parts.next()?;
        let span_id = parts.next()?;
        let flags = parts.next()?;
        let rest = parts.next();
        let lower_hex = |text: &str, len: usize| {
            text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        // Version ff is invalid; version 00 has exactly four fields, later
        // versions may add fields after them.
        if !lower_hex(version, 2) || version == "ff" || (version == "00" && rest.is_some()) {
            return None;
        }
        if !lower_hex(trace_id, 32) || !lower_hex(span_id, 16) || !lower_hex(flags, 2) {
            return None;
        }
        let trace_id = TraceId::from_hex(trace_id).ok()?;
        let span_id = SpanId::from_hex(span_id).ok()?;
        if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
            return None;
        }
        let flags = u8::from_str_radix(flags, 16).ok()?;
        // A malformed tracestate is dropped, the traceparent kept.
        let state = tracestate
            .and_then(|state| TraceState::from_str(state).ok())
            .unwrap_or_default();
        Some(SpanContext::new(
            trace_id,
            span_id,
            TraceFlags::new(flags & TraceFlags::SAMPLED.to_u8()),
            true,
            state,
        ))
    }

    #[cfg(all(test, feature = "server"))]
    mod tests {
        use super::parse;

        #[test]
        fn reads_a_valid_traceparent() {
            let parent = parse(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                Some("rojo=00f067aa0ba902b7"),
            )
            .unwrap();
            assert_eq!(
                parent.trace_id().to_string(),
                "4bf92f3577b34da6a3ce929d0e0e4736"
            );
            assert!(parent.is_sampled());
            assert_eq!(parent.trace_state().get("rojo"), Some("00f067aa0ba902b7"));
        }

        #[test]
        fn refuses_malformed_ones() {
            for bad in [
                "",
                "00",
                "zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
                "00-é4f92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ] {
                assert!(parse(bad, None).is_none(), "{bad}");
            }
        }
    }
}

#[cfg(all(
    not(feature = "opentelemetry"),
    any(feature = "client", feature = "server")
))]
mod propagation {
    //! Without OpenTelemetry there are no trace ids to carry.

    use rmcp::model::RequestMetaObject;
    use tracing::Span;

    #[cfg(feature = "client")]
    #[inline]
    pub(super) fn meta(_span: Option<&Span>) -> Option<RequestMetaObject> {
        None
    }

    #[cfg(feature = "server")]
    #[inline]
    pub(super) fn adopt(_span: &Span, _meta: &RequestMetaObject) {}
}
