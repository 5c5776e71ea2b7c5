//! What a prompt's function may ask of the client while it makes the
//! prompt's messages: the user (elicitation), the client's model
//! (sampling), the client's roots. The questions go as a tool's do
//! (`asking`), under a time limit and the request's cancellation.

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use toolkit_core::{
    AskError, CallContext, CallHost, Cancellation, ElicitRequest, Elicited, Root, RootsRequest,
    SampleRequest, Sampled,
};

/// The context of one `prompts/get`, for a prompt made with
/// [`Prompt::asking`](crate::Prompt::asking): it asks the client as a
/// tool's [`CallContext`] does (the same questions, time limits and
/// errors), each question only of a client that declared the capability.
/// On revision 2026-07-28 the questions go back in the request's answer
/// (multi-round input) and the prompt is made again with the answers, so a
/// question must keep its name ([`ElicitRequest::key`]) from one round to
/// the next.
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub struct PromptContext {
    /// A call context whose host is the client: the questions are a
    /// tool's, so they are asked by the same code.
    call: CallContext,
}

impl PromptContext {
    pub(crate) fn new(
        request_id: &str,
        prompt: &str,
        host: CallHost,
        cancellation: Cancellation,
    ) -> Self {
        Self {
            call: CallContext::new(request_id, prompt, cancellation, host),
        }
    }

    /// The request's cancellation signal: the client cancelled, or went
    /// away.
    pub fn cancellation(&self) -> &Cancellation {
        self.call.cancellation()
    }

    // `CallContext::elicit`'s signature, on purpose: a prompt asks as a
    // tool does.
    /// Asks the user `message`, for an answer following `schema`, waiting
    /// at most `within` ([`CallContext::elicit`]).
    pub async fn elicit(
        &self,
        message: impl Into<String>,
        schema: Value,
        within: Duration,
    ) -> Result<Elicited, AskError> {
        self.call.elicit(message, schema, within).await
    }

    /// [`elicit`](Self::elicit), with a whole request (a question named
    /// within its request, say).
    pub async fn elicit_with(
        &self,
        request: ElicitRequest,
        within: Duration,
    ) -> Result<Elicited, AskError> {
        self.call.elicit_with(request, within).await
    }

    /// Asks the client's model for a completion, waiting at most `within`
    /// ([`CallContext::sample`]).
    pub async fn sample(
        &self,
        request: SampleRequest,
        within: Duration,
    ) -> Result<Sampled, AskError> {
        self.call.sample(request, within).await
    }

    /// The client's roots, waiting at most `within`
    /// ([`CallContext::roots`]).
    pub async fn roots(&self, within: Duration) -> Result<Vec<Root>, AskError> {
        self.call.roots(within).await
    }

    /// [`roots`](Self::roots), with a whole request (one named within its
    /// request, say).
    pub async fn roots_with(
        &self,
        request: RootsRequest,
        within: Duration,
    ) -> Result<Vec<Root>, AskError> {
        self.call.roots_with(request, within).await
    }
}

impl fmt::Debug for PromptContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptContext")
            .field("prompt", &self.call.tool_name())
            .field("cancelled", &self.call.cancellation().is_cancelled())
            .finish_non_exhaustive()
    }
}
