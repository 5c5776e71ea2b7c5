//! The Postgres store's cost, against a server of the bench's own
//! (Debian's binaries, as in the tests): a ten-step run saving each step;
//! one save of a session at step 2 and at step 200; and loading the
//! 200-step session, as a resume does.
//!
//! The model is a stand-in answering at once with prepared turns of one
//! call (to a tool with no side effect beyond its result, about 2 KB), so
//! what is timed is the loop and the store. Figures:
//! `docs/postgres.md`, "Costs".

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolkit_agent::{Agent, Limits, Model, ModelFuture, Provider, SessionStore, Turn};
use toolkit_core::{CallContext, Registry, ToolDef};
use toolkit_postgres::PgStore;
use toolkit_tests::postgres::Postgres;

/// Answers with prepared turns, in turn: `steps - 1` steps of one call,
/// then an answer.
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
                        {"id": format!("call_{step}"), "type": "function",
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

fn registry() -> Registry {
    // Not declared read-only: each call is recorded as started, then
    // finished, as a call with side effects is (two saves per step).
    let read = ToolDef::builder("read_part")
        .description("Reads part of the page.")
        .handler(|_: Value, _: CallContext| async {
            "Some readable text of the page. ".repeat(64)
        });
    Registry::builder().tool(read).build().unwrap()
}

fn bench(c: &mut Criterion) {
    if toolkit_tests::skip::skipped("TOOLKIT_SKIP_POSTGRES_TESTS") {
        return;
    }
    let postgres = Postgres::start().expect("Postgres starts (scripts/deps postgres)");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = runtime
        .block_on(PgStore::connect(&postgres.config()))
        .unwrap();
    let mut group = c.benchmark_group("postgres_store");
    group.sample_size(10);

    let ten = Agent::builder(Prepared::new(10), registry())
        .store(store.clone())
        .build()
        .unwrap();
    group.bench_function("ten_steps_pg_store", |b| {
        b.iter(|| black_box(runtime.block_on(ten.run("Go.").into_future()).unwrap()))
    });

    // Sessions at step 2 and at step 200, saved as a run saves them.
    let run = |steps: usize, id: &str| {
        let agent = Agent::builder(Prepared::new(steps + 1), registry())
            .limits(Limits::default().max_steps(steps + 1))
            .store(store.clone())
            .build()
            .unwrap();
        let mut session = agent.session();
        session.set_id(id).unwrap();
        runtime
            .block_on(agent.send(&mut session, "Go.").into_future())
            .unwrap();
        session
    };
    let short = run(2, "short");
    let long = run(200, "long");
    group.bench_function("save_at_step_2", |b| {
        b.iter(|| runtime.block_on(store.save(&short)).unwrap())
    });
    group.bench_function("save_at_step_200", |b| {
        b.iter(|| runtime.block_on(store.save(&long)).unwrap())
    });
    group.bench_function("load_200_step_session", |b| {
        b.iter(|| black_box(runtime.block_on(store.load("long")).unwrap().unwrap()))
    });
    group.finish();
    drop(runtime);
    drop(postgres);
}

criterion_group!(benches, bench);
criterion_main!(benches);
