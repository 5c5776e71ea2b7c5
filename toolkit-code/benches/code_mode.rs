//! A program's start and its tool calls against a direct
//! `Registry::dispatch` of the same tool (docs/code-mode.md,
//! "Performance").
//!
//! - `start/empty`: a program that returns at once (thread, engine,
//!   bindings, program, answer).
//! - `start/first_call`: a program that makes one call: the time to its
//!   first call's result is within this.
//! - `calls/direct_100`: a hundred direct dispatches, one after another.
//! - `calls/program_100`: a program making the same hundred calls; less
//!   `start/first_call`, divided by 99, it is the cost of each further call.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolkit_code::CodeMode;
use toolkit_core::{Registry, tool, tools};

/// Echoes a word (async: no blocking-pool hop in either path).
#[tool]
async fn echo(
    /// The word.
    word: String,
) -> String {
    word
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let registry = Arc::new(Registry::builder().tools(tools![echo]).build().unwrap());
    let mode = CodeMode::new(registry.clone());

    let mut start = c.benchmark_group("start");
    start.bench_function("empty", |b| {
        b.iter(|| runtime.block_on(async { assert!(mode.run("return 1;").await.is_ok()) }))
    });
    start.bench_function("first_call", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let outcome = mode.run("return await tools.echo({ word: 'a' });").await;
                assert_eq!(outcome.value, Some(json!("a")));
            })
        })
    });
    start.finish();

    let mut calls = c.benchmark_group("calls");
    let arguments = json!({"word": "a"});
    calls.bench_function("direct_100", |b| {
        b.iter(|| {
            runtime.block_on(async {
                for _ in 0..100 {
                    let outcome = registry.dispatch(("echo", &arguments)).await;
                    assert!(!outcome.result.is_error());
                }
            })
        })
    });
    calls.bench_function("program_100", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let outcome = mode
                    .run("let n = 0; for (let i = 0; i < 100; i++) { n += (await tools.echo({ word: 'a' })).length; } return n;")
                    .await;
                assert_eq!(outcome.value, Some(json!(100)));
            })
        })
    });
    calls.finish();
}

criterion_group!(code_mode, benches);
criterion_main!(code_mode);
