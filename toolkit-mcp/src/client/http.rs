//! The HTTP client for servers reached over Streamable HTTP.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse,
};
use sse_stream::Sse;

#[cfg(feature = "auth")]
use super::auth::Authorization;
use super::target::{Access, Given};

/// A client with the toolkit's TLS (`toolkit_http`), keeping no idle
/// connection.
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    toolkit_http::client_builder()
        .map_err(|error| format!("TLS could not be set up: {error}"))?
        // A kept connection whose previous response stream was not read
        // to its end makes the next request wait for the server's delayed
        // ACK (about 40 ms on Linux) on every call after the first; rmcp's
        // own client keeps no idle connection for the same reason.
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|error| format!("the HTTP client could not be made: {error}"))
}

/// What a request to the server carries to be let in.
pub(crate) enum Credentials {
    None,
    /// A token the host gave (`.bearer`).
    Bearer(String),
    /// Tokens from OAuth authorization, got when the server asks.
    #[cfg(feature = "auth")]
    OAuth(Arc<Authorization>),
}

#[cfg(feature = "auth")]
impl Credentials {
    /// The OAuth authorization, when the server is authorized so.
    pub(crate) fn authorization(&self) -> Option<&Authorization> {
        match self {
            Self::OAuth(authorization) => Some(authorization),
            _ => None,
        }
    }
}

/// rmcp's HTTP client with the server's credentials: a request the server
/// refuses for want of authorization is authorized (or its scopes stepped
/// up) and sent again.
#[derive(Clone)]
pub(crate) struct AuthorizedHttp {
    inner: reqwest::Client,
    credentials: Arc<Credentials>,
}

type HttpError = StreamableHttpError<reqwest::Error>;

impl AuthorizedHttp {
    pub(crate) fn new(inner: reqwest::Client, credentials: Arc<Credentials>) -> Self {
        Self { inner, credentials }
    }

    async fn send<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        match &*self.credentials {
            Credentials::None => call(None).await,
            Credentials::Bearer(token) => match call(Some(token.clone())).await {
                // A token the host gave cannot be renewed here: say
                // plainly that it is the one refused.
                Err(StreamableHttpError::AuthRequired(_)) => {
                    Err(StreamableHttpError::UnexpectedServerResponse(
                        "the server refused the bearer token (HTTP 401): it is invalid, \
                         expired or not meant for this server"
                            .into(),
                    ))
                }
                answer => answer,
            },
            #[cfg(feature = "auth")]
            Credentials::OAuth(authorization) => self.authorized(authorization, call).await,
        }
    }

    /// A request sent with OAuth tokens: authorized when the server asks,
    /// its scopes stepped up when the server wants more.
    #[cfg(feature = "auth")]
    async fn authorized<T, F, Fut>(
        &self,
        authorization: &Authorization,
        call: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let mut token = authorization.token().await?;
        let mut authorized = false;
        let mut step_ups = 0;
        loop {
            match call(token.clone()).await {
                // One new authorization a request: a server that refuses
                // the fresh token too is answered with its refusal.
                Err(StreamableHttpError::AuthRequired(challenge)) if !authorized => {
                    authorized = true;
                    token = Some(
                        authorization
                            .authorize(token.as_deref(), &challenge.www_authenticate_header)
                            .await?,
                    );
                }
                Err(StreamableHttpError::InsufficientScope(refusal))
                    if step_ups < authorization.step_ups() && refusal.can_upgrade() =>
                {
                    step_ups += 1;
                    let scope = refusal.get_required_scope().unwrap_or_default();
                    token = Some(authorization.step_up(scope).await?);
                }
                answer => return answer,
            }
        }
    }
}

/// The event-size limit of rmcp's default transport configuration.
fn default_max_sse_event_size() -> usize {
    StreamableHttpClientTransportConfig::default().max_sse_event_size
}

impl StreamableHttpClient for AuthorizedHttp {
    type Error = reqwest::Error;

    // The transport sends with the event-size limit of its configuration;
    // without one, the limit is that of the default configuration, as in
    // rmcp's own client.
    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            default_max_sse_event_size(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.send(|token| {
            self.inner.post_message_with_max_sse_event_size(
                Arc::clone(&uri),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.send(|token| {
            self.inner.delete_session(
                Arc::clone(&uri),
                Arc::clone(&session_id),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            default_max_sse_event_size(),
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.send(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                Arc::clone(&uri),
                session_id.clone(),
                last_event_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}

/// The HTTP client, headers and credentials of a server reached over HTTP,
/// kept across reconnections (tokens included).
pub(super) struct HttpAccess {
    client: reqwest::Client,
    headers: HashMap<HeaderName, HeaderValue>,
    pub(super) credentials: Arc<Credentials>,
}

impl HttpAccess {
    /// `url` is the resource an OAuth authorization is for.
    #[cfg_attr(not(feature = "auth"), allow(unused_variables))]
    pub(super) fn new(url: &str, access: &Access) -> Result<Self, String> {
        let client = http_client()?;
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
            Given::None => Credentials::None,
            Given::Bearer(token) => Credentials::Bearer(token.clone()),
            #[cfg(feature = "auth")]
            Given::OAuth(oauth) => {
                Credentials::OAuth(Arc::new(Authorization::new(oauth.clone(), url)?))
            }
        };
        Ok(Self {
            client,
            headers,
            credentials: Arc::new(credentials),
        })
    }

    /// The transport of one connection to the server at `url`.
    pub(super) fn transport(&self, url: &str) -> StreamableHttpClientTransport<AuthorizedHttp> {
        let client = AuthorizedHttp::new(self.client.clone(), Arc::clone(&self.credentials));
        let mut config = StreamableHttpClientTransportConfig::with_uri(url);
        config.custom_headers = self.headers.clone();
        StreamableHttpClientTransport::with_client(client, config)
    }
}
