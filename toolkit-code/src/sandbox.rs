//! The sandbox: one QuickJS runtime per program, on a thread of its own,
//! where the program's tool calls are polled beside its job queue.
//!
//! The engine is `!Send`, and a tool's future may need to be polled while
//! the program waits on it, so the program, its job queue and its pending
//! calls all live on one thread made for the run: the calls are polled
//! there, inside the caller's tokio runtime (entered, not blocked on), so
//! that timers and `spawn_blocking` work as they do for a direct call. The
//! caller's task only waits for the answer (docs/decisions/code-mode.md).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use rquickjs::{
    CatchResultExt as _, CaughtError, Context, Ctx, Exception, Function, Object, Promise, Runtime,
    Value as JsValue, promise::PromiseState,
};
use serde_json::Value;
use toolkit_core::Block;
use toolkit_core::{CallOutcome, Cancellation, Registry, RunState};
use tracing::{Instrument as _, Span};

use crate::{CodeError, Limit, Limits, RunOutcome};

/// Why the program was stopped from outside its own code; the first
/// reason set is kept.
pub(crate) struct Abort {
    reason: AtomicU8,
}

const RUNNING: u8 = 0;
const TIME: u8 = 1;
const CALLS: u8 = 2;
const OUTPUT: u8 = 3;
const CANCELLED: u8 = 4;

impl Abort {
    pub(crate) fn new() -> Self {
        Self {
            reason: AtomicU8::new(RUNNING),
        }
    }

    pub(crate) fn set(&self, reason: u8) {
        let _ = self
            .reason
            .compare_exchange(RUNNING, reason, Ordering::SeqCst, Ordering::SeqCst);
    }

    pub(crate) fn cancel(&self) {
        self.set(CANCELLED);
    }

    fn get(&self) -> u8 {
        self.reason.load(Ordering::SeqCst)
    }
}

/// What the sandbox's thread needs for one program: all owned, since the
/// thread outlives nothing of the caller's.
pub(crate) struct Job {
    pub(crate) code: String,
    pub(crate) registry: Arc<Registry>,
    pub(crate) limits: Limits,
    pub(crate) clock: bool,
    pub(crate) state: Option<RunState>,
    pub(crate) cancellation: Cancellation,
    pub(crate) span: Span,
    pub(crate) runtime: tokio::runtime::Handle,
}

/// Wakes the sandbox's thread when a pending call can make progress.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// The bindings of every tool the program may call, and the JavaScript
/// half of `console`. Runs once, before the program, in strict mode; the
/// host functions it is given are reachable afterwards only through the
/// frozen closures it makes.
const PRELUDE: &str = r#"(function (call, write, names, clock) {
  "use strict";
  const stringify = JSON.stringify;
  const freeze = Object.freeze;
  const define = Object.defineProperty;
  const tools = Object.create(null);
  for (const name of names) {
    const bound = { [name]: (args) => call(name, args) }[name];
    tools[name] = freeze(bound);
  }
  const show = (value) => {
    if (typeof value === "string") return value;
    if (value instanceof Error) return value.name + ": " + value.message;
    try {
      const text = stringify(value);
      if (text !== undefined) return text;
    } catch (_) {}
    return String(value);
  };
  const log = (...values) => write(values.map(show).join(" "));
  define(globalThis, "tools", { value: freeze(tools) });
  define(globalThis, "console", {
    value: freeze({ log, info: log, warn: log, error: log, debug: log }),
  });
  if (!clock) {
    delete globalThis.Date;
    delete globalThis.performance;
  }
})"#;

/// One call the program made, not yet started.
struct Request {
    id: u32,
    name: String,
    arguments: Value,
}

/// What the host functions and the run's loop share, all on the
/// sandbox's thread.
struct Shared<'js> {
    output: String,
    calls: usize,
    next_id: u32,
    queued: VecDeque<Request>,
    /// The settling functions of each call's promise, by call id.
    settle: HashMap<u32, (String, Function<'js>, Function<'js>)>,
}

/// How many lines of a thrown error's stack the model reads.
const STACK_LINES: usize = 5;

type Pending = Pin<Box<dyn Future<Output = (u32, CallOutcome)>>>;

/// Runs the program to its end, a limit or a cancellation, on the calling
/// thread (the sandbox's own).
pub(crate) fn run(job: Job, abort: Arc<Abort>) -> RunOutcome {
    let started = Instant::now();
    let deadline = started + job.limits.time;
    let runtime = match Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => return engine_failure(error, started),
    };
    runtime.set_memory_limit(job.limits.memory);
    runtime.set_max_stack_size(job.limits.stack);
    let flag = abort.clone();
    let cancellation = job.cancellation.clone();
    runtime.set_interrupt_handler(Some(Box::new(move || {
        if cancellation.is_cancelled() {
            flag.cancel();
        } else if Instant::now() >= deadline {
            flag.set(TIME);
        }
        flag.get() != RUNNING
    })));
    let context = match Context::full(&runtime) {
        Ok(context) => context,
        Err(error) => return engine_failure(error, started),
    };
    let _runtime = job.runtime.enter();
    let mut outcome = context.with(|ctx| Session::new(ctx, &job, abort.clone(), deadline).run());
    outcome.elapsed = started.elapsed();
    outcome
}

fn engine_failure(error: rquickjs::Error, started: Instant) -> RunOutcome {
    RunOutcome {
        output: String::new(),
        value: None,
        error: Some(CodeError::Engine(error.to_string())),
        calls: 0,
        elapsed: started.elapsed(),
    }
}

struct Session<'a, 'js> {
    ctx: Ctx<'js>,
    job: &'a Job,
    abort: Arc<Abort>,
    deadline: Instant,
    shared: Rc<RefCell<Shared<'js>>>,
    /// Tools whose results come back as values (they have an output
    /// schema); the others' results come back as text.
    structured: HashSet<String>,
    /// Raised when the run ends, so that calls still running stop.
    calls_cancellation: Cancellation,
}

impl<'a, 'js> Session<'a, 'js> {
    fn new(ctx: Ctx<'js>, job: &'a Job, abort: Arc<Abort>, deadline: Instant) -> Self {
        let structured = job
            .registry
            .tools()
            .iter()
            .filter(|def| def.output_schema().is_some())
            .map(|def| def.name().to_owned())
            .collect();
        Self {
            ctx,
            job,
            abort,
            deadline,
            shared: Rc::new(RefCell::new(Shared {
                output: String::new(),
                calls: 0,
                next_id: 0,
                queued: VecDeque::new(),
                settle: HashMap::new(),
            })),
            structured,
            calls_cancellation: job.cancellation.child(),
        }
    }

    fn run(self) -> RunOutcome {
        let ended = self.drive();
        self.calls_cancellation.cancel();
        // Every JavaScript value held on the Rust side goes before the
        // context does: the engine frees its objects only when nothing
        // outside it holds them.
        let mut shared = self.shared.borrow_mut();
        shared.settle.clear();
        shared.queued.clear();
        let (value, error) = match ended {
            Ok(value) => (value, None),
            Err(error) => (None, Some(error)),
        };
        RunOutcome {
            output: std::mem::take(&mut shared.output),
            value,
            error,
            calls: shared.calls,
            elapsed: Duration::ZERO,
        }
    }

    /// The program's returned value, or why it has none.
    fn drive(&self) -> Result<Option<Value>, CodeError> {
        let main = self.start()?;
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut pending: FuturesUnordered<Pending> = FuturesUnordered::new();
        loop {
            // The job queue first: it is where the program continues after
            // each awaited call.
            while self.abort.get() == RUNNING && self.ctx.execute_pending_job() {}
            self.check_abort()?;
            match main.state() {
                PromiseState::Pending => {}
                PromiseState::Resolved => return Ok(self.returned(&main)),
                PromiseState::Rejected => return Err(self.rejected(&main)),
            }
            self.start_calls(&mut pending);
            let mut progressed = false;
            let mut task = TaskContext::from_waker(&waker);
            while let Poll::Ready(Some((id, outcome))) = pending.poll_next_unpin(&mut task) {
                self.settle(id, outcome);
                progressed = true;
            }
            if progressed || self.ctx.execute_pending_job() {
                continue;
            }
            if pending.is_empty() && self.shared.borrow().queued.is_empty() {
                return Err(CodeError::Stalled);
            }
            let now = Instant::now();
            if now >= self.deadline {
                self.abort.set(TIME);
                self.check_abort()?;
            }
            // Woken by a call that can progress, or by the caller when the
            // run is cancelled; at the latest at the deadline.
            std::thread::park_timeout(self.deadline - now);
            if self.job.cancellation.is_cancelled() {
                self.abort.cancel();
            }
        }
    }

    /// Installs the bindings and starts the program: its promise.
    fn start(&self) -> Result<Promise<'js>, CodeError> {
        let ctx = &self.ctx;
        let names: Vec<String> = self
            .job
            .registry
            .tools()
            .iter()
            .filter(|def| !def.needs_approval())
            .map(|def| def.name().to_owned())
            .collect();
        let call = self.call_function().map_err(|e| self.failure(e))?;
        let write = self.write_function().map_err(|e| self.failure(e))?;
        let prelude: Function = ctx.eval(PRELUDE).map_err(|e| self.failure(e))?;
        if let Err(error) = prelude
            .call::<_, ()>((call, write, names, self.job.clock))
            .catch(ctx)
        {
            // Interrupted before the program started: cancelled already.
            self.check_abort()?;
            return Err(CodeError::Engine(error.to_string()));
        }
        // The program is the body of an async function, so that it can
        // `await` and `return`; it starts on the wrapper's line, so the
        // engine's line numbers are the program's own.
        let source = format!(
            "(async function () {{ \"use strict\"; {}\n}})()",
            self.job.code
        );
        match ctx.eval::<JsValue, _>(source).catch(ctx) {
            Ok(value) => match value.into_promise() {
                Some(promise) => Ok(promise),
                None => Err(CodeError::Engine("the program gave no promise".into())),
            },
            Err(caught) => {
                self.check_abort()?;
                Err(self.thrown(caught))
            }
        }
    }

    /// `call(name, args)`: queues one tool call and gives its promise.
    fn call_function(&self) -> rquickjs::Result<Function<'js>> {
        let shared = self.shared.clone();
        let abort = self.abort.clone();
        let limit = self.job.limits.calls;
        Function::new(
            self.ctx.clone(),
            move |ctx: Ctx<'js>, name: String, arguments: JsValue<'js>| {
                if shared.borrow().calls >= limit {
                    // Stopped from outside the program: a thrown error it
                    // could catch would let it go on calling.
                    abort.set(CALLS);
                    return Err(Exception::throw_message(
                        &ctx,
                        &format!("the program made more than {limit} tool calls"),
                    ));
                }
                let arguments = arguments_of(&ctx, arguments)?;
                let (promise, resolve, reject) = ctx.promise()?;
                let mut shared = shared.borrow_mut();
                shared.calls += 1;
                let id = shared.next_id;
                shared.next_id += 1;
                shared.settle.insert(id, (name.clone(), resolve, reject));
                shared.queued.push_back(Request {
                    id,
                    name,
                    arguments,
                });
                Ok(promise)
            },
        )
    }

    /// `write(line)`: one line of the program's output, within the limit.
    fn write_function(&self) -> rquickjs::Result<Function<'js>> {
        let shared = self.shared.clone();
        let abort = self.abort.clone();
        let limit = self.job.limits.output;
        Function::new(self.ctx.clone(), move |ctx: Ctx<'js>, line: String| {
            let mut shared = shared.borrow_mut();
            let output = &mut shared.output;
            let room = limit.saturating_sub(output.len());
            if line.len() < room {
                output.push_str(&line);
                output.push('\n');
                return Ok(());
            }
            // What fits is kept, cut at a character's boundary.
            let mut end = room;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            output.push_str(&line[..end]);
            abort.set(OUTPUT);
            Err(Exception::throw_message(
                &ctx,
                &format!("the program's output passed {limit} bytes"),
            ))
        })
    }

    /// The engine's failure, unless it was stopped from outside (the
    /// run cancelled before it started, say): then why it was.
    fn failure(&self, error: rquickjs::Error) -> CodeError {
        let _ = self.ctx.catch();
        match self.check_abort() {
            Err(stopped) => stopped,
            Ok(()) => CodeError::Engine(error.to_string()),
        }
    }

    fn check_abort(&self) -> Result<(), CodeError> {
        match self.abort.get() {
            RUNNING => Ok(()),
            TIME => Err(CodeError::Limit(Limit::Time(self.job.limits.time))),
            CALLS => Err(CodeError::Limit(Limit::Calls(self.job.limits.calls))),
            OUTPUT => Err(CodeError::Limit(Limit::Output(self.job.limits.output))),
            _ => Err(CodeError::Cancelled),
        }
    }

    fn start_calls(&self, pending: &mut FuturesUnordered<Pending>) {
        while pending.len() < self.job.limits.concurrency.max(1) {
            let Some(request) = self.shared.borrow_mut().queued.pop_front() else {
                return;
            };
            pending.push(self.dispatch(request));
        }
    }

    /// One call through the registry, as a model's call goes, in a span
    /// under the program's.
    fn dispatch(&self, request: Request) -> Pending {
        let registry = self.job.registry.clone();
        let state = self.job.state.clone();
        let cancellation = self.calls_cancellation.clone();
        let Request {
            id,
            name,
            arguments,
        } = request;
        Box::pin(
            async move {
                let call = registry
                    .dispatch((name.as_str(), &arguments))
                    .cancellation(&cancellation);
                let outcome = match &state {
                    Some(state) => call.state(state).await,
                    None => call.await,
                };
                (id, outcome)
            }
            .instrument(self.job.span.clone()),
        )
    }

    /// Settles the promise of call `id` with its outcome: the value, or an
    /// `Error` whose message is what the model would read.
    fn settle(&self, id: u32, outcome: CallOutcome) {
        let Some((name, resolve, reject)) = self.shared.borrow_mut().settle.remove(&id) else {
            return;
        };
        let ctx = &self.ctx;
        let settled = if outcome.error.is_some() || outcome.result.is_error() {
            let message = outcome
                .result
                .error_message()
                .map(str::to_owned)
                .unwrap_or_else(|| outcome.result.to_text());
            tool_error(ctx, &name, &message).and_then(|error| reject.call::<_, ()>((error,)))
        } else {
            match self.value_of(&name, &outcome) {
                Ok(value) => resolve.call::<_, ()>((value,)),
                Err(_) => {
                    let error = ctx.catch();
                    reject.call::<_, ()>((error,))
                }
            }
        };
        if settled.is_err() {
            // Settling runs no program code; only the engine's own limits
            // (memory) make it fail, and the program then sees the call
            // never end, which the stall check reports.
            let _ = ctx.catch();
        }
    }

    /// A successful call's result as the program receives it.
    fn value_of(&self, name: &str, outcome: &CallOutcome) -> rquickjs::Result<JsValue<'js>> {
        let ctx = &self.ctx;
        if self.structured.contains(name)
            && let [Block::Json { value }] = outcome.result.content()
        {
            return ctx.json_parse(value.to_string());
        }
        rquickjs::String::from_str(ctx.clone(), &outcome.result.to_text()).map(JsValue::from)
    }

    fn returned(&self, main: &Promise<'js>) -> Option<Value> {
        let value: JsValue = main.result::<JsValue>()?.ok()?;
        if value.is_undefined() {
            return None;
        }
        let text = self.ctx.json_stringify(value).ok()??.to_string().ok()?;
        serde_json::from_str(&text).ok()
    }

    fn rejected(&self, main: &Promise<'js>) -> CodeError {
        if let Err(error) = self.check_abort() {
            return error;
        }
        let _ = main.result::<JsValue>();
        let caught = CaughtError::from_error(&self.ctx, rquickjs::Error::Exception);
        self.thrown(caught)
    }

    /// What a thrown value says, as the model reads it; the engine's own
    /// limits named as limits.
    fn thrown(&self, caught: CaughtError<'js>) -> CodeError {
        let (message, stack) = match &caught {
            CaughtError::Exception(exception) => {
                let name: Option<String> = exception.get("name").ok();
                let message = exception.message().unwrap_or_default();
                let message = match name {
                    Some(name) if !name.is_empty() => format!("{name}: {message}"),
                    _ => message,
                };
                (message, exception.stack().unwrap_or_default())
            }
            CaughtError::Value(value) => {
                let text = self
                    .ctx
                    .json_stringify(value.clone())
                    .ok()
                    .flatten()
                    .and_then(|text| text.to_string().ok())
                    .unwrap_or_else(|| format!("a {}", value.type_name()));
                (format!("uncaught {text}"), String::new())
            }
            CaughtError::Error(error) => (error.to_string(), String::new()),
        };
        if message.contains("out of memory") {
            return CodeError::Limit(Limit::Memory(self.job.limits.memory));
        }
        if message.contains("stack overflow") || message.contains("call stack size exceeded") {
            return CodeError::Limit(Limit::Stack(self.job.limits.stack));
        }
        // The first frames say where; a deep recursion's hundred more
        // would say it again.
        let stack: Vec<&str> = stack.lines().take(STACK_LINES).collect();
        CodeError::Thrown {
            message,
            stack: stack.join("\n"),
        }
    }
}

/// A call's arguments as JSON: `{}` when none were given.
fn arguments_of<'js>(ctx: &Ctx<'js>, arguments: JsValue<'js>) -> rquickjs::Result<Value> {
    if arguments.is_undefined() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    let text = match ctx.json_stringify(arguments)? {
        Some(text) => text.to_string()?,
        None => {
            return Err(Exception::throw_type(
                ctx,
                "a tool's arguments must be an object that JSON can hold",
            ));
        }
    };
    serde_json::from_str(&text).map_err(|error| {
        Exception::throw_type(ctx, &format!("the arguments cannot be sent: {error}"))
    })
}

fn tool_error<'js>(ctx: &Ctx<'js>, name: &str, message: &str) -> rquickjs::Result<Object<'js>> {
    let error = Exception::from_message(ctx.clone(), message)?;
    let object: Object = error.into_object();
    object.set("tool", name)?;
    Ok(object)
}
