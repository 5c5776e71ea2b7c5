//! The Postgres store against a real Postgres (Debian's binaries, a
//! server of the test's own on a free port) and real agent runs against a
//! scripted model on the test HTTP server: sessions saved and loaded back
//! whole, queries by state and by pending approval, one worker per session
//! at a time, a worker stopped (SIGSTOP) past its lease refused when it
//! writes, the database stopped and restarted in a run, newer forms
//! refused, and what one step costs.
//!
//! This binary is its own child: run with `PG_ROLE` set, it plays the
//! worker named.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use toolkit_agent::{
    Agent, CallStatus, Decision, HttpModel, Limits, Session, SessionStore, StopReason, StoreError,
};
use toolkit_core::{CallContext, Registry, ToolDef, ToolResult};
use toolkit_postgres::{PgError, PgStore, SessionState};
use toolkit_tests::http::{Reply, Request, Route, TestServer};
use toolkit_tests::postgres::Postgres;
use toolkit_tests::runner::{self, Test};

const SKIP: &str = "TOOLKIT_SKIP_POSTGRES_TESTS";

fn main() -> ExitCode {
    if let Ok(role) = std::env::var("PG_ROLE") {
        let args: Vec<String> = std::env::args().skip(1).collect();
        return child(&role, &args);
    }
    runner::run(
        vec![
            Test::new("sessions_load_back_whole_and_are_queryable", round_trip),
            Test::new("one_worker_drives_a_session_at_a_time", one_driver),
            Test::new(
                "a_worker_stopped_past_its_lease_cannot_write",
                stopped_worker,
            ),
            Test::new(
                "postgres_stopped_in_a_run_stops_it_typed_and_loses_nothing",
                restarted,
            ),
            Test::new("newer_forms_are_refused", newer_forms),
            Test::new("a_step_costs_one_round_trip_and_one_commit", step_cost),
        ]
        .into_iter()
        .map(|test| test.skip_when(SKIP))
        .collect(),
    )
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolkit-pg-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

// ---------------------------------------------------------------- the model

/// Answers a Chat Completions request from its messages. The first user
/// message is `run TAG STEPS [SIZE]`: each step calls `append_effect`
/// with the id `TAG-sSTEP` (and, with SIZE, asks for that many bytes back);
/// after STEPS steps it answers. `book TAG` calls `book`, which needs
/// approval, then answers with its result.
fn model(request: &Request) -> Reply {
    let body = request.json();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let task = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_owned();
    let words: Vec<&str> = task.split_whitespace().collect();
    let step = messages.iter().filter(|m| m["role"] == "assistant").count();
    match words.as_slice() {
        ["run", tag, steps, rest @ ..] => {
            let steps: usize = steps.parse().unwrap();
            let size: usize = rest.first().map_or(0, |size| size.parse().unwrap());
            if step >= steps {
                return chat_text(&format!("done {tag}"));
            }
            chat_call(
                &format!("{tag}-s{step}"),
                "append_effect",
                json!({"step": step, "size": size}),
            )
        }
        ["book", tag] => match messages.iter().rev().find(|m| m["role"] == "tool") {
            None => chat_call(&format!("{tag}-book"), "book", json!({"day": "Sunday"})),
            Some(result) => chat_text(&format!(
                "booked: {}",
                result["content"].as_str().unwrap_or("")
            )),
        },
        _ => Reply::status(400, "no task"),
    }
}

fn chat_call(id: &str, name: &str, arguments: Value) -> Reply {
    let call = json!({"id": id, "type": "function",
        "function": {"name": name, "arguments": arguments.to_string()}});
    Reply::json(
        &json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [call]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
    )
}

fn chat_text(text: &str) -> Reply {
    Reply::json(&json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3}}))
}

fn model_server() -> TestServer {
    TestServer::start([("/chat/completions", Route::handler(model))])
}

// ---------------------------------------------------------------- the tools

fn append_line(file: &Path, line: &str) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .expect("the log opens");
    file.write_all(format!("{line}\n").as_bytes())
        .and_then(|()| file.sync_data())
        .expect("the log is written");
}

fn lines(file: &Path) -> Vec<String> {
    fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Who is inside a tool call, per session: a second driver of one session
/// is seen when both are in a call at once.
#[derive(Default)]
struct Drivers {
    inside: Mutex<HashMap<String, usize>>,
    overlapped: AtomicBool,
}

/// What the workers' tools do: `append_effect` appends `CALL WORKER` to
/// the log (not idempotent), waits `delay`, and gives back `size` bytes.
/// `book` needs approval.
#[derive(Clone)]
struct Effects {
    log: PathBuf,
    worker: String,
    delay: Duration,
    drivers: Arc<Drivers>,
    hook: Option<Arc<dyn Fn(usize) + Send + Sync>>,
}

impl Effects {
    fn new(dir: &Path, worker: &str, delay: Duration) -> Self {
        Self {
            log: dir.join("effects.log"),
            worker: worker.to_owned(),
            delay,
            drivers: Arc::default(),
            hook: None,
        }
    }

    fn registry(&self) -> Registry {
        let effects = self.clone();
        let append = ToolDef::builder("append_effect")
            .description("Appends a line to the log.")
            .handler(move |arguments: Value, call: CallContext| {
                let effects = effects.clone();
                async move {
                    let session = call.call_id().rsplit_once("-s").unwrap().0.to_owned();
                    {
                        let mut inside = effects.drivers.inside.lock().unwrap();
                        let count = inside.entry(session.clone()).or_default();
                        *count += 1;
                        if *count > 1 {
                            effects.drivers.overlapped.store(true, Ordering::SeqCst);
                        }
                    }
                    append_line(
                        &effects.log,
                        &format!("{} {}", call.call_id(), effects.worker),
                    );
                    if let Some(hook) = &effects.hook {
                        hook(arguments["step"].as_u64().unwrap_or(0) as usize);
                    }
                    tokio::time::sleep(effects.delay).await;
                    *effects
                        .drivers
                        .inside
                        .lock()
                        .unwrap()
                        .get_mut(&session)
                        .unwrap() -= 1;
                    let size = arguments["size"].as_u64().unwrap_or(0) as usize;
                    format!("appended {}", "x".repeat(size))
                }
            });
        let book = ToolDef::builder("book")
            .description("Books a meeting.")
            .needs_approval(true)
            .handler(|arguments: Value, _: CallContext| async move {
                format!("a meeting on {}", arguments["day"].as_str().unwrap_or("?"))
            });
        Registry::builder().tool(append).tool(book).build().unwrap()
    }

    /// The ids of the calls that ran, with how many times each did.
    fn counts(&self) -> BTreeMap<String, usize> {
        let mut counts = BTreeMap::new();
        for line in lines(&self.log) {
            let id = line.split(' ').next().unwrap().to_owned();
            *counts.entry(id).or_default() += 1;
        }
        counts
    }
}

/// A worker's agent: `store`, the tools of `effects`, and an approval hook
/// that settles a call that may have run by what the log says it did, and
/// defers every approval.
fn agent(
    base_url: &str,
    store: impl SessionStore + 'static,
    effects: &Effects,
) -> Agent<HttpModel> {
    let model = HttpModel::openai_chat("scripted")
        .base_url(base_url)
        .no_key()
        .build()
        .unwrap();
    let log = effects.log.clone();
    Agent::builder(model, effects.registry())
        .limits(Limits::default().max_steps(400))
        .store(store)
        .approval(move |pending| {
            let log = log.clone();
            async move {
                match pending.status {
                    CallStatus::MayHaveRun { .. } => {
                        let ran = lines(&log)
                            .iter()
                            .any(|line| line.split(' ').next() == Some(&pending.call.id));
                        if ran {
                            Decision::Answered(ToolResult::text("appended"))
                        } else {
                            Decision::Approve
                        }
                    }
                    _ => Decision::Defer,
                }
            }
        })
        .build()
        .unwrap()
}

/// Every call `TAG-s0..steps` of each tag ran exactly once.
fn assert_ran_once(effects: &Effects, tags: &[String], steps: usize) {
    let counts = effects.counts();
    for tag in tags {
        for step in 0..steps {
            let id = format!("{tag}-s{step}");
            assert_eq!(counts.get(&id), Some(&1), "{id} ran once: {counts:?}");
        }
    }
}

/// The ids of the tool messages of a saved session, in order.
fn answered(session: &Session) -> Vec<String> {
    let request = session.conversation().request();
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str().map(str::to_owned))
        .collect()
}

fn ids(tag: &str, steps: usize) -> Vec<String> {
    (0..steps).map(|step| format!("{tag}-s{step}")).collect()
}

// ----------------------------------------------------------------- the tests

fn round_trip() {
    let postgres = Postgres::start().unwrap();
    let server = model_server();
    let dir = scratch("round-trip");
    runtime().block_on(async {
        let store = PgStore::connect(&postgres.config()).await.unwrap();
        let effects = Effects::new(&dir, "w1", Duration::ZERO);
        let agent = agent(&server.base_url(), store.clone(), &effects);

        // A finished run of five steps.
        let mut session = agent.session();
        session.set_id("five").unwrap();
        let outcome = agent.send(&mut session, "run five 5").await.unwrap();
        assert_eq!(outcome.stop, StopReason::Answered);
        let other = PgStore::connect(&postgres.config()).await.unwrap();
        let loaded = other.load("five").await.unwrap().unwrap();
        assert_eq!(loaded.to_json().unwrap(), session.to_json().unwrap());
        assert_eq!(answered(&loaded), ids("five", 5));

        // A run paused for approval: listed with its call.
        let mut paused = agent.session();
        paused.set_id("booking").unwrap();
        let outcome = agent.send(&mut paused, "book booking").await.unwrap();
        assert_eq!(outcome.stop, StopReason::Paused);
        let awaiting = other.awaiting_decision(10).await.unwrap();
        assert_eq!(awaiting.len(), 1, "{awaiting:?}");
        assert_eq!(awaiting[0].session, "booking");
        assert_eq!(awaiting[0].call_id, "booking-book");
        assert_eq!(awaiting[0].tool, "book");
        assert_eq!(awaiting[0].arguments, json!({"day": "Sunday"}));
        assert!(!awaiting[0].may_have_run);
        let paused_list = other.sessions(SessionState::Paused, 10).await.unwrap();
        assert_eq!(paused_list.len(), 1);
        assert_eq!(
            (paused_list[0].id.as_str(), paused_list[0].pending),
            ("booking", 1)
        );
        let finished = other.sessions(SessionState::Finished, 10).await.unwrap();
        assert_eq!(
            finished.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            ["five"]
        );

        // Approved by another store (another process's), without a lease:
        // the worker holds none while the run waits.
        let mut elsewhere = other.load("booking").await.unwrap().unwrap();
        elsewhere.decide("booking-book", Decision::Approve).unwrap();
        other.save(&elsewhere).await.unwrap();
        assert!(other.awaiting_decision(10).await.unwrap().is_empty());
        let mut resumed = agent.load("booking").await.unwrap();
        let outcome = agent.resume(&mut resumed).await.unwrap();
        assert_eq!(
            outcome.answer.as_deref(),
            Some("booked: a meeting on Sunday")
        );
        let finished = other.sessions(SessionState::Finished, 10).await.unwrap();
        assert_eq!(finished.len(), 2);

        // A session under a live lease cannot be written without it.
        let lease = store
            .lease("five", "w1", Duration::from_secs(30))
            .await
            .unwrap()
            .unwrap();
        let error = other.save(&loaded).await.unwrap_err();
        assert!(
            matches!(PgError::find(&error), Some(PgError::Leased { .. })),
            "{error:?}"
        );
        assert!(other.delete("five").await.is_err());
        lease.release().await.unwrap();
        assert!(other.delete("five").await.unwrap());
        assert!(other.load("five").await.unwrap().is_none());
        assert!(other.load("never-saved").await.unwrap().is_none());
    });
    let _ = fs::remove_dir_all(&dir);
}

/// Two workers (two stores, two connections) given the same sessions at
/// once, in the same order: each session is driven by one at a time, and
/// every call runs once.
fn one_driver() {
    const SESSIONS: usize = 6;
    const STEPS: usize = 4;
    let postgres = Postgres::start().unwrap();
    let server = model_server();
    let dir = scratch("one-driver");
    let drivers = Arc::new(Drivers::default());
    let tags: Vec<String> = (0..SESSIONS).map(|n| format!("race{n}")).collect();
    let skipped = Arc::new(AtomicUsize::new(0));
    runtime().block_on(async {
        let mut workers = Vec::new();
        for worker in ["wa", "wb"] {
            let store = PgStore::connect(&postgres.config()).await.unwrap();
            let mut effects = Effects::new(&dir, worker, Duration::from_millis(20));
            effects.drivers = Arc::clone(&drivers);
            let agent = agent(&server.base_url(), store.clone(), &effects);
            let tags = tags.clone();
            let skipped = Arc::clone(&skipped);
            workers.push(tokio::spawn(async move {
                for tag in &tags {
                    let Some(lease) = store
                        .lease(tag, worker, Duration::from_secs(5))
                        .await
                        .unwrap()
                    else {
                        // Another worker drives it: move on.
                        skipped.fetch_add(1, Ordering::SeqCst);
                        continue;
                    };
                    match agent.load(tag).await {
                        Ok(session) if session.is_ended() => {}
                        Ok(mut session) => {
                            agent.resume(&mut session).await.unwrap();
                        }
                        Err(_) => {
                            let mut session = agent.session();
                            session.set_id(tag.as_str()).unwrap();
                            let outcome = agent
                                .send(&mut session, format!("run {tag} {STEPS}"))
                                .await
                                .unwrap();
                            assert_eq!(outcome.stop, StopReason::Answered);
                        }
                    }
                    assert!(lease.is_held());
                    lease.release().await.unwrap();
                }
            }));
        }
        for worker in workers {
            worker.await.unwrap();
        }
        let store = PgStore::connect(&postgres.config()).await.unwrap();
        let finished = store.sessions(SessionState::Finished, 100).await.unwrap();
        assert_eq!(finished.len(), SESSIONS);
    });
    let effects = Effects::new(&dir, "", Duration::ZERO);
    assert_ran_once(&effects, &tags, STEPS);
    assert!(
        !drivers.overlapped.load(Ordering::SeqCst),
        "a session was driven by two workers at once"
    );
    // Started together on the same sessions, the workers met at least once.
    assert!(skipped.load(Ordering::SeqCst) > 0, "the workers never met");
    let _ = fs::remove_dir_all(&dir);
}

fn spawn_worker(args: &[&str]) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(args)
        .env("PG_ROLE", "worker")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the worker starts")
}

fn signal(child: &std::process::Child, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Worker A is stopped (SIGSTOP) in a call, past its lease; worker B takes
/// the session over and finishes it; A, continued, finishes its call and
/// its save is refused: the record B left stands.
fn stopped_worker() {
    const STEPS: usize = 4;
    let postgres = Postgres::start().unwrap();
    let server = model_server();
    let dir = scratch("stopped");
    let config = postgres.config();
    let url = server.base_url();
    let dir_arg = dir.to_string_lossy().into_owned();
    let task = format!("run fenced {STEPS}");
    // A: a lease of 1 s, calls of 1.5 s.
    let mut a = spawn_worker(&[
        &config, &url, &dir_arg, "fenced", "wa", "1000", "1500", &task,
    ]);
    let log = dir.join("effects.log");
    let started = Instant::now();
    while lines(&log).len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "A never reached its second call"
        );
        assert!(a.try_wait().unwrap().is_none(), "A ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    // In its second call, its first recorded: stopped, past its lease.
    signal(&a, "STOP");
    std::thread::sleep(Duration::from_millis(2500));
    let b = spawn_worker(&[&config, &url, &dir_arg, "fenced", "wb", "5000", "10", &task]);
    let output = b.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "B: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    signal(&a, "CONT");
    let output = a.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(3),
        "A's write is refused as a lost lease: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // B's record stands: the run ended, every call answered once.
    let effects = Effects::new(&dir, "", Duration::ZERO);
    assert_ran_once(&effects, &["fenced".to_owned()], STEPS);
    let workers: Vec<String> = lines(&log)
        .iter()
        .map(|line| line.split(' ').nth(1).unwrap().to_owned())
        .collect();
    assert_eq!(&workers[..2], ["wa", "wa"], "{workers:?}");
    assert!(workers[2..].iter().all(|w| w == "wb"), "{workers:?}");
    runtime().block_on(async {
        let store = PgStore::connect(&config).await.unwrap();
        let session = store.load("fenced").await.unwrap().unwrap();
        assert!(session.is_ended());
        assert_eq!(answered(&session), ids("fenced", STEPS));
    });
    let _ = fs::remove_dir_all(&dir);
}

/// A worker: takes the lease on a session, runs or resumes it. Exits 0
/// when the run finished, 3 when a write was refused for a lost lease, 4
/// when the lease was another's.
fn child(role: &str, args: &[String]) -> ExitCode {
    assert_eq!(role, "worker");
    let [config, url, dir, session, worker, ttl, delay, task] = args else {
        panic!("worker arguments: {args:?}");
    };
    let ttl = Duration::from_millis(ttl.parse().unwrap());
    let delay = Duration::from_millis(delay.parse().unwrap());
    runtime().block_on(async {
        let store = PgStore::connect(config).await.unwrap();
        let effects = Effects::new(Path::new(dir), worker, delay);
        let agent = agent(url, store.clone(), &effects);
        let Some(_lease) = store.lease(session, worker, ttl).await.unwrap() else {
            return ExitCode::from(4);
        };
        let outcome = match agent.load(session).await {
            Ok(mut loaded) => agent.resume(&mut loaded).await,
            Err(_) => {
                let mut fresh = agent.session();
                fresh.set_id(session.as_str()).unwrap();
                agent.send(&mut fresh, task.as_str()).await
            }
        };
        match outcome {
            Ok(outcome) if outcome.stop == StopReason::Answered => ExitCode::SUCCESS,
            Err(error) if PgError::find(&error).is_some_and(PgError::is_lease_lost) => {
                println!("refused: {error}: {}", PgError::find(&error).unwrap());
                ExitCode::from(3)
            }
            other => {
                eprintln!("{other:?}");
                ExitCode::FAILURE
            }
        }
    })
}

/// The database stopped by a tool in the middle of a run: the save after
/// the call fails with a typed error; once it is back, the same store
/// reconnects, the session loads with everything recorded before, and the
/// run finishes with no call run twice.
fn restarted() {
    const STEPS: usize = 5;
    let postgres = Arc::new(Postgres::start().unwrap());
    let server = model_server();
    let dir = scratch("restarted");
    let mut effects = Effects::new(&dir, "w1", Duration::ZERO);
    let stopper = Arc::clone(&postgres);
    effects.hook = Some(Arc::new(move |step| {
        if step == 2 {
            stopper.stop().unwrap();
        }
    }));
    runtime().block_on(async {
        let store = PgStore::connect(&postgres.config())
            .await
            .unwrap()
            .with_timeout(Duration::from_secs(10));
        let agent = agent(&server.base_url(), store.clone(), &effects);
        let lease = store
            .lease("restart", "w1", Duration::from_secs(60))
            .await
            .unwrap()
            .unwrap();
        let mut session = agent.session();
        session.set_id("restart").unwrap();
        let error = agent
            .send(&mut session, format!("run restart {STEPS}"))
            .await
            .unwrap_err();
        let pg = PgError::find(&error).expect("a PgError in the chain");
        assert!(pg.is_unavailable(), "{pg:?}");
        // Loading fails the same way while it is down.
        let error = agent.load("restart").await.unwrap_err();
        assert!(
            PgError::find(&error).is_some_and(PgError::is_unavailable),
            "{error:?}"
        );

        postgres.start_again().unwrap();
        let mut loaded = agent.load("restart").await.unwrap();
        // Everything recorded before the stop is there: the first two
        // steps' results, and the third call as started.
        assert_eq!(answered(&loaded), ids("restart", 2));
        assert!(matches!(
            loaded.calls()[0].status,
            CallStatus::MayHaveRun { .. }
        ));
        let outcome = agent.resume(&mut loaded).await.unwrap();
        assert_eq!(outcome.stop, StopReason::Answered);
        assert!(lease.is_held());
        let saved = store.load("restart").await.unwrap().unwrap();
        assert_eq!(answered(&saved), ids("restart", STEPS));
    });
    assert_ran_once(&effects, &["restart".to_owned()], STEPS);
    let _ = fs::remove_dir_all(&dir);
}

fn newer_forms() {
    let postgres = Postgres::start().unwrap();
    runtime().block_on(async {
        let store = PgStore::connect(&postgres.config()).await.unwrap();
        let (client, connection) = toolkit_postgres::tokio_postgres::connect(
            &postgres.config(),
            toolkit_postgres::tokio_postgres::NoTls,
        )
        .await
        .unwrap();
        tokio::spawn(connection);

        // A snapshot of a newer format.
        client
            .execute(
                "INSERT INTO toolkit_sessions (id, format, snapshot, state) VALUES ('f2', 2, '{}', 'running')",
                &[],
            )
            .await
            .unwrap();
        let error = store.load("f2").await.unwrap_err();
        let pg = PgError::find(&error).unwrap();
        assert!(matches!(pg, PgError::Format { .. }), "{pg:?}");
        assert!(pg.to_string().contains("snapshot format 2"), "{pg}");

        // Journal records this version does not read.
        client
            .batch_execute(
                "INSERT INTO toolkit_sessions (id, snapshot, state) VALUES ('j', '{}', 'running');
                 INSERT INTO toolkit_session_records VALUES ('j', 1, '{}')",
            )
            .await
            .unwrap();
        let error = store.load("j").await.unwrap_err();
        assert!(matches!(PgError::find(&error), Some(PgError::Format { .. })), "{error:?}");

        // A session of a newer JSON form: the session's own error.
        let effects = Effects::new(&std::env::temp_dir(), "w", Duration::ZERO);
        let mut session = agent("http://127.0.0.1:9", store.clone(), &effects).session();
        session.set_id("v99").unwrap();
        let json = session.to_json().unwrap();
        let json = json
            .strip_prefix(r#"{"version":1,"#)
            .map(|rest| format!(r#"{{"version":99,{rest}"#))
            .expect("the session's version comes first");
        client
            .execute(
                "INSERT INTO toolkit_sessions (id, snapshot, state) VALUES ('v99', $1, 'running')",
                &[&json],
            )
            .await
            .unwrap();
        let error = store.load("v99").await.unwrap_err();
        assert!(
            matches!(error, StoreError::Session(toolkit_agent::SessionError::Version(99))),
            "{error:?}"
        );

        // Tables of a newer schema: a new store refuses them.
        client
            .execute("INSERT INTO toolkit_schema (version) VALUES (2)", &[])
            .await
            .unwrap();
        let error = PgStore::connect(&postgres.config()).await.unwrap_err();
        assert!(
            matches!(error, PgError::Schema { found: 2, supported: 1 }),
            "{error:?}"
        );
        assert!(error.to_string().contains("upgrade"), "{error}");
    });
}

/// Counts the saves a store makes, passing them on.
struct Counted {
    store: PgStore,
    saves: AtomicUsize,
    spent: Mutex<Duration>,
}

/// The store an agent is given: the counter shared with the test.
struct CountedStore(Arc<Counted>);

impl SessionStore for CountedStore {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let started = Instant::now();
            let saved = self.0.store.save(session).await;
            self.0.saves.fetch_add(1, Ordering::SeqCst);
            *self.0.spent.lock().unwrap() += started.elapsed();
            saved
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        self.0.store.load(id)
    }
}

/// A TCP relay to the server that counts round trips: each time the
/// client speaks after the server did (or first), one more.
struct Relay {
    port: u16,
    exchanges: Arc<AtomicUsize>,
}

impl Relay {
    fn start(server: u16) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let exchanges = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&exchanges);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(upstream) = std::net::TcpStream::connect(("127.0.0.1", server)) else {
                    return;
                };
                // Who spoke last on this connection: the client (true) or
                // the server.
                let client_spoke = Arc::new(AtomicBool::new(false));
                let pipe = |mut from: std::net::TcpStream,
                            mut to: std::net::TcpStream,
                            is_client: bool| {
                    let client_spoke = Arc::clone(&client_spoke);
                    let counted = Arc::clone(&counted);
                    std::thread::spawn(move || {
                        let mut buffer = vec![0; 1 << 16];
                        loop {
                            let read = match std::io::Read::read(&mut from, &mut buffer) {
                                Ok(0) | Err(_) => break,
                                Ok(read) => read,
                            };
                            let before = client_spoke.swap(is_client, Ordering::SeqCst);
                            if is_client && !before {
                                counted.fetch_add(1, Ordering::SeqCst);
                            }
                            if to.write_all(&buffer[..read]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(std::net::Shutdown::Both);
                    });
                };
                pipe(
                    client.try_clone().unwrap(),
                    upstream.try_clone().unwrap(),
                    true,
                );
                pipe(upstream, client, false);
            }
        });
        Self { port, exchanges }
    }

    fn exchanges(&self) -> usize {
        self.exchanges.load(Ordering::SeqCst)
    }
}

/// A 200-step run with 2 KB results, under a lease: each save is one
/// round trip (counted by a relay between the store and the server) and
/// one transaction (counted by the transaction ids the database handed
/// out), and loading the session back is timed.
fn step_cost() {
    const STEPS: usize = 200;
    let postgres = Postgres::start().unwrap();
    let server = model_server();
    let dir = scratch("step-cost");
    let relay = Relay::start(postgres.port());
    let relayed = format!(
        "host=127.0.0.1 port={} user=postgres dbname=postgres",
        relay.port
    );
    runtime().block_on(async {
        let store = PgStore::connect(&relayed).await.unwrap();
        let counted = Arc::new(Counted {
            store: store.clone(),
            saves: AtomicUsize::new(0),
            spent: Mutex::new(Duration::ZERO),
        });
        let effects = Effects::new(&dir, "w1", Duration::ZERO);
        let agent = agent(&server.base_url(), CountedStore(Arc::clone(&counted)), &effects);
        let (client, connection) = toolkit_postgres::tokio_postgres::connect(
            &postgres.config(),
            toolkit_postgres::tokio_postgres::NoTls,
        )
        .await
        .unwrap();
        tokio::spawn(connection);
        let next_xid = || async {
            let row = client
                .query_one("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint", &[])
                .await
                .unwrap();
            row.get::<_, i64>(0)
        };
        // A lease renewed less often than the run lasts: its writes are not
        // the saves'.
        let lease = store
            .lease("long", "w1", Duration::from_secs(600))
            .await
            .unwrap()
            .unwrap();
        let before = next_xid().await;
        let exchanged = relay.exchanges();
        let mut session = agent.session();
        session.set_id("long").unwrap();
        let started = Instant::now();
        let outcome = agent
            .send(&mut session, format!("run long {STEPS} 2000"))
            .await
            .unwrap();
        let run = started.elapsed();
        assert_eq!(outcome.stop, StopReason::Answered);
        let round_trips = relay.exchanges() - exchanged;
        let transactions = next_xid().await - before;
        let saves = counted.saves.load(Ordering::SeqCst);
        println!(
            "{STEPS} steps: {saves} saves, {round_trips} round trips, {transactions} write transactions, \
             save time {:?} of {run:?}",
            *counted.spent.lock().unwrap()
        );
        assert_eq!(transactions as usize, saves, "one transaction per save");
        assert_eq!(round_trips, saves, "one round trip per save");
        let mut loads = Vec::new();
        for _ in 0..7 {
            let started = Instant::now();
            let loaded = store.load("long").await.unwrap().unwrap();
            loads.push(started.elapsed());
            assert_eq!(answered(&loaded).len(), STEPS);
        }
        loads.sort();
        println!(
            "load of a {STEPS}-step session ({} bytes): median {:?}",
            session.to_json().unwrap().len(),
            loads[loads.len() / 2]
        );
        lease.release().await.unwrap();
    });
    let _ = fs::remove_dir_all(&dir);
}
