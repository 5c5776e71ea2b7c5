//! The registry: a program's tools by name, and safe dispatch.

pub(crate) mod action;
pub(crate) mod builder;
pub(crate) mod catalogue;
pub(crate) mod dispatch;
pub(crate) mod drive;
pub(crate) mod suggest;
pub(crate) mod tool_list;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use tokio::sync::watch;
use tracing::{Instrument, Span};

use self::builder::Checks;
use self::dispatch::{Dispatch, TurnDispatch};
use self::drive::Drive;
use crate::call::context::CallSite;
use crate::call::host::CallHost;
use crate::call::progress::ProgressSink;
use crate::call::state::{RunState, StateMap};
use crate::hash::Fnv1a;
use crate::telemetry;
use crate::tool::Started;
use crate::{
    Arguments, CallError, CallOutcome, Cancellation, IntoCall, Problem, RegistryBuilder,
    RegistryError, ToolCall, ToolCallResult, ToolDef,
};

/// A set of tools, looked up by name, and the host state they share.
///
/// Built with [`Registry::builder`]. A registry is `Send + Sync`: share it
/// (in an `Arc`) between tasks. Calls never panic and never lose an error:
/// see [`dispatch`](Self::dispatch).
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
/// let outcome = registry.dispatch(("add", r#"{"a": 2, "b": 3}"#)).await;
/// assert_eq!(outcome.result.as_text(), Ok("5"));
///
/// let typo = registry.dispatch(("ad", "{}")).await;
/// assert_eq!(
///     typo.result.error_message(),
///     Some("there is no tool named `ad`; did you mean `add`?")
/// );
/// # Ok::<(), toolkit_core::RegistryError>(())
/// # }).unwrap();
/// ```
pub struct Registry {
    // The tools the registry was built with, read without a lock: calls of
    // them pay nothing for the run-time changes below. Removing one only
    // marks it.
    built: Table,
    // Tools added after the build, behind a lock taken only for names the
    // built table does not hold.
    added: RwLock<Table>,
    state: Arc<StateMap>,
    // What `add` checks a tool against, as the builder did.
    checks: Checks,
    changes: watch::Sender<u64>,
    // Shared by every `call`, so that a call allocates nothing for a signal
    // it does not have.
    never_cancelled: Cancellation,
    // What captured content goes through before a span records it.
    redaction: Option<telemetry::Redaction>,
}

/// What a call is given besides its arguments: the host's cancellation
/// signal, where its progress reports go, and its run's own values.
#[derive(Clone, Copy)]
struct Signals<'a> {
    cancellation: &'a Cancellation,
    progress: Option<&'a ProgressSink>,
    run: Option<&'a RunState>,
    host: Option<&'a CallHost>,
}

impl<'a> Signals<'a> {
    fn new(cancellation: &'a Cancellation) -> Self {
        Self {
            cancellation,
            progress: None,
            run: None,
            host: None,
        }
    }

    /// What the host offers: its progress sink, when it has one, and the
    /// rest of it.
    fn offer(&mut self, host: &'a CallHost) {
        if let Some(progress) = host.progress.as_ref() {
            self.progress = Some(progress);
        }
        self.host = Some(host);
    }
}

/// Up to this many tools, a lookup compares names rather than hashing.
const LINEAR_LOOKUP: usize = 8;

/// Whether two names are the same, a name of up to 16 bytes compared in
/// two loads of each rather than by a call to `bcmp`: on every call's path.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // The first and the last eight (or four) bytes, overlapping when
    // the name is shorter than twice that.
    let word = |bytes: &[u8], at: usize| {
        u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default())
    };
    let half = |bytes: &[u8], at: usize| {
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default())
    };
    match n {
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        _ => a == b,
    }
}

/// The tools, in registration order, and their index by name.
#[derive(Default)]
struct Table {
    entries: Vec<Entry>,
    // FNV-1a rather than std's SipHash: names are short and chosen by the
    // host (a call never adds one, so flooding is no concern), and the
    // lookup is on every call's path, where SipHash cost more than a tenth
    // of the dispatch overhead (docs/performance.md, "Dispatch").
    index: HashMap<String, usize, BuildHasherDefault<Fnv1a>>,
}

impl Table {
    fn reindex(&mut self) {
        self.index = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, entry)| (entry.def.name().to_owned(), i))
            .collect();
    }

    /// The entry of `name`, even if it was removed.
    #[inline]
    fn find(&self, name: &str) -> Option<&Entry> {
        // A few names are compared faster than one is hashed, and most
        // registries hold a few tools.
        if self.entries.len() <= LINEAR_LOOKUP {
            return self
                .entries
                .iter()
                .find(|entry| same_name(entry.def.name(), name));
        }
        self.find_hashed(name)
    }

    #[inline(never)]
    fn find_hashed(&self, name: &str) -> Option<&Entry> {
        self.index.get(name).map(|&i| &self.entries[i])
    }

    /// The entry of `name`, unless it was removed.
    fn get(&self, name: &str) -> Option<&Entry> {
        self.find(name).filter(|entry| entry.state() != REMOVED)
    }

    /// The entry whose tool's original name is `name` (one given a
    /// [wire name](crate::ToolBuilder::wire_name)), unless it was removed.
    /// Off the path of calls by the names models are sent.
    #[cold]
    fn get_original(&self, name: &str) -> Option<&Entry> {
        self.live().find(|entry| entry.def.original_name() == name)
    }

    /// The entry of `name`, by either of its tool's names, unless removed.
    fn get_any(&self, name: &str) -> Option<&Entry> {
        self.get(name).or_else(|| self.get_original(name))
    }

    fn live(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|entry| entry.state() != REMOVED)
    }
}

pub(crate) struct Entry {
    pub(crate) def: ToolDef,
    /// [`ENABLED`], [`DISABLED`] or [`REMOVED`]: one word, so that a call
    /// reads one atomic to know all three.
    state: AtomicU8,
    pub(crate) timeout: Option<Duration>,
}

impl Entry {
    pub(crate) fn new(def: ToolDef, timeout: Option<Duration>) -> Self {
        Self {
            def,
            state: AtomicU8::new(ENABLED),
            timeout,
        }
    }

    #[inline]
    fn state(&self) -> u8 {
        self.state.load(Ordering::Relaxed)
    }

    fn is_enabled(&self) -> bool {
        self.state() == ENABLED
    }
}

const ENABLED: u8 = 0;
const DISABLED: u8 = 1;
// Only built tools are marked removed; tools added later leave the table.
const REMOVED: u8 = 2;

/// The outcome of one turn's calls.
#[derive(Debug, Clone)]
#[non_exhaustive]
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

    pub(crate) fn from_parts(
        entries: Vec<Entry>,
        state: StateMap,
        checks: Checks,
        redaction: Option<telemetry::Redaction>,
    ) -> Self {
        let mut built = Table {
            entries,
            index: HashMap::default(),
        };
        built.reindex();
        Self {
            built,
            added: RwLock::new(Table::default()),
            state: Arc::new(state),
            checks,
            changes: watch::Sender::new(0),
            never_cancelled: Cancellation::new(),
            redaction,
        }
    }

    fn added(&self) -> RwLockReadGuard<'_, Table> {
        // No code that can panic runs under the write lock, so a poisoned
        // lock still holds a whole table.
        self.added.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn added_mut(&self) -> RwLockWriteGuard<'_, Table> {
        self.added.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the entry of `name`, by either of its tool's names: the
    /// built one, else one added later (under the lock, held for `f` only).
    fn with_entry<R>(&self, name: &str, f: impl FnOnce(Option<&Entry>) -> R) -> R {
        if let Some(entry) = self.built.get(name) {
            return f(Some(entry));
        }
        let added = self.added();
        match added.get(name) {
            Some(entry) => f(Some(entry)),
            None => f(self
                .built
                .get_original(name)
                .or_else(|| added.get_original(name))),
        }
    }

    /// Every entry, built ones first, then those added, each in order.
    fn entries<R>(&self, f: impl FnOnce(&mut dyn Iterator<Item = &Entry>) -> R) -> R {
        let added = self.added();
        f(&mut self.built.live().chain(added.live()))
    }

    /// Tells every [`ToolListChanges`] that the tool list changed.
    fn changed(&self) {
        self.changes.send_modify(|version| *version += 1);
    }

    /// Runs one call: a [`ToolCall`] the model made (`&call`), or a tool's
    /// name and arguments the host gives (`(name, arguments)`, see
    /// [`IntoCall`]). Await what this gives, or first give it a
    /// cancellation signal, the run's own values, or what the host offers
    /// the call ([`Dispatch`]).
    ///
    /// Never panics and never loses an error. Malformed JSON; a missing,
    /// unknown or mistyped field (named with its path, the expected type and
    /// what came); an unknown or disabled tool (with the closest names); a
    /// panicking tool; a timeout: each becomes an error result for the model
    /// and a [`CallError`] for the host, in the [`CallOutcome`].
    ///
    /// ```
    /// use toolkit_core::{Registry, ToolCall, tool, tools};
    ///
    /// /// Adds two numbers.
    /// #[tool]
    /// fn add(
    ///     /// The first number.
    ///     a: i64,
    ///     /// The second number.
    ///     b: i64,
    /// ) -> i64 {
    ///     a + b
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::builder().tools(tools![add]).build()?;
    /// let call = ToolCall::from_text("call_1", "add", r#"{"a": 2, "b": 3}"#);
    /// assert_eq!(registry.dispatch(&call).await.result.to_text(), "5");
    /// # Ok::<(), toolkit_core::RegistryError>(())
    /// # }).unwrap();
    /// ```
    pub fn dispatch<'r>(&'r self, call: impl IntoCall<'r>) -> Dispatch<'r> {
        let (id, name, arguments) = call.into_call();
        Dispatch::new(self, id, name, arguments)
    }

    /// Runs one turn's calls concurrently and gives their results in call
    /// order: await what this gives, or first give the calls what they
    /// may use, or a limit on how many run at once ([`TurnDispatch`]).
    /// Async tools run together on the awaiting task; sync tools run on
    /// tokio's blocking pool.
    pub fn dispatch_turn<'r>(&'r self, calls: &'r [ToolCall]) -> TurnDispatch<'r> {
        TurnDispatch::new(self, calls)
    }

    /// Calls the tool `name` with `arguments` (JSON text or a parsed
    /// value), as the host rather than the model.
    #[deprecated(since = "0.2.0", note = "use `registry.dispatch((name, arguments))`")]
    pub fn call<'a>(&'a self, name: &'a str, arguments: impl Into<Arguments<'a>>) -> Dispatch<'a> {
        self.dispatch((name, arguments))
    }

    /// Runs one call the model made, with a cancellation signal the host can
    /// raise.
    #[deprecated(
        since = "0.2.0",
        note = "use `registry.dispatch(call).cancellation(cancellation).await`"
    )]
    pub async fn run(&self, call: &ToolCall, cancellation: &Cancellation) -> CallOutcome {
        self.dispatch(call).cancellation(cancellation).await
    }

    /// [`run`](Self::run) as part of a run that gives its own values
    /// ([`RunState`]): the call's tool reads them before the registry's.
    #[deprecated(
        since = "0.2.0",
        note = "use `registry.dispatch(call).cancellation(cancellation).state(state).await`"
    )]
    pub async fn run_in(
        &self,
        call: &ToolCall,
        cancellation: &Cancellation,
        state: &RunState,
    ) -> CallOutcome {
        self.dispatch(call)
            .cancellation(cancellation)
            .state(state)
            .await
    }

    /// [`run`](Self::run), with the tool's progress reports sent to
    /// `progress`.
    #[deprecated(
        since = "0.2.0",
        note = "use `registry.dispatch(call).cancellation(cancellation).progress(progress).await`"
    )]
    pub async fn run_reporting(
        &self,
        call: &ToolCall,
        cancellation: &Cancellation,
        progress: &ProgressSink,
    ) -> CallOutcome {
        self.dispatch(call)
            .cancellation(cancellation)
            .progress(progress)
            .await
    }

    /// [`run`](Self::run), with what the host offers the call.
    #[deprecated(
        since = "0.2.0",
        note = "use `registry.dispatch(call).cancellation(cancellation).host(host).await`"
    )]
    pub async fn run_hosted(
        &self,
        call: &ToolCall,
        cancellation: &Cancellation,
        host: &CallHost,
    ) -> CallOutcome {
        self.dispatch(call)
            .cancellation(cancellation)
            .host(host)
            .await
    }

    /// `run_hosted` as part of a run that gives its own values.
    #[deprecated(
        since = "0.2.0",
        note = "use `registry.dispatch(call).cancellation(cancellation).host(host).state(state).await`"
    )]
    pub async fn run_hosted_in(
        &self,
        call: &ToolCall,
        cancellation: &Cancellation,
        host: &CallHost,
        state: &RunState,
    ) -> CallOutcome {
        self.dispatch(call)
            .cancellation(cancellation)
            .host(host)
            .state(state)
            .await
    }

    /// Runs one turn's calls concurrently and returns their results in call
    /// order.
    #[deprecated(since = "0.2.0", note = "use `registry.dispatch_turn(calls).await`")]
    pub async fn run_turn(&self, calls: &[ToolCall]) -> TurnOutcome {
        self.dispatch_turn(calls).await
    }

    /// `run_turn` with a cancellation signal shared by the turn's calls.
    #[deprecated(
        since = "0.2.0",
        note = "use `registry.dispatch_turn(calls).cancellation(cancellation).await`"
    )]
    pub async fn run_turn_with(
        &self,
        calls: &[ToolCall],
        cancellation: &Cancellation,
    ) -> TurnOutcome {
        self.dispatch_turn(calls).cancellation(cancellation).await
    }

    /// A call inside its span: the tool's
    /// start and every poll of its future are in it.
    async fn dispatch_traced(
        &self,
        span: Span,
        call_id: &str,
        name: &str,
        arguments: Arguments<'_>,
        signals: Signals<'_>,
    ) -> CallOutcome {
        telemetry::record_arguments(&span, arguments, self.redaction.as_ref());
        if let Some(def) = self.get(name) {
            telemetry::record_description(&span, def.description());
        }
        let started = span.in_scope(|| self.start(call_id, name, arguments, signals));
        let outcome = match started {
            Ok(started) => match Drive::new(started).instrument(span.clone()).await {
                Ok(result) => CallOutcome::ok(result),
                Err(stop) => CallOutcome::failed(stop.into_error(name)),
            },
            Err(error) => CallOutcome::failed(error),
        };
        telemetry::record_outcome(&span, &outcome, self.redaction.as_ref());
        outcome
    }

    /// Finds the tool, parses the arguments and starts the tool's future.
    #[inline]
    fn start(
        &self,
        call_id: &str,
        name: &str,
        arguments: Arguments<'_>,
        signals: Signals<'_>,
    ) -> Result<Started, CallError> {
        // Most calls are of an enabled tool the registry was built with.
        if let Some(entry) = self.built.find(name)
            && entry.state() == ENABLED
        {
            return self.start_def(&entry.def, entry.timeout, call_id, arguments, signals);
        }
        self.start_other(call_id, name, arguments, signals)
    }

    /// [`start`](Self::start) of a tool disabled, removed, added after the
    /// build or called by its original name, or of no tool.
    #[inline(never)]
    fn start_other(
        &self,
        call_id: &str,
        name: &str,
        arguments: Arguments<'_>,
        signals: Signals<'_>,
    ) -> Result<Started, CallError> {
        if let Some(entry) = self.built.find(name) {
            match entry.state() {
                ENABLED => {
                    return self.start_def(&entry.def, entry.timeout, call_id, arguments, signals);
                }
                DISABLED => return Err(self.disabled(name)),
                // Removed: a tool added since may have the name.
                _ => {}
            }
        }
        // A tool added later is started from a copy of its definition (a
        // reference count), outside the lock: starting it runs the tool's
        // own code, which may change the registry.
        let found = self
            .added()
            .find(name)
            .map(|entry| (entry.state(), entry.def.clone(), entry.timeout));
        if let Some((state, def, timeout)) = found {
            return match state {
                ENABLED => self.start_def(&def, timeout, call_id, arguments, signals),
                _ => Err(self.disabled(name)),
            };
        }
        // A tool's original name (a model that read it in a description,
        // say) reaches it too.
        let original = {
            let added = self.added();
            let entry = self
                .built
                .get_original(name)
                .or_else(|| added.get_original(name));
            entry.map(|entry| (entry.state(), entry.def.clone(), entry.timeout))
        };
        match original {
            Some((ENABLED, def, timeout)) => {
                self.start_def(&def, timeout, call_id, arguments, signals)
            }
            Some(_) => Err(self.disabled(name)),
            None => Err(self.unknown(name)),
        }
    }

    // The error paths are kept out of line, so that the code of a call that
    // succeeds stays small and together.
    #[cold]
    #[inline(never)]
    fn unknown(&self, name: &str) -> CallError {
        CallError::UnknownTool {
            name: name.to_owned(),
            suggestions: self.entries(|all| {
                let enabled = all.filter(|e| e.is_enabled()).map(|e| e.def.name());
                suggest::closest(name, enabled)
            }),
        }
    }

    #[cold]
    #[inline(never)]
    fn disabled(&self, name: &str) -> CallError {
        CallError::Disabled {
            name: name.to_owned(),
        }
    }

    #[inline]
    fn start_def(
        &self,
        def: &ToolDef,
        timeout: Option<Duration>,
        call_id: &str,
        arguments: Arguments<'_>,
        signals: Signals<'_>,
    ) -> Result<Started, CallError> {
        let site = CallSite {
            call_id,
            tool: def.name_ref(),
            cancellation: signals.cancellation,
            state: &self.state,
            progress: signals.progress,
            run: signals.run,
            host: signals.host,
        };
        // Parsing the arguments may panic only in a user's Deserialize impl
        // or a run-time tool's handler; that is caught like a panic in the
        // tool itself.
        let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            def.invoke(arguments, &site)
        }));
        match started {
            Ok(started) => Ok(drive::limit(def, started?, timeout)),
            Err(payload) => Err(panicked(def, payload)),
        }
    }

    /// Enables or disables a tool at run time; returns `false` if there is
    /// no tool of that name. A disabled tool is left out of every tool list
    /// and calling it is an error result.
    pub fn set_enabled(&self, name: &str, enabled: bool) -> bool {
        let wanted = if enabled { ENABLED } else { DISABLED };
        let was = self.with_entry(name, |entry| {
            // A removed entry stays removed, whatever this says.
            entry.and_then(|entry| {
                entry
                    .state
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |state| {
                        (state != REMOVED).then_some(wanted)
                    })
                    .ok()
            })
        });
        match was {
            Some(was) => {
                if was != wanted {
                    self.changed();
                }
                true
            }
            None => false,
        }
    }

    /// Whether the named tool is registered and enabled.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.with_entry(name, |entry| entry.is_some_and(Entry::is_enabled))
    }

    /// The enabled tools, in registration order.
    pub fn tools(&self) -> Vec<ToolDef> {
        self.entries(|all| {
            all.filter(|entry| entry.is_enabled())
                .map(|entry| entry.def.clone())
                .collect()
        })
    }

    /// The names of the enabled tools, in registration order.
    pub fn names(&self) -> impl Iterator<Item = String> + use<> {
        let names: Vec<String> = self.entries(|all| {
            all.filter(|entry| entry.is_enabled())
                .map(|entry| entry.def.name().to_owned())
                .collect()
        });
        names.into_iter()
    }

    /// The time limit the registry puts on each call of a tool (its own,
    /// else the registry's default), by the name models call it; `None`
    /// when it has none, or there is no such tool.
    pub fn timeout_of(&self, name: &str) -> Option<Duration> {
        self.with_entry(name, |entry| entry.and_then(|entry| entry.timeout))
    }

    /// The definition of a registered tool, enabled or not, by the name
    /// models call it or its [original name](ToolDef::original_name).
    pub fn get(&self, name: &str) -> Option<ToolDef> {
        self.with_entry(name, |entry| entry.map(|entry| entry.def.clone()))
    }

    /// Adds a tool to the built registry, checked as
    /// [`RegistryBuilder::build`] checks tools (its name, its schema, the
    /// providers [required](RegistryBuilder::require), the host state it
    /// needs), with the registry's default time limit. A name already
    /// registered is an error: [`remove`](Self::remove) the old tool first.
    ///
    /// Tool lists made after this include the tool; watchers of
    /// [`changes`](Self::changes) are told.
    pub fn add(&self, def: impl Into<ToolDef>) -> Result<(), RegistryError> {
        let def = def.into();
        let mut problems = Vec::new();
        let mut added = self.added_mut();
        let clash = self
            .built
            .live()
            .chain(added.live())
            .find_map(|entry| entry.def.shared_name(&def).map(|name| (entry, name)));
        if let Some((first, name)) = clash {
            problems.push(Problem::duplicate(name, &first.def, &def));
        }
        self.checks.check(&def, &self.state, &mut problems);
        if !problems.is_empty() {
            return Err(RegistryError::new(problems));
        }
        let name = def.name().to_owned();
        added.entries.push(Entry::new(def, self.checks.timeout));
        let position = added.entries.len() - 1;
        added.index.insert(name, position);
        drop(added);
        self.changed();
        Ok(())
    }

    /// Removes a tool, by either of its names; returns `false` if there is
    /// no tool of that name. Calls already running finish; later calls of
    /// the name are answered as calls of an unknown tool.
    pub fn remove(&self, name: &str) -> bool {
        let mut added = self.added_mut();
        let removed = match self.built.get_any(name) {
            Some(entry) => {
                entry.state.store(REMOVED, Ordering::Relaxed);
                true
            }
            None => match added.get_any(name).map(|entry| entry.def.name().to_owned()) {
                Some(wire) => {
                    added.entries.retain(|entry| entry.def.name() != wire);
                    added.reindex();
                    true
                }
                None => false,
            },
        };
        drop(added);
        if removed {
            self.changed();
        }
        removed
    }

    /// A watcher of changes to the tool list: tools added, removed,
    /// enabled or disabled (an MCP server sends
    /// `notifications/tools/list_changed` on each).
    pub fn changes(&self) -> ToolListChanges {
        ToolListChanges(self.changes.subscribe())
    }
}

#[cold]
#[inline(never)]
fn panicked(def: &ToolDef, payload: Box<dyn std::any::Any + Send>) -> CallError {
    CallError::Panicked {
        tool: def.name().to_owned(),
        message: crate::result::panic_message(payload.as_ref()),
    }
}

/// Tells a host when a registry's tool list changed.
///
/// ```
/// use serde_json::Value;
/// use toolkit_core::{CallContext, Registry, ToolDef};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::builder().build()?;
/// let mut changes = registry.changes();
/// registry.add(ToolDef::builder("ping").handler(|_: Value, _: CallContext| async { "pong" }))?;
/// assert!(changes.changed().await);
/// # Ok::<(), toolkit_core::RegistryError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct ToolListChanges(watch::Receiver<u64>);

impl ToolListChanges {
    /// Waits for the next change; `false` once the registry is gone.
    /// Changes made while nobody waited are reported once, at the next call.
    pub async fn changed(&mut self) -> bool {
        self.0.changed().await.is_ok()
    }

    /// Whether the list changed since the last [`changed`](Self::changed).
    pub fn has_changed(&self) -> bool {
        self.0.has_changed().unwrap_or(false)
    }

    /// Whether the list changed since the last call of this or of
    /// [`changed`](Self::changed), without waiting; the change counts as
    /// seen. A loop that sends the list with each request asks this first.
    pub fn take_change(&mut self) -> bool {
        let changed = self.has_changed();
        if changed {
            self.0.borrow_and_update();
        }
        changed
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}
