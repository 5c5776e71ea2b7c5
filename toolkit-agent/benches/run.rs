//! The agent's own cost per step, through `Agent::run`: with no store, and
//! with the file store (which flushes each save to disk); and loading a
//! 200-step session to resume it.
//!
//! The model is a stand-in that answers at once with prepared turns (nine
//! steps of two calls, then an answer), so what is timed is the loop:
//! rendering each request, recording the turn, settling and running the
//! calls (async tools doing almost nothing), recording their results, and
//! saving the session where a store is given. `ten_steps_traced` runs the
//! ten steps with a subscriber recording every span.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolkit_agent::{Agent, FileStore, Limits, Model, ModelFuture, Provider, SessionStore, Turn};
use toolkit_core::{Registry, tool, tools};

#[path = "support/click.rs"]
mod click_tool;
use click_tool::click;

/// Reads part of the page.
#[tool]
async fn read_part(
    /** The part. */
    part: u32,
) -> String {
    // About 5 KB, as a page's section read in full.
    format!(
        "part {part}: {}",
        "Some readable text of the page. ".repeat(160)
    )
}

/// Answers with prepared turns, in turn: `steps - 1` steps of calls, then
/// an answer.
struct Prepared {
    turns: Vec<Turn>,
    next: AtomicUsize,
}

impl Prepared {
    fn new(steps: usize) -> Self {
        let mut turns: Vec<Turn> = (0..steps - 1)
            .map(|step| {
                let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null, "tool_calls": [
                        {"id": format!("call_{step}_a"), "type": "function",
                         "function": {"name": "click", "arguments": "{\"index\":12}"}},
                        {"id": format!("call_{step}_b"), "type": "function",
                         "function": {"name": "read_part", "arguments": "{\"part\":3}"}}
                    ]}}], "usage": {"prompt_tokens": 1000, "completion_tokens": 40}});
                Provider::OpenAi.read(&body).unwrap()
            })
            .collect();
        let answer: Value = json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Done."}}]});
        turns.push(Provider::OpenAi.read(&answer).unwrap());
        Self {
            turns,
            next: AtomicUsize::new(0),
        }
    }
}

impl Model for Prepared {
    fn provider(&self) -> Provider {
        Provider::OpenAi
    }

    fn complete<'a>(&'a self, _request: &'a Value) -> ModelFuture<'a> {
        let at = self.next.fetch_add(1, Ordering::Relaxed) % self.turns.len();
        let turn = self.turns[at].clone();
        Box::pin(async move { Ok(turn) })
    }
}

/// A store that keeps each save's JSON in memory: what saving costs the
/// loop besides the disk.
#[derive(Default)]
struct InMemory(std::sync::Mutex<std::collections::HashMap<String, String>>);

impl SessionStore for InMemory {
    fn save<'a>(
        &'a self,
        session: &'a toolkit_agent::Session,
    ) -> futures_util::future::BoxFuture<'a, Result<(), toolkit_agent::StoreError>> {
        Box::pin(async move {
            let json = session
                .to_json()
                .map_err(toolkit_agent::StoreError::Session)?;
            let mut saved = self.0.lock().unwrap();
            saved.insert(session.id().to_owned(), json);
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<Option<toolkit_agent::Session>, toolkit_agent::StoreError>,
    > {
        Box::pin(async move {
            let saved = self.0.lock().unwrap().get(id).cloned();
            saved
                .map(|json| toolkit_agent::Session::from_json(&json))
                .transpose()
                .map_err(toolkit_agent::StoreError::Session)
        })
    }
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![click, read_part])
        .build()
        .unwrap()
}

fn folder(name: &str) -> PathBuf {
    let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&folder);
    folder
}

const STEPS: usize = 10;

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("agent_run");
    // A fresh run of two steps (one of calls, then the answer), and one of
    // ten, whose later steps send the earlier results again.
    let fresh = Agent::new(Prepared::new(2), registry());
    group.bench_function("two_steps", |b| {
        b.iter(|| black_box(runtime.block_on(fresh.run("Go.").into_future()).unwrap()))
    });
    let bare = Agent::new(Prepared::new(STEPS), registry());
    group.bench_function("ten_steps", |b| {
        b.iter(|| black_box(runtime.block_on(bare.run("Go.").into_future()).unwrap()))
    });
    // The same run with a subscriber that keeps every span, field and
    // event (the run's, its steps', each call's), as a host with tracing
    // on and no exporter behind it: docs/performance.md, "Tracing".
    let recorder = toolkit_tests::trace::Recorder::default();
    group.bench_function("ten_steps_traced", |b| {
        let _listening = tracing::subscriber::set_default(recorder.clone());
        b.iter(|| {
            let outcome = runtime.block_on(bare.run("Go.").into_future()).unwrap();
            recorder.clear();
            black_box(outcome)
        })
    });
    let in_memory = Agent::builder(Prepared::new(STEPS), registry())
        .store(InMemory::default())
        .build()
        .unwrap();
    group.bench_function("ten_steps_memory_store", |b| {
        b.iter(|| {
            black_box(
                runtime
                    .block_on(in_memory.run("Go.").into_future())
                    .unwrap(),
            )
        })
    });
    let store = FileStore::new(folder("bench-sessions")).unwrap();
    let stored = Agent::builder(Prepared::new(STEPS), registry())
        .store(store.clone())
        .build()
        .unwrap();
    group.sample_size(20);
    group.bench_function("ten_steps_file_store", |b| {
        b.iter(|| black_box(runtime.block_on(stored.run("Go.").into_future()).unwrap()))
    });
    // One save of the session as the ten-step run ends it: the store's own
    // cost (a write, two flushes to disk, a rename), to set beside the
    // run's.
    let mut ten = bare.session();
    runtime
        .block_on(bare.send(&mut ten, "Go.").into_future())
        .unwrap();
    group.bench_function("save_ten_step_session", |b| {
        b.iter(|| runtime.block_on(store.save(&ten)).unwrap())
    });

    // A 200-step session, saved, then loaded as a resume would.
    let long = Agent::builder(Prepared::new(201), registry())
        .limits(Limits::default().max_steps(201))
        .build()
        .unwrap();
    let mut session = long.session();
    session.set_id("long").unwrap();
    runtime
        .block_on(long.send(&mut session, "Go.").into_future())
        .unwrap();
    runtime.block_on(store.save(&session)).unwrap();
    let size = std::fs::metadata(store.folder().join("long.json"))
        .unwrap()
        .len();
    eprintln!("agent_run/load_200_steps: {size} bytes");
    group.sample_size(30);
    group.bench_function("load_200_steps", |b| {
        b.iter(|| black_box(runtime.block_on(store.load("long")).unwrap().unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
