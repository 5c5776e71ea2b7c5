//! The one way to run calls: a builder per call and per turn, given what
//! the calls may use, then awaited.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::drive::{Drive, join_all_limited};
use super::{Registry, Signals, TurnOutcome};
use crate::call::host::CallHost;
use crate::call::progress::ProgressSink;
use crate::call::state::RunState;
use crate::{Arguments, CallOutcome, Cancellation, ToolCall, ToolCallResult};

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
    Running { drive: Drive, name: &'r str },
    /// Traced: the call inside its span, on a path of its own.
    Traced(Pin<Box<dyn Future<Output = CallOutcome> + Send + 'r>>),
    /// Ended before the tool ran (an unknown tool, bad arguments), or
    /// ended and taken.
    Ended(Option<CallOutcome>),
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
        if let State::Waiting(Params {
            registry,
            id,
            name,
            arguments,
            signals,
        }) = this.state
        {
            this.state = match crate::telemetry::tool_span(name, id) {
                Some(span) => State::Traced(Box::pin(
                    registry.dispatch_traced(span, id, name, arguments, signals),
                )),
                None => match registry.start(id, name, arguments, signals) {
                    Ok(drive) => State::Running { drive, name },
                    Err(error) => State::Ended(Some(CallOutcome::failed(error))),
                },
            };
        }
        let done = match &mut this.state {
            State::Running { drive, name } => match Pin::new(drive).poll(cx) {
                Poll::Ready(Ok(result)) => CallOutcome::ok(result),
                Poll::Ready(Err(stop)) => CallOutcome::failed(stop.into_error(name)),
                Poll::Pending => return Poll::Pending,
            },
            State::Traced(future) => match future.as_mut().poll(cx) {
                Poll::Ready(outcome) => outcome,
                Poll::Pending => return Poll::Pending,
            },
            State::Ended(outcome) => outcome
                .take()
                .expect("a Dispatch polled after it completed"),
            State::Waiting(_) => unreachable!("started above"),
        };
        // The tool's future is dropped as soon as it ends.
        this.state = State::Ended(None);
        Poll::Ready(done)
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
    Waiting {
        registry: &'r Registry,
        calls: &'r [ToolCall],
        signals: Signals<'r>,
        max_concurrent: usize,
    },
    /// The calls run.
    Running(Pin<Box<dyn Future<Output = TurnOutcome> + Send + 'r>>),
    /// Every call ended and the outcome was given.
    Ended,
}

impl<'r> TurnDispatch<'r> {
    pub(super) fn new(registry: &'r Registry, calls: &'r [ToolCall]) -> Self {
        Self {
            state: TurnState::Waiting {
                registry,
                calls,
                signals: Signals::new(&registry.never_cancelled),
                max_concurrent: usize::MAX,
            },
        }
    }

    fn signals(&mut self) -> Option<&mut Signals<'r>> {
        match &mut self.state {
            TurnState::Waiting { signals, .. } => Some(signals),
            TurnState::Running(_) | TurnState::Ended => None,
        }
    }

    given!('r, "every call of the turn", "each call's");

    /// At most this many calls run at once (at least one); the rest start,
    /// in call order, as running ones end. Unlimited by default.
    pub fn max_concurrent(mut self, max: usize) -> Self {
        if let TurnState::Waiting { max_concurrent, .. } = &mut self.state {
            *max_concurrent = max.max(1);
        }
        self
    }
}

/// The turn runs when first polled, and gives every call's result in call
/// order.
impl Future for TurnDispatch<'_> {
    type Output = TurnOutcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<TurnOutcome> {
        let this = &mut *self;
        if let TurnState::Waiting {
            registry,
            calls,
            signals,
            max_concurrent,
        } = this.state
        {
            this.state =
                TurnState::Running(Box::pin(run_turn(registry, calls, signals, max_concurrent)));
        }
        let outcome = match &mut this.state {
            TurnState::Running(future) => std::task::ready!(future.as_mut().poll(cx)),
            TurnState::Ended => panic!("a TurnDispatch polled after it completed"),
            TurnState::Waiting { .. } => unreachable!("started above"),
        };
        this.state = TurnState::Ended;
        Poll::Ready(outcome)
    }
}

async fn run_turn<'r>(
    registry: &'r Registry,
    calls: &'r [ToolCall],
    signals: Signals<'r>,
    max_concurrent: usize,
) -> TurnOutcome {
    let futures = calls
        .iter()
        .map(|call| {
            let dispatch = Dispatch::with_signals(
                registry,
                &call.id,
                &call.name,
                call.dispatch_arguments(),
                signals,
            );
            Box::pin(dispatch) as _
        })
        .collect();
    let outcomes: Vec<CallOutcome> = join_all_limited(futures, max_concurrent).await;
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
