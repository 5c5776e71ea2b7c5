//! The file store's journal: after every save of real agent runs (show-once
//! results, observations, output budgets, approvals and edits, typed
//! answers, long outputs past several compactions), the session a new
//! process loads from the snapshot and the journal is the session in
//! memory, by its JSON form. And what a crash or another version leaves
//! in the folder: a torn record, a store format not yet known, a session
//! saved before the journal.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use serde_json::json;
use toolkit_agent::{
    Agent, Decision, FileStore, Observation, Session, SessionChanges, SessionStore, StopReason,
    StoreError,
};
use toolkit_core::{OutputBudget, Registry, ToolResult, tool, tools};
use toolkit_tests::http::TestServer;

mod support;
use support::answers::City;
use support::chat::{chat_calls, chat_text, model};
use support::tools::{delete_file, echo, send_message};

/// Lists the products: long, shown once, remembered in a line.
#[tool]
fn list_products(
    /** The page. */
    page: u32,
) -> ToolResult {
    ToolResult::text(format!("page {page}: {}", "product, ".repeat(400)))
        .with_show_once()
        .with_memory(format!("page {page} listed"))
}

/// Reads a long page: about 50 KB, as a page map.
#[tool]
fn read_page(
    /** The page. */
    page: u32,
) -> String {
    format!(
        "page {page}: {}",
        "Some readable text of the page. ".repeat(1600)
    )
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![
            echo,
            delete_file,
            send_message,
            list_products,
            read_page
        ])
        .build()
        .unwrap()
}

fn folder(name: &str) -> PathBuf {
    let folder =
        std::env::temp_dir().join(format!("toolkit-journal-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    folder
}

/// The file store, checked after every save: a store opened afresh on the
/// folder (as another process would) loads the session as it is in
/// memory.
struct Checked {
    store: FileStore,
    saves: AtomicUsize,
    appended: AtomicUsize,
}

impl Checked {
    fn new(folder: &Path) -> Self {
        Self {
            store: FileStore::new(folder).unwrap(),
            saves: AtomicUsize::new(0),
            appended: AtomicUsize::new(0),
        }
    }

    async fn check(&self, session: &Session, journal_before: u64) {
        let folder = self.store.folder();
        let journal_after = journal_len(folder, session.id());
        if journal_after > journal_before {
            self.appended.fetch_add(1, Ordering::SeqCst);
        }
        self.saves.fetch_add(1, Ordering::SeqCst);
        let fresh = FileStore::new(folder).unwrap();
        let loaded = fresh
            .load(session.id())
            .await
            .unwrap()
            .expect("the session is stored");
        // What loading does to a run cut short (a call started is one that
        // may have run) is done to the session in memory too.
        let expected = Session::from_json(&session.to_json().unwrap())
            .unwrap()
            .to_json()
            .unwrap();
        assert_eq!(
            loaded.to_json().unwrap(),
            expected,
            "save {} of `{}` loads back otherwise",
            self.saves.load(Ordering::SeqCst),
            session.id()
        );
    }
}

fn journal_len(folder: &Path, id: &str) -> u64 {
    std::fs::metadata(folder.join(format!("{id}.log"))).map_or(0, |m| m.len())
}

impl SessionStore for Checked {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let before = journal_len(self.store.folder(), session.id());
            self.store.save(session).await?;
            self.check(session, before).await;
            Ok(())
        })
    }

    fn save_changes<'a>(
        &'a self,
        changes: &'a SessionChanges<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let session = changes.session();
            let before = journal_len(self.store.folder(), session.id());
            self.store.save_changes(changes).await?;
            self.check(session, before).await;
            Ok(())
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        self.store.load(id)
    }
}

#[tokio::test]
async fn show_once_results_observations_and_saved_outputs_load_back_after_every_save() {
    let folder = folder("show-once");
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "list_products", json!({"page": 1}))]),
        chat_calls(&[
            ("c2", "list_products", json!({"page": 2})),
            ("c3", "echo", json!({"text": "two"})),
        ]),
        chat_calls(&[("c4", "read_page", json!({"page": 3}))]),
        chat_text("listed"),
        chat_calls(&[("c5", "list_products", json!({"page": 4}))]),
        chat_text("again"),
    ]);
    let store = std::sync::Arc::new(Checked::new(&folder));
    let agent = Agent::builder(model(&server), registry())
        .store(Shared(std::sync::Arc::clone(&store)))
        .output_budget(OutputBudget::new(2000, folder.join("outputs")))
        .observe(|step| async move {
            Some(
                Observation::new(format!("the page at step {step}"))
                    .later(format!("(step {step})")),
            )
        })
        .build()
        .unwrap();
    let mut session = agent.session();
    session.set_id("show-once").unwrap();
    let outcome = agent.send(&mut session, "List them.").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Answered);
    // The next turn, from a session loaded in another process.
    let mut session = agent.load("show-once").await.unwrap();
    let outcome = agent.send(&mut session, "Once more.").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Answered);
    let saves = store.saves.load(Ordering::SeqCst);
    let appended = store.appended.load(Ordering::SeqCst);
    println!("{saves} saves, {appended} appended");
    assert!(saves >= 8, "{saves} saves");
    // After the first of each process, every save appended.
    assert!(appended >= saves - 2, "{appended} of {saves} appended");
    let _ = std::fs::remove_dir_all(&folder);
}

/// A store shared with the test, to read its counts after the run.
struct Shared(std::sync::Arc<Checked>);

impl SessionStore for Shared {
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

#[tokio::test]
async fn approvals_edits_denials_and_typed_answers_load_back_after_every_save() {
    let folder = folder("approvals");
    let server = TestServer::replying(vec![
        chat_calls(&[
            ("c1", "echo", json!({"text": "first"})),
            ("c2", "send_message", json!({"text": "hi"})),
            ("c3", "delete_file", json!({"path": "/tmp/x"})),
        ]),
        chat_text(r#"{"name": "Tokyo"}"#),
        chat_text(r#"{"name": "Tokyo", "population": 37400000}"#),
    ]);
    let store = std::sync::Arc::new(Checked::new(&folder));
    let agent = Agent::builder(model(&server), registry())
        .store(Shared(std::sync::Arc::clone(&store)))
        .build()
        .unwrap();
    let mut session = agent.session();
    session.set_id("approvals").unwrap();
    let paused = agent.send(&mut session, "go").await.unwrap();
    assert_eq!(paused.stop, StopReason::Paused);

    // Decided in another process, one call at a time.
    let mut session = agent.load("approvals").await.unwrap();
    session
        .decide(
            "c2",
            Decision::Edit(toolkit_core::ToolCall::new(
                "x",
                "send_message",
                json!({"text": "hello"}),
            )),
        )
        .unwrap();
    let again = agent.resume(&mut session).await.unwrap();
    assert_eq!(again.stop, StopReason::Paused, "c3 still waits");
    session.decide("c3", Decision::Deny("no".into())).unwrap();
    // The run ends typed: the first answer does not fit and goes back.
    let session_two = &mut session;
    let typed = agent.resume(session_two).answer::<City>().await.unwrap();
    assert_eq!(typed.value.map(|city| city.population), Some(37_400_000));
    let saves = store.saves.load(Ordering::SeqCst);
    assert!(saves >= 5, "{saves} saves");
    assert!(store.appended.load(Ordering::SeqCst) >= saves - 2);
    let _ = std::fs::remove_dir_all(&folder);
}

#[tokio::test]
async fn long_outputs_over_many_steps_compact_and_load_back_after_every_save() {
    let folder = folder("long");
    const STEPS: usize = 40;
    let mut replies: Vec<_> = (0..STEPS)
        .map(|step| chat_calls(&[(&format!("c{step}"), "read_page", json!({"page": step}))]))
        .collect();
    replies.push(chat_text("read"));
    let server = TestServer::replying(replies);
    let store = std::sync::Arc::new(Checked::new(&folder));
    let agent = Agent::builder(model(&server), registry())
        .store(Shared(std::sync::Arc::clone(&store)))
        .limits(toolkit_agent::Limits::default().max_steps(STEPS + 1))
        .build()
        .unwrap();
    let mut session = agent.session();
    session.set_id("long").unwrap();
    let outcome = agent.send(&mut session, "Read them.").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Answered);
    let saves = store.saves.load(Ordering::SeqCst);
    let appended = store.appended.load(Ordering::SeqCst);
    println!("{saves} saves, {appended} appended");
    // About 2 MB stored: the journal was folded into a snapshot several
    // times, and most saves appended.
    assert!(saves - appended >= 3, "{saves} saves, {appended} appended");
    assert!(appended * 2 > saves, "{saves} saves, {appended} appended");
    let _ = std::fs::remove_dir_all(&folder);
}

/// A session a run saved a few times: its files in `folder`.
async fn saved_session(folder: &Path, id: &str) -> Session {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "echo", json!({"text": "one"}))]),
        chat_calls(&[("c2", "echo", json!({"text": "two"}))]),
        chat_text("done"),
    ]);
    let agent = Agent::builder(model(&server), registry())
        .store(FileStore::new(folder).unwrap())
        .build()
        .unwrap();
    let mut session = agent.session();
    session.set_id(id).unwrap();
    agent.send(&mut session, "go").await.unwrap();
    session
}

#[tokio::test]
async fn a_torn_record_is_ignored_and_cut_off_at_the_next_save() {
    let folder = folder("torn");
    let session = saved_session(&folder, "torn").await;
    let journal = folder.join("torn.log");
    let whole = std::fs::read(&journal).unwrap();
    assert!(!whole.is_empty(), "the run's saves were appended");
    // A crash in the middle of an append: half a record after the last.
    let mut torn = whole.clone();
    torn.extend_from_slice(&whole[..whole.len().min(40)]);
    std::fs::write(&journal, &torn).unwrap();
    let store = FileStore::new(&folder).unwrap();
    let mut loaded = store.load("torn").await.unwrap().unwrap();
    assert_eq!(loaded.to_json().unwrap(), session.to_json().unwrap());
    // A flipped byte in the last record: that record is not read, the
    // ones before are.
    let mut flipped = whole.clone();
    let last = flipped.len() - 2;
    flipped[last] ^= 0x20;
    std::fs::write(&journal, &flipped).unwrap();
    let before_last = FileStore::new(&folder)
        .unwrap()
        .load("torn")
        .await
        .unwrap()
        .unwrap();
    assert_ne!(before_last.to_json().unwrap(), session.to_json().unwrap());
    // The next save of the session loaded before the damage writes over
    // the torn tail.
    std::fs::write(&journal, &torn).unwrap();
    loaded.conversation_mut().push_user("one more");
    let changes = loaded.changes();
    assert!(changes.base().is_some());
    store.save_changes(&changes).await.unwrap();
    let after = std::fs::read(&journal).unwrap();
    assert!(after.len() > whole.len() && after.len() < torn.len() + 4096);
    let reloaded = FileStore::new(&folder)
        .unwrap()
        .load("torn")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reloaded.to_json().unwrap(), loaded.to_json().unwrap());
    let _ = std::fs::remove_dir_all(&folder);
}

#[tokio::test]
async fn a_later_store_format_is_refused_and_an_earlier_session_migrated() {
    let folder = folder("formats");
    let session = saved_session(&folder, "later").await;
    let snapshot = folder.join("later.json");
    let text = std::fs::read_to_string(&snapshot).unwrap();
    assert!(text.starts_with("{\"store_format\":1,"), "{}", &text[..60]);
    std::fs::write(
        &snapshot,
        text.replacen("\"store_format\":1", "\"store_format\":7", 1),
    )
    .unwrap();
    let store = FileStore::new(&folder).unwrap();
    let error = store.load("later").await.unwrap_err();
    assert!(
        matches!(&error, StoreError::Format { found: 7, .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("store format 7") && message.contains("format 1"),
        "{message}"
    );

    // A session saved before the journal: the session's JSON form alone.
    let mut old = session.clone();
    old.set_id("earlier").unwrap();
    std::fs::write(folder.join("earlier.json"), old.to_json().unwrap()).unwrap();
    let mut loaded = store.load("earlier").await.unwrap().unwrap();
    assert_eq!(loaded.to_json().unwrap(), old.to_json().unwrap());
    // Its next save writes it in the current format.
    for text in ["first", "second"] {
        loaded.conversation_mut().push_user(text);
        let changes = loaded.changes();
        assert!(changes.base().is_none(), "nothing to append to");
        store.save_changes(&changes).await.unwrap();
        let reloaded = FileStore::new(&folder)
            .unwrap()
            .load("earlier")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(reloaded.to_json().unwrap(), loaded.to_json().unwrap());
    }
    let migrated = std::fs::read_to_string(folder.join("earlier.json")).unwrap();
    assert!(migrated.starts_with("{\"store_format\":1,"));
    let _ = std::fs::remove_dir_all(&folder);
}

/// A host's store with the two methods of old: the agent saves whole
/// sessions through it, as before.
struct Whole(FileStore);

impl SessionStore for Whole {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        self.0.save(session)
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        self.0.load(id)
    }
}

#[tokio::test]
async fn a_store_with_only_save_saves_whole_sessions() {
    let folder = folder("whole");
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "echo", json!({"text": "one"}))]),
        chat_text("done"),
    ]);
    let agent = Agent::builder(model(&server), registry())
        .store(Whole(FileStore::new(&folder).unwrap()))
        .build()
        .unwrap();
    let mut session = agent.session();
    session.set_id("whole").unwrap();
    agent.send(&mut session, "go").await.unwrap();
    assert_eq!(journal_len(&folder, "whole"), 0, "nothing appended");
    let loaded = agent.load("whole").await.unwrap();
    assert_eq!(loaded.to_json().unwrap(), session.to_json().unwrap());
    let _ = std::fs::remove_dir_all(&folder);
}
