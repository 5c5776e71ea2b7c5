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
    format!(
        "page {page}: {}",
        "Some readable text of the page. ".repeat(1600)
    )
}

/// Reads a page of about 50 KB.
#[tool]
async fn read_page(
    /** The page. */
    page: u32,
) -> String {
    page_text(page)
}

/// Reads a page of about 50 KB, and says it changes nothing: its calls
/// are not recorded as started, one save a step.
#[tool(read_only)]
async fn look_at_page(
    /** The page. */
    page: u32,
) -> String {
    page_text(page)
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![read_page, look_at_page])
        .build()
        .unwrap()
}

/// The model's turn at `step`: one call of `tool`.
fn call_turn(step: usize, tool: &str) -> Turn {
    let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [
            {"id": format!("call_{step}"), "type": "function",
             "function": {"name": tool, "arguments": format!("{{\"page\":{step}}}")}}
        ]}}], "usage": {"prompt_tokens": 1000, "completion_tokens": 40}});
    Provider::OpenAi.read(&body).unwrap()
}

/// Answers at once: `steps - 1` turns of one call of `tool`, then an
/// answer.
struct Prepared {
    steps: usize,
    tool: &'static str,
    next: AtomicUsize,
}

impl Model for Prepared {
    fn provider(&self) -> Provider {
        Provider::OpenAi
    }

    fn complete<'a>(&'a self, _request: &'a Value) -> ModelFuture<'a> {
        let at = self.next.fetch_add(1, Ordering::Relaxed) % self.steps;
        let turn = if at + 1 < self.steps {
            call_turn(at, self.tool)
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
            let rewritten =
                snapshot_after.map(|(ino, _)| ino) != snapshot_before.map(|(ino, _)| ino);
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

/// Runs the 200-step run once, calling `tool`, through `store`
/// (measured) or none; prints what its saves cost, and gives the run's
/// time.
fn measure_run<S: SessionStore + 'static>(
    runtime: &tokio::runtime::Runtime,
    name: &str,
    tool: &'static str,
    folder: &Path,
    store: Option<S>,
    bare: Option<Duration>,
) -> Duration {
    let measured = store.map(|store| {
        std::sync::Arc::new(Measured {
            inner: store,
            folder: folder.to_owned(),
            saves: Mutex::new(Vec::new()),
        })
    });
    let mut builder = Agent::builder(
        Prepared {
            steps: STEPS + 1,
            tool,
            next: AtomicUsize::new(0),
        },
        registry(),
    )
    .limits(Limits::default().max_steps(STEPS + 1));
    if let Some(measured) = &measured {
        builder = builder.store(Shared(std::sync::Arc::clone(measured)));
    }
    let agent = builder.build().unwrap();
    let mut session = agent.session();
    session.set_id("long").unwrap();
    let start = Instant::now();
    runtime
        .block_on(agent.send(&mut session, "Read every page.").into_future())
        .unwrap();
    let run = start.elapsed();
    let Some(measured) = measured else {
        eprintln!(
            "journal/{name}: {STEPS} steps in {:.0} ms ({:.2} ms a step), no store",
            ms(run),
            ms(run) / STEPS as f64
        );
        return run;
    };
    let saves = measured.saves.lock().unwrap();
    let (snapshot, journal) = files(folder, "long");
    let stored = snapshot.map_or(0, |(_, len)| len) + journal;
    let written: u64 = saves.iter().map(|save| save.written).sum();
    let snapshots: Vec<&Save> = saves.iter().filter(|save| save.snapshot).collect();
    // The store's time at each step: its saves', summed. A step whose
    // saves include a snapshot is counted apart.
    let per_step = |steps: std::ops::RangeInclusive<usize>| {
        let times: Vec<Duration> = steps
            .filter(|step| !saves.iter().any(|save| save.step == *step && save.snapshot))
            .map(|step| {
                saves
                    .iter()
                    .filter(|save| save.step == step)
                    .map(|save| save.time)
                    .sum()
            })
            .collect();
        median(times)
    };
    let store_time: Duration = saves.iter().map(|save| save.time).sum();
    let (early, late) = (per_step(2..=21), per_step(181..=200));
    eprintln!(
        "journal/{name}: {} saves over {STEPS} steps, run {:.0} ms ({:.2} ms a step{}); \
         the store's time a step: {:.2} ms on average, median {:.2} ms at steps 2-21 and {:.2} ms at steps 181-200 (x{:.2}); \
         {} snapshots ({:.0} ms together, largest {:.1} ms); \
         bytes written {:.1} MB, stored at the end {:.1} MB (session {:.1} MB): x{:.2}",
        saves.len(),
        ms(run),
        ms(run) / STEPS as f64,
        bare.map_or(String::new(), |bare| format!(
            ", {:.2} ms more than with no store",
            (ms(run) - ms(bare)) / STEPS as f64
        )),
        ms(store_time) / STEPS as f64,
        ms(early),
        ms(late),
        late.as_secs_f64() / early.as_secs_f64(),
        snapshots.len(),
        snapshots.iter().map(|save| ms(save.time)).sum::<f64>(),
        snapshots
            .iter()
            .map(|save| ms(save.time))
            .fold(0.0, f64::max),
        written as f64 / 1e6,
        stored as f64 / 1e6,
        session.to_json().unwrap().len() as f64 / 1e6,
        written as f64 / stored as f64,
    );
    run
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
            tool: "read_page",
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
    let turn = call_turn(step, "read_page");
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

    // Once: a whole run through each store, every save measured; the
    // same run with no store, for what the store adds to a step.
    for (tool, kind) in [("look_at_page", "read_only"), ("read_page", "side_effects")] {
        let bare = measure_run::<FileStore>(
            &runtime,
            &format!("{kind}_no_store"),
            tool,
            Path::new(""),
            None,
            None,
        );
        let journaled = folder(&format!("journal-run-{kind}"));
        measure_run(
            &runtime,
            &format!("{kind}_journal"),
            tool,
            &journaled,
            Some(FileStore::new(&journaled).unwrap()),
            Some(bare),
        );
        let _ = fs::remove_dir_all(&journaled);
        let whole = folder(&format!("whole-run-{kind}"));
        measure_run(
            &runtime,
            &format!("{kind}_whole"),
            tool,
            &whole,
            Some(Whole(FileStore::new(&whole).unwrap())),
            Some(bare),
        );
        let _ = fs::remove_dir_all(&whole);
    }

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
            // Put back and flushed: the save flushes its own bytes only.
            // An append is taken back by cutting the journal to its length
            // (the snapshot as it was); anything else, by writing both back.
            let snapshot = &files[0];
            let unchanged = fs::read(&snapshot.0).is_ok_and(|bytes| bytes == snapshot.1);
            for (path, bytes) in &files {
                if unchanged && path.extension().is_some_and(|ext| ext == "log") {
                    let file = OpenOptions::new().write(true).open(path).unwrap();
                    file.set_len(bytes.len() as u64).unwrap();
                    file.sync_all().unwrap();
                } else if !unchanged {
                    fs::write(path, bytes).unwrap();
                    fs::File::open(path).unwrap().sync_all().unwrap();
                }
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
        // The save's own work before the disk: the changes taken and
        // written as JSON.
        let session = ready(&store);
        group.bench_function(format!("record_at_step_{steps}"), |b| {
            b.iter(|| black_box(session.changes().to_json().unwrap()))
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

    // The flush a save cannot do without: a step's record (100 KB)
    // appended, `fdatasync`.
    let flushed = folder("journal-flush");
    fs::create_dir_all(&flushed).unwrap();
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(flushed.join("flush.log"))
        .unwrap();
    let block = vec![b'x'; 100 * 1024];
    group.bench_function("append_100k_fdatasync", |b| {
        b.iter(|| {
            file.write_all(black_box(&block)).unwrap();
            file.sync_data().unwrap();
        })
    });
    group.finish();
    let _ = fs::remove_dir_all(&flushed);
}

criterion_group!(benches, bench);
criterion_main!(benches);
