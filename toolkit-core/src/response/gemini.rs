//! Gemini `generateContent`: `candidates[0].content.parts[]`, and its
//! streamed chunks.

use serde_json::{Value, json};

use super::Provider;
use super::partial::{PartialCall, str_at};
use super::turn::{CallInfo, ReadError, Turn, Usage, UsageFields, provider_error};
use crate::ToolCall;
use crate::hash::Fnv1a;

const PROVIDER: Provider = Provider::Gemini;

const USAGE: UsageFields = UsageFields {
    input: "promptTokenCount",
    output: "candidatesTokenCount",
    cache_read: Some("/cachedContentTokenCount"),
    cache_write: None,
    reasoning: Some("/thoughtsTokenCount"),
};

pub(super) fn read(body: &Value) -> Result<Turn, ReadError> {
    if let Some(error) = provider_error(PROVIDER, body) {
        return Err(error);
    }
    let candidate = body
        .get("candidates")
        .and_then(|candidates| candidates.get(0))
        .ok_or_else(|| match body.pointer("/promptFeedback/blockReason") {
            Some(reason) => ReadError::shape(PROVIDER, format!("the prompt was blocked: {reason}")),
            None => ReadError::shape(PROVIDER, "no `candidates[0]`"),
        })?;
    // A candidate stopped before writing anything (safety, recitation)
    // has no content; it reads as an empty answer with its reason.
    let content = candidate
        .get("content")
        .cloned()
        .unwrap_or_else(|| json!({"role": "model", "parts": []}));
    let mut turn = Turn::new(PROVIDER, content);
    let parts = turn
        .echo
        .get("parts")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut position = 0;
    for part in &parts {
        if part.get("thought").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            turn.text.push_str(text);
        }
        let Some(call) = part.get("functionCall") else {
            continue;
        };
        let name = str_at(call, "name");
        let arguments = call.get("args").cloned().unwrap_or_else(|| json!({}));
        let (id, generated_id) = match str_at(call, "id") {
            "" => (generated(position, name, &arguments), true),
            id => (id.to_owned(), false),
        };
        let mut info = CallInfo::function(None);
        info.generated_id = generated_id;
        turn.push_call(ToolCall::new(id, name, arguments), info);
        position += 1;
    }
    turn.finish_reason = candidate
        .get("finishReason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    turn.usage = body
        .get("usageMetadata")
        .and_then(|usage| Usage::read(usage, &USAGE));
    turn.identify(body, "responseId", "modelVersion");
    Ok(turn)
}

/// A stable id for a call the API sent without one: the same call at the
/// same position always gets the same id, so a response read twice (or
/// streamed, then read) answers with the same ids.
fn generated(position: usize, name: &str, arguments: &Value) -> String {
    let hash = Fnv1a::default()
        .write(&position.to_le_bytes())
        .write(name.as_bytes())
        .write(arguments.to_string().as_bytes())
        .finish();
    format!("call_{position}_{hash:016x}")
}

/// The chunk stream's state.
#[derive(Debug, Clone, Default)]
pub(super) struct Stream {
    pub(super) text: String,
    /// The text of thought parts (`thought: true`).
    pub(super) reasoning: String,
    pub(super) calls: Vec<PartialCall>,
    parts: Vec<Value>,
    role: Option<Value>,
    finish_reason: Option<Value>,
    usage: Option<Value>,
    id: Option<Value>,
    model: Option<Value>,
}

impl Stream {
    pub(super) fn push(&mut self, chunk: &Value) -> Result<(), ReadError> {
        // Some clients stream a JSON array of chunks; take each.
        if let Value::Array(chunks) = chunk {
            for chunk in chunks {
                self.push(chunk)?;
            }
            return Ok(());
        }
        if let Some(error) = provider_error(PROVIDER, chunk) {
            return Err(error);
        }
        if let Some(usage) = chunk.get("usageMetadata") {
            self.usage = Some(usage.clone());
        }
        for (key, kept) in [
            ("responseId", &mut self.id),
            ("modelVersion", &mut self.model),
        ] {
            // Every chunk repeats them: kept once, not cloned per chunk.
            if let Some(value) = chunk.get(key).filter(|value| value.is_string())
                && kept.as_ref() != Some(value)
            {
                *kept = Some(value.clone());
            }
        }
        let Some(candidate) = chunk.get("candidates").and_then(|c| c.get(0)) else {
            return Ok(());
        };
        if let Some(reason) = candidate.get("finishReason") {
            self.finish_reason = Some(reason.clone());
        }
        let Some(content) = candidate.get("content") else {
            return Ok(());
        };
        if let Some(role) = content.get("role") {
            self.role = Some(role.clone());
        }
        for part in content
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                if thought {
                    self.reasoning.push_str(text);
                } else {
                    self.text.push_str(text);
                }
            }
            if let Some(call) = part.get("functionCall") {
                let mut partial = PartialCall::new(str_at(call, "id"), str_at(call, "name"));
                partial.arguments = call
                    .get("args")
                    .map_or_else(|| "{}".into(), Value::to_string);
                partial.complete = true;
                self.calls.push(partial);
            }
            // Parts are echoed as they came: a signature may sit on any part.
            self.parts.push(part.clone());
        }
        Ok(())
    }

    pub(super) fn finish(self) -> Result<Turn, ReadError> {
        let mut candidate = json!({
            "content": {"role": self.role.unwrap_or_else(|| json!("model")), "parts": self.parts},
        });
        if let Some(reason) = self.finish_reason {
            candidate["finishReason"] = reason;
        }
        let mut body = json!({ "candidates": [candidate] });
        let kept = [
            ("usageMetadata", self.usage),
            ("responseId", self.id),
            ("modelVersion", self.model),
        ];
        for (key, value) in kept {
            if let Some(value) = value {
                body[key] = value;
            }
        }
        read(&body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // From the Gemini function-calling and thought-signature docs.
    fn doc_body() -> Value {
        json!({
          "candidates": [{
            "content": {
              "role": "model",
              "parts": [
                {"functionCall": {"name": "check_flight", "args": {"flight": "AA100"}},
                 "thoughtSignature": "<Signature_A>"},
                {"functionCall": {"name": "book_taxi", "args": {"time": "10 AM"}}}
              ]
            },
            "finishReason": "STOP",
            "index": 0
          }],
          "usageMetadata": {"promptTokenCount": 53, "candidatesTokenCount": 24, "totalTokenCount": 77,
                            "cachedContentTokenCount": 32, "thoughtsTokenCount": 10},
          "modelVersion": "gemini-2.5-flash",
          "responseId": "mAitaLmkHPPlz7IPvtfUqQ4"
        })
    }

    #[test]
    fn calls_without_id_get_stable_ids_and_signatures_are_echoed() {
        let body = doc_body();
        let turn = PROVIDER.read(&body).unwrap();
        assert_eq!(turn.calls.len(), 2);
        assert_eq!(turn.calls[0].name, "check_flight");
        assert_eq!(turn.calls[0].arguments(), &json!({"flight": "AA100"}));
        assert!(turn.call_info.iter().all(|info| info.generated_id));
        assert_ne!(turn.calls[0].id, turn.calls[1].id);
        assert_eq!(PROVIDER.read(&body).unwrap().calls, turn.calls);
        assert_eq!(turn.echo, body["candidates"][0]["content"]);
        assert_eq!(turn.echo["parts"][0]["thoughtSignature"], "<Signature_A>");
        assert_eq!(
            turn.usage,
            Some(
                Usage::new(53, 24)
                    .with_cache_read_tokens(32)
                    .with_reasoning_tokens(10)
            )
        );
        assert_eq!(turn.response_id.as_deref(), Some("mAitaLmkHPPlz7IPvtfUqQ4"));
        assert_eq!(turn.response_model.as_deref(), Some("gemini-2.5-flash"));
    }

    #[test]
    fn ids_sent_are_kept_and_text_skips_thoughts() {
        let body = json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "thinking...", "thought": true},
            {"text": "The answer is 4."},
            {"functionCall": {"id": "fc_7f3a", "name": "add", "args": {"a": 2, "b": 2}}}
        ]}, "finishReason": "STOP"}]});
        let turn = PROVIDER.read(&body).unwrap();
        assert_eq!(turn.text, "The answer is 4.");
        assert_eq!(turn.calls[0].id, "fc_7f3a");
        assert!(!turn.call_info[0].generated_id);
    }

    #[test]
    fn blocked_prompt_and_error_are_typed() {
        let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
        assert!(matches!(
            PROVIDER.read(&blocked),
            Err(ReadError::Shape { .. })
        ));
        let error = json!({"error": {"code": 400, "message": "Function call is missing a thought_signature in functionCall parts.", "status": "INVALID_ARGUMENT"}});
        assert!(matches!(
            PROVIDER.read(&error),
            Err(ReadError::Provider { .. })
        ));
    }

    #[test]
    fn stream_gives_the_same_turn() {
        let chunks = [
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "check_flight", "args": {"flight": "AA100"}}, "thoughtSignature": "<Signature_A>"}]}}]}),
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "book_taxi", "args": {"time": "10 AM"}}}]}, "finishReason": "STOP", "index": 0}],
                   "usageMetadata": {"promptTokenCount": 53, "candidatesTokenCount": 24, "totalTokenCount": 77,
                                     "cachedContentTokenCount": 32, "thoughtsTokenCount": 10},
                   "modelVersion": "gemini-2.5-flash", "responseId": "mAitaLmkHPPlz7IPvtfUqQ4"}),
        ];
        let mut stream = PROVIDER.accumulator();
        stream.push(&chunks[0]).unwrap();
        assert_eq!(stream.partial_calls()[0].arguments, r#"{"flight":"AA100"}"#);
        stream.push(&chunks[1]).unwrap();
        let turn = stream.finish().unwrap();
        assert_eq!(turn, PROVIDER.read(&doc_body()).unwrap());
    }
}
