//! What a running tool may ask of whoever called it: a question for the
//! user (elicitation), a completion from the caller's model (sampling), or
//! the caller's roots (the folders and files it works in). An MCP server
//! asks its client (`elicitation/create`, `sampling/createMessage`,
//! `roots/list`).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;

/// A future answer to a question a tool asked.
pub type Asking<'a, T> = Pin<Box<dyn Future<Output = Result<T, AskError>> + Send + 'a>>;

/// Answers what running tools ask of the host, for
/// [`CallHost::asker`](crate::CallHost::asker). Each method refuses by
/// default, for a host that can answer only one kind.
///
/// A tool asks through its context ([`CallContext::elicit`](crate::CallContext::elicit),
/// [`CallContext::sample`](crate::CallContext::sample), [`CallContext::roots`](crate::CallContext::roots)), which adds the time limit and the call's
/// cancellation: an implementation need not.
pub trait Asker: Send + Sync {
    /// Asks the user `request.message`, for an answer following
    /// `request.schema`.
    fn elicit(&self, request: ElicitRequest) -> Asking<'_, Elicited> {
        let _ = request;
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            "elicitation",
        ))))
    }

    /// Asks the host's model to complete `request`.
    fn sample(&self, request: SampleRequest) -> Asking<'_, Sampled> {
        let _ = request;
        Box::pin(std::future::ready(Err(AskError::Unsupported("sampling"))))
    }

    /// The host's roots: the folders and files (as URIs) it works in.
    fn roots(&self, request: RootsRequest) -> Asking<'_, Vec<Root>> {
        let _ = request;
        Box::pin(std::future::ready(Err(AskError::Unsupported("roots"))))
    }
}

/// A question for the user: a message, and the JSON Schema of the answer
/// (an object of flat properties: strings, numbers, booleans, enums).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ElicitRequest {
    /// What to ask.
    pub message: String,
    /// The schema of the answer wanted.
    pub schema: Value,
    /// The question's name within its call, when the tool gives one: a
    /// host that answers by calling the tool again (MCP 2026-07-28's
    /// multi-round input) matches answers to questions by it.
    pub key: Option<String>,
}

impl ElicitRequest {
    /// A question asking `message`, for an answer following `schema`.
    pub fn new(message: impl Into<String>, schema: Value) -> Self {
        Self {
            message: message.into(),
            schema,
            key: None,
        }
    }

    /// With a name within its call.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

/// What the user did with a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Exhaustive on purpose: a person answers, refuses or dismisses; no fourth way.
pub enum ElicitAction {
    /// Answered it.
    Accept,
    /// Refused to answer.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

impl ElicitAction {
    /// The action's name, as MCP writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

impl fmt::Display for ElicitAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The user's answer to a question.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Elicited {
    /// What the user did.
    pub action: ElicitAction,
    /// The answer, following the schema, when the user accepted.
    pub content: Option<Value>,
}

impl Elicited {
    /// What the user did, without an answer (declined, cancelled).
    pub fn new(action: ElicitAction) -> Self {
        Self {
            action,
            content: None,
        }
    }

    /// The user accepted and answered `content`.
    pub fn accepted(content: Value) -> Self {
        Self::new(ElicitAction::Accept).content(content)
    }

    /// With the answer.
    pub fn content(mut self, content: Value) -> Self {
        self.content = Some(content);
        self
    }
}

/// A request for a completion of the host's model: one user message, with
/// an optional system prompt.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SampleRequest {
    /// The user's message.
    pub prompt: String,
    /// The system prompt, when there is one.
    pub system: Option<String>,
    /// The most tokens the completion may take.
    pub max_tokens: u32,
    /// The request's name within its call, as for
    /// [`ElicitRequest::key`](ElicitRequest#structfield.key).
    pub key: Option<String>,
}

impl SampleRequest {
    /// A completion of `prompt` of at most `max_tokens` tokens.
    pub fn new(prompt: impl Into<String>, max_tokens: u32) -> Self {
        Self {
            prompt: prompt.into(),
            system: None,
            max_tokens,
            key: None,
        }
    }

    /// With a name within its call.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// With a system prompt.
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }
}

/// The completion of the host's model.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Sampled {
    /// The completion's text (empty when it holds none, such as an image).
    pub text: String,
    /// The model that made it.
    pub model: String,
    /// Why the model stopped, when the host says.
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// The completion `text`, made by `model`, without a stop reason.
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            model: model.into(),
            stop_reason: None,
        }
    }

    /// With why the model stopped.
    pub fn stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }
}

/// A request for the host's roots. It holds nothing but the request's name
/// within its call, as for
/// [`ElicitRequest::key`](ElicitRequest#structfield.key).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RootsRequest {
    /// The request's name within its call, when the tool gives one.
    pub key: Option<String>,
}

impl RootsRequest {
    /// A request without a name.
    pub fn new() -> Self {
        Self::default()
    }

    /// With a name within its call.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

/// One of the host's roots: a folder or file it works in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Root {
    /// Where it is: a URI (`file:///home/ada/project`).
    pub uri: String,
    /// A name for people, when the host gives one.
    pub name: Option<String>,
}

impl Root {
    /// The root at `uri`, without a name.
    pub fn new(uri: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: None,
        }
    }

    /// With a name for people.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Why a question got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AskError {
    /// The host gave the call nobody to ask.
    NoAsker,
    /// Whoever would answer cannot answer this kind of question: the
    /// capability it lacks (`elicitation`, `sampling`, `roots`).
    Unsupported(&'static str),
    /// No answer came within the time limit.
    TimedOut(Duration),
    /// The call was cancelled while it waited.
    Cancelled,
    /// Asking failed: the reason.
    Failed(String),
    /// The question goes back to the client with the call's answer (MCP
    /// 2026-07-28's multi-round input): the tool should stop, and is called
    /// again with the answer.
    Deferred,
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::NoAsker => f.write_str("the host offers no way to ask questions"),
            AskError::Unsupported(capability) => write!(
                f,
                "the client cannot answer this (it lacks the `{capability}` capability)"
            ),
            AskError::TimedOut(limit) => write!(f, "no answer within {} s", limit.as_secs_f64()),
            AskError::Cancelled => {
                f.write_str("the call was cancelled while it waited for an answer")
            }
            AskError::Failed(reason) => write!(f, "asking failed: {reason}"),
            AskError::Deferred => f.write_str(
                "the question went to the client; the call is made again with its answer",
            ),
        }
    }
}

impl std::error::Error for AskError {}
