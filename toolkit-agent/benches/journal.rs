//! What the file store's saves cost as a run grows: a 200-step run whose
//! tool returns 50 KB at each step (a page map's size), with the journal
//! (each save appends what the step added) and with whole saves (each save
//! rewrites the session, as a store with only `save` does, and as the file
//! store did before its journal).
//!
//! Printed once: each save of one run timed and its bytes on disk counted
//! (the snapshot's size when a save rewrote it, the journal's growth
//! otherwise), per step, against what is stored at the end. Timed by
//! criterion: a save of one more step at step 2 and at step 200, from the
//! same stored state each time (the files put back and the session loaded
//! again between samples), and one `fdatasync` of a small append in the
//! same folder: the flush a save cannot do without.

use std::fs::{self, OpenOptions};
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use toolkit_agent::{
    Agent, FileStore, Limits, Model, ModelFuture, Provider, Session, SessionChanges, SessionStore,
    StoreError, Turn,
};
use toolkit_core::{Registry, ToolCallResult, ToolResult, tool, tools};

/// The steps of the run.
const STEPS: usize = 200;

/// The page's text: about 50 KB.
fn page_text(page: u32) -> String {
    format!("page {page}: {}", "Some readable text of the page. ".repeat(1600))
}

/// Reads a page of about 50 KB.
#[tool]
async fn read_page(
    /** The page. */
    page: u32,
) -> String {
    page_text(page)
}

fn registry() -> Registry {
    Registry::builder().tools(tools![read_page]).build().unwrap()
}

/// The model's turn at `step`: one call of `read_page`.
fn call_turn(step: usize) -> Turn {
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{step}"), "type": "function",
             "function": {"name": "read_page", "arguments": format!("{{\"page\":{step}}}")}}
        ]}}], "usage": {"prompt_tokens": 1000, "completion_tokens": 40}});
    Provider::OpenAi.read(&body).unwrap()
}

/// Answers at once: `steps - 1` turns of one call, then an answer.
struct Prepared {
    steps: usize,
    next: AtomicUsize,
}

impl Model for Prepared {
    fn provider(&self) -> Provider {
        Provider::OpenAi
    }

    fn complete<'a>(&'a self, _request: &'a Value) -> ModelFuture<'a> {
        let at = self.next.fetch_add(1, Ordering::Relaxed) % self.steps;
        let turn = if at + 1 < self.steps {
            call_turn(at)
        } else {
            let answer = json!({"choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Done."}}]});
            Provider::OpenAi.read(&answer).unwrap()
        };
        Box::pin(async move { Ok(turn) })
    }
}

/// A store with only the two methods of old: every save is whole.
struct Whole(FileStore);

impl SessionStore for Whole {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        self.0.save(session)
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        self.0.load(id)
    }
}

/// One save, as measured.
struct Save {
    step: usize,
    time: Duration,
    written: u64,
    snapshot: bool,
}

/// A store that times each save and counts the bytes it put on disk.
struct Measured<S> {
    inner: S,
    folder: PathBuf,
    saves: Mutex<Vec<Save>>,
}

/// The snapshot's identity and size, and the journal's size.
fn files(folder: &Path, id: &str) -> (Option<(u64, u64)>, u64) {
    use std::os::unix::fs::MetadataExt;
    let snapshot = fs::metadata(folder.join(format!("{id}.json")))
        .ok()
        .map(|m| (m.ino(), m.len()));
    let journal = fs::metadata(folder.join(format!("{id}.log"))).map_or(0, |m| m.len());
    (snapshot, journal)
}

impl<S: SessionStore> SessionStore for Measured<S> {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.save(session)
    }

    fn save_changes<'a>(
        &'a self,
        changes: &'a SessionChanges<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let id = changes.session().id();
            let (snapshot_before, journal_before) = files(&self.folder, id);
            let start = Instant::now();
            self.inner.save_changes(changes).await?;
            let time = start.elapsed();
            let (snapshot_after, journal_after) = files(&self.folder, id);
            let rewritten = snapshot_after.map(|(ino, _)| ino) != snapshot_before.map(|(ino, _)| ino);
            let written = if rewritten {
                snapshot_after.map_or(0, |(_, len)| len) + journal_after
            } else {
                journal_after.saturating_sub(journal_before)
            };
            self.saves.lock().unwrap().push(Save {
                step: changes.session().conversation().history().len(),
                time,
                written,
                snapshot: rewritten,
            });
            Ok(())
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        self.inner.load(id)
    }
}

fn folder(name: &str) -> PathBuf {
    let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&folder);
    folder
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1000.0
}

/// Runs the 200-step run once through `store` (measured) and prints what
/// its saves cost.
fn measure_run<S: SessionStore + 'static>(
    runtime: &tokio::runtime::Runtime,
    name: &str,
    folder: &Path,
    store: S,
) {
    let measured = std::sync::Arc::new(Measured {
        inner: store,
        folder: folder.to_owned(),
        saves: Mutex::new(Vec::new()),
    });
    let agent = Agent::builder(
        Prepared {
            steps: STEPS + 1,
            next: AtomicUsize::new(0),
        },
        registry(),
    )
    .store(Shared(std::sync::Arc::clone(&measured)))
    .limits(Limits::default().max_steps(STEPS + 1))
    .build()
    .unwrap();
    let mut session = agent.session();
    session.set_id("long").unwrap();
    let start = Instant::now();
    runtime
        .block_on(agent.send(&mut session, "Read every page.").into_future())
        .unwrap();
    let run = start.elapsed();
    let saves = measured.saves.lock().unwrap();
    let (snapshot, journal) = files(folder, "long");
    let stored = snapshot.map_or(0, |(_, len)| len) + journal;
    let written: u64 = saves.iter().map(|save| save.written).sum();
    let appended: Vec<&Save> = saves.iter().filter(|save| !save.snapshot).collect();
    let at = |steps: std::ops::RangeInclusive<usize>, all: bool| {
        median(
            saves
                .iter()
                .filter(|save| steps.contains(&save.step) && (all || !save.snapshot))
                .map(|save| save.time)
                .collect(),
        )
    };
    let rewrites: Vec<&Save> = saves.iter().filter(|save| save.snapshot).collect();
    let session_bytes = session.to_json().unwrap().len();
    eprintln!(
        "journal/{name}: {} saves over {STEPS} steps in {:.0} ms ({:.2} ms a step); \
         median save at steps 1-3 {:.2} ms, at steps 198-200 {:.2} ms (appends only: {:.2} / {:.2} ms); \
         {} snapshots written (largest {:.1} ms); max save {:.1} ms; \
         bytes written {:.1} MB, stored at the end {:.1} MB (session {:.1} MB): x{:.2}",
        saves.len(),
        ms(run),
        ms(run) / STEPS as f64,
        ms(at(1..=3, true)),
        ms(at(198..=200, true)),
        ms(at(1..=3, false)),
        ms(at(198..=200, false)),
        rewrites.len(),
        rewrites
            .iter()
            .map(|save| ms(save.time))
            .fold(0.0, f64::max),
        saves.iter().map(|save| ms(save.time)).fold(0.0, f64::max),
        written as f64 / 1e6,
        stored as f64 / 1e6,
        session_bytes as f64 / 1e6,
        written as f64 / stored as f64,
    );
    if !appended.is_empty() {
        let mean = appended.iter().map(|save| save.time).sum::<Duration>() / appended.len() as u32;
        eprintln!(
            "journal/{name}: {} appends, mean {:.2} ms, median {:.2} ms",
            appended.len(),
            ms(mean),
            ms(median(appended.iter().map(|save| save.time).collect()))
        );
    }
}

/// The measured store, shared with the bench to read its saves.
struct Shared<S>(std::sync::Arc<Measured<S>>);

impl<S: SessionStore> SessionStore for Shared<S> {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        self.0.save(session)
    }

    fn save_changes<'a>(
        &'a self,
        changes: &'a SessionChanges<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.0.save_changes(changes)
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        self.0.load(id)
    }
}

/// A session of `steps` steps, stored by the journaled file store in
/// `folder`; the files as they are then, to put back before each sample.
fn stored_session(
    runtime: &tokio::runtime::Runtime,
    folder: &Path,
    steps: usize,
) -> Vec<(PathBuf, Vec<u8>)> {
    let agent = Agent::builder(
        Prepared {
            steps: steps + 1,
            next: AtomicUsize::new(0),
        },
        registry(),
    )
    .store(FileStore::new(folder).unwrap())
    .limits(Limits::default().max_steps(steps + 1))
    .build()
    .unwrap();
    let mut session = agent.session();
    session.set_id("grown").unwrap();
    runtime
        .block_on(agent.send(&mut session, "Read every page.").into_future())
        .unwrap();
    ["grown.json", "grown.log"]
        .iter()
        .map(|name| folder.join(name))
        .filter(|path| path.exists())
        .map(|path| {
            let bytes = fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}

/// One step more: the model's turn and its 50 KB result.
fn add_step(session: &mut Session, step: usize) {
    let turn = call_turn(step);
    let conversation = session.conversation_mut();
    conversation.push_turn(&turn);
    conversation.push_results(
        &turn,
        vec![ToolCallResult::new(
            format!("call_{step}"),
            "read_page",
            ToolResult::text(page_text(step as u32)),
        )],
    );
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();

    // Once: a whole run through each store, every save measured.
    let journaled = folder("journal-run");
    measure_run(
        &runtime,
        "journal_run",
        &journaled,
        FileStore::new(&journaled).unwrap(),
    );
    let whole = folder("whole-run");
    measure_run(
        &runtime,
        "whole_run",
        &whole,
        Whole(FileStore::new(&whole).unwrap()),
    );
    let _ = fs::remove_dir_all(&whole);

    let mut group = c.benchmark_group("journal");
    group.sample_size(20);
    for steps in [2, STEPS] {
        let folder = folder(&format!("journal-at-{steps}"));
        let files = stored_session(&runtime, &folder, steps);
        let store = FileStore::new(&folder).unwrap();
        let (_, journal) = self::files(&folder, "grown");
        eprintln!(
            "journal/at_step_{steps}: session {:.1} MB, journal {:.1} MB",
            files.iter().map(|(_, bytes)| bytes.len()).sum::<usize>() as f64 / 1e6,
            journal as f64 / 1e6
        );
        // The store as the run left it, the session loaded from it, one
        // more step added: the save is what is timed.
        let ready = |store: &FileStore| {
            for (path, bytes) in &files {
                fs::write(path, bytes).unwrap();
            }
            let mut session = runtime.block_on(store.load("grown")).unwrap().unwrap();
            add_step(&mut session, steps);
            session
        };
        {
            let session = ready(&store);
            let changes = session.changes();
            let before = self::files(&folder, "grown");
            runtime.block_on(store.save_changes(&changes)).unwrap();
            let after = self::files(&folder, "grown");
            eprintln!(
                "journal/save_at_step_{steps}: {}",
                if before.0.map(|f| f.0) == after.0.map(|f| f.0) {
                    format!("appends {} bytes", after.1 - before.1)
                } else {
                    "writes a snapshot".to_owned()
                }
            );
        }
        group.bench_function(format!("save_at_step_{steps}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let session = ready(&store);
                    let changes = session.changes();
                    let start = Instant::now();
                    runtime.block_on(store.save_changes(&changes)).unwrap();
                    total += start.elapsed();
                }
                total
            })
        });
        group.bench_function(format!("whole_save_at_step_{steps}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let session = ready(&store);
                    let start = Instant::now();
                    runtime.block_on(store.save(&session)).unwrap();
                    total += start.elapsed();
                }
                total
            })
        });
        let _ = fs::remove_dir_all(&folder);
    }

    // The flush a save cannot do without: 4 KB appended, `fdatasync`.
    let flushed = folder("journal-flush");
    fs::create_dir_all(&flushed).unwrap();
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(flushed.join("flush.log"))
        .unwrap();
    let block = vec![b'x'; 4096];
    group.bench_function("append_4k_fdatasync", |b| {
        b.iter(|| {
            file.write_all(black_box(&block)).unwrap();
            file.sync_data().unwrap();
        })
    });
    group.finish();
    let _ = fs::remove_dir_all(&flushed);
    let _ = fs::remove_dir_all(&journaled);
}

criterion_group!(benches, bench);
criterion_main!(benches);
