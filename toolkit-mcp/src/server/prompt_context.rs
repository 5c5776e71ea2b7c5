//! What a prompt's function may ask of the client while it makes the
//! prompt's messages: the user (elicitation), the client's model
//! (sampling), the client's roots. The questions go as a tool's do
//! (`asking`), under a time limit and the request's cancellation.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use serde_json::Value;
use toolkit_core::{
    AskError, Asker, Asking, Cancellation, ElicitRequest, Elicited, Root, RootsRequest,
    SampleRequest, Sampled,
};

/// The context of one `prompts/get`, for a prompt made with
/// [`Prompt::asking`](crate::Prompt::asking): it asks the client as a
/// tool's [`CallContext`](toolkit_core::CallContext) does, each question
/// only of a client that declared the capability. On revision 2026-07-28
/// the questions go back in the request's answer (multi-round input) and
/// the prompt is made again with the answers, so a question must keep its
/// name ([`ElicitRequest::key`]) from one round to the next.
#[derive(Clone)]
pub struct PromptContext {
    asker: Arc<dyn Asker>,
    cancellation: Cancellation,
}

impl PromptContext {
    pub(crate) fn new(asker: Arc<dyn Asker>, cancellation: Cancellation) -> Self {
        Self {
            asker,
            cancellation,
        }
    }

    /// The request's cancellation signal: the client cancelled, or went
    /// away.
    pub fn cancellation(&self) -> &Cancellation {
        &self.cancellation
    }

    /// Asks the user `message`, for an answer following `schema`, waiting
    /// at most `within`.
    pub async fn elicit(
        &self,
        message: impl Into<String>,
        schema: Value,
        within: Duration,
    ) -> Result<Elicited, AskError> {
        self.elicit_with(ElicitRequest::new(message, schema), within)
            .await
    }

    /// [`elicit`](Self::elicit), with a whole request (a question named
    /// within its request, say).
    pub async fn elicit_with(
        &self,
        request: ElicitRequest,
        within: Duration,
    ) -> Result<Elicited, AskError> {
        self.wait(self.asker.elicit(request), within).await
    }

    /// Asks the client's model for a completion, waiting at most `within`.
    pub async fn sample(
        &self,
        request: SampleRequest,
        within: Duration,
    ) -> Result<Sampled, AskError> {
        self.wait(self.asker.sample(request), within).await
    }

    /// The client's roots, waiting at most `within`.
    pub async fn roots(&self, within: Duration) -> Result<Vec<Root>, AskError> {
        self.roots_with(RootsRequest::new(), within).await
    }

    /// [`roots`](Self::roots), with a whole request (one named within its
    /// request, say).
    pub async fn roots_with(
        &self,
        request: RootsRequest,
        within: Duration,
    ) -> Result<Vec<Root>, AskError> {
        self.wait(self.asker.roots(request), within).await
    }

    /// The answer, unless the time limit or the request's cancellation
    /// comes first.
    async fn wait<T>(&self, asking: Asking<'_, T>, within: Duration) -> Result<T, AskError> {
        let mut answer = std::pin::pin!(tokio::time::timeout(within, asking));
        let mut cancelled = std::pin::pin!(self.cancellation.cancelled());
        std::future::poll_fn(|context| {
            if let Poll::Ready(answer) = answer.as_mut().poll(context) {
                return Poll::Ready(answer.unwrap_or(Err(AskError::TimedOut(within))));
            }
            if cancelled.as_mut().poll(context).is_ready() {
                return Poll::Ready(Err(AskError::Cancelled));
            }
            Poll::Pending
        })
        .await
    }
}

impl fmt::Debug for PromptContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptContext")
            .field("cancelled", &self.cancellation.is_cancelled())
            .finish_non_exhaustive()
    }
}
