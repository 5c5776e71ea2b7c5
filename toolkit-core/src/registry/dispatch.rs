//! The one way to run calls: a builder per call and per turn, given what
//! the calls may use, then awaited.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use std::time::Duration;

use super::drive::{Pending, Scheduler, poll_tool};
use super::{Registry, Signals, TurnOutcome};
use crate::call::host::CallHost;
use crate::call::progress::ProgressSink;
use crate::call::state::RunState;
use crate::result::panic_message;
use crate::tool::Started;
use crate::{
    Arguments, CallError, CallOutcome, Cancellation, ToolCall, ToolCallResult, ToolFuture,
    ToolResult,
};

/// The builder methods that give calls what they may use, the same on a
/// call and on a turn: each reaches the signals while nothing has started.
macro_rules! given {
    ($r:lifetime, $whom:literal, $whose:literal) => {
        #[doc = concat!("A signal the host raises to stop ", $whom, ": the tool reads it from")]
        /// its [`CallContext`](crate::CallContext).
        pub fn cancellation(mut self, cancellation: &$r Cancellation) -> Self {
            if let Some(signals) = self.signals() {
                signals.cancellation = cancellation;
            }
            self
        }

        #[doc = concat!("The values of the run ", $whom, " is part of: the tool reads")]
        /// them before the registry's own.
        pub fn state(mut self, state: &$r RunState) -> Self {
            if let Some(signals) = self.signals() {
                signals.run = Some(state);
            }
            self
        }

        #[doc = concat!("What the host offers ", $whom, ": where the tool's")]
        /// [progress reports](crate::CallContext::report_progress) and
        /// [log messages](crate::CallContext::log) go, and who answers its
        /// [questions](crate::CallContext::elicit). A host with a progress
        /// sink replaces one given by [`progress`](Self::progress) before it.
        pub fn host(mut self, host: &$r CallHost) -> Self {
            if let Some(signals) = self.signals() {
                signals.offer(host);
            }
            self
        }

        #[doc = concat!("Where ", $whose, " [progress reports](crate::CallContext::report_progress)")]
        /// go, when that is all the host offers; given after
        /// [`host`](Self::host), it replaces the host's own sink.
        pub fn progress(mut self, progress: &$r ProgressSink) -> Self {
            if let Some(signals) = self.signals() {
                signals.progress = Some(progress);
            }
            self
        }
    };
}

/// One call, ready to run: await it, or first give it what it may use.
/// It is the call's future too: it runs when first polled.
///
/// Made by [`Registry::dispatch`] (a call the model made) or
/// [`Registry::call`] (a tool by name). Nothing runs until it is awaited.
///
/// ```
/// use toolkit_core::{Cancellation, Registry, RunState, ToolCall, tool, tools};
///
/// /// Greets someone.
/// #[tool]
/// fn greet(
///     /// Who.
///     name: String,
/// ) -> String {
///     format!("Hello, {name}!")
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::builder().tools(tools![greet]).build()?;
/// let call = ToolCall::from_text("call_1", "greet", r#"{"name": "Ada"}"#);
/// let stop = Cancellation::new();
/// let outcome = registry
///     .dispatch(&call)
///     .cancellation(&stop)
///     .state(&RunState::new())
///     .await;
/// assert_eq!(outcome.result.as_text(), Ok("Hello, Ada!"));
/// # Ok::<(), toolkit_core::RegistryError>(())
/// # }).unwrap();
/// ```
#[must_use = "a call does nothing until it is awaited"]
pub struct Dispatch<'r> {
    state: State<'r>,
}

/// What a call runs with, until it starts: references only, copied out
/// when it starts.
#[derive(Clone, Copy)]
struct Params<'r> {
    registry: &'r Registry,
    id: &'r str,
    name: &'r str,
    arguments: Arguments<'r>,
    signals: Signals<'r>,
}

enum State<'r> {
    /// Not polled yet: the tool starts on the first poll.
    Waiting(Params<'r>),
    /// The tool runs; the name is for the error, should it stop.
    Running { future: ToolFuture, name: &'r str },
    /// Traced: the call inside its span, on a path of its own.
    Traced(Pin<Box<dyn Future<Output = CallOutcome> + Send + 'r>>),
    /// Ended, its outcome given. An outcome is never kept here: a call
    /// that ends on its first poll (most do) returns it straight away, so
    /// the state stays small and is written once.
    Ended,
}

impl<'r> Dispatch<'r> {
    pub(super) fn new(
        registry: &'r Registry,
        id: &'r str,
        name: &'r str,
        arguments: Arguments<'r>,
    ) -> Self {
        Self::with_signals(
            registry,
            id,
            name,
            arguments,
            Signals::new(&registry.never_cancelled),
        )
    }

    fn with_signals(
        registry: &'r Registry,
        id: &'r str,
        name: &'r str,
        arguments: Arguments<'r>,
        signals: Signals<'r>,
    ) -> Self {
        Self {
            state: State::Waiting(Params {
                registry,
                id,
                name,
                arguments,
                signals,
            }),
        }
    }

    /// The signals, while the call has not started (the builder's methods
    /// take it by value, so they come before the first poll).
    fn signals(&mut self) -> Option<&mut Signals<'r>> {
        match &mut self.state {
            State::Waiting(params) => Some(&mut params.signals),
            _ => None,
        }
    }

    given!('r, "the call", "its");
}

/// The call runs when first polled, and gives the tool's [`CallOutcome`]
/// when it ends. Whatever the call and the tool do, it never panics and
/// never loses an error (see [`Registry::dispatch`]); like any future, it
/// must not be polled again once it has completed.
///
/// A future of its own rather than a boxed one: a call made without
/// tracing allocates nothing here, as on the path measured in
/// docs/performance.md.
impl Future for Dispatch<'_> {
    type Output = CallOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CallOutcome> {
        let this = &mut *self;
        let (registry, id, name, arguments, signals) = match &mut this.state {
            State::Waiting(params) => {
                let Params {
                    registry,
                    id,
                    name,
                    arguments,
                    signals,
                } = *params;
                (registry, id, name, arguments, signals)
            }
            State::Running { future, name } => {
                let done = std::task::ready!(poll_tool(future, cx, name));
                // The tool's future is dropped as soon as it ends.
                this.state = State::Ended;
                return Poll::Ready(ended(done));
            }
            State::Traced(future) => {
                let outcome = std::task::ready!(future.as_mut().poll(cx));
                this.state = State::Ended;
                return Poll::Ready(outcome);
            }
            State::Ended => panic!("a Dispatch polled after it completed"),
        };
        // The first poll. Most tools end within it: their outcome goes
        // straight to the caller, and only a tool still running is kept.
        // `Waiting` holds references only, so leaving it drops nothing.
        let waiting = std::mem::replace(&mut this.state, State::Ended);
        std::mem::forget(waiting);
        if let Some(span) = crate::telemetry::tool_span(name, id) {
            let mut future = Box::pin(registry.dispatch_traced(span, id, name, arguments, signals));
            return match future.as_mut().poll(cx) {
                Poll::Ready(outcome) => Poll::Ready(outcome),
                Poll::Pending => {
                    this.state = State::Traced(future);
                    Poll::Pending
                }
            };
        }
        let mut future = match registry.start(id, name, arguments, signals) {
            Ok(Started::Ready(done)) => return Poll::Ready(ended(done)),
            Ok(Started::Future(future)) => future,
            Err(error) => return Poll::Ready(CallOutcome::failed(error)),
        };
        match poll_tool(&mut future, cx, name) {
            Poll::Ready(done) => {
                drop(future);
                Poll::Ready(ended(done))
            }
            Poll::Pending => {
                this.state = State::Running { future, name };
                Poll::Pending
            }
        }
    }
}

/// The outcome of a tool that ended.
#[inline]
fn ended(done: Result<ToolResult, CallError>) -> CallOutcome {
    match done {
        Ok(result) => CallOutcome::ok(result),
        Err(error) => CallOutcome::failed(error),
    }
}

/// One turn's calls, ready to run together: await it, or first give them
/// what they may use. Made by [`Registry::dispatch_turn`].
///
/// The calls run concurrently on the awaiting task (sync tools on tokio's
/// blocking pool), at most [`max_concurrent`](Self::max_concurrent) at
/// once, started in call order; the results come back in call order.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::{Registry, ToolCall, tool, tools};
///
/// /// Doubles a number.
/// #[tool]
/// fn double(
///     /// The number.
///     n: i64,
/// ) -> i64 {
///     n * 2
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::builder().tools(tools![double]).build()?;
/// let calls: Vec<ToolCall> = (0..5)
///     .map(|n| ToolCall::new(format!("call_{n}"), "double", json!({"n": n})))
///     .collect();
/// let turn = registry.dispatch_turn(&calls).max_concurrent(2).await;
/// assert_eq!(turn.results[4].result.to_text(), "8");
/// # Ok::<(), toolkit_core::RegistryError>(())
/// # }).unwrap();
/// ```
#[must_use = "a turn does nothing until it is awaited"]
pub struct TurnDispatch<'r> {
    state: TurnState<'r>,
}

enum TurnState<'r> {
    /// Not polled yet.
    Waiting(TurnParams<'r>),
    /// The calls run.
    Running(Pin<Box<dyn Future<Output = TurnOutcome> + Send + 'r>>),
    /// Every call ended and the outcome was given.
    Ended,
}

/// What a turn runs with, until it starts.
struct TurnParams<'r> {
    registry: &'r Registry,
    calls: &'r [ToolCall],
    signals: Signals<'r>,
    max_concurrent: usize,
    /// Calls of one tool at most at once, by the tool's registered name.
    per_tool: Vec<(String, usize)>,
    timeout: Option<Duration>,
    /// Time limits of one tool's calls, by the tool's registered name.
    tool_timeouts: Vec<(String, Duration)>,
}

impl<'r> TurnDispatch<'r> {
    pub(super) fn new(registry: &'r Registry, calls: &'r [ToolCall]) -> Self {
        Self {
            state: TurnState::Waiting(TurnParams {
                registry,
                calls,
                signals: Signals::new(&registry.never_cancelled),
                max_concurrent: usize::MAX,
                per_tool: Vec::new(),
                timeout: None,
                tool_timeouts: Vec::new(),
            }),
        }
    }

    fn params(&mut self) -> Option<&mut TurnParams<'r>> {
        match &mut self.state {
            TurnState::Waiting(params) => Some(params),
            TurnState::Running(_) | TurnState::Ended => None,
        }
    }

    fn signals(&mut self) -> Option<&mut Signals<'r>> {
        self.params().map(|params| &mut params.signals)
    }

    given!('r, "every call of the turn", "each call's");

    /// At most this many calls run at once (at least one); the rest start,
    /// in call order, as running ones end. Unlimited by default.
    pub fn max_concurrent(mut self, max: usize) -> Self {
        if let Some(params) = self.params() {
            params.max_concurrent = max.max(1);
        }
        self
    }

    /// At most `max` calls of the tool `tool` (its registered name) run at
    /// once (at least one); while they do, later calls of other tools
    /// start before the waiting ones of this tool.
    pub fn max_concurrent_for(mut self, tool: impl Into<String>, max: usize) -> Self {
        if let Some(params) = self.params() {
            params.per_tool.push((tool.into(), max.max(1)));
        }
        self
    }

    /// Each call's time limit in this turn: a call still running when it
    /// passes is stopped (its future dropped) and answered with
    /// [`CallError::TimedOut`]. A tool's own limit, set on the registry
    /// with [`RegistryBuilder::tool_timeout`](crate::RegistryBuilder::tool_timeout),
    /// applies too: the shorter ends the call.
    pub fn timeout(mut self, limit: Duration) -> Self {
        if let Some(params) = self.params() {
            params.timeout = Some(limit);
        }
        self
    }

    /// A time limit for one tool's calls in this turn, in place of
    /// [`timeout`](Self::timeout)'s. Not part of the public API: it serves
    /// the agent's deprecated per-tool time limit until that goes; a
    /// tool's own limit is set on the registry.
    #[doc(hidden)]
    pub fn __tool_timeout(mut self, tool: impl Into<String>, limit: Duration) -> Self {
        if let Some(params) = self.params() {
            params.tool_timeouts.push((tool.into(), limit));
        }
        self
    }

    /// The calls one by one, as each ends, rather than all at the end:
    /// for a host that records each result (a journal, a progress view)
    /// while the others run. Dropping the [`EachCall`] drops the calls not
    /// yet ended, started or not.
    ///
    /// # Panics
    ///
    /// When the turn was polled already (it is then its own future's).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolkit_core::{Registry, ToolCall, tool, tools};
    ///
    /// /// Doubles a number.
    /// #[tool]
    /// fn double(
    ///     /// The number.
    ///     n: i64,
    /// ) -> i64 {
    ///     n * 2
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::builder().tools(tools![double]).build()?;
    /// let calls: Vec<ToolCall> = (0..3)
    ///     .map(|n| ToolCall::new(format!("call_{n}"), "double", json!({"n": n})))
    ///     .collect();
    /// let mut each = registry.dispatch_turn(&calls).each();
    /// let mut ended = 0;
    /// while let Some((index, outcome)) = each.next().await {
    ///     assert_eq!(outcome.result.to_text(), (index * 2).to_string());
    ///     ended += 1;
    /// }
    /// assert_eq!(ended, 3);
    /// # Ok::<(), toolkit_core::RegistryError>(())
    /// # }).unwrap();
    /// ```
    pub fn each(mut self) -> EachCall<'r> {
        match std::mem::replace(&mut self.state, TurnState::Ended) {
            TurnState::Waiting(params) => EachCall::new(params),
            // As a future polled after it completed: its calls were taken.
            TurnState::Running(_) | TurnState::Ended => {
                panic!("`each` called on a TurnDispatch that was already polled")
            }
        }
    }
}

/// A turn's calls given back one by one as each ends: made by
/// [`TurnDispatch::each`].
#[must_use = "the calls run only while `next` is awaited"]
pub struct EachCall<'r> {
    scheduler: Scheduler<'r, CallOutcome>,
}

impl<'r> EachCall<'r> {
    fn new(params: TurnParams<'r>) -> Self {
        let TurnParams {
            registry,
            calls,
            signals,
            max_concurrent,
            per_tool,
            timeout,
            tool_timeouts,
        } = params;
        let by_tool = !per_tool.is_empty() || !tool_timeouts.is_empty();
        // The registered name, which the limits are keyed by: a call may
        // name its tool otherwise (an alias, a provider's spelling).
        let registered: Vec<Option<String>> = calls
            .iter()
            .map(|call| {
                by_tool
                    .then(|| registry.get(&call.name).map(|def| def.name().to_owned()))
                    .flatten()
            })
            .collect();
        let futures: Vec<Pending<'r, CallOutcome>> = calls
            .iter()
            .zip(&registered)
            .map(|(call, tool)| {
                let limit = tool
                    .as_deref()
                    .and_then(|tool| {
                        tool_timeouts
                            .iter()
                            .rev()
                            .find(|(name, _)| name == tool)
                            .map(|(_, limit)| *limit)
                    })
                    .or(timeout);
                let arguments = call.dispatch_arguments();
                match limit {
                    None => Box::pin(Dispatch::with_signals(
                        registry, &call.id, &call.name, arguments, signals,
                    )) as Pending<'r, CallOutcome>,
                    // The call's own signal, raised when its time is up, so
                    // that work it handed off (a sync tool's thread, a task
                    // it spawned) is told to stop too.
                    Some(limit) => Box::pin(async move {
                        let own = signals.cancellation.child();
                        let dispatch = Dispatch::with_signals(
                            registry,
                            &call.id,
                            &call.name,
                            arguments,
                            Signals {
                                cancellation: &own,
                                ..signals
                            },
                        );
                        let outcome = Limited::new(dispatch, &call.name, limit).await;
                        if matches!(outcome.error, Some(CallError::TimedOut { .. })) {
                            own.cancel();
                        }
                        outcome
                    }),
                }
            })
            .collect();
        let mut scheduler = Scheduler::new(futures, max_concurrent);
        for (tool, max) in &per_tool {
            let members = registered
                .iter()
                .enumerate()
                .filter(|(_, name)| name.as_deref() == Some(tool.as_str()))
                .map(|(index, _)| index);
            scheduler.group(members, *max);
        }
        Self { scheduler }
    }

    /// The next call to end, by its position in the turn, with its
    /// outcome; `None` once every call has ended.
    pub async fn next(&mut self) -> Option<(usize, CallOutcome)> {
        std::future::poll_fn(|cx| self.scheduler.poll_next(cx)).await
    }

    /// Whether the call at `index` has started: a call not started has
    /// done nothing, and never will once this is dropped.
    pub fn has_started(&self, index: usize) -> bool {
        self.scheduler.has_started(index)
    }
}

impl std::fmt::Debug for EachCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EachCall").finish_non_exhaustive()
    }
}

/// A call under the caller's time limit. The timer is made on the first
/// poll and its panic (a runtime without a time driver) caught, as a
/// tool's own limit is (see `Drive`).
struct Limited<'r> {
    dispatch: Dispatch<'r>,
    name: &'r str,
    limit: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<'r> Limited<'r> {
    fn new(dispatch: Dispatch<'r>, name: &'r str, limit: Duration) -> Self {
        Self {
            dispatch,
            name,
            limit,
            sleep: None,
        }
    }
}

impl Future for Limited<'_> {
    type Output = CallOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<CallOutcome> {
        let this = &mut *self;
        if this.sleep.is_none() {
            let limit = this.limit;
            match std::panic::catch_unwind(|| Box::pin(tokio::time::sleep(limit))) {
                Ok(sleep) => this.sleep = Some(sleep),
                Err(payload) => {
                    return Poll::Ready(CallOutcome::failed(CallError::Runtime {
                        tool: this.name.to_owned(),
                        message: panic_message(payload.as_ref()),
                    }));
                }
            }
        }
        if let Poll::Ready(outcome) = Pin::new(&mut this.dispatch).poll(cx) {
            return Poll::Ready(outcome);
        }
        match this.sleep.as_mut().map(|sleep| sleep.as_mut().poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(CallOutcome::failed(CallError::TimedOut {
                tool: this.name.to_owned(),
                after: this.limit,
            })),
            _ => Poll::Pending,
        }
    }
}

/// The turn runs when first polled, and gives every call's result in call
/// order.
impl Future for TurnDispatch<'_> {
    type Output = TurnOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<TurnOutcome> {
        let this = &mut *self;
        if let TurnState::Waiting(_) = this.state {
            let TurnState::Waiting(params) = std::mem::replace(&mut this.state, TurnState::Ended)
            else {
                unreachable!("matched above")
            };
            this.state = TurnState::Running(Box::pin(run_turn(params)));
        }
        let outcome = match &mut this.state {
            TurnState::Running(future) => std::task::ready!(future.as_mut().poll(cx)),
            TurnState::Ended => panic!("a TurnDispatch polled after it completed"),
            TurnState::Waiting(_) => unreachable!("started above"),
        };
        this.state = TurnState::Ended;
        Poll::Ready(outcome)
    }
}

async fn run_turn(params: TurnParams<'_>) -> TurnOutcome {
    let calls = params.calls;
    let mut each = EachCall::new(params);
    let mut outcomes: Vec<Option<CallOutcome>> =
        std::iter::repeat_with(|| None).take(calls.len()).collect();
    while let Some((index, outcome)) = each.next().await {
        outcomes[index] = Some(outcome);
    }
    let mut errors = Vec::new();
    let results = calls
        .iter()
        .zip(outcomes)
        .enumerate()
        .map(|(i, (call, outcome))| {
            let outcome = outcome.unwrap_or_else(|| {
                CallOutcome::failed(CallError::Runtime {
                    tool: call.name.clone(),
                    message: "the call did not end".to_owned(),
                })
            });
            if let Some(error) = outcome.error {
                errors.push((i, error));
            }
            ToolCallResult::new(&call.id, &call.name, outcome.result)
        })
        .collect();
    TurnOutcome { results, errors }
}
