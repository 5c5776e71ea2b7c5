//! Running tool futures: panics caught, time limits kept, a turn's calls
//! driven together.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::result::panic_message;
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
    future: ToolFuture,
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
    #[inline]
    pub(crate) fn new(tool: &ToolDef, future: ToolFuture, timeout: Option<Duration>) -> Self {
        let future = match timeout {
            None => future,
            // The timer is made inside the guarded future: tokio panics when
            // the runtime has no time driver, and that must not escape either.
            Some(limit) => {
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
        };
        Self { future }
    }
}

impl Future for Drive {
    type Output = Result<ToolResult, Stop>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // The future is dropped right after a panic, never polled again, so
        // no broken state it may hold is observed.
        match catch_unwind(AssertUnwindSafe(|| self.future.as_mut().poll(cx))) {
            Ok(Poll::Ready(done)) => Poll::Ready(done.map_err(Stop::Failed)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(Stop::Panicked(panic_message(payload.as_ref())))),
        }
    }
}

type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Drives every future at once on the calling task and returns their outputs
/// in the order given, with at most `limit` futures started and not yet done at
/// any time: the others start in the order given, as running ones end. A
/// future starts when first polled, so one not yet polled has done nothing.
pub(crate) async fn join_all_limited<'a, T>(futures: Vec<Pending<'a, T>>, limit: usize) -> Vec<T> {
    JoinAll {
        slots: futures.into_iter().map(Slot::Waiting).collect(),
        limit: limit.max(1),
    }
    .await
}

enum Slot<'a, T> {
    /// Not polled yet.
    Waiting(Pending<'a, T>),
    /// Polled at least once, not done.
    Running(Pending<'a, T>),
    Done(T),
    Taken,
}

struct JoinAll<'a, T> {
    slots: Vec<Slot<'a, T>>,
    limit: usize,
}

impl<T> Unpin for JoinAll<'_, T> {}

impl<T> Future for JoinAll<'_, T> {
    type Output = Vec<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<T>> {
        let this = &mut *self;
        let mut running = this
            .slots
            .iter()
            .filter(|slot| matches!(slot, Slot::Running(_)))
            .count();
        let mut all_done = true;
        for slot in &mut this.slots {
            let future = match slot {
                Slot::Running(future) => future,
                Slot::Waiting(_) if running < this.limit => {
                    running += 1;
                    let Slot::Waiting(future) = std::mem::replace(slot, Slot::Taken) else {
                        unreachable!("matched above")
                    };
                    *slot = Slot::Running(future);
                    let Slot::Running(future) = slot else {
                        unreachable!("set above")
                    };
                    future
                }
                Slot::Waiting(_) => {
                    all_done = false;
                    continue;
                }
                Slot::Done(_) | Slot::Taken => continue,
            };
            match future.as_mut().poll(cx) {
                Poll::Ready(output) => {
                    *slot = Slot::Done(output);
                    running -= 1;
                }
                Poll::Pending => all_done = false,
            }
        }
        // Futures start in order, so every waiting slot comes after every
        // running one: a slot freed in this pass is filled in it, and a
        // future started is polled at once with this waker.
        if !all_done {
            return Poll::Pending;
        }
        let outputs = this
            .slots
            .iter_mut()
            .filter_map(|slot| match std::mem::replace(slot, Slot::Taken) {
                Slot::Done(output) => Some(output),
                _ => None,
            })
            .collect();
        Poll::Ready(outputs)
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
