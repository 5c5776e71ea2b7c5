//! Heap allocations per call of `Registry::call` of a `#[tool]` against the
//! hand-written path of the `dispatch` benchmark (docs/performance.md,
//! "Dispatch"). Not a timing: a counting global allocator counts every
//! `alloc`, `alloc_zeroed` and `realloc` over 10,000 calls of each path; the
//! figures per call are printed, and the run fails if `#[tool]` dispatch
//! makes more than 3 allocations per call beyond the hand-written path.
//! Runs under `cargo bench` and `cargo test --benches` alike.

use std::alloc::System;
use std::hint::black_box;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[path = "support/search.rs"]
mod search_tool;

use search_tool::{ARGUMENTS, assert_both_answer, hand_written, registry, registry_call, runtime};

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
    let extra = tool - hand;
    println!("allocations per call, over {CALLS} calls of each path:");
    println!("  hand-written   {hand:.2}");
    println!("  registry.call  {tool:.2}");
    println!("  difference     {extra:+.2} (target: at most {MAX_EXTRA})");
    assert!(
        extra <= MAX_EXTRA,
        "registry.call makes {extra:.2} allocations per call more than the hand-written \
         path ({tool:.2} against {hand:.2}); the target is at most {MAX_EXTRA}"
    );
}
