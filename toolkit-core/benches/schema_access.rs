//! A tool's parameter schema once it has been asked for: the canonical text
//! and the OpenAI strict-mode lowering (docs/performance.md, "Schema
//! access"). The first request builds them; every later one is a read.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use toolkit_core::{Provider, Tool};

#[path = "support/search.rs"]
mod search_tool;

use search_tool::search;

fn bench(c: &mut Criterion) {
    // The first request builds the schemas; the benchmark times the rest.
    let schema = <search as Tool>::definition().schema();
    let canonical = schema.canonical();
    let strict = schema.lowered(Provider::OpenAiStrict);
    assert!(canonical.is_ok(), "{canonical:?}");
    assert!(strict.is_ok(), "{strict:?}");

    let mut group = c.benchmark_group("schema_access");
    group.bench_function("canonical", |b| {
        b.iter(|| black_box(<search as Tool>::definition().schema().canonical()))
    });
    group.bench_function("lowered_openai_strict", |b| {
        b.iter(|| {
            black_box(
                <search as Tool>::definition()
                    .schema()
                    .lowered(black_box(Provider::OpenAiStrict)),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
