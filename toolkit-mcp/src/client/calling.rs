//! A call of one of the server's tools: forwarded with its cancellation,
//! time limit and progress, the server's questions answered, the result
//! made ours.

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use serde_json::Value;
use toolkit_core::{CallContext, ToolResult};

use super::connection::Shared;
use super::content;

/// The most rounds of questions (multi-round input) a call takes.
const MAX_ROUNDS: usize = 8;

/// How a call's exchange ended: the server's answer, or questions the
/// client could not answer.
enum Round {
    Done(Box<ServerResult>),
    Unanswered(String),
}

impl Shared {
    /// Forwards one call.
    #[allow(clippy::too_many_lines)]
    pub(super) async fn call(
        &self,
        tool: &str,
        arguments: Value,
        call: &CallContext,
    ) -> ToolResult {
        let (peer, generation) = match self.peer().await {
            Ok(peer) => peer,
            Err(error) => return ToolResult::error(error.to_string()),
        };
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let exchange = async {
            // A server of 2026-07-28 may answer with questions (multi-round
            // input): they are answered, and the call made again with the
            // answers, a few rounds at most.
            for _round in 0..MAX_ROUNDS {
                let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
                // rmcp gives every request a progress token of its own.
                let (answer, tracking) = self
                    .send_watched(&peer, request, |handle| {
                        call.reports_progress()
                            .then(|| self.handler.track(&handle.progress_token, call))
                    })
                    .await;
                let tracking = tracking.flatten();
                // Notifications are handled on tasks of their own: the last
                // reports may still be on their way.
                if tracking.is_some() {
                    for _ in 0..4 {
                        tokio::task::yield_now().await;
                    }
                }
                let Ok(ServerResult::InputRequiredResult(questions)) = &answer else {
                    return answer.map(|answer| Round::Done(Box::new(answer)));
                };
                let Some(asker) = self.handler.questions() else {
                    return Ok(Round::Unanswered(
                        "asked for input, and this client has no asker to answer it".to_owned(),
                    ));
                };
                let requests = serde_json::to_value(&questions.input_requests)
                    .ok()
                    .and_then(|requests| requests.as_object().cloned())
                    .unwrap_or_default();
                match asker.fulfill(&requests).await {
                    Ok(answers) => {
                        params.input_responses =
                            (!answers.is_empty()).then(|| answers.into_iter().collect());
                        params.request_state = questions.request_state.clone();
                    }
                    Err(reason) => return Ok(Round::Unanswered(reason)),
                }
            }
            Ok(Round::Unanswered(format!(
                "asked for input {MAX_ROUNDS} times without answering"
            )))
        };
        let limited = async {
            match self.timeout {
                Some(limit) => tokio::time::timeout(limit, exchange).await.ok(),
                None => Some(exchange.await),
            }
        };
        // Dropping the exchange (cancelled, timed out) sends
        // `notifications/cancelled` to the server.
        let answer = tokio::select! {
            answer = limited => answer,
            () = call.cancellation().cancelled() => {
                return ToolResult::error("the call was cancelled");
            }
        };
        let Some(answer) = answer else {
            let limit = self.timeout.unwrap_or_default();
            return ToolResult::error(format!(
                "the MCP server `{}` did not answer within {:.1} s; the call was cancelled",
                self.name,
                limit.as_secs_f64()
            ));
        };
        match answer {
            Ok(Round::Unanswered(reason)) => {
                ToolResult::error(format!("the MCP server `{}` {reason}", self.name))
            }
            Ok(Round::Done(answer)) => match *answer {
                ServerResult::CallToolResult(result) => match serde_json::to_value(&result) {
                    Ok(value) => content::to_result(&value),
                    Err(error) => ToolResult::error(format!("an unreadable result: {error}")),
                },
                _ => ToolResult::error(format!(
                    "the MCP server `{}` started a task, which this client does not follow",
                    self.name
                )),
            },
            Err(rmcp::ServiceError::McpError(error)) => ToolResult::error(format!(
                "the MCP server `{}` refused the call: {} (JSON-RPC error {})",
                self.name, error.message, error.code.0
            )),
            Err(error) => {
                self.forget(generation).await;
                ToolResult::error(format!(
                    "the MCP server `{}` stopped answering ({error}); it is started again at the next call",
                    self.name
                ))
            }
        }
    }
}
