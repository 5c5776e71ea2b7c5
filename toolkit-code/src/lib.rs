//! Code mode for toolkit registries: the model writes one short program
//! that calls many tools, the program runs in a sandbox beside the host,
//! and only what it prints or returns reaches the model.
//!
//! [`CodeMode`] wraps a [`Registry`]: it writes TypeScript declarations of
//! the registry's tools ([`CodeMode::declarations`]), offers one tool,
//! `run_code`, whose description carries them ([`CodeMode::tool`]), and
//! runs a program in an embedded QuickJS sandbox ([`CodeMode::run`]).
//! Every call a program makes goes through
//! [`Registry::dispatch`], as a model's call does: its arguments are
//! checked (every error at once), it runs with the run's values and the
//! registry's time limits, and it is traced in a span under the program's.
//!
//! ```
//! use std::sync::Arc;
//! use toolkit_code::CodeMode;
//! use toolkit_core::{Registry, tool, tools};
//!
//! /// The population of a city, in thousands.
//! #[tool]
//! fn population(
//!     /// The city's name.
//!     city: String,
//! ) -> u64 {
//!     city.len() as u64 * 100
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Arc::new(Registry::builder().tools(tools![population]).build()?);
//! let code = CodeMode::new(registry);
//! assert!(code.declarations().contains("population(args: {"));
//!
//! let outcome = code
//!     .run(r#"
//!         const cities = ["Oslo", "Lima", "Paris"];
//!         const counts = await Promise.all(cities.map((city) => tools.population({ city })));
//!         return counts.reduce((sum, n) => sum + Number(n), 0);
//!     "#)
//!     .await;
//! assert_eq!(outcome.value, Some(serde_json::json!(1300)));
//! assert_eq!(outcome.calls, 3);
//! # Ok::<(), toolkit_core::RegistryError>(())
//! # }).unwrap();
//! ```
//!
//! The guide's chapter is docs/code-mode.md; why TypeScript and QuickJS,
//! docs/decisions/code-mode.md.
#![deny(missing_docs)]

mod declarations;
mod sandbox;

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_core::{
    CallContext, Cancellation, Registry, RegistryBuilder, RunState, ToolDef, ToolResult,
};

use crate::sandbox::{Abort, Job};

/// What a program may use: each limit reached ends the program with an
/// error the model reads ([`CodeError::Limit`]), after the output it
/// printed so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The time the program may take, from its start to its end, tool
    /// calls included.
    pub time: Duration,
    /// The memory of the program's engine, in bytes.
    pub memory: usize,
    /// The engine's stack, in bytes: how deep the program may recurse.
    pub stack: usize,
    /// How many tool calls one program may make.
    pub calls: usize,
    /// How many of the program's calls run at once; the others wait.
    pub concurrency: usize,
    /// How many bytes of output (`console.log`) one program may print.
    pub output: usize,
}

impl Default for Limits {
    /// 30 s, 64 MiB of memory, 512 KiB of stack, 200 calls, 8 at once,
    /// 64 KiB of output: room for a task of a few hundred lookups, and
    /// not more output than a model should read in one result.
    fn default() -> Self {
        Self {
            time: Duration::from_secs(30),
            memory: 64 << 20,
            stack: 512 << 10,
            calls: 200,
            concurrency: 8,
            output: 64 << 10,
        }
    }
}

impl Limits {
    /// These limits with `time` as the time limit.
    pub fn with_time(mut self, time: Duration) -> Self {
        self.time = time;
        self
    }

    /// These limits with `bytes` of engine memory.
    pub fn with_memory(mut self, bytes: usize) -> Self {
        self.memory = bytes;
        self
    }

    /// These limits with `bytes` of engine stack.
    pub fn with_stack(mut self, bytes: usize) -> Self {
        self.stack = bytes;
        self
    }

    /// These limits with at most `calls` tool calls.
    pub fn with_calls(mut self, calls: usize) -> Self {
        self.calls = calls;
        self
    }

    /// These limits with at most `calls` tool calls running at once.
    pub fn with_concurrency(mut self, calls: usize) -> Self {
        self.concurrency = calls;
        self
    }

    /// These limits with at most `bytes` of output.
    pub fn with_output(mut self, bytes: usize) -> Self {
        self.output = bytes;
        self
    }
}

/// How a program ended: what it printed, what it returned, and the error
/// that ended it, if one did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// What the program printed with `console.log`, a line each.
    pub output: String,
    /// What the program returned, as JSON (`None` for `undefined`, or a
    /// value JSON cannot hold).
    pub value: Option<Value>,
    /// Why the program did not end by itself; its output so far is kept.
    pub error: Option<CodeError>,
    /// How many tool calls the program made.
    pub calls: usize,
    /// How long the program ran, its start included.
    pub elapsed: Duration,
}

impl RunOutcome {
    /// Whether the program ended by itself, without an error.
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }

    /// What the model reads: the output, then the returned value as
    /// JSON, then the error, each when there is one.
    pub fn to_text(&self) -> String {
        let mut text = self.output.clone();
        if let Some(value) = &self.value {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&value.to_string());
        }
        if let Some(error) = &self.error {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("error: ");
            text.push_str(&error.to_string());
        }
        if text.is_empty() {
            text.push_str("(the program printed and returned nothing)");
        }
        text
    }
}

/// Why a program ended without finishing.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CodeError {
    /// The program reached one of its [`Limits`].
    Limit(Limit),
    /// The program threw, and nothing caught it (a syntax error too).
    Thrown {
        /// The error's name and message.
        message: String,
        /// Where it was thrown, as the engine says.
        stack: String,
    },
    /// The program waits on a promise that nothing will settle.
    Stalled,
    /// The host cancelled the run.
    Cancelled,
    /// The engine could not start.
    Engine(String),
}

/// Which of a program's [`Limits`] it reached, with the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// It ran longer than this.
    Time(Duration),
    /// It asked for more memory than this many bytes.
    Memory(usize),
    /// It recursed deeper than this many bytes of stack.
    Stack(usize),
    /// It made more tool calls than this.
    Calls(usize),
    /// It printed more than this many bytes.
    Output(usize),
}

impl fmt::Display for CodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Limit(limit) => limit.fmt(f),
            Self::Thrown { message, stack } if stack.is_empty() => {
                write!(f, "the program threw {message}")
            }
            Self::Thrown { message, stack } => {
                write!(f, "the program threw {message}\n{stack}")
            }
            Self::Stalled => f.write_str(
                "the program waits on a promise that nothing will settle (no tool call is running)",
            ),
            Self::Cancelled => f.write_str("the run was cancelled"),
            Self::Engine(message) => write!(f, "the sandbox could not run the program: {message}"),
        }
    }
}

impl std::error::Error for CodeError {}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Time(time) => write!(f, "the program ran past its time limit of {time:?}"),
            Self::Memory(bytes) => write!(
                f,
                "the program ran out of memory (its limit is {} MiB)",
                bytes >> 20
            ),
            Self::Stack(bytes) => write!(
                f,
                "the program recursed too deep (stack overflow; its stack is {} KiB)",
                bytes >> 10
            ),
            Self::Calls(calls) => write!(f, "the program made more than {calls} tool calls"),
            Self::Output(bytes) => write!(f, "the program's output passed {bytes} bytes"),
        }
    }
}

/// What an agent offers its model ([`CodeMode::offered`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Offer {
    /// The `run_code` tool alone: every call goes through a program.
    CodeOnly,
    /// The tools alone, called the plain way.
    ToolsOnly,
    /// The tools and `run_code`: the model chooses, call by call.
    Both,
}

/// Code mode over a registry: declarations of its tools, the `run_code`
/// tool, and the sandbox that runs programs. Cloning is cheap.
#[derive(Clone)]
pub struct CodeMode {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Arc<Registry>,
    limits: Limits,
    clock: bool,
}

impl fmt::Debug for CodeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeMode")
            .field("registry", &self.inner.registry)
            .field("limits", &self.inner.limits)
            .field("clock", &self.inner.clock)
            .finish()
    }
}

/// The name of the tool [`CodeMode::tool`] makes.
pub const RUN_CODE: &str = "run_code";

impl CodeMode {
    /// Code mode over `registry`'s tools, with the default [`Limits`] and
    /// no clock.
    pub fn new(registry: Arc<Registry>) -> Self {
        Self {
            inner: Arc::new(Inner {
                registry,
                limits: Limits::default(),
                clock: false,
            }),
        }
    }

    fn with(self, change: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Inner {
            registry: self.inner.registry.clone(),
            limits: self.inner.limits,
            clock: self.inner.clock,
        };
        change(&mut inner);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// This code mode with `limits` on each program.
    pub fn limits(self, limits: Limits) -> Self {
        self.with(|inner| inner.limits = limits)
    }

    /// This code mode with programs given `Date` (and `performance`), the
    /// host's clock, or not (the default: a program's result then does not
    /// depend on when it runs).
    pub fn clock(self, clock: bool) -> Self {
        self.with(|inner| inner.clock = clock)
    }

    /// The registry whose tools programs call.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.inner.registry
    }

    /// The limits on each program.
    pub fn current_limits(&self) -> Limits {
        self.inner.limits
    }

    /// The TypeScript declarations of the tools a program may call: the
    /// registry's enabled tools, but those that need a person's approval
    /// (a program cannot pause for it), written from each tool's canonical
    /// schema and output schema, with its documentation.
    pub fn declarations(&self) -> String {
        declarations::write_declarations(&self.callable())
    }

    fn callable(&self) -> Vec<ToolDef> {
        self.inner
            .registry
            .tools()
            .into_iter()
            .filter(|def| !def.needs_approval())
            .collect()
    }

    /// The description of the `run_code` tool: how programs are written
    /// and run, then the declarations.
    pub fn description(&self) -> String {
        let limits = self.inner.limits;
        format!(
            "Runs a JavaScript program that calls the tools declared below, and returns only \
             what the program prints with console.log and what it returns (as JSON). Use it to \
             make many tool calls and combine their results in one step. The program is the \
             body of an async function: `await` each call (`await Promise.all([...])` runs calls \
             together) and `return` the answer. A failed call throws an Error whose message \
             says why. There is no file system, network, module loader{clock}. Limits: \
             {time} s, {calls} tool calls, {output} bytes of output, {memory} MiB of memory.\n\n\
             ```ts\n{declarations}```",
            clock = if self.inner.clock {
                ""
            } else {
                " or clock (no Date)"
            },
            time = limits.time.as_secs_f64(),
            calls = limits.calls,
            output = limits.output,
            memory = limits.memory >> 20,
            declarations = self.declarations(),
        )
    }

    /// The `run_code` tool, for a registry of its own (an agent that
    /// offers code mode only), or beside the tools it calls in another
    /// registry: its argument is `code`, the program; its result is
    /// [`RunOutcome::to_text`], an error result when the program failed.
    /// The call's cancellation reaches the program and its calls.
    pub fn tool(&self) -> ToolDef {
        let mode = self.clone();
        ToolDef::builder(RUN_CODE)
            .description(self.description())
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "description": "The program: the body of an async JavaScript function."
                    }
                },
                "required": ["code"],
                "additionalProperties": false
            }))
            .handler(move |arguments: Value, context: CallContext| {
                let mode = mode.clone();
                async move {
                    let code = arguments
                        .get("code")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    // The program's calls are calls of the same run: they
                    // see its values.
                    let mut run = mode.run(&code).cancellation(context.cancellation());
                    if let Some(state) = context.run_state() {
                        run = run.state(state);
                    }
                    let outcome = run.await;
                    if outcome.is_ok() {
                        ToolResult::text(outcome.to_text())
                    } else {
                        ToolResult::error(outcome.to_text())
                    }
                }
            })
    }

    /// A builder of the registry an agent offers its model: the
    /// `run_code` tool only, the tools only, or both (see [`Offer`]).
    /// Calls of `run_code` go to the tools of this code mode's registry;
    /// give the builder the host state and time limits the offered
    /// registry needs, as for any registry.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolkit_code::{CodeMode, Offer};
    /// use toolkit_core::{Registry, tool, tools};
    ///
    /// /// Says hello.
    /// #[tool]
    /// fn hello() -> &'static str {
    ///     "hello"
    /// }
    ///
    /// let registry = Arc::new(Registry::builder().tools(tools![hello]).build()?);
    /// let code = CodeMode::new(registry);
    /// let names = |offer| code.offered(offer).build().map(|r| r.names().collect::<Vec<_>>());
    /// assert_eq!(names(Offer::CodeOnly)?, ["run_code"]);
    /// assert_eq!(names(Offer::ToolsOnly)?, ["hello"]);
    /// assert_eq!(names(Offer::Both)?, ["hello", "run_code"]);
    /// # Ok::<(), toolkit_core::RegistryError>(())
    /// ```
    pub fn offered(&self, offer: Offer) -> RegistryBuilder {
        let builder = Registry::builder();
        match offer {
            Offer::CodeOnly => builder.tool(self.tool()),
            Offer::ToolsOnly => builder.tools(self.inner.registry.tools()),
            Offer::Both => builder.tools(self.inner.registry.tools()).tool(self.tool()),
        }
    }

    /// A run of `code`: await it, or first give it the run's values or a
    /// cancellation signal ([`Run`]).
    pub fn run<'a>(&'a self, code: &'a str) -> Run<'a> {
        Run {
            mode: self,
            code,
            state: None,
            cancellation: None,
        }
    }
}

/// One program, ready to run: await it for its [`RunOutcome`].
///
/// The program runs on a thread of its own, made for it, with its tool
/// calls polled there inside the awaiting task's tokio runtime; dropping
/// the run stops the program at its engine's next check (well within a
/// millisecond of work) and ends the thread.
#[must_use = "a run does nothing until it is awaited"]
pub struct Run<'a> {
    mode: &'a CodeMode,
    code: &'a str,
    state: Option<RunState>,
    cancellation: Option<&'a Cancellation>,
}

impl<'a> Run<'a> {
    /// The values of the run the program is part of: each of its calls
    /// reads them before the registry's own, as a model's call does.
    pub fn state(mut self, state: &RunState) -> Self {
        self.state = Some(state.clone());
        self
    }

    /// A signal that stops the program and its calls.
    pub fn cancellation(mut self, cancellation: &'a Cancellation) -> Self {
        self.cancellation = Some(cancellation);
        self
    }

    async fn go(self) -> RunOutcome {
        let inner = &self.mode.inner;
        let cancellation = self.cancellation.cloned().unwrap_or_default();
        let span = tracing::info_span!(
            "execute_code",
            otel.name = "execute_code",
            gen_ai.operation.name = "execute_code",
        );
        let runtime = match tokio::runtime::Handle::try_current() {
            Ok(runtime) => runtime,
            Err(error) => return failed(CodeError::Engine(error.to_string())),
        };
        let job = Job {
            code: self.code.to_owned(),
            registry: inner.registry.clone(),
            limits: inner.limits,
            clock: inner.clock,
            state: self.state,
            cancellation: cancellation.clone(),
            span: span.clone(),
            runtime,
        };
        let abort = Arc::new(Abort::new());
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let thread_abort = abort.clone();
        // The caller's subscriber, which may be its thread's own: the
        // program's calls are traced where the caller's spans are.
        let dispatch = tracing::dispatcher::get_default(Clone::clone);
        let spawned = std::thread::Builder::new()
            .name("toolkit-code".into())
            // Room for the engine's stack limit and the host's frames
            // beneath it.
            .stack_size(inner.limits.stack + (4 << 20))
            .spawn(move || {
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    tracing::dispatcher::with_default(&dispatch, || sandbox::run(job, thread_abort))
                }))
                .unwrap_or_else(|_| failed(CodeError::Engine("the sandbox panicked".into())));
                let _ = sender.send(outcome);
            });
        let thread = match spawned {
            Ok(handle) => handle.thread().clone(),
            Err(error) => return failed(CodeError::Engine(error.to_string())),
        };
        let guard = StopOnDrop {
            abort,
            thread: thread.clone(),
        };
        let mut receiver = receiver;
        let outcome = tokio::select! {
            outcome = &mut receiver => outcome,
            () = cancellation.cancelled() => {
                guard.stop();
                receiver.await
            }
        };
        drop(guard);
        let _ = &span;
        outcome.unwrap_or_else(|_| {
            failed(CodeError::Engine(
                "the sandbox ended without an answer".into(),
            ))
        })
    }
}

impl<'a> IntoFuture for Run<'a> {
    type Output = RunOutcome;
    type IntoFuture = Pin<Box<dyn Future<Output = RunOutcome> + Send + 'a>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.go())
    }
}

/// Stops the program when the run is dropped before it ends.
struct StopOnDrop {
    abort: Arc<Abort>,
    thread: std::thread::Thread,
}

impl StopOnDrop {
    fn stop(&self) {
        self.abort.cancel();
        self.thread.unpark();
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        // After the program ended this sets a flag nobody reads.
        self.stop();
    }
}

fn failed(error: CodeError) -> RunOutcome {
    RunOutcome {
        output: String::new(),
        value: None,
        error: Some(error),
        calls: 0,
        elapsed: Duration::ZERO,
    }
}

/// The guide's chapter on code mode (`docs/code-mode.md`): its examples are
/// compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/code-mode.md")]
pub struct CodeModeGuide;
