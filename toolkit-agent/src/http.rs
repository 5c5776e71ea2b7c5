//! Providers over HTTP.

use std::fmt;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use toolkit_core::Provider;
use toolkit_core::response::Turn;

use crate::model::{Model, ModelError, ModelFuture, OnProgress, TimeoutLimit};
use crate::providers::{Api, Dialect};
use crate::retry::{RetryPolicy, parse_retry_after};
use crate::sse::SseDecoder;
use crate::telemetry::{self, metrics};
use tracing::Instrument;

/// A model behind an HTTP endpoint in one of the four providers.
///
/// ```no_run
/// use toolkit_agent::HttpModel;
///
/// // OpenAI itself; the key comes from OPENAI_API_KEY.
/// let openai = HttpModel::openai_chat("gpt-4.1-mini").build()?;
/// // Any compatible server (llama.cpp, vLLM, Ollama): no key needed.
/// let local = HttpModel::openai_chat("gemma")
///     .base_url("http://127.0.0.1:8080/v1")
///     .no_key()
///     .build()?;
/// # Ok::<(), toolkit_agent::ModelError>(())
/// ```
///
/// Its `Debug` shows no secret: not the key, nor the values of the extra
/// [headers](HttpModelBuilder::header) and [query](HttpModelBuilder::query)
/// parameters, only their names.
#[derive(Clone)]
pub struct HttpModel {
    provider: Provider,
    base_url: String,
    model: String,
    key: Option<String>,
    headers: HeaderMap,
    query: Vec<(String, String)>,
    retry: RetryPolicy,
    timeout: Duration,
    connect_timeout: Duration,
    client: reqwest::Client,
    tools_with_answer_schema: bool,
}

/// Settings of an [`HttpModel`].
#[derive(Clone)]
#[must_use = "call `build` to get the model"]
pub struct HttpModelBuilder {
    provider: Provider,
    base_url: String,
    model: String,
    key: Key,
    headers: Vec<(String, String)>,
    query: Vec<(String, String)>,
    retry: RetryPolicy,
    timeout: Duration,
    connect_timeout: Duration,
    tools_with_answer_schema: bool,
}

#[derive(Clone)]
enum Key {
    Env(String),
    Given(String),
    None,
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Env(name) => write!(f, "from ${name}"),
            Self::Given(_) => f.write_str("given"),
            Self::None => f.write_str("none"),
        }
    }
}

/// Names only: values of headers and query parameters may be secrets.
struct Names<'a, I>(&'a I);

impl<'a, I> fmt::Debug for Names<'a, I>
where
    &'a I: IntoIterator,
    <&'a I as IntoIterator>::Item: NameOf,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.into_iter().map(|entry| entry.name_of()))
            .finish()
    }
}

trait NameOf {
    fn name_of(&self) -> String;
}

impl NameOf for &(String, String) {
    fn name_of(&self) -> String {
        self.0.clone()
    }
}

impl NameOf for (&HeaderName, &HeaderValue) {
    fn name_of(&self) -> String {
        self.0.as_str().to_owned()
    }
}

impl fmt::Debug for HttpModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpModel")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("key", &self.key.as_ref().map(|_| "given"))
            .field("headers", &Names(&self.headers))
            .field("query", &Names(&self.query))
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for HttpModelBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpModelBuilder")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("key", &self.key)
            .field("headers", &Names(&self.headers))
            .field("query", &Names(&self.query))
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

impl HttpModel {
    /// OpenAI Chat Completions (`{base}/chat/completions`); base URL
    /// `https://api.openai.com/v1`, key from `OPENAI_API_KEY`.
    pub fn openai_chat(model: impl Into<String>) -> HttpModelBuilder {
        HttpModelBuilder::new(Api::Chat { strict: false }, model)
    }

    /// OpenAI Responses (`{base}/responses`); base URL
    /// `https://api.openai.com/v1`, key from `OPENAI_API_KEY`.
    pub fn openai_responses(model: impl Into<String>) -> HttpModelBuilder {
        HttpModelBuilder::new(Api::Responses, model)
    }

    /// Anthropic Messages (`{base}/messages`); base URL
    /// `https://api.anthropic.com/v1`, key from `ANTHROPIC_API_KEY`.
    pub fn anthropic(model: impl Into<String>) -> HttpModelBuilder {
        HttpModelBuilder::new(Api::Anthropic, model)
    }

    /// Gemini (`{base}/models/{model}:generateContent`); base URL
    /// `https://generativelanguage.googleapis.com/v1beta`, key from
    /// `GEMINI_API_KEY`.
    pub fn gemini(model: impl Into<String>) -> HttpModelBuilder {
        HttpModelBuilder::new(Api::Gemini, model)
    }

    /// An endpoint in `provider` with that provider's defaults. Strict
    /// mode and MCP, which are not endpoints of their own, give Chat
    /// Completions (a conversation chooses strict mode with
    /// [`Conversation::set_strict`](crate::Conversation::set_strict)).
    pub fn for_provider(provider: Provider, model: impl Into<String>) -> HttpModelBuilder {
        HttpModelBuilder::new(Api::of(provider).endpoint(), model)
    }

    /// The model's name, as sent.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The wire format of the model's API.
    fn dialect(&self) -> &'static dyn Dialect {
        Api::of(self.provider).dialect()
    }

    fn url(&self, stream: bool) -> String {
        self.dialect().url(&self.base_url, &self.model, stream)
    }

    /// The URL with the extra query parameters. A URL that does not parse
    /// is left for the client, whose send then fails saying why.
    fn full_url(&self, stream: bool) -> String {
        let url = self.url(stream);
        if self.query.is_empty() {
            return url;
        }
        match reqwest::Url::parse(&url) {
            Ok(mut parsed) => {
                parsed.query_pairs_mut().extend_pairs(&self.query);
                parsed.into()
            }
            Err(_) => url,
        }
    }

    /// The request's span (src/telemetry.rs).
    fn span(&self, body: &Value, stream: bool) -> tracing::Span {
        telemetry::model_span(self.provider, &self.model, &self.base_url, body, stream)
    }

    /// The body as sent: the model's name added, and the stream switch.
    fn body(&self, request: &Value, stream: bool) -> Value {
        let mut body = request.clone();
        if let Value::Object(object) = &mut body {
            self.dialect().prepare(object, &self.model, stream);
        }
        body
    }

    fn request(&self, body: &Value, stream: bool) -> reqwest::RequestBuilder {
        let request = self.client.post(self.full_url(stream)).json(body);
        let mut request = self.dialect().headers(request, self.key.as_deref());
        for (name, value) in self.dialect().body_headers(body) {
            request = request.header(name, value);
        }
        // Last, so that an extra header replaces one of the same name.
        request.headers(self.headers.clone())
    }

    /// Sends the body, retrying refusals for now and lost connections;
    /// returns the first response with a success status.
    ///
    /// A request the server never answered because it had closed the
    /// kept-alive connection the request went out on (HTTP lets a server
    /// close an idle connection at any time; llama.cpp's server closes one
    /// after every streamed answer while still advertising keep-alive) is
    /// sent once more at once, on a new connection, outside the retry
    /// budget: it is the connection that failed, not the request, and a
    /// host that turned retries off still expects its request to be sent.
    async fn send(&self, body: &Value, stream: bool) -> Result<reqwest::Response, ModelError> {
        let mut attempt = 0;
        let mut retry = 0;
        let mut resent_on_closed = false;
        loop {
            attempt += 1;
            let outcome = self.request(body, stream).send().await;
            if let Err(error) = &outcome
                && !resent_on_closed
                && closed_before_answering(error)
            {
                resent_on_closed = true;
                telemetry::retry(attempt, "connection_closed", None);
                continue;
            }
            let (error, retry_after) = match outcome {
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|value| value.to_str().ok())
                        .and_then(parse_retry_after);
                    let body = response.text().await.unwrap_or_default();
                    let error = ModelError::Status {
                        status,
                        body,
                        retry_after,
                        attempts: attempt,
                    };
                    if !RetryPolicy::retries_status(status) {
                        return Err(error);
                    }
                    (error, retry_after)
                }
                Err(error) => (self.transport(error, attempt), None),
            };
            if retry >= self.retry.max_retries {
                return Err(error);
            }
            let status = match &error {
                ModelError::Status { status, .. } => Some(*status),
                _ => None,
            };
            telemetry::retry(attempt, &telemetry::model_error_kind(&error), status);
            tokio::time::sleep(self.retry.delay(retry, retry_after)).await;
            retry += 1;
        }
    }
}

/// Whether the request failed because the connection closed before any
/// answer came (hyper's "incomplete message" with no response at all).
fn closed_before_answering(error: &reqwest::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(hyper) = cause.downcast_ref::<hyper::Error>() {
            return hyper.is_incomplete_message();
        }
        source = cause.source();
    }
    false
}

impl HttpModel {
    /// The error of a request that did not complete: a
    /// [timeout](ModelError::Timeout) naming the limit it hit, or what
    /// the connection did.
    fn transport(&self, error: reqwest::Error, attempts: u32) -> ModelError {
        if error.is_timeout() {
            // reqwest marks a connect timeout as a connect error too.
            let limit = if error.is_connect() {
                TimeoutLimit::Connect(self.connect_timeout)
            } else {
                TimeoutLimit::Request(self.timeout)
            };
            return ModelError::Timeout { limit, attempts };
        }
        // The URL may carry secrets (a key in the query, as some gateways
        // take it; credentials before the host): it is named without them.
        let place = error.url().map(|url| {
            let mut url = url.clone();
            url.set_query(None);
            let _ = url.set_password(None);
            let _ = url.set_username("");
            url.to_string()
        });
        let error = error.without_url();
        let message = match place {
            Some(place) => format!("{place}: {}", error_chain(&error)),
            None => error_chain(&error),
        };
        #[allow(deprecated)]
        ModelError::Transport {
            timeout: false,
            message,
            attempts,
        }
    }
}

/// The error and its causes, as reqwest's own message leaves them out.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

impl Model for HttpModel {
    fn provider(&self) -> Provider {
        self.provider
    }

    fn takes_tools_with_answer_schema(&self) -> bool {
        self.tools_with_answer_schema
    }

    fn complete<'a>(&'a self, request: &'a Value) -> ModelFuture<'a> {
        Box::pin(async move {
            let body = self.body(request, false);
            let span = self.span(&body, false);
            let metered = self.metered();
            let exchange = async {
                let response = self.send(&body, false).await?;
                let bytes = response
                    .bytes()
                    .await
                    .map_err(|error| self.transport(error, 1))?;
                let turn = self.provider.read_slice(&bytes)?;
                telemetry::record_turn(&span, &turn);
                Ok(turn)
            };
            let outcome = exchange
                .instrument(span.clone())
                .await
                .inspect_err(|error| telemetry::record_error(&span, error));
            self.finish(metered, outcome)
        })
    }

    fn stream<'a>(&'a self, request: &'a Value, progress: OnProgress<'a>) -> ModelFuture<'a> {
        Box::pin(async move {
            let body = self.body(request, true);
            let span = self.span(&body, true);
            let metered = self.metered();
            let exchange = async {
                let response = self.send(&body, true).await?;
                let mut accumulator = self.provider.accumulator();
                let mut decoder = SseDecoder::default();
                let mut bytes = response.bytes_stream();
                while let Some(chunk) = bytes.next().await {
                    let chunk = chunk.map_err(|error| self.transport(error, 1))?;
                    for data in decoder.push(&chunk) {
                        accumulator.push_data(&data)?;
                        progress(&accumulator);
                    }
                }
                if let Some(data) = decoder.finish() {
                    accumulator.push_data(&data)?;
                    progress(&accumulator);
                }
                let turn = accumulator.finish()?;
                telemetry::record_turn(&span, &turn);
                Ok(turn)
            };
            let outcome = exchange
                .instrument(span.clone())
                .await
                .inspect_err(|error| telemetry::record_error(&span, error));
            self.finish(metered, outcome)
        })
    }
}

impl HttpModel {
    /// The start of a request's measurements, when a subscriber wants
    /// the metrics (src/telemetry/metrics.rs); `None` costs nothing more.
    fn metered(&self) -> Option<metrics::Request<'_>> {
        metrics::wanted().then(|| metrics::Request {
            provider: self.provider,
            model: &self.model,
            base_url: &self.base_url,
            start: Instant::now(),
        })
    }

    /// Records the request's metrics, if measured, and hands the turn on.
    fn finish(
        &self,
        metered: Option<metrics::Request<'_>>,
        outcome: Result<Turn, ModelError>,
    ) -> Result<Turn, ModelError> {
        if let Some(request) = &metered {
            metrics::record(request, outcome.as_ref());
        }
        outcome
    }
}

impl HttpModelBuilder {
    fn new(api: Api, model: impl Into<String>) -> Self {
        let endpoint = api.dialect().endpoint();
        Self {
            provider: api.provider(),
            base_url: endpoint.base_url.to_owned(),
            model: model.into(),
            key: Key::Env(endpoint.key_var.to_owned()),
            headers: Vec::new(),
            query: Vec::new(),
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(10),
            tools_with_answer_schema: true,
        }
    }

    /// The endpoint's base URL (a trailing `/` is ignored).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// Reads the key from the environment variable `name` (each provider has
    /// a default); `build` fails when it is unset.
    pub fn key_env(mut self, name: impl Into<String>) -> Self {
        self.key = Key::Env(name.into());
        self
    }

    /// Uses `key`.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Key::Given(key.into());
        self
    }

    /// Sends no key (local servers).
    pub fn no_key(mut self) -> Self {
        self.key = Key::None;
        self
    }

    /// Sends this header with every request, streamed or not: a gateway's
    /// key (Azure's `api-key`), an organization, a beta flag. A header the
    /// model sends by itself (the key's, Anthropic's `anthropic-version`)
    /// is replaced by one of the same name given here; a name given twice
    /// is sent twice. [`build`](Self::build) fails on a name or value HTTP
    /// does not allow. Values are treated as secrets: never shown by
    /// `Debug`, nor in errors.
    ///
    /// ```no_run
    /// use toolkit_agent::HttpModel;
    ///
    /// // An Azure OpenAI deployment.
    /// let model = HttpModel::openai_chat("gpt-4.1-mini")
    ///     .base_url("https://example.openai.azure.com/openai/deployments/mini")
    ///     .no_key()
    ///     .header("api-key", std::env::var("AZURE_OPENAI_API_KEY").unwrap_or_default())
    ///     .query("api-version", "2024-10-21")
    ///     .build()?;
    /// # Ok::<(), toolkit_agent::ModelError>(())
    /// ```
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds this parameter to the query of every request's URL, streamed
    /// or not (after Gemini's own `alt=sse` when streaming), encoded as
    /// URLs require. Values are not shown by `Debug`.
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    // The setters below share their form (take a value, set a field, give
    // the builder back), as every builder's do: one method per setting is
    // the builder's public shape, which a macro would hide from its docs.

    /// The retry policy (default: three retries from 500 ms).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The longest a whole request may take, streaming included (default
    /// five minutes). A request that takes longer fails with
    /// [`ModelError::Timeout`] naming this limit.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest connecting may take (default ten seconds). A connection
    /// that takes longer fails with [`ModelError::Timeout`] naming this
    /// limit.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Whether the endpoint can take tools and a response schema in one
    /// request and still call the tools (default: it can). Say `false` for
    /// a server that enforces the schema with a grammar, as llama.cpp's
    /// llama-server does: there the schema forces JSON from the first
    /// token and the model can never call a tool. A typed run
    /// ([`Run::answer`](crate::Run::answer)) on such a model asks for its
    /// answer through the final-answer tool instead of the schema.
    ///
    /// ```no_run
    /// use toolkit_agent::HttpModel;
    ///
    /// let llama = HttpModel::openai_chat("gemma")
    ///     .base_url("http://127.0.0.1:8080/v1")
    ///     .no_key()
    ///     .tools_with_answer_schema(false)
    ///     .build()?;
    /// # Ok::<(), toolkit_agent::ModelError>(())
    /// ```
    pub fn tools_with_answer_schema(mut self, takes_both: bool) -> Self {
        self.tools_with_answer_schema = takes_both;
        self
    }

    /// The model.
    pub fn build(self) -> Result<HttpModel, ModelError> {
        let key = match self.key {
            Key::Given(key) => Some(key),
            Key::None => None,
            Key::Env(name) => match std::env::var(&name) {
                Ok(key) if !key.is_empty() => Some(key),
                _ => {
                    return Err(ModelError::Config(format!(
                        "no API key: set {name} (or call `key`, or `no_key` for a local server)"
                    )));
                }
            },
        };
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return Err(ModelError::Config(format!(
                "the base URL `{}` is not http(s)",
                self.base_url
            )));
        }
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ModelError::Config(format!("`{name}` is not a valid HTTP header name"))
            })?;
            // The value is not quoted: it may be a secret.
            let mut value = HeaderValue::from_str(value).map_err(|_| {
                ModelError::Config(format!(
                    "the value of the header `{name}` is not a valid HTTP header value \
                     (visible ASCII and spaces, no line breaks)"
                ))
            })?;
            value.set_sensitive(true);
            headers.append(header, value);
        }
        if self.query.iter().any(|(name, _)| name.is_empty()) {
            return Err(ModelError::Config(
                "a query parameter has an empty name".to_owned(),
            ));
        }
        let client = toolkit_http::client_builder()
            .map_err(|error| ModelError::Config(format!("TLS could not be set up: {error}")))?
            .timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .build()
            .map_err(|error| ModelError::Config(error_chain(&error)))?;
        Ok(HttpModel {
            provider: self.provider,
            base_url: self.base_url,
            model: self.model,
            key,
            headers,
            query: self.query,
            retry: self.retry,
            timeout: self.timeout,
            connect_timeout: self.connect_timeout,
            client,
            tools_with_answer_schema: self.tools_with_answer_schema,
        })
    }
}
