//! The loop's own cost per step: everything but the model's answer and the
//! tools' work, for a three-call turn whose results include a 50 KB page
//! map. Measured at a fresh conversation and after 10, 100 and 200 such
//! steps, beside the request's size at each, so the growth of the two can
//! be compared.
//!
//! One step: render the request, read the response body into a turn,
//! echo the turn, dispatch the three calls through the registry, emit
//! their results, and serialise the request as it goes on the wire.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolkit_agent::Conversation;
use toolkit_core::Provider;
use toolkit_core::{Registry, tool, tools};

#[path = "support/click.rs"]
mod click_tool;
use click_tool::click;

/// A stand-in page map, built once: its cost is the tool's work, not the
/// loop's.
#[derive(Clone)]
struct PageMap(Arc<String>);

// The tools are async, as the browser toolbox's actions are: a sync tool
// runs on tokio's blocking pool, and its hand-off between threads would be
// counted here as the loop's cost.

/// The current page as a map of its interactive elements.
#[tool]
async fn page_map(#[tool(state)] map: PageMap) -> String {
    map.0.as_str().to_owned()
}

/// Type text into an element.
#[tool]
async fn type_text(
    /// The element's index.
    index: u32,
    /// The text.
    text: String,
) -> String {
    format!("typed {} chars into {index}", text.len())
}

fn registry() -> Registry {
    let line = "[12]<a href=\"/docs/getting-started\">Getting started with the toolkit</a>\n";
    let map: String = line.repeat(50 * 1024 / line.len() + 1);
    Registry::builder()
        .tools(tools![page_map, click, type_text])
        .state(PageMap(Arc::new(map)))
        .build()
        .unwrap()
}

fn response(step: usize) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{step}_a"), "type": "function", "function": {"name": "page_map", "arguments": "{}"}},
            {"id": format!("call_{step}_b"), "type": "function", "function": {"name": "click", "arguments": "{\"index\":12}"}},
            {"id": format!("call_{step}_c"), "type": "function", "function": {"name": "type_text", "arguments": "{\"index\":3,\"text\":\"hello\"}"}}
        ]}}], "usage": {"prompt_tokens": 1000, "completion_tokens": 40}})
}

#[inline(never)]
fn step(
    conversation: &mut Conversation,
    registry: &Registry,
    body: &Value,
    runtime: &tokio::runtime::Runtime,
) -> usize {
    let request = conversation.request();
    let wire = serde_json::to_vec(&request).unwrap();
    let turn = Provider::OpenAi.read(body).unwrap();
    conversation.push_turn(&turn);
    let outcome = runtime.block_on(registry.dispatch_turn(&turn.calls));
    let pushed = conversation.push_results(&turn, outcome.results);
    black_box(pushed);
    wire.len()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let registry = registry();
    let body = response(0);
    let mut group = c.benchmark_group("agent_step");
    for history in [0usize, 10, 100, 200] {
        // Built on the closure's first call, which comes only for the
        // benchmarks selected: profiling one of them runs no other's steps.
        let mut prepared: Option<Conversation> = None;
        group.bench_function(format!("after_{history}_steps"), |b| {
            let conversation = prepared.get_or_insert_with(|| {
                let mut conversation = Conversation::new(Provider::OpenAi);
                conversation.set_instructions("Drive the browser.");
                conversation.set_tools(&registry).unwrap();
                conversation.push_user("Open the getting-started page.");
                for n in 0..history {
                    step(&mut conversation, &registry, &response(n), &runtime);
                }
                let size = serde_json::to_vec(&conversation.request()).unwrap().len();
                eprintln!("agent_step/{history}: request {size} bytes");
                conversation
            });
            b.iter_batched(
                || conversation.clone(),
                // Returned, so it is dropped after the timing, not inside it.
                |mut conversation| {
                    let size = step(&mut conversation, &registry, &body, &runtime);
                    (conversation, size)
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
