//! The questions a running tool asks through its context, each with a time
//! limit and the call's cancellation; who answers is the host's
//! [`Asker`](super::ask::Asker).

use std::task::Poll;
use std::time::Duration;

use serde_json::Value;

use super::ask::{
    AskError, Asking, ElicitRequest, Elicited, Root, RootsRequest, SampleRequest, Sampled,
};
use super::context::CallContext;

impl CallContext {
    /// Asks the user a question, for an answer following `schema`, waiting
    /// at most `within`. The host answers when it can
    /// ([`CallHost::asker`](crate::CallHost::asker); an MCP server asks a
    /// client that has the `elicitation` capability); otherwise the error
    /// says why not.
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use toolkit_core::{CallContext, ElicitAction, tool};
    ///
    /// /// Deletes the folder, once the user confirms.
    /// #[tool]
    /// async fn delete_folder(
    ///     /// The folder.
    ///     path: String,
    ///     #[tool(context)] call: CallContext,
    /// ) -> Result<String, String> {
    ///     let schema = json!({
    ///         "type": "object",
    ///         "properties": {"confirm": {"type": "boolean"}},
    ///         "required": ["confirm"]
    ///     });
    ///     let answer = call
    ///         .elicit(format!("Delete {path}?"), schema, Duration::from_secs(60))
    ///         .await
    ///         .map_err(|error| error.to_string())?;
    ///     match (answer.action, answer.content) {
    ///         (ElicitAction::Accept, Some(content)) if content["confirm"] == true => {
    ///             Ok(format!("deleted {path}"))
    ///         }
    ///         _ => Ok("left in place".to_owned()),
    ///     }
    /// }
    /// ```
    // toolkit-mcp's `PromptContext` has the same signature on purpose: a
    // prompt asks as a tool does, and forwards to this.
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
    /// within its call, say).
    pub async fn elicit_with(
        &self,
        request: ElicitRequest,
        within: Duration,
    ) -> Result<Elicited, AskError> {
        let asker = self.asker().ok_or(AskError::NoAsker)?;
        self.wait(asker.elicit(request), within).await
    }

    /// Asks the host's model for a completion, waiting at most `within`.
    /// The host answers when it can ([`CallHost::asker`](crate::CallHost::asker);
    /// an MCP server asks a client that has the `sampling` capability);
    /// otherwise the error says why not.
    pub async fn sample(
        &self,
        request: SampleRequest,
        within: Duration,
    ) -> Result<Sampled, AskError> {
        let asker = self.asker().ok_or(AskError::NoAsker)?;
        self.wait(asker.sample(request), within).await
    }

    /// The host's roots, the folders and files it works in, waiting at most
    /// `within`. The host answers when it can
    /// ([`CallHost::asker`](crate::CallHost::asker); an MCP server asks a
    /// client that has the `roots` capability, with `roots/list`);
    /// otherwise the error says why not.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolkit_core::{CallContext, tool};
    ///
    /// /// Lists the folders the user works in.
    /// #[tool]
    /// async fn workspaces(#[tool(context)] call: CallContext) -> Result<String, String> {
    ///     let roots = call
    ///         .roots(Duration::from_secs(10))
    ///         .await
    ///         .map_err(|error| error.to_string())?;
    ///     let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
    ///     Ok(uris.join("\n"))
    /// }
    /// ```
    pub async fn roots(&self, within: Duration) -> Result<Vec<Root>, AskError> {
        self.roots_with(RootsRequest::new(), within).await
    }

    /// [`roots`](Self::roots), with a whole request (one named within its
    /// call, say).
    pub async fn roots_with(
        &self,
        request: RootsRequest,
        within: Duration,
    ) -> Result<Vec<Root>, AskError> {
        let asker = self.asker().ok_or(AskError::NoAsker)?;
        self.wait(asker.roots(request), within).await
    }

    /// The answer, unless the time limit or the call's cancellation comes
    /// first.
    async fn wait<T>(&self, asking: Asking<'_, T>, within: Duration) -> Result<T, AskError> {
        let mut answer = std::pin::pin!(tokio::time::timeout(within, asking));
        let mut cancelled = std::pin::pin!(self.cancellation().cancelled());
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
