//! `Registry::dispatch` and `dispatch_turn`: what a call is given reaches
//! the tool, a turn keeps its limit on calls at once, and nothing runs
//! before it is awaited.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use toolkit_core::{CallContext, Cancellation, Registry, RunState, ToolCall, tool, tools};

static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST: AtomicUsize = AtomicUsize::new(0);
static STARTED: AtomicUsize = AtomicUsize::new(0);

/// Waits a little, counting how many wait at once.
#[tool]
async fn wait(
    /// Which call this is.
    n: u32,
) -> String {
    STARTED.fetch_add(1, Ordering::SeqCst);
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(20)).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    format!("waited {n}")
}

/// Says whether it was cancelled, and whose run it is part of.
#[tool]
async fn observe(#[tool(context)] call: CallContext) -> String {
    let user = call.state::<String>().unwrap_or_default();
    format!(
        "cancelled: {}, user: {user}",
        call.cancellation().is_cancelled()
    )
}

fn calls(count: u32) -> Vec<ToolCall> {
    (0..count)
        .map(|n| ToolCall::new(format!("call_{n}"), "wait", json!({"n": n})))
        .collect()
}

// One test for the counters, so that no other test's calls mix with them.
#[tokio::test]
async fn a_turn_keeps_its_limit_and_nothing_runs_before_it_is_awaited() {
    let registry = Registry::builder().tools(tools![wait]).build().unwrap();
    let calls = calls(6);

    let limited = registry.dispatch_turn(&calls).max_concurrent(2).await;
    assert_eq!(MOST.swap(0, Ordering::SeqCst), 2);
    let texts: Vec<String> = limited.results.iter().map(|r| r.result.to_text()).collect();
    let expected: Vec<String> = (0..6).map(|n| format!("waited {n}")).collect();
    assert_eq!(texts, expected, "in call order");

    registry.dispatch_turn(&calls).await;
    assert_eq!(MOST.swap(0, Ordering::SeqCst), 6, "unlimited by default");

    // Built, given what it may use, dropped: no tool ran.
    let before = STARTED.load(Ordering::SeqCst);
    drop(
        registry
            .dispatch(&calls[0])
            .cancellation(&Cancellation::new()),
    );
    drop(registry.dispatch_turn(&calls).max_concurrent(1));
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert_eq!(STARTED.load(Ordering::SeqCst), before);
}

#[tokio::test]
async fn what_a_call_is_given_reaches_its_tool() {
    let registry = Registry::builder().tools(tools![observe]).build().unwrap();
    let call = ToolCall::new("c1", "observe", json!({}));
    let stop = Cancellation::new();
    stop.cancel();
    let state = RunState::new().with("ada".to_owned());
    let outcome = registry
        .dispatch(&call)
        .cancellation(&stop)
        .state(&state)
        .await;
    assert_eq!(outcome.result.to_text(), "cancelled: true, user: ada");

    let turn = registry
        .dispatch_turn(std::slice::from_ref(&call))
        .state(&state)
        .await;
    assert_eq!(
        turn.results[0].result.to_text(),
        "cancelled: false, user: ada"
    );

    // By name, as the host: the same builder.
    let outcome = registry.dispatch(("observe", "{}")).state(&state).await;
    assert_eq!(outcome.result.to_text(), "cancelled: false, user: ada");
}

#[tokio::test]
#[allow(deprecated)]
async fn the_former_methods_still_run_calls() {
    let registry = Registry::builder().tools(tools![observe]).build().unwrap();
    let call = ToolCall::new("c1", "observe", json!({}));
    let state = RunState::new().with("ada".to_owned());
    let outcome = registry.run_in(&call, &Cancellation::new(), &state).await;
    assert_eq!(outcome.result.to_text(), "cancelled: false, user: ada");
    let turn = registry.run_turn(std::slice::from_ref(&call)).await;
    assert_eq!(turn.results[0].result.to_text(), "cancelled: false, user: ");
}

#[test]
fn calls_and_turns_can_move_between_threads() {
    fn sendable<T: Send>(_: &T) {}
    let registry = Registry::builder().tools(tools![observe]).build().unwrap();
    let calls = [ToolCall::new("c1", "observe", json!({}))];
    sendable(&registry.dispatch(&calls[0]));
    sendable(&registry.dispatch_turn(&calls));
    sendable(&registry.dispatch(("observe", "{}")));
}

/// Waits `ms` milliseconds, counting how many of its calls wait at once.
#[tool]
async fn slow(
    /// How long.
    ms: u64,
) -> String {
    let now = SLOW_RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    SLOW_MOST.fetch_max(now, Ordering::SeqCst);
    // Counted down when the call ends or is dropped.
    let _running = Running;
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms}")
}

struct Running;

impl Drop for Running {
    fn drop(&mut self) {
        SLOW_RUNNING.fetch_sub(1, Ordering::SeqCst);
    }
}

static SLOW_RUNNING: AtomicUsize = AtomicUsize::new(0);
static SLOW_MOST: AtomicUsize = AtomicUsize::new(0);

/// Answers at once.
#[tool]
fn quick() -> String {
    "quick".to_owned()
}

fn slow_call(id: &str, ms: u64) -> ToolCall {
    ToolCall::new(id, "slow", json!({ "ms": ms }))
}

// One test for the slow tool's counters.
#[tokio::test]
async fn a_tools_limit_holds_its_calls_while_others_start_and_calls_come_back_as_they_end() {
    let registry = Registry::builder()
        .tools(tools![slow, quick])
        .build()
        .unwrap();
    let calls = vec![
        slow_call("a", 60),
        slow_call("b", 60),
        slow_call("c", 60),
        ToolCall::new("d", "quick", json!({})),
    ];
    let mut each = registry
        .dispatch_turn(&calls)
        .max_concurrent(2)
        .max_concurrent_for("slow", 1)
        .each();
    let mut order = Vec::new();
    while let Some((index, outcome)) = each.next().await {
        assert!(outcome.error.is_none(), "{:?}", outcome.error);
        order.push(index);
    }
    assert_eq!(SLOW_MOST.swap(0, Ordering::SeqCst), 1, "one `slow` at once");
    // `quick` started beside the first `slow`, while the other two waited
    // for it, and ended first.
    assert_eq!(order, [3, 0, 1, 2]);

    // A turn's time limit ends a call that outlives it, with the typed
    // error; the others end as they would.
    let calls = vec![
        slow_call("a", 5_000),
        ToolCall::new("b", "quick", json!({})),
    ];
    let turn = registry
        .dispatch_turn(&calls)
        .timeout(Duration::from_millis(50))
        .await;
    assert_eq!(turn.results[1].result.to_text(), "quick");
    assert_eq!(turn.errors.len(), 1);
    assert!(
        matches!(&turn.errors[0], (0, toolkit_core::CallError::TimedOut { tool, after })
            if tool == "slow" && *after == Duration::from_millis(50)),
        "{:?}",
        turn.errors
    );
    assert!(turn.results[0].result.is_error());

    // A call that waits for a place has not started, and is told apart.
    let calls = vec![slow_call("a", 10), slow_call("b", 10)];
    let mut each = registry.dispatch_turn(&calls).max_concurrent(1).each();
    assert!(
        !each.has_started(0) && !each.has_started(1),
        "nothing before it is polled"
    );
    let (first, _) = each.next().await.unwrap();
    assert_eq!(first, 0);
    assert!(each.has_started(0) && !each.has_started(1));
    assert_eq!(each.next().await.map(|(index, _)| index), Some(1));
    assert!(each.next().await.is_none());

    // Dropping the calls as they end stops the ones still running.
    let calls = vec![slow_call("a", 10), slow_call("b", 5_000)];
    let mut each = registry.dispatch_turn(&calls).each();
    let (first, _) = each.next().await.unwrap();
    assert_eq!(first, 0);
    drop(each);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        SLOW_RUNNING.load(Ordering::SeqCst),
        0,
        "the long call was dropped"
    );
}
