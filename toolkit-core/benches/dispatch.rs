//! `Registry::call` of a `#[tool]`, from JSON text to a result, against the
//! hand-written path (`serde_json::from_str` into a struct, a direct call of
//! the same function, a `String` result), measured in the same run
//! (docs/performance.md, "Dispatch").
//!
//! Both paths run on a current-thread tokio runtime with `block_on` and both
//! await the same `async fn`, so only dispatch differs. The allocations per
//! call are counted by the `dispatch_allocations` benchmark, whose counting
//! allocator would slow every allocation timed here.
//!
//! Criterion times one path after the other, so a machine whose speed drifts
//! (a virtual machine's neighbours, frequency scaling) moves the ratio
//! between them. After criterion's runs, `--bench` also times the two paths
//! in alternating rounds and prints the median of the rounds' ratios, which
//! such drift cancels out of.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/search.rs"]
mod search_tool;

#[path = "support/paired.rs"]
mod paired;

use paired::Paired;

use search_tool::{ARGUMENTS, assert_both_answer, hand_written, registry, registry_call, runtime};

fn bench(c: &mut Criterion) {
    let runtime = runtime();
    let registry = registry();
    assert_both_answer(&runtime, &registry);

    let mut group = c.benchmark_group("dispatch");
    // For scale: `block_on` of a future that is ready at once, which both
    // paths pay.
    group.bench_function("block_on_alone", |b| {
        b.iter(|| runtime.block_on(async { black_box(0) }))
    });
    group.bench_function("hand_written", |b| {
        b.iter(|| hand_written(&runtime, black_box(ARGUMENTS)))
    });
    group.bench_function("registry_call", |b| {
        b.iter(|| registry_call(&runtime, &registry, black_box(ARGUMENTS)))
    });
    group.finish();

    if std::env::args().any(|arg| arg == "--bench") {
        paired(&runtime, &registry);
    }
}

/// Rounds of the paired comparison, and calls of each path per round.
const ROUNDS: usize = 301;
const CALLS_PER_ROUND: u32 = 2_000;

/// Times both paths in alternating rounds and prints the ratio per round:
/// median and the 10th and 90th percentiles.
fn paired(runtime: &tokio::runtime::Runtime, registry: &toolkit_core::Registry) {
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        for _ in 0..CALLS_PER_ROUND {
            f();
        }
        start.elapsed() / CALLS_PER_ROUND
    };
    let hand = || {
        black_box(hand_written(runtime, black_box(ARGUMENTS)));
    };
    let tool = || {
        black_box(registry_call(runtime, registry, black_box(ARGUMENTS)));
    };
    let Paired {
        ratios,
        hand: hand_times,
        tool: tool_times,
    } = paired::alternate(ROUNDS, || time(&hand), || time(&tool));
    let at = |q: usize| ROUNDS * q / 100;
    let median = |times: &[Duration]| times[ROUNDS / 2];
    println!(
        "dispatch/paired: {ROUNDS} alternating rounds of {CALLS_PER_ROUND} calls of each path"
    );
    println!(
        "  per call, median round: hand_written {} ns, registry_call {} ns",
        median(&hand_times).as_nanos(),
        median(&tool_times).as_nanos()
    );
    println!(
        "  registry_call / hand_written per round: median {:.3} (p10 {:.3}, p90 {:.3}; target at most 1.3)",
        ratios[ROUNDS / 2],
        ratios[at(10)],
        ratios[at(90)]
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
