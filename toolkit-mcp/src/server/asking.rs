//! A tool's questions, asked of the client: `elicitation/create` for the
//! user, `sampling/createMessage` for its model, `roots/list` for the
//! folders it works in, each only when the client declared the capability.
//!
//! Sampling is deprecated by SEP-2577 (rmcp marks its types so) but part of
//! 2025-11-25. Revision 2026-07-28 has no requests from server to client:
//! there the questions go back in the call's answer (multi-round input,
//! see `rounds`).
#![allow(deprecated)]

use std::sync::{Arc, Mutex, PoisonError};

use super::rounds::Rounds;

use rmcp::ErrorData;
use rmcp::model::{ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::{Value, json};
use toolkit_core::{
    AskError, Asker, Asking, ElicitAction, ElicitRequest, Elicited, Root, RootsRequest,
    SampleRequest, Sampled,
};

/// Asks the client of one call.
pub(crate) struct ClientAsker {
    peer: Peer<RoleServer>,
    capabilities: ClientCapabilities,
    lacking: Lacking,
    /// On 2026-07-28, questions go back in the call's answer instead of
    /// requests of their own.
    rounds: Option<Arc<Rounds>>,
}

/// The capability a call's question needed and the client had not
/// declared, once one did: on 2026-07-28 the call then ends in
/// `MissingRequiredClientCapabilityError` (`-32021`).
#[derive(Clone, Default)]
pub(crate) struct Lacking(Arc<Mutex<Option<&'static str>>>);

impl Lacking {
    fn note(&self, capability: &'static str) -> AskError {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(capability);
        AskError::Unsupported(capability)
    }

    /// The protocol's own error for a request of 2026-07-28 that failed
    /// for a capability its client did not declare, naming it; `Ok` when
    /// no question lacked one.
    pub(crate) fn refuse(&self) -> Result<(), ErrorData> {
        let Some(capability) = *self.0.lock().unwrap_or_else(PoisonError::into_inner) else {
            return Ok(());
        };
        let required = serde_json::from_value(json!({capability: {}}))
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Err(ErrorData::missing_required_client_capability(required))
    }
}

impl ClientAsker {
    /// The client of the call `context` answers: its capabilities from the
    /// request (2026-07-28) or from its `initialize` (2025-11-25).
    pub(crate) fn new(
        context: &RequestContext<RoleServer>,
        lacking: Lacking,
        rounds: Option<Arc<Rounds>>,
    ) -> Self {
        let capabilities = context
            .meta
            .client_capabilities()
            .or_else(|| {
                context
                    .peer
                    .peer_info()
                    .map(|info| info.capabilities.clone())
            })
            .unwrap_or_default();
        Self {
            peer: context.peer.clone(),
            capabilities,
            lacking,
            rounds,
        }
    }
}

fn failed(error: impl std::fmt::Display) -> AskError {
    AskError::Failed(error.to_string())
}

impl Asker for ClientAsker {
    fn elicit(&self, request: ElicitRequest) -> Asking<'_, Elicited> {
        Box::pin(async move {
            if self.capabilities.elicitation.is_none() {
                return Err(self.lacking.note("elicitation"));
            }
            let wire = json!({
                "mode": "form",
                "message": request.message,
                "requestedSchema": request.schema,
            });
            if let Some(rounds) = &self.rounds {
                let key = rounds.key(request.key, "elicitation");
                // An answer that is not one is asked for again.
                if let Some(Ok(answer)) = rounds.answer(&key).map(elicited) {
                    return Ok(answer);
                }
                rounds.defer(key, "elicitation/create", wire);
                return Err(AskError::Deferred);
            }
            let params: ElicitRequestParams = serde_json::from_value(wire).map_err(|error| {
                failed(format!(
                    "the schema is not one MCP elicitation takes: {error}"
                ))
            })?;
            let result = self.peer.create_elicitation(params).await.map_err(failed)?;
            elicited(&serde_json::to_value(result).map_err(failed)?)
        })
    }

    fn sample(&self, request: SampleRequest) -> Asking<'_, Sampled> {
        Box::pin(async move {
            if self.capabilities.sampling.is_none() {
                return Err(self.lacking.note("sampling"));
            }
            let mut params = json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": request.prompt}}],
                "maxTokens": request.max_tokens,
            });
            if let Some(system) = request.system {
                params["systemPrompt"] = json!(system);
            }
            if let Some(rounds) = &self.rounds {
                let key = rounds.key(request.key, "sampling");
                if let Some(Ok(answer)) = rounds.answer(&key).map(sampled) {
                    return Ok(answer);
                }
                rounds.defer(key, "sampling/createMessage", params);
                return Err(AskError::Deferred);
            }
            let params: CreateMessageRequestParams =
                serde_json::from_value(params).map_err(failed)?;
            let result = self.peer.create_message(params).await.map_err(failed)?;
            sampled(&serde_json::to_value(result).map_err(failed)?)
        })
    }

    fn roots(&self, request: RootsRequest) -> Asking<'_, Vec<Root>> {
        Box::pin(async move {
            if self.capabilities.roots.is_none() {
                return Err(self.lacking.note("roots"));
            }
            if let Some(rounds) = &self.rounds {
                let key = rounds.key(request.key, "roots");
                if let Some(Ok(answer)) = rounds.answer(&key).map(roots) {
                    return Ok(answer);
                }
                rounds.defer(key, "roots/list", json!({}));
                return Err(AskError::Deferred);
            }
            let result = self.peer.list_roots().await.map_err(failed)?;
            roots(&serde_json::to_value(result).map_err(failed)?)
        })
    }
}

/// The client's roots, as MCP writes a `ListRootsResult`.
fn roots(result: &Value) -> Result<Vec<Root>, AskError> {
    let Some(listed) = result.get("roots").and_then(Value::as_array) else {
        return Err(failed(format!(
            "the client's roots are not a list: {result}"
        )));
    };
    listed
        .iter()
        .map(|root| match root.get("uri").and_then(Value::as_str) {
            Some(uri) => {
                let mut found = Root::new(uri);
                found.name = root.get("name").and_then(Value::as_str).map(str::to_owned);
                Ok(found)
            }
            None => Err(failed(format!("a root of the client has no URI: {root}"))),
        })
        .collect()
}

/// The user's answer, as MCP writes an `ElicitResult`.
fn elicited(result: &Value) -> Result<Elicited, AskError> {
    let action = match result["action"].as_str() {
        Some("accept") => ElicitAction::Accept,
        Some("decline") => ElicitAction::Decline,
        Some("cancel") => ElicitAction::Cancel,
        other => {
            return Err(failed(format!(
                "the client answered an unknown action: {other:?}"
            )));
        }
    };
    let content = result
        .get("content")
        .filter(|content| !content.is_null())
        .cloned();
    let mut elicited = Elicited::new(action);
    elicited.content = content;
    Ok(elicited)
}

/// The model's completion, as MCP writes a `CreateMessageResult`: one
/// block, or (since 2025-11-25) a list of them, whose texts it holds.
fn sampled(result: &Value) -> Result<Sampled, AskError> {
    if !result.is_object() || result.get("content").is_none() {
        return Err(failed(format!(
            "the client's completion is not one: {result}"
        )));
    }
    let blocks = match &result["content"] {
        Value::Array(blocks) => blocks.clone(),
        block => vec![block.clone()],
    };
    let text = blocks
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut sampled = Sampled::new(text, result["model"].as_str().unwrap_or_default());
    sampled.stop_reason = result["stopReason"].as_str().map(str::to_owned);
    Ok(sampled)
}
