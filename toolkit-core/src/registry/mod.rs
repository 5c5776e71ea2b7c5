//! The registry: a program's tools by name, and safe dispatch.

pub(crate) mod action;
pub(crate) mod builder;
pub(crate) mod call_error;
pub(crate) mod catalogue;
pub(crate) mod context;
pub(crate) mod definitions;
pub(crate) mod drive;
pub(crate) mod suggest;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::registry::context::{CallSite, StateMap};
use crate::registry::drive::{Drive, join_all};
use crate::{
    Arguments, CallError, CallOutcome, Cancellation, RegistryBuilder, ToolCallResult, ToolDef,
};

/// A set of tools, looked up by name, and the host state they share.
///
/// Built with [`Registry::builder`]. A registry is `Send + Sync`: share it
/// (in an `Arc`) between tasks. Calls never panic and never lose an error:
/// see [`call`](Self::call).
///
/// ```
/// use toolkit_core::{Registry, tool, tools};
///
/// /// Adds two numbers.
/// #[tool]
/// fn add(
///     /// The first number.
///     a: i64,
///     /// The second number.
///     b: i64,
/// ) -> String {
///     (a + b).to_string()
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::builder().tools(tools![add]).build()?;
/// let outcome = registry.call("add", r#"{"a": 2, "b": 3}"#).await;
/// assert_eq!(outcome.result.as_text(), Ok("5"));
///
/// let typo = registry.call("ad", "{}").await;
/// assert_eq!(
///     typo.result.error_message(),
///     Some("there is no tool named `ad`; did you mean `add`?")
/// );
/// # Ok::<(), toolkit_core::RegistryError>(())
/// # }).unwrap();
/// ```
pub struct Registry {
    entries: Vec<Entry>,
    index: HashMap<&'static str, usize, BuildHasherDefault<NameHasher>>,
    state: Arc<StateMap>,
    // Shared by every `call`, so that a call allocates nothing for a signal
    // it does not have.
    never_cancelled: Cancellation,
}

/// Hashes tool names for the registry's index with FNV-1a rather than
/// std's SipHash: names are short and fixed when the registry is built (a
/// call never adds one, so hash flooding is no concern), and the lookup is
/// on every call's path, where SipHash cost more than a tenth of the
/// dispatch overhead (docs/performance.md, "Dispatch").
struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

pub(crate) struct Entry {
    pub(crate) def: &'static ToolDef,
    pub(crate) enabled: AtomicBool,
    pub(crate) timeout: Option<Duration>,
}

/// One call the model made: its id, the tool's name and the arguments.
///
/// Deserializes from `{"id", "name", "arguments"}`, where `arguments` is an
/// object or, as OpenAI sends it, a string of JSON.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
pub struct ToolCall {
    /// The id the provider gave the call.
    pub id: String,
    /// The tool the model called.
    pub name: String,
    /// The arguments: an object, or a string holding JSON.
    #[serde(default)]
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments`.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }

    fn arguments(&self) -> Arguments<'_> {
        match &self.arguments {
            Value::String(text) => Arguments::Text(text),
            value => Arguments::Value(value),
        }
    }
}

/// The outcome of one turn's calls.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    /// Every call's result, in call order, ready for an emitter.
    pub results: Vec<ToolCallResult>,
    /// The calls that failed outside the tools' own logic, by position in
    /// the turn, with the typed error (their results say the same to the
    /// model).
    pub errors: Vec<(usize, CallError)>,
}

impl Registry {
    /// A builder for a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    pub(crate) fn from_parts(entries: Vec<Entry>, state: StateMap) -> Self {
        let index = entries
            .iter()
            .enumerate()
            .map(|(i, entry)| (entry.def.name(), i))
            .collect();
        Self {
            entries,
            index,
            state: Arc::new(state),
            never_cancelled: Cancellation::new(),
        }
    }

    /// Calls the tool `name` with `arguments` (JSON text or a parsed value).
    ///
    /// Never panics and never loses an error. Malformed JSON; a missing,
    /// unknown or mistyped field (named with its path, the expected type and
    /// what came); an unknown or disabled tool (with the closest names); a
    /// panicking tool; a timeout: each becomes an error result for the model
    /// and a [`CallError`] for the host, in the [`CallOutcome`].
    pub async fn call<'a>(&self, name: &str, arguments: impl Into<Arguments<'a>>) -> CallOutcome {
        self.dispatch("", name, arguments.into(), &self.never_cancelled)
            .await
    }

    /// Runs one call the model made, with a cancellation signal the host can
    /// raise.
    pub async fn run(&self, call: &ToolCall, cancellation: &Cancellation) -> CallOutcome {
        self.dispatch(&call.id, &call.name, call.arguments(), cancellation)
            .await
    }

    /// Runs one turn's calls concurrently and returns their results in call
    /// order. Async tools run together on the calling task; sync tools run
    /// on tokio's blocking pool.
    pub async fn run_turn(&self, calls: &[ToolCall]) -> TurnOutcome {
        self.run_turn_with(calls, &Cancellation::new()).await
    }

    /// [`run_turn`](Self::run_turn) with a cancellation signal shared by the
    /// turn's calls.
    pub async fn run_turn_with(
        &self,
        calls: &[ToolCall],
        cancellation: &Cancellation,
    ) -> TurnOutcome {
        let futures = calls
            .iter()
            .map(|call| Box::pin(self.run(call, cancellation)) as _)
            .collect();
        let outcomes: Vec<CallOutcome> = join_all(futures).await;
        let mut errors = Vec::new();
        let results = calls
            .iter()
            .zip(outcomes)
            .enumerate()
            .map(|(i, (call, outcome))| {
                if let Some(error) = outcome.error {
                    errors.push((i, error));
                }
                ToolCallResult::new(&call.id, &call.name, outcome.result)
            })
            .collect();
        TurnOutcome { results, errors }
    }

    async fn dispatch(
        &self,
        call_id: &str,
        name: &str,
        arguments: Arguments<'_>,
        cancellation: &Cancellation,
    ) -> CallOutcome {
        match self.start(call_id, name, arguments, cancellation) {
            Ok(started) => CallOutcome::from_result(started.await),
            Err(error) => CallOutcome::failed(error),
        }
    }

    /// Finds the tool, parses the arguments and starts the tool's future.
    fn start(
        &self,
        call_id: &str,
        name: &str,
        arguments: Arguments<'_>,
        cancellation: &Cancellation,
    ) -> Result<Drive, CallError> {
        let entry = self.entry(name)?;
        let def = entry.def;
        let site = CallSite::new(call_id, def.name(), cancellation, &self.state);
        // Parsing the arguments may panic only in a user's Deserialize impl;
        // that is caught like a panic in the tool itself.
        let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            def.invoke(arguments, &site)
        }));
        match started {
            Ok(future) => Ok(Drive::new(def.name(), future?, entry.timeout)),
            Err(payload) => Err(CallError::Panicked {
                tool: def.name().to_owned(),
                message: crate::result::panic_message(payload.as_ref()),
            }),
        }
    }

    fn entry(&self, name: &str) -> Result<&Entry, CallError> {
        match self.index.get(name) {
            Some(&i) if self.entries[i].enabled.load(Ordering::Relaxed) => Ok(&self.entries[i]),
            Some(_) => Err(CallError::Disabled {
                name: name.to_owned(),
            }),
            None => Err(CallError::UnknownTool {
                name: name.to_owned(),
                suggestions: crate::registry::suggest::closest(name, self.names()),
            }),
        }
    }

    /// Enables or disables a tool at run time; returns `false` if there is
    /// no tool of that name. A disabled tool is left out of every tool list
    /// and calling it is an error result.
    pub fn set_enabled(&self, name: &str, enabled: bool) -> bool {
        match self.index.get(name) {
            Some(&i) => {
                self.entries[i].enabled.store(enabled, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// Whether the named tool is registered and enabled.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.index
            .get(name)
            .is_some_and(|&i| self.entries[i].enabled.load(Ordering::Relaxed))
    }

    /// The enabled tools, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &'static ToolDef> + '_ {
        self.entries
            .iter()
            .filter(|entry| entry.enabled.load(Ordering::Relaxed))
            .map(|entry| entry.def)
    }

    /// The names of the enabled tools, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools().map(ToolDef::name)
    }

    /// The definition of a registered tool, enabled or not.
    pub fn get(&self, name: &str) -> Option<&'static ToolDef> {
        self.index.get(name).map(|&i| self.entries[i].def)
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field(
                "tools",
                &self
                    .entries
                    .iter()
                    .map(|e| e.def.name())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}
