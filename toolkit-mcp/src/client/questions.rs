//! A server's questions to the client (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`), answered by the host's [`Asker`] when the
//! client was given one ([`McpClientBuilder::asker`](crate::McpClientBuilder::asker)).

#![allow(deprecated)] // sampling: deprecated by SEP-2577, part of 2025-11-25

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ListRootsResult,
};
use serde_json::{Map, Value, json};
use toolkit_core::{AskError, Asker, ElicitAction, ElicitRequest, RootsRequest, SampleRequest};

/// How long the host may take to answer, unless the client's time limit
/// says otherwise.
pub(crate) const DEFAULT_WITHIN: Duration = Duration::from_secs(300);

/// The host's answerer as the client's builder holds it (told apart in
/// `Debug` output only by being there).
#[derive(Clone)]
pub(crate) struct HostAsker(pub(crate) Arc<dyn Asker>);

impl std::fmt::Debug for HostAsker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Asker")
    }
}

/// The host's answerer, and how long it may take.
#[derive(Clone)]
pub(crate) struct Questions {
    pub(crate) asker: Arc<dyn Asker>,
    pub(crate) within: Duration,
}

fn refused(error: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}

async fn answer<T>(within: Duration, asking: toolkit_core::Asking<'_, T>) -> Result<T, ErrorData> {
    match tokio::time::timeout(within, asking).await {
        Ok(answer) => answer.map_err(refused),
        Err(_) => Err(refused(AskError::TimedOut(within))),
    }
}

/// `content` with every property the schema gives a `default` and the
/// answer leaves out filled in (SEP-1034).
fn with_defaults(schema: &Value, content: Option<Value>) -> Value {
    let mut content = match content {
        Some(Value::Object(content)) => content,
        _ => Map::new(),
    };
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !content.contains_key(name)
            {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    Value::Object(content)
}

impl Questions {
    /// The answers to a server's `inputRequests` (multi-round input,
    /// 2026-07-28), each asked as if the server had sent the request.
    pub(crate) async fn fulfill(
        &self,
        requests: &Map<String, Value>,
    ) -> Result<Map<String, Value>, String> {
        let mut answers = Map::new();
        for (key, request) in requests {
            let params = request.get("params").cloned().unwrap_or(json!({}));
            let answer = match request.get("method").and_then(Value::as_str) {
                Some("elicitation/create") => {
                    let params =
                        serde_json::from_value(params).map_err(|error| error.to_string())?;
                    serde_json::to_value(
                        self.elicit(params)
                            .await
                            .map_err(|error| error.message.to_string())?,
                    )
                }
                Some("sampling/createMessage") => {
                    let params =
                        serde_json::from_value(params).map_err(|error| error.to_string())?;
                    serde_json::to_value(
                        self.sample(params)
                            .await
                            .map_err(|error| error.message.to_string())?,
                    )
                }
                Some("roots/list") => serde_json::to_value(
                    self.roots()
                        .await
                        .map_err(|error| error.message.to_string())?,
                ),
                other => {
                    return Err(format!(
                        "the server asks `{}`, which this client cannot answer",
                        other.unwrap_or("?")
                    ));
                }
            };
            answers.insert(key.clone(), answer.map_err(|error| error.to_string())?);
        }
        Ok(answers)
    }

    pub(crate) async fn elicit(
        &self,
        request: ElicitRequestParams,
    ) -> Result<ElicitResult, ErrorData> {
        let request = serde_json::to_value(request).map_err(refused)?;
        if request.get("mode").and_then(Value::as_str) == Some("url") {
            // A page to open is for a person at a screen, not for an asker.
            return serde_json::from_value(json!({"action": "decline"})).map_err(refused);
        }
        let schema = request.get("requestedSchema").cloned().unwrap_or(json!({}));
        let question = ElicitRequest::new(
            request["message"].as_str().unwrap_or_default(),
            schema.clone(),
        );
        let answer = answer(self.within, self.asker.elicit(question)).await?;
        let result = match answer.action {
            ElicitAction::Accept => {
                json!({"action": "accept", "content": with_defaults(&schema, answer.content)})
            }
            other => json!({"action": other.as_str()}),
        };
        serde_json::from_value(result).map_err(refused)
    }

    pub(crate) async fn sample(
        &self,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let request = serde_json::to_value(request).map_err(refused)?;
        // The messages' texts, one paragraph each: an asker takes one prompt.
        let texts: Vec<&str> = request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|message| match &message["content"] {
                Value::Array(blocks) => blocks.iter().collect::<Vec<_>>(),
                block => vec![block],
            })
            .filter_map(|block| block["text"].as_str())
            .collect();
        let max_tokens = request["maxTokens"].as_u64().unwrap_or(256);
        let mut question = SampleRequest::new(
            texts.join("\n\n"),
            u32::try_from(max_tokens).unwrap_or(u32::MAX),
        );
        if let Some(system) = request["systemPrompt"].as_str() {
            question = question.system(system);
        }
        let sampled = answer(self.within, self.asker.sample(question)).await?;
        let mut result = json!({
            "role": "assistant",
            "content": {"type": "text", "text": sampled.text},
            "model": sampled.model,
        });
        if let Some(reason) = sampled.stop_reason {
            result["stopReason"] = json!(reason);
        }
        serde_json::from_value(result).map_err(refused)
    }

    pub(crate) async fn roots(&self) -> Result<ListRootsResult, ErrorData> {
        let roots = answer(self.within, self.asker.roots(RootsRequest::new())).await?;
        let roots: Vec<Value> = roots
            .into_iter()
            .map(|root| match root.name {
                Some(name) => json!({"uri": root.uri, "name": name}),
                None => json!({"uri": root.uri}),
            })
            .collect();
        serde_json::from_value(json!({"roots": roots})).map_err(refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_what_the_answer_leaves_out() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer", "default": 30},
            "city": {"type": "string"}
        }});
        assert_eq!(
            with_defaults(&schema, Some(json!({"name": "Grace"}))),
            json!({"name": "Grace", "age": 30})
        );
        assert_eq!(
            with_defaults(&schema, None),
            json!({"name": "Ada", "age": 30})
        );
    }
}
