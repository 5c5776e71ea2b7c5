//! `Registry::call` of a `#[tool]`, from JSON text to a result, against the
//! hand-written path (`serde_json::from_str` into a struct, a direct call of
//! the same function, a `String` result), measured in the same run
//! (docs/performance.md, "Dispatch").
//!
//! Both paths run on a current-thread tokio runtime with `block_on` and both
//! await the same `async fn`, so only dispatch differs. The allocations per
//! call are counted by the `dispatch_allocations` benchmark, whose counting
//! allocator would slow every allocation timed here.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support/search.rs"]
mod search_tool;

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
}

criterion_group!(benches, bench);
criterion_main!(benches);
