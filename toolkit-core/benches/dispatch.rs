//! `Registry::call` of a `#[tool]`, from JSON text to a result, against the
//! hand-written path (`serde_json::from_str` into a struct, a direct call of
//! the same function, a `String` result), measured in the same run
//! (docs/performance.md, "Dispatch").
//!
//! Both paths run on a current-thread tokio runtime with `block_on` and both
//! await the same `async fn`, so only dispatch differs. Before the timings,
//! `main` counts the heap allocations of each path with a counting global
//! allocator, prints them per call, and fails if `#[tool]` dispatch makes
//! more than 3 allocations per call beyond the hand-written path; this check
//! runs under `cargo bench` and under `cargo test --benches` alike.

use std::alloc::System;
use std::fmt;
use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use schemars::JsonSchema;
use serde::Deserialize;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tokio::runtime::Runtime;
use toolkit_core::{CallOutcome, Registry, tool, tools};

/// Counts every allocation, reallocation and free of the process.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Result ordering.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Order {
    /// Best match first.
    Relevance,
    /// Newest first.
    Newest,
}

/// The search failed.
#[derive(Debug)]
struct SearchError;

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the query is empty")
    }
}

impl std::error::Error for SearchError {}

/// Search the document index.
///
/// Returns matching titles, one per line.
#[tool]
async fn search(
    /// The full-text query.
    query: String,
    /// Maximum number of hits.
    limit: Option<u32>,
    /// Tags to filter by.
    tags: Vec<String>,
    /// Result ordering.
    order: Order,
) -> Result<String, SearchError> {
    if query.is_empty() {
        return Err(SearchError);
    }
    let order = match order {
        Order::Relevance => "relevance",
        Order::Newest => "newest",
    };
    Ok(format!(
        "{query}: {} hits at most, {} tags, by {order}",
        limit.unwrap_or(10),
        tags.len()
    ))
}

/// The hand-written path's arguments: what one would write by hand, with
/// the same serde attributes as the struct `#[tool]` generates.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArguments {
    query: String,
    limit: Option<u32>,
    tags: Vec<String>,
    order: Order,
}

/// The arguments of every call, as OpenAI sends them: JSON text.
const ARGUMENTS: &str = r#"{"query": "rust async runtimes", "limit": 5, "tags": ["lang", "systems"], "order": "newest"}"#;

/// Calls per allocation count.
const CALLS: u64 = 10_000;

/// The most allocations per call `#[tool]` dispatch may add.
const MAX_EXTRA_ALLOCATIONS: f64 = 3.0;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![search])
        .build()
        .expect("the registry builds")
}

/// The hand-written path: parse, call, turn the outcome into text.
fn hand_written(runtime: &Runtime, arguments: &str) -> String {
    runtime.block_on(async {
        match serde_json::from_str::<SearchArguments>(arguments) {
            Ok(SearchArguments {
                query,
                limit,
                tags,
                order,
            }) => match search(query, limit, tags, order).await {
                Ok(text) => text,
                Err(error) => error.to_string(),
            },
            Err(error) => error.to_string(),
        }
    })
}

/// The `#[tool]` path: the registry parses, dispatches and converts.
fn registry_call(runtime: &Runtime, registry: &Registry, arguments: &str) -> CallOutcome {
    runtime.block_on(registry.call("search", arguments))
}

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
    (stats.allocations + stats.reallocations) as f64 / CALLS as f64
}

/// Counts both paths' allocations, prints them, and fails past the target.
fn check_allocations() {
    let runtime = runtime();
    let registry = registry();

    // Both paths give the same answer.
    let expected = "rust async runtimes: 5 hits at most, 2 tags, by newest";
    assert_eq!(hand_written(&runtime, ARGUMENTS), expected);
    let outcome = registry_call(&runtime, &registry, ARGUMENTS);
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    assert_eq!(outcome.result.as_text(), Ok(expected));

    let hand = allocations_per_call(|| hand_written(&runtime, black_box(ARGUMENTS)));
    let tool = allocations_per_call(|| registry_call(&runtime, &registry, black_box(ARGUMENTS)));
    let extra = tool - hand;
    println!(
        "allocations per call over {CALLS} calls: hand-written {hand:.2}, \
         registry.call {tool:.2}, difference {extra:+.2} (at most {MAX_EXTRA_ALLOCATIONS})"
    );
    assert!(
        extra <= MAX_EXTRA_ALLOCATIONS,
        "registry.call makes {extra:.2} allocations per call more than the hand-written \
         path ({tool:.2} against {hand:.2}); the target is at most {MAX_EXTRA_ALLOCATIONS}"
    );
}

fn bench(c: &mut Criterion) {
    let runtime = runtime();
    let registry = registry();

    let mut group = c.benchmark_group("dispatch");
    group.bench_function("hand_written", |b| {
        b.iter(|| hand_written(&runtime, black_box(ARGUMENTS)))
    });
    group.bench_function("registry_call", |b| {
        b.iter(|| registry_call(&runtime, &registry, black_box(ARGUMENTS)))
    });
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    check_allocations();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
