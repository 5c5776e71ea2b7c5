//! Multi-round input (SEP-2322, revision 2026-07-28): a tool's (or a
//! prompt's) questions go back to the client in the request's answer
//! (`InputRequiredResult`), and the client asks again with the answers
//! (`inputResponses`). The tool runs again from the start; each question it asked before finds its
//! answer by its name (`key`) this time. Answers of earlier rounds travel
//! in `requestState`, which the client hands back unread.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData;
use rmcp::model::InputRequiredResult;
use serde_json::{Map, Value, json};
use toolkit_core::emit::McpRevision;

/// The answers a call of 2026-07-28 arrived with, and the questions it
/// asked that have none yet.
#[derive(Default)]
pub(crate) struct Rounds {
    answers: Map<String, Value>,
    pending: Mutex<BTreeMap<String, Value>>,
    unnamed: AtomicUsize,
}

impl Rounds {
    /// The rounds of a request of `revision`: only 2026-07-28 has them.
    pub(crate) fn for_revision(
        revision: McpRevision,
        responses: Option<BTreeMap<String, Value>>,
        state: Option<&str>,
    ) -> Result<Option<Arc<Self>>, ErrorData> {
        match revision {
            McpRevision::V2026_07_28 => Ok(Some(Arc::new(Self::new(responses, state)?))),
            _ => Ok(None),
        }
    }

    /// The answers of this round (`inputResponses`) and the earlier ones
    /// (`requestState`, as this server wrote it).
    pub(crate) fn new(
        responses: Option<BTreeMap<String, Value>>,
        state: Option<&str>,
    ) -> Result<Self, ErrorData> {
        let mut answers = match state {
            Some(state) => decode(state).ok_or_else(|| {
                ErrorData::invalid_params("requestState is not one this server wrote", None)
            })?,
            None => Map::new(),
        };
        answers.extend(responses.unwrap_or_default());
        Ok(Self {
            answers,
            ..Self::default()
        })
    }

    /// The question's name: the tool's, or one by the order of asking.
    pub(crate) fn key(&self, given: Option<String>, kind: &str) -> String {
        given.unwrap_or_else(|| {
            let n = self.unnamed.fetch_add(1, Ordering::Relaxed);
            format!("{kind}_{n}")
        })
    }

    /// The answer to the question named `key`, if the client gave one.
    pub(crate) fn answer(&self, key: &str) -> Option<&Value> {
        self.answers.get(key)
    }

    /// Asks the client `method` with `params` in the call's answer.
    pub(crate) fn defer(&self, key: String, method: &str, params: Value) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, json!({"method": method, "params": params}));
    }

    /// The call's answer when questions wait for the client: an
    /// `InputRequiredResult`, carrying the answers so far in its state.
    pub(crate) fn input_required(&self) -> Option<Value> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if pending.is_empty() {
            return None;
        }
        Some(json!({
            "resultType": "input_required",
            "inputRequests": *pending,
            "requestState": encode(&self.answers),
        }))
    }
}

/// The request's answer when questions wait for the client, as rmcp's type.
pub(crate) fn input_required(
    rounds: Option<&Rounds>,
) -> Result<Option<InputRequiredResult>, ErrorData> {
    match rounds.and_then(Rounds::input_required) {
        Some(result) => serde_json::from_value(result)
            .map(Some)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None)),
        None => Ok(None),
    }
}

fn encode(answers: &Map<String, Value>) -> String {
    URL_SAFE_NO_PAD.encode(Value::Object(answers.clone()).to_string())
}

fn decode(state: &str) -> Option<Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD.decode(state).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(answers) => Some(answers),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_travel_in_the_state() {
        let first = Rounds::new(Some(BTreeMap::from([("a".to_owned(), json!(1))])), None).unwrap();
        first.defer("b".to_owned(), "elicitation/create", json!({}));
        let result = first.input_required().expect("a question waits");
        let state = result["requestState"].as_str().expect("a state");
        let second = Rounds::new(
            Some(BTreeMap::from([("b".to_owned(), json!(2))])),
            Some(state),
        )
        .unwrap();
        assert_eq!(second.answer("a"), Some(&json!(1)));
        assert_eq!(second.answer("b"), Some(&json!(2)));
        assert!(second.input_required().is_none());
        assert!(Rounds::new(None, Some("not a state")).is_err());
    }
}
