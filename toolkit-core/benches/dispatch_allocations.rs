//! Heap allocations per call of `Registry::call` of a `#[tool]` against the
//! hand-written path of the `dispatch` benchmark (docs/performance.md,
//! "Dispatch"), and of the other shapes `dispatch_paths` times (a run-time
//! tool, a `#[tool]` taking a struct) against theirs. Not a timing: a
//! counting global allocator counts every `alloc`, `alloc_zeroed` and
//! `realloc` over 10,000 calls of each path; the figures per call are
//! printed, and the run fails if dispatch of any shape makes more than 3
//! allocations per call beyond its hand-written path. Runs under `cargo
//! bench` and `cargo test --benches` alike.

use std::alloc::System;
use std::hint::black_box;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[path = "support/search.rs"]
mod search_tool;

#[path = "support/shapes.rs"]
mod shapes;

use search_tool::{ARGUMENTS, assert_both_answer, hand_written, registry, registry_call, runtime};
use serde_json::Value;
use shapes::{BOOK_ARGUMENTS, BOOKED, BookArguments, book, runtime_tool, search_json};
use toolkit_core::Registry;

/// Counts every allocation, reallocation and free of the process. (The
/// workspace forbids unsafe code, so the counting wrapper comes from a
/// crate rather than a `GlobalAlloc` impl here.)
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Calls per count.
const CALLS: u32 = 10_000;

/// The most allocations per call `#[tool]` dispatch may add.
const MAX_EXTRA: f64 = 3.0;

/// Allocations (`alloc`, `alloc_zeroed` and `realloc` calls) per call of
/// `f`, over `CALLS` calls after a warm-up.
fn allocations_per_call<T>(mut f: impl FnMut() -> T) -> f64 {
    for _ in 0..100 {
        black_box(f());
    }
    let region = Region::new(GLOBAL);
    for _ in 0..CALLS {
        black_box(f());
    }
    let stats = region.change();
    (stats.allocations + stats.reallocations) as f64 / f64::from(CALLS)
}

fn main() {
    let runtime = runtime();
    let registry = registry();
    assert_both_answer(&runtime, &registry);

    let hand = allocations_per_call(|| hand_written(&runtime, black_box(ARGUMENTS)));
    let tool = allocations_per_call(|| registry_call(&runtime, &registry, black_box(ARGUMENTS)));
    println!("allocations per call, over {CALLS} calls of each path:");
    report("#[tool] search", hand, tool);

    let shapes = Registry::builder()
        .tools(toolkit_core::tools![book])
        .tool(runtime_tool())
        .build()
        .expect("the registry builds");
    let outcome = runtime.block_on(shapes.dispatch(("book", BOOK_ARGUMENTS)));
    assert_eq!(outcome.result.as_text(), Ok(BOOKED));
    let hand = allocations_per_call(|| {
        runtime.block_on(async {
            match serde_json::from_str::<BookArguments>(black_box(BOOK_ARGUMENTS)) {
                Ok(BookArguments { room, slot }) => book(room, slot).await,
                Err(error) => error.to_string(),
            }
        })
    });
    let tool = allocations_per_call(|| {
        runtime.block_on(shapes.dispatch(("book", black_box(BOOK_ARGUMENTS))))
    });
    report("#[tool] with a struct parameter", hand, tool);

    let hand = allocations_per_call(|| {
        runtime.block_on(async {
            match serde_json::from_str::<Value>(black_box(ARGUMENTS)) {
                Ok(value) => search_json(value).await,
                Err(error) => error.to_string(),
            }
        })
    });
    let tool = allocations_per_call(|| {
        runtime.block_on(shapes.dispatch(("search_json", black_box(ARGUMENTS))))
    });
    report("run-time tool", hand, tool);
}

/// Prints one shape's figures, and fails if the target is not met.
fn report(shape: &str, hand: f64, tool: f64) {
    let extra = tool - hand;
    println!(
        "  {shape}: hand-written {hand:.2}, registry.call {tool:.2}, {extra:+.2} (target: at most +{MAX_EXTRA})"
    );
    assert!(
        extra <= MAX_EXTRA,
        "registry.call of {shape} makes {extra:.2} allocations per call more than the \
         hand-written path ({tool:.2} against {hand:.2}); the target is at most {MAX_EXTRA}"
    );
}
