//! Running tool futures: panics caught, time limits kept, a turn's calls
//! driven together.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::result::panic_message;
use crate::tool::Started;
use crate::{CallError, ToolDef, ToolFuture, ToolResult};

/// A started tool, run to its end with panics caught, so that a panicking
/// tool becomes an error result and the registry keeps working.
///
/// One hand-written future rather than nested `async fn`s: every layer
/// would move the call's output once more on its way out, and dispatch is
/// on every call's path (docs/performance.md, "Dispatch"). It holds no
/// name: the caller, which has the call's, names the tool in the error, so
/// that this future is one pointer with no destructor of its own to run.
pub(crate) struct Drive {
    run: Run,
}

enum Run {
    /// An async `#[tool]` whose body never awaits ran to its end when
    /// started: its result, until taken.
    Ended(Option<Result<ToolResult, CallError>>),
    Future(ToolFuture),
}

/// Why a started tool gave no result.
pub(crate) enum Stop {
    /// The tool's future failed: a sync tool's thread, no runtime, its time
    /// limit.
    Failed(CallError),
    /// It panicked, with this message.
    Panicked(String),
}

impl Stop {
    /// The error, naming `tool`.
    pub(crate) fn into_error(self, tool: &str) -> CallError {
        match self {
            Stop::Failed(error) => error,
            Stop::Panicked(message) => CallError::Panicked {
                tool: tool.to_owned(),
                message,
            },
        }
    }
}

impl Drive {
    /// The started tool, to be awaited (a traced call's).
    pub(crate) fn new(started: Started) -> Self {
        Self {
            run: match started {
                Started::Ready(done) => Run::Ended(Some(done)),
                Started::Future(future) => Run::Future(future),
            },
        }
    }
}

/// The started tool under its time limit, if it has one. A tool with a
/// limit goes through its timer, ended or not, as it always did (a runtime
/// without a time driver fails it alike).
#[inline]
pub(crate) fn limit(tool: &ToolDef, started: Started, timeout: Option<Duration>) -> Started {
    match (started, timeout) {
        (started, None) => started,
        (Started::Ready(done), Some(limit)) => {
            Started::Future(limited(tool, Box::pin(std::future::ready(done)), limit))
        }
        (Started::Future(future), Some(limit)) => Started::Future(limited(tool, future, limit)),
    }
}

/// Polls a tool's future, `name` naming it in the error should it panic:
/// the tool's own output as it is, with no layer to move it through.
#[inline]
pub(crate) fn poll_tool(
    future: &mut ToolFuture,
    cx: &mut Context<'_>,
    name: &str,
) -> Poll<Result<ToolResult, CallError>> {
    // The future is dropped right after a panic, never polled again, so no
    // broken state it may hold is observed.
    match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
        Ok(polled) => polled,
        Err(payload) => Poll::Ready(Err(panicked(name, payload.as_ref()))),
    }
}

/// `future` under the tool's time limit.
fn limited(tool: &ToolDef, future: ToolFuture, limit: Duration) -> ToolFuture {
    // The timer is made inside the guarded future: tokio panics when the
    // runtime has no time driver, and that must not escape either.
    let tool = tool.name_ref().to_shared();
    Box::pin(async move {
        match tokio::time::timeout(limit, future).await {
            Ok(finished) => finished,
            Err(_) => Err(CallError::TimedOut {
                tool: tool.to_string(),
                after: limit,
            }),
        }
    })
}

#[cold]
#[inline(never)]
fn panicked(tool: &str, payload: &(dyn std::any::Any + Send)) -> CallError {
    CallError::Panicked {
        tool: tool.to_owned(),
        message: panic_message(payload),
    }
}

impl Future for Drive {
    type Output = Result<ToolResult, Stop>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = match &mut self.run {
            Run::Ended(done) => {
                return match done.take() {
                    Some(done) => Poll::Ready(done.map_err(Stop::Failed)),
                    None => Poll::Pending,
                };
            }
            Run::Future(future) => future,
        };
        match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(done)) => Poll::Ready(done.map_err(Stop::Failed)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(Stop::Panicked(panic_message(payload.as_ref())))),
        }
    }
}

pub(crate) type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Futures driven together on the calling task, started in the order given
/// within the limits, and given back one by one as each ends.
///
/// At most `limit` futures are started and not yet done at any time, and at
/// most its group's limit within a group (the calls of one tool): a future
/// whose group is full waits while later ones of other groups start. A
/// future starts when first polled, so one not yet polled has done nothing,
/// and dropping the scheduler drops every future, started or not.
pub(crate) struct Scheduler<'a, T> {
    slots: Vec<Slot<'a, T>>,
    /// Each slot's group, when it has one.
    groups: Vec<Option<usize>>,
    /// Each group's limit and the number of its futures running.
    group_limits: Vec<(usize, usize)>,
    limit: usize,
    running: usize,
    /// Slots before this one are all started.
    first_waiting: usize,
}

enum Slot<'a, T> {
    /// Not started.
    Waiting(Pending<'a, T>),
    /// Started (it holds a place within the limits), not polled yet: it
    /// has done nothing so far.
    Started(Pending<'a, T>),
    /// Polled at least once, not done.
    Running(Pending<'a, T>),
    /// Done, its output given.
    Ended,
}

impl<'a, T> Scheduler<'a, T> {
    pub(crate) fn new(futures: Vec<Pending<'a, T>>, limit: usize) -> Self {
        let count = futures.len();
        Self {
            slots: futures.into_iter().map(Slot::Waiting).collect(),
            groups: vec![None; count],
            group_limits: Vec::new(),
            limit: limit.max(1),
            running: 0,
            first_waiting: 0,
        }
    }

    /// Puts the futures at `members` in a group of which at most `limit`
    /// run at once.
    pub(crate) fn group(&mut self, members: impl IntoIterator<Item = usize>, limit: usize) {
        let group = self.group_limits.len();
        self.group_limits.push((limit.max(1), 0));
        for member in members {
            if let Some(slot) = self.groups.get_mut(member) {
                *slot = Some(group);
            }
        }
    }

    /// The next future to end, by its position, with its output; `None`
    /// once every future has ended.
    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<(usize, T)>> {
        self.start_what_fits();
        let mut any = false;
        for index in 0..self.slots.len() {
            if let Slot::Started(_) = &self.slots[index] {
                let Slot::Started(future) = std::mem::replace(&mut self.slots[index], Slot::Ended)
                else {
                    unreachable!("matched above")
                };
                self.slots[index] = Slot::Running(future);
            }
            let Slot::Running(future) = &mut self.slots[index] else {
                continue;
            };
            any = true;
            if let Poll::Ready(output) = future.as_mut().poll(cx) {
                self.slots[index] = Slot::Ended;
                self.running -= 1;
                if let Some(group) = self.groups[index] {
                    self.group_limits[group].1 -= 1;
                }
                return Poll::Ready(Some((index, output)));
            }
        }
        if any {
            Poll::Pending
        } else {
            // Nothing runs and nothing could start: every future ended.
            Poll::Ready(None)
        }
    }

    /// Whether the future at `index` has been polled (it may have ended):
    /// one that was not has done nothing.
    pub(crate) fn has_started(&self, index: usize) -> bool {
        matches!(self.slots.get(index), Some(Slot::Running(_) | Slot::Ended))
    }

    /// Starts waiting futures, in order, while the limits allow.
    fn start_what_fits(&mut self) {
        let mut index = self.first_waiting;
        let mut all_started = true;
        while index < self.slots.len() && self.running < self.limit {
            if matches!(self.slots[index], Slot::Waiting(_)) {
                let group = self.groups[index];
                let fits = group.is_none_or(|group| {
                    let (limit, running) = self.group_limits[group];
                    running < limit
                });
                if fits {
                    let Slot::Waiting(future) =
                        std::mem::replace(&mut self.slots[index], Slot::Ended)
                    else {
                        unreachable!("matched above")
                    };
                    self.slots[index] = Slot::Started(future);
                    self.running += 1;
                    if let Some(group) = group {
                        self.group_limits[group].1 += 1;
                    }
                } else {
                    all_started = false;
                }
            }
            if all_started {
                self.first_waiting = index + 1;
            }
            index += 1;
        }
    }
}

/// Runs a sync tool on tokio's blocking pool, so that it never holds up the
/// runtime's worker threads.
pub async fn run_blocking<F>(tool: &'static str, body: F) -> Result<ToolResult, CallError>
where
    F: FnOnce() -> ToolResult + Send + 'static,
{
    let runtime = tokio::runtime::Handle::try_current().map_err(|error| CallError::Runtime {
        tool: tool.to_owned(),
        message: error.to_string(),
    })?;
    runtime.spawn_blocking(body).await.map_err(|error| {
        if error.is_panic() {
            CallError::Panicked {
                tool: tool.to_owned(),
                message: panic_message(error.into_panic().as_ref()),
            }
        } else {
            CallError::Runtime {
                tool: tool.to_owned(),
                message: error.to_string(),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{CallError, Registry, tool, tools};

    /// Ends at its first poll: run when started, not boxed.
    #[tool]
    async fn at_once(
        /// What to say.
        text: String,
    ) -> String {
        format!("said {text}")
    }

    /// Waits once before it ends.
    #[tool]
    async fn after_a_wait(
        /// What to say.
        text: String,
    ) -> String {
        tokio::task::yield_now().await;
        format!("said {text}")
    }

    /// Panics without waiting.
    #[tool]
    async fn broken() -> String {
        panic!("out of order")
    }

    /// Panics after a wait.
    #[tool]
    async fn broken_later() -> String {
        tokio::task::yield_now().await;
        panic!("out of order")
    }

    fn registry(limit: Option<Duration>) -> Registry {
        let builder =
            Registry::builder().tools(tools![at_once, after_a_wait, broken, broken_later]);
        match limit {
            Some(limit) => builder.timeout(limit),
            None => builder,
        }
        .build()
        .expect("the registry builds")
    }

    #[test]
    fn a_tool_that_never_waits_answers_as_one_that_does() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        for limit in [None, Some(Duration::from_secs(30))] {
            let registry = registry(limit);
            for name in ["at_once", "after_a_wait"] {
                let outcome = runtime.block_on(registry.dispatch((name, r#"{"text": "hi"}"#)));
                assert_eq!(outcome.result.as_text(), Ok("said hi"), "{name}");
                assert!(outcome.error.is_none());
            }
            for name in ["broken", "broken_later"] {
                let outcome = runtime.block_on(registry.dispatch((name, "{}")));
                let Some(CallError::Panicked { tool, message }) = outcome.error else {
                    panic!("{outcome:?}")
                };
                assert_eq!(tool, name);
                assert_eq!(message, "the tool panicked: out of order");
            }
        }
    }

    #[test]
    fn a_time_limit_without_a_timer_fails_both_alike() {
        // No time driver: the limit's timer panics, and that is the call's
        // error, whether the tool waits or not.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let registry = registry(Some(Duration::from_secs(30)));
        for name in ["at_once", "after_a_wait"] {
            let outcome = runtime.block_on(registry.dispatch((name, r#"{"text": "hi"}"#)));
            assert!(
                matches!(outcome.error, Some(CallError::Panicked { .. })),
                "{name}: {outcome:?}"
            );
        }
    }
}
