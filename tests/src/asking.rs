//! A host that answers a tool's questions (`Asker`) at once with fixed
//! answers, and keeps what it was asked: the tests of the core's call host,
//! the agent's and the MCP client's all put their questions to it.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use toolkit_core::{
    Asker, Asking, ElicitRequest, Elicited, Root, RootsRequest, SampleRequest, Sampled,
};

/// The model every completion is said to come from.
pub const MODEL: &str = "tiny";

/// Answers every question at once, and keeps a line for each: the user's
/// message; the model's prompt, after `SYSTEM | ` when it has a system
/// prompt; `roots`, or `roots KEY` for a named question. Clones share what
/// was asked.
#[derive(Clone)]
pub struct Answering {
    asked: Arc<Mutex<Vec<String>>>,
    content: Value,
    text: String,
    roots: Vec<Root>,
}

impl Answering {
    /// Accepts the user's questions with `content` and completes with
    /// `text`; the host has no roots.
    pub fn new(content: Value, text: &str) -> Self {
        Self {
            asked: Arc::default(),
            content,
            text: text.to_owned(),
            roots: Vec::new(),
        }
    }

    /// The host's roots.
    #[must_use]
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = Root>) -> Self {
        self.roots = roots.into_iter().collect();
        self
    }

    /// What it was asked, oldest first.
    pub fn asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn keep(&self, question: String) {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(question);
    }
}

impl Asker for Answering {
    fn elicit(&self, request: ElicitRequest) -> Asking<'_, Elicited> {
        self.keep(request.message);
        Box::pin(async { Ok(Elicited::accepted(self.content.clone())) })
    }

    fn sample(&self, request: SampleRequest) -> Asking<'_, Sampled> {
        self.keep(match request.system {
            Some(system) => format!("{system} | {}", request.prompt),
            None => request.prompt,
        });
        Box::pin(async { Ok(Sampled::new(self.text.clone(), MODEL)) })
    }

    fn roots(&self, request: RootsRequest) -> Asking<'_, Vec<Root>> {
        self.keep(match request.key {
            Some(key) => format!("roots {key}"),
            None => "roots".to_owned(),
        });
        Box::pin(async { Ok(self.roots.clone()) })
    }
}
