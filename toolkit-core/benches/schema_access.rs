//! A tool's parameter schema once it has been asked for: the canonical text
//! and the OpenAI strict-mode lowering (docs/performance.md, "Schema
//! access"). The first request builds them; every later one is a read.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use toolkit_core::{Provider, Tool, tool};

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

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the query is empty")
    }
}

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
    Ok(format!(
        "{query}: {} hits at most, {} tags, by {order:?}",
        limit.unwrap_or(10),
        tags.len()
    ))
}

fn bench(c: &mut Criterion) {
    // The first request builds the schemas; the benchmark times the rest.
    let canonical = <search as Tool>::definition().schema().canonical();
    let strict = <search as Tool>::definition()
        .schema()
        .lowered(Provider::OpenAiStrict);
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
