//! What a model endpoint does: a request body in, an assistant turn out.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;
use toolkit_core::Provider;
use toolkit_core::response::{Accumulator, ReadError, Turn};

/// The future a [`Model`] returns.
pub type ModelFuture<'a> = Pin<Box<dyn Future<Output = Result<Turn, ModelError>> + Send + 'a>>;

/// Called with the accumulator after each streamed event, so a host can show
/// text and partial arguments as they arrive.
pub type OnProgress<'a> = &'a mut (dyn FnMut(&Accumulator) + Send);

/// A model endpoint.
///
/// The request is a complete body in the model's [`Provider`], as a
/// conversation renders it, without the model's name: the endpoint adds
/// what identifies the model (a `model` field, or Gemini's URL).
///
/// Any client can implement it; [`HttpModel`](crate::HttpModel) is the one
/// that speaks to providers over HTTP.
pub trait Model: Send + Sync {
    /// The provider requests are written in and responses read from.
    fn provider(&self) -> Provider;

    /// Sends `request` and reads the assistant turn from the response.
    fn complete<'a>(&'a self, request: &'a Value) -> ModelFuture<'a>;

    /// Sends `request` as a streamed request, calling `progress` after each
    /// event; the turn is the one [`complete`](Self::complete) would give.
    ///
    /// The default does not stream: it calls `complete`.
    fn stream<'a>(&'a self, request: &'a Value, progress: OnProgress<'a>) -> ModelFuture<'a> {
        let _ = progress;
        self.complete(request)
    }

    /// Whether the endpoint can take tools and a response schema in one
    /// request and still call the tools. A server that enforces the schema
    /// with a grammar (llama.cpp's llama-server) forces every answer to be
    /// JSON of that schema, so its model can never call a tool; a typed run
    /// on such a model asks for its answer through the final-answer tool
    /// instead (see `AnswerMode`).
    ///
    /// The default says it can, as the hosted providers do.
    fn takes_tools_with_answer_schema(&self) -> bool {
        true
    }
}

impl<M: Model + ?Sized> Model for std::sync::Arc<M> {
    fn provider(&self) -> Provider {
        (**self).provider()
    }

    fn complete<'a>(&'a self, request: &'a Value) -> ModelFuture<'a> {
        (**self).complete(request)
    }

    fn stream<'a>(&'a self, request: &'a Value, progress: OnProgress<'a>) -> ModelFuture<'a> {
        (**self).stream(request, progress)
    }

    fn takes_tools_with_answer_schema(&self) -> bool {
        (**self).takes_tools_with_answer_schema()
    }
}

/// Why a model gave no turn.
///
/// A variant that wraps another error ([`Read`](Self::Read)) says what
/// failed and returns the cause from [`source`](std::error::Error::source);
/// the others say everything in their message.
#[derive(Debug)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider answered with an error status; `body` is what it sent
    /// (usually a JSON error object saying why).
    Status {
        /// The HTTP status.
        status: u16,
        /// The response body, as sent.
        body: String,
        /// How long the provider asked to wait (`Retry-After`), if it did.
        retry_after: Option<Duration>,
        /// How many attempts were made, retries included.
        attempts: u32,
    },
    /// The request did not complete: connection refused or reset, a
    /// name that does not resolve. A request that ran out of time is a
    /// [`Timeout`](Self::Timeout).
    Transport {
        /// What happened.
        message: String,
        /// Always `false`: a request that ran out of time is a
        /// [`ModelError::Timeout`].
        #[deprecated(note = "a request that ran out of time is `ModelError::Timeout`")]
        timeout: bool,
        /// How many attempts were made, retries included.
        attempts: u32,
    },
    /// The endpoint took longer than a limit of the model's allows: the
    /// model is slow, or the answer long, not unreachable.
    Timeout {
        /// The limit that was hit.
        limit: TimeoutLimit,
        /// How many attempts were made, retries included.
        attempts: u32,
    },
    /// The response arrived but holds no readable turn.
    Read(ReadError),
    /// The endpoint is misconfigured (no key in the environment, a bad
    /// base URL).
    Config(String),
}

/// Which time limit of an [`HttpModel`](crate::HttpModel) a request hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeoutLimit {
    /// Connecting took longer than the
    /// [connect timeout](crate::HttpModelBuilder::connect_timeout).
    Connect(Duration),
    /// The whole request, the answer's body included, took longer than
    /// the [timeout](crate::HttpModelBuilder::timeout).
    Request(Duration),
}

impl TimeoutLimit {
    /// The limit's length.
    pub fn duration(&self) -> Duration {
        match self {
            Self::Connect(limit) | Self::Request(limit) => *limit,
        }
    }
}

impl std::fmt::Display for TimeoutLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Connect(limit) => write!(f, "the connect timeout ({limit:?})"),
            Self::Request(limit) => write!(f, "the request timeout ({limit:?})"),
        }
    }
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Status {
                status,
                body,
                attempts,
                ..
            } => write!(
                f,
                "the model endpoint answered HTTP {status} (after {attempts} attempt(s)): {body}"
            ),
            ModelError::Transport {
                message, attempts, ..
            } => write!(
                f,
                "the model endpoint could not be reached (after {attempts} attempt(s)): {message}"
            ),
            ModelError::Timeout { limit, attempts } => write!(
                f,
                "the model endpoint did not answer within {limit} (after {attempts} attempt(s))"
            ),
            // The reader's error says what is wrong; it is the source.
            ModelError::Read(_) => f.write_str("the model's response could not be read"),
            ModelError::Config(message) => {
                write!(f, "the model endpoint is misconfigured: {message}")
            }
        }
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ModelError::Read(error) => Some(error),
            _ => None,
        }
    }
}

impl From<ReadError> for ModelError {
    fn from(error: ReadError) -> Self {
        ModelError::Read(error)
    }
}
