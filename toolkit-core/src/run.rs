//! Running tool futures: panics caught, time limits kept, a turn's calls
//! driven together.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::{CallError, CallOutcome, ToolFuture};

/// Polls a future with panics caught, so that a panicking tool becomes an
/// error result and the registry keeps working.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // The future is dropped right after a panic, never polled again, so
        // no broken state it may hold is observed.
        match catch_unwind(AssertUnwindSafe(|| Pin::new(&mut self.0).poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(crate::panic_message(payload.as_ref()))),
        }
    }
}

/// Runs a started tool to its outcome.
pub(crate) async fn drive(
    tool: &'static str,
    future: ToolFuture,
    timeout: Option<Duration>,
) -> CallOutcome {
    let finished = match timeout {
        None => CatchUnwind(future).await.map(Some),
        // The timer is inside the guard too: tokio panics when the runtime
        // has no time driver, and that must not escape either.
        Some(limit) => {
            CatchUnwind(Box::pin(async move {
                tokio::time::timeout(limit, future).await.ok()
            }))
            .await
        }
    };
    match finished {
        Ok(Some(Ok(result))) => CallOutcome::ok(result),
        Ok(Some(Err(error))) => CallOutcome::failed(error),
        Ok(None) => CallOutcome::failed(CallError::TimedOut {
            tool: tool.to_owned(),
            after: timeout.unwrap_or_default(),
        }),
        Err(message) => CallOutcome::failed(CallError::Panicked {
            tool: tool.to_owned(),
            message,
        }),
    }
}

type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Drives every future at once on the calling task and returns their outputs
/// in the order given.
pub(crate) async fn join_all<'a, T>(futures: Vec<Pending<'a, T>>) -> Vec<T> {
    JoinAll {
        slots: futures.into_iter().map(Slot::Pending).collect(),
    }
    .await
}

enum Slot<'a, T> {
    Pending(Pending<'a, T>),
    Done(T),
    Taken,
}

struct JoinAll<'a, T> {
    slots: Vec<Slot<'a, T>>,
}

impl<T> Unpin for JoinAll<'_, T> {}

impl<T> Future for JoinAll<'_, T> {
    type Output = Vec<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<T>> {
        let mut all_done = true;
        for slot in &mut self.slots {
            if let Slot::Pending(future) = slot {
                match future.as_mut().poll(cx) {
                    Poll::Ready(output) => *slot = Slot::Done(output),
                    Poll::Pending => all_done = false,
                }
            }
        }
        if !all_done {
            return Poll::Pending;
        }
        let outputs = self
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
