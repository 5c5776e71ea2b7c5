//! Every public error of the agent, produced for real where it can be,
//! walked as a host's reporter (anyhow's `{:#}`) walks it: no message
//! repeats its source's, no sentence is said twice along a chain.

use std::error::Error;
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolkit_agent::{
    Agent, AnswerSchema, BuildError, Decision, FileStore, HttpModel, ModelError, RetryPolicy,
    RunError, STALE_TEMPORARY_AGE, Session, SessionError, SessionStateError, SessionStore,
    StoreError, TimeoutLimit,
};
use toolkit_core::{Registry, tools};
use toolkit_tests::error_chain::{assert_no_repeats, messages};
use toolkit_tests::http::{Reply, Route, TestServer};

mod support;
use support::tools::{send_message, tag};

use support::answers::{City, no_city};

fn model(base_url: &str) -> HttpModel {
    HttpModel::openai_chat("m")
        .base_url(base_url)
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap()
}

fn empty() -> Registry {
    Registry::builder().build().unwrap()
}

/// A Chat Completions answer with `text`, ended for `finish_reason`.
fn answer(text: &str, finish_reason: &str) -> Reply {
    Reply::json(
        &json!({"choices": [{"index": 0, "finish_reason": finish_reason,
        "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3}}),
    )
}

/// A folder of its own under the system's temporary folder.
fn folder(name: &str) -> std::path::PathBuf {
    let folder = std::env::temp_dir().join(format!(
        "toolkit-error-chains-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&folder);
    folder
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn model_errors() {
    // A response that is not JSON.
    let server = TestServer::replying([Reply::raw(
        200,
        [("Content-Type", "application/json")],
        "{not json",
    )]);
    let error = Agent::new(model(&server.base_url()), empty())
        .run("Hello")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, RunError::Model(ModelError::Read(_))),
        "{error:?}"
    );
    assert_eq!(messages(&error).len(), 3, "{:?}", messages(&error));
    assert_no_repeats("RunError::Model(ModelError::Read)", &error);

    // An error status.
    let server = TestServer::replying([Reply::status(500, r#"{"error": "overloaded"}"#)]);
    let error = Agent::new(model(&server.base_url()), empty())
        .run("Hello")
        .await
        .unwrap_err();
    assert!(
        matches!(
            &error,
            RunError::Model(ModelError::Status { status: 500, .. })
        ),
        "{error:?}"
    );
    assert_no_repeats("ModelError::Status", &error);

    // A refused connection.
    let error = Agent::new(
        model(&format!("http://127.0.0.1:{}", closed_port())),
        empty(),
    )
    .run("Hello")
    .await
    .unwrap_err();
    assert!(
        matches!(&error, RunError::Model(ModelError::Transport { .. })),
        "{error:?}"
    );
    assert_no_repeats("ModelError::Transport", &error);

    // A misconfigured endpoint.
    let error = HttpModel::openai_chat("m")
        .base_url("ftp://example.com")
        .no_key()
        .build()
        .unwrap_err();
    assert!(matches!(&error, ModelError::Config(_)), "{error:?}");
    assert_no_repeats("ModelError::Config", &error);
}

#[tokio::test]
async fn a_slow_model_is_a_timeout_naming_its_limit() {
    let server = TestServer::start([(
        "/chat/completions",
        Route::handler(|_| {
            std::thread::sleep(Duration::from_millis(1500));
            answer("late", "stop")
        }),
    )]);
    let slow = HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let error = Agent::new(slow, empty()).run("Hello").await.unwrap_err();
    match &error {
        RunError::Model(ModelError::Timeout {
            limit: TimeoutLimit::Request(limit),
            attempts: 1,
        }) => assert_eq!(*limit, Duration::from_millis(300)),
        other => panic!("{other:?}"),
    }
    let text = messages(&error).join(": ");
    assert!(text.contains("request timeout (300ms)"), "{text}");
    assert!(!text.contains("could not be reached"), "{text}");
    assert_no_repeats("ModelError::Timeout", &error);
}

#[tokio::test]
async fn store_and_session_errors() {
    // A stored file that is not a session.
    let folder = folder("broken");
    let store = FileStore::new(&folder).unwrap();
    std::fs::write(folder.join("broken.json"), "{not a session").unwrap();
    let error = store.load("broken").await.unwrap_err();
    assert!(
        matches!(&error, StoreError::Session(SessionError::Json(_))),
        "{error:?}"
    );
    assert_no_repeats("StoreError::Session(SessionError::Json)", &error);

    // A session saved under another id.
    let mut session = Agent::new(model("http://127.0.0.1:9"), empty()).session();
    session.set_id("first").unwrap();
    store.save(&session).await.unwrap();
    std::fs::copy(folder.join("first.json"), folder.join("second.json")).unwrap();
    let error = store.load("second").await.unwrap_err();
    assert!(
        matches!(&error, StoreError::Session(SessionError::Misplaced { .. })),
        "{error:?}"
    );
    assert_no_repeats("SessionError::Misplaced", &error);

    // An id no store can hold.
    let error = store.load("../etc/passwd").await.unwrap_err();
    assert_no_repeats("SessionError::Id", &error);
    let error = session.set_id("no spaces").unwrap_err();
    assert_no_repeats("SessionError::Id", &error);

    // A session of a later form.
    let mut later: serde_json::Value = serde_json::from_str(&session.to_json().unwrap()).unwrap();
    later["version"] = json!(9999);
    let error = Session::from_json(&later.to_string()).unwrap_err();
    assert!(matches!(&error, SessionError::Version(_)), "{error:?}");
    assert_no_repeats("SessionError::Version", &error);

    // A folder gone: the save's file cannot be written, and the run says so.
    std::fs::remove_dir_all(&folder).unwrap();
    let server = TestServer::replying([answer("Hello.", "stop")]);
    let agent = Agent::builder(model(&server.base_url()), empty())
        .store(store)
        .build()
        .unwrap();
    let error = agent.run("Hello").await.unwrap_err();
    assert!(
        matches!(&error, RunError::Store(StoreError::Io { .. })),
        "{error:?}"
    );
    assert_eq!(messages(&error).len(), 3, "{:?}", messages(&error));
    assert_no_repeats("RunError::Store(StoreError::Io)", &error);

    // A host's own store.
    let error = RunError::Store(StoreError::Other(Box::new(std::io::Error::other(
        "the database is read-only",
    ))));
    assert_no_repeats("StoreError::Other", &error);
}

#[tokio::test]
async fn session_state_errors_are_typed() {
    let agent = Agent::new(model("http://127.0.0.1:9"), empty());
    let error = agent.load("anything").await.unwrap_err();
    assert!(
        matches!(&error, RunError::Session(SessionStateError::NoStore)),
        "{error:?}"
    );
    assert_no_repeats("SessionStateError::NoStore", &error);

    let store = FileStore::new(folder("empty")).unwrap();
    let agent = Agent::builder(model("http://127.0.0.1:9"), empty())
        .store(store)
        .build()
        .unwrap();
    let error = agent.load("nobody").await.unwrap_err();
    match &error {
        RunError::Session(SessionStateError::NotFound(id)) => assert_eq!(id, "nobody"),
        other => panic!("{other:?}"),
    }
    assert_no_repeats("SessionStateError::NotFound", &error);

    let mut session = agent.session();
    let error = agent.resume(&mut session).await.unwrap_err();
    assert!(
        matches!(&error, RunError::Session(SessionStateError::Ended)),
        "{error:?}"
    );
    assert_no_repeats("SessionStateError::Ended", &error);
}

#[tokio::test]
async fn errors_of_calls_tools_and_rules() {
    // A message sent while a call waits for a decision.
    let server = TestServer::replying([Reply::json(&json!({"choices": [{"index": 0,
        "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "send_message",
        "arguments": "{\"text\": \"hi\"}"}}]}}]}))]);
    let registry = Registry::builder()
        .tools(tools![send_message])
        .build()
        .unwrap();
    let agent = Agent::new(model(&server.base_url()), registry);
    let mut session = agent.session();
    let outcome = agent.send(&mut session, "Say hi").await.unwrap();
    assert!(outcome.is_paused());
    let error = agent.send(&mut session, "And more").await.unwrap_err();
    assert!(
        matches!(&error, RunError::Session(SessionStateError::Unsettled)),
        "{error:?}"
    );
    assert_no_repeats("SessionStateError::Unsettled", &error);

    // Decisions that cannot be recorded.
    for error in [
        session.decide("nope", Decision::Approve).unwrap_err(),
        session.decide("c1", Decision::Defer).unwrap_err(),
    ] {
        assert_no_repeats("DecideError", &error);
    }

    // Tools a strict provider refuses.
    let maps = Registry::builder().tools(tools![tag]).build().unwrap();
    let agent = Agent::builder(model("http://127.0.0.1:9"), maps)
        .strict(true)
        .build()
        .unwrap();
    let error = agent.run("go").await.unwrap_err();
    assert!(matches!(&error, RunError::Tools(_)), "{error:?}");
    assert_no_repeats("RunError::Tools", &error);

    // A rule naming no tool of the registry.
    let error: BuildError = Agent::builder(model("http://127.0.0.1:9"), empty())
        .needs_approval("nothing")
        .build()
        .unwrap_err();
    assert_no_repeats("BuildError", &error);
}

#[tokio::test]
async fn answers_that_do_not_fit_are_a_list_of_problems() {
    let schema = AnswerSchema::of::<City>().unwrap();
    let error = schema
        .read::<City>(r#"{"name": 5, "population": "many"}"#)
        .unwrap_err();
    let places: Vec<&str> = error
        .problems()
        .iter()
        .map(|p| p.pointer.as_str())
        .collect();
    assert_eq!(places, ["/name", "/population"]);
    assert!(
        error.prompt().contains("Answer again"),
        "{}",
        error.prompt()
    );
    assert!(!error.to_string().contains("Answer again"), "{error}");
    assert_no_repeats("AnswerError", &error);

    let server = TestServer::replying([
        answer(r#"{"name": "Tokyo"}"#, "stop"),
        answer(r#"{"name": 3, "population": 1}"#, "stop"),
    ]);
    let agent = Agent::new(model(&server.base_url()), empty());
    let error = no_city(&agent).await;
    match &error {
        RunError::Output {
            problems, answer, ..
        } => {
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert_eq!(problems[0].pointer, "/name");
            assert!(problems[0].message.contains("string"), "{problems:?}");
            assert_eq!(answer, r#"{"name": 3, "population": 1}"#);
        }
        other => panic!("{other:?}"),
    }
    // The first answer went back to the model with its problems.
    let second = server.requests()[1].json();
    let retry = second["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(
        retry.contains("population") && retry.contains("Answer again"),
        "{retry}"
    );
    assert_no_repeats("RunError::Output", &error);
}

#[tokio::test]
async fn a_typed_answer_cut_off_is_truncation_not_sent_back() {
    let server = TestServer::replying([
        answer(r#"{"name": "Tokyo", "popul"#, "length"),
        answer(r#"{"name": "Tokyo", "population": 1}"#, "stop"),
    ]);
    let agent = Agent::new(model(&server.base_url()), empty());
    let error = agent
        .run("The largest city?")
        .answer::<City>()
        .await
        .unwrap_err();
    match &error {
        RunError::Truncated {
            answer,
            finish_reason,
        } => {
            assert_eq!(answer, r#"{"name": "Tokyo", "popul"#);
            assert_eq!(finish_reason, "length");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests().len(), 1, "the cut answer was sent back");
    assert!(error.to_string().contains("cut off"), "{error}");
    assert_no_repeats("RunError::Truncated", &error);

    // An answer that fits although the limit was reached is kept.
    let server = TestServer::replying([answer(r#"{"name": "Tokyo", "population": 1}"#, "length")]);
    let agent = Agent::new(model(&server.base_url()), empty());
    let typed = agent
        .run("The largest city?")
        .answer::<City>()
        .await
        .unwrap();
    assert_eq!(typed.value.unwrap().population, 1);
}

#[tokio::test]
async fn a_type_without_usable_schema_is_its_own_error() {
    // A root that is not an object: providers want an object.
    let agent = Agent::new(model("http://127.0.0.1:9"), empty());
    let error = agent
        .run("A list?")
        .answer::<Vec<String>>()
        .await
        .unwrap_err();
    assert!(matches!(&error, RunError::AnswerSchema(_)), "{error:?}");
    assert!(error.source().is_some());
    assert_no_repeats("RunError::AnswerSchema", &error);
}

#[tokio::test]
async fn a_store_opened_removes_temporary_files_a_crash_left() {
    let folder = folder("stale");
    let store = FileStore::new(&folder).unwrap();
    let session = Agent::new(model("http://127.0.0.1:9"), empty()).session();
    store.save(&session).await.unwrap();
    // As a crash between writing and renaming leaves them: one old, one
    // being written now by another process.
    let stale = folder.join(format!(".{}.json.4242-0.tmp", session.id()));
    let fresh = folder.join(format!(".{}.json.4243-0.tmp", session.id()));
    std::fs::write(&stale, "{\"half\": ").unwrap();
    std::fs::write(&fresh, "{\"half\": ").unwrap();
    let old = SystemTime::now() - STALE_TEMPORARY_AGE - Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let reopened = FileStore::new(&folder).unwrap();
    assert!(!stale.exists(), "the stale temporary file is still there");
    assert!(
        fresh.exists(),
        "a file another writer may be writing was removed"
    );
    assert!(reopened.load(session.id()).await.unwrap().is_some());
    let _ = std::fs::remove_dir_all(&folder);
}
