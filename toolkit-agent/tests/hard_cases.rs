//! Runs at their edges: calls interrupted after the host edited them,
//! tools that appear while a run waits, typed runs whose answers do not
//! fit, stores that fail mid-turn, absurd token counts, secrets in errors,
//! session files. Each test states what the agent promises.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use toolkit_agent::{
    Agent, AgentBuilder, AnswerMode, CallStatus, Decision, Event, HttpModel, Limits, RetryPolicy,
    RunError, Session, SessionStore, StopReason, StoreError, ToolLimits,
};
use toolkit_core::{CallContext, Cancellation, Registry, ToolDef, tool, tools};
use toolkit_tests::http::{Reply, TestServer};

mod support;
use support::chat::{bodies, chat_calls, chat_text, model, tool_messages};

use support::tools::{echo, send_message};

use support::answers::City;

#[derive(Default, Clone)]
struct Mem(Arc<Mutex<HashMap<String, String>>>);

impl SessionStore for Mem {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let json = session.to_json().map_err(StoreError::Session)?;
            self.0.lock().unwrap().insert(session.id().to_owned(), json);
            Ok(())
        })
    }
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        Box::pin(async move {
            let json = self.0.lock().unwrap().get(id).cloned();
            json.map(|j| Session::from_json(&j))
                .transpose()
                .map_err(StoreError::Session)
        })
    }
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![echo, send_message])
        .build()
        .unwrap()
}

/// An agent over `registry()` that keeps its sessions in the store it
/// returns.
fn storing(server: &TestServer) -> (Agent<HttpModel>, Mem) {
    let store = Mem::default();
    let agent = Agent::builder(model(server), registry())
        .store(store.clone())
        .build()
        .unwrap();
    (agent, store)
}

// A typed run's schema and tool choice are the run's own: the stored
// session carries neither into the next, untyped, message.
#[tokio::test]
async fn a_typed_runs_schema_stays_out_of_the_stored_session() {
    let server = TestServer::replying(vec![
        chat_text(r#"{"name": "Tokyo", "population": 1}"#),
        chat_text("plain"),
    ]);
    let (agent, _) = storing(&server);
    let typed = agent.run("city?").answer::<City>().await.unwrap();
    assert!(typed.value.is_some());
    // Process B: load the session and send a plain message.
    let mut session = agent.load(&typed.outcome.session_id).await.unwrap();
    agent.send(&mut session, "thanks").await.unwrap();
    let second = &bodies(&server)[1];
    assert!(
        second.get("response_format").is_none(),
        "the typed run's schema was sent with an untyped message: {}",
        second["response_format"]
    );
}

#[tokio::test]
async fn a_typed_runs_answer_tool_stays_out_of_the_stored_session() {
    let server = TestServer::replying(vec![
        chat_calls(&[(
            "c1",
            "final_answer",
            json!({"name": "Osaka", "population": 2}),
        )]),
        chat_text("plain"),
    ]);
    let (agent, store) = storing(&server);
    let typed = agent
        .run("city?")
        .answer::<City>()
        .mode(AnswerMode::Tool)
        .await
        .unwrap();
    assert!(typed.value.is_some());
    let saved: Value =
        serde_json::from_str(&store.0.lock().unwrap()[&typed.outcome.session_id]).unwrap();
    let conv = &saved["conversation"];
    assert_eq!(
        conv["tool_choice"],
        json!("auto"),
        "stored tool_choice: {}; tools hold final_answer: {}",
        conv["tool_choice"],
        conv["tools"].to_string().contains("final_answer")
    );
}

/// A server like llama.cpp's, which enforces a response schema with a
/// grammar: with the schema in the request, its model could never call a
/// tool.
fn grammar_model(server: &TestServer) -> HttpModel {
    HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .tools_with_answer_schema(false)
        .build()
        .unwrap()
}

// A typed run on a model that cannot take tools and a schema together asks
// for its answer through the final-answer tool: no response schema is
// sent, the tools and final_answer are, and a call is required.
#[tokio::test]
async fn a_typed_run_on_a_grammar_server_answers_through_the_tool() {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "echo", json!({"text": "hi"}))]),
        chat_calls(&[(
            "c2",
            "final_answer",
            json!({"name": "Osaka", "population": 2}),
        )]),
    ]);
    let agent = Agent::builder(grammar_model(&server), registry())
        .build()
        .unwrap();
    let typed = agent.run("city?").answer::<City>().await.unwrap();
    assert_eq!(
        typed.value,
        Some(City {
            name: "Osaka".into(),
            population: 2
        })
    );
    let sent = bodies(&server);
    assert_eq!(sent.len(), 2);
    for body in &sent {
        assert!(body.get("response_format").is_none(), "{body}");
        let names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["function"]["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"final_answer"), "{names:?}");
        assert!(names.contains(&"echo"), "{names:?}");
        assert_eq!(body["tool_choice"], json!("required"), "{body}");
    }
    // The tool the model called first ran.
    assert_eq!(tool_messages(&sent[1]), ["hi"]);

    // The same model with no tools to call takes the schema: nothing is
    // lost to the grammar there.
    let server = TestServer::replying(vec![chat_text(r#"{"name": "Kyoto", "population": 3}"#)]);
    let agent = Agent::builder(grammar_model(&server), Registry::builder().build().unwrap())
        .build()
        .unwrap();
    let typed = agent.run("city?").answer::<City>().await.unwrap();
    assert_eq!(typed.value.map(|city| city.name).as_deref(), Some("Kyoto"));
    assert!(bodies(&server)[0].get("response_format").is_some());
}

// Asking such a model for the schema anyway fails before any request,
// saying why and what to write instead.
#[tokio::test]
async fn a_schema_answer_on_a_grammar_server_is_refused_with_the_reason() {
    let server = TestServer::replying(vec![chat_text("never sent")]);
    let agent = Agent::builder(grammar_model(&server), registry())
        .build()
        .unwrap();
    let error = agent
        .run("city?")
        .answer::<City>()
        .mode(AnswerMode::Schema)
        .await
        .unwrap_err();
    assert!(matches!(error, RunError::SchemaWithTools), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("cannot take tools and a response schema")
            && message.contains("AnswerMode::Tool"),
        "{message}"
    );
    assert!(server.requests().is_empty());

    // A model that takes both still gets the schema by default.
    let server = TestServer::replying(vec![chat_text(r#"{"name": "Nara", "population": 4}"#)]);
    let agent = Agent::builder(model(&server), registry()).build().unwrap();
    agent.run("city?").answer::<City>().await.unwrap();
    assert!(bodies(&server)[0].get("response_format").is_some());
}

// A call of a tool the registry does not have is answered at once: a
// tool that appears before the turn runs (a paused turn, an MCP list
// change) never runs a call no rule looked at.
static WIPED: AtomicUsize = AtomicUsize::new(0);

#[tokio::test]
async fn a_tool_added_while_a_run_waits_does_not_run_unapproved() {
    let server = TestServer::replying(vec![
        chat_calls(&[
            ("c1", "send_message", json!({"text": "hi"})),
            ("c2", "wipe_disk", json!({})),
        ]),
        chat_text("done"),
    ]);
    let registry = Arc::new(registry());
    let agent = Agent::builder(model(&server), Arc::clone(&registry))
        .approve_every_call()
        .build()
        .unwrap();
    let mut session = agent.session();
    let outcome = agent.send(&mut session, "go").await.unwrap();
    assert!(outcome.is_paused());
    let pending: Vec<_> = outcome.pending.iter().map(|p| p.call.id.clone()).collect();
    assert_eq!(pending, ["c1"], "c2 (unknown) was not held for approval");
    assert!(
        matches!(session.calls()[1].status, CallStatus::Finished { .. }),
        "a call of a tool the registry lacks is answered at once"
    );
    // The MCP server's list changes (or process B has the server up).
    registry
        .add(
            ToolDef::builder("wipe_disk")
                .description("Wipes the disk.")
                .needs_approval(true)
                .destructive(true)
                .handler(|_: Value, _: CallContext| async {
                    WIPED.fetch_add(1, Ordering::SeqCst);
                    "wiped"
                }),
        )
        .unwrap();
    session.decide("c1", Decision::Approve).unwrap();
    agent.resume(&mut session).await.unwrap();
    assert_eq!(
        WIPED.load(Ordering::SeqCst),
        0,
        "wipe_disk (needs_approval, destructive, approve_every_call) ran without any decision"
    );
}

// Cancelled while a decision is awaited: the session says its run has
// not ended, and the outcome lists the waiting calls.
#[tokio::test]
async fn a_run_cancelled_during_a_decision_has_not_ended() {
    let server = TestServer::replying(vec![chat_calls(&[(
        "c1",
        "send_message",
        json!({"text": "hi"}),
    )])]);
    let agent = Agent::builder(model(&server), registry())
        .approval(|_| std::future::pending())
        .build()
        .unwrap();
    let cancellation = Cancellation::new();
    let cancel = cancellation.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
    });
    let mut session = agent.session();
    let outcome = agent
        .send(&mut session, "go")
        .cancellation(&cancellation)
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::Cancelled);
    println!(
        "is_ended={} pending={} outcome.pending={}",
        session.is_ended(),
        session.pending().len(),
        outcome.pending.len()
    );
    if session.is_ended() {
        let sent = agent.send(&mut session, "next").await;
        assert!(
            sent.is_ok(),
            "is_ended() is true but send fails: {}",
            sent.unwrap_err()
        );
    }
}

// After a model error, the next message may be sent.
#[tokio::test]
async fn a_message_may_follow_a_model_error() {
    let server = TestServer::replying(vec![
        Reply::status(400, r#"{"error": "bad"}"#),
        chat_text("ok"),
    ]);
    let agent = Agent::new(model(&server), registry());
    let mut session = agent.session();
    let error = agent.send(&mut session, "first").await.unwrap_err();
    assert!(matches!(error, RunError::Model(_)));
    let next = agent.send(&mut session, "second").await;
    assert!(
        next.is_ok(),
        "send after a model error: {}",
        next.unwrap_err()
    );
}

// Tool mode: an answer that fits the schema but not the type goes back
// to the model, and retries(0) means no retry.
fn not_bad<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    if s == "bad" {
        return Err(serde::de::Error::custom("`bad` is not a name"));
    }
    Ok(s)
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Named {
    #[serde(deserialize_with = "not_bad")]
    name: String,
}

#[tokio::test]
async fn an_answer_tool_call_that_does_not_fit_the_type_is_retried() {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "final_answer", json!({"name": "bad"}))]),
        chat_calls(&[("c2", "final_answer", json!({"name": "good"}))]),
    ]);
    let agent = Agent::new(model(&server), registry());
    let mut session = agent.session();
    let typed = agent
        .send(&mut session, "name?")
        .answer::<Named>()
        .mode(AnswerMode::Tool)
        .retries(2)
        .await
        .unwrap();
    let last = session.conversation().items().last().cloned().unwrap();
    assert_eq!(server.requests().len(), 2, "last item: {last}");
    assert_eq!(typed.value.map(|named| named.name).as_deref(), Some("good"));
}

#[tokio::test]
async fn an_answer_tool_out_of_retries_is_an_output_error() {
    // Arguments that break the schema every time; retries(0) promises
    // RunError::Output after the first bad answer.
    let bad = || chat_calls(&[("c", "final_answer", json!({"name": 5}))]);
    let server = TestServer::replying(vec![bad(), bad(), bad(), bad(), bad(), bad()]);
    let agent = Agent::new(model(&server), registry());
    let result = agent
        .run("city?")
        .answer::<City>()
        .mode(AnswerMode::Tool)
        .retries(0)
        .await;
    match result {
        Err(RunError::Output { .. }) => {}
        Ok(typed) => panic!(
            "retries(0) ignored: Ok after {} requests, stop = {:?}",
            server.requests().len(),
            typed.outcome.stop
        ),
        Err(other) => panic!("{other}"),
    }
}

/// Sends `pay` in a new session and gives up on it mid-call, as a host
/// that went away (or a process that died): the session as the next
/// process reads it back.
async fn interrupted(agent: &Agent<HttpModel>) -> Session {
    let mut session = agent.session();
    let cut =
        tokio::time::timeout(Duration::from_millis(100), agent.send(&mut session, "pay")).await;
    assert!(cut.is_err());
    Session::from_json(&session.to_json().unwrap()).unwrap()
}

/// The model calls `tool` for five cents, then is done: the server playing
/// it, and an agent (to finish) over `registry`.
fn paying(tool: &str, registry: Registry) -> (TestServer, AgentBuilder<HttpModel>) {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", tool, json!({"cents": 5}))]),
        chat_text("done"),
    ]);
    let agent = Agent::builder(model(&server), registry);
    (server, agent)
}

// A call interrupted (the process gone) of a tool with max_uses(1), run
// again on the host's approval, is not a second use.
static SLOW_RAN: AtomicUsize = AtomicUsize::new(0);

/// Charges a card.
#[tool(idempotent)]
async fn charge(
    /** Cents. */
    cents: u64,
) -> String {
    SLOW_RAN.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(300)).await;
    format!("charged {cents}")
}

#[tokio::test]
async fn running_an_interrupted_call_again_is_not_another_use() {
    let registry = Registry::builder().tools(tools![charge]).build().unwrap();
    let (server, agent) = paying("charge", registry);
    let agent = agent
        .tool_limits("charge", ToolLimits::new().max_uses(1))
        .build()
        .unwrap();
    let mut session = interrupted(&agent).await;
    // An idempotent tool is retried automatically on resume.
    agent.resume(&mut session).await.unwrap();
    let results = tool_messages(&bodies(&server).last().unwrap().clone());
    println!(
        "results: {results:?}, ran {}",
        SLOW_RAN.load(Ordering::SeqCst)
    );
    assert!(
        results[0].starts_with("charged"),
        "the automatic retry of an interrupted idempotent call was refused: {}",
        results[0]
    );
}

// A call of a tool with side effects that is stopped (time limit,
// cancellation) tells the model it may have taken effect.
static EFFECTS: AtomicUsize = AtomicUsize::new(0);

/// Transfers money.
#[tool]
async fn transfer(
    /** Cents. */
    cents: u64,
) -> String {
    EFFECTS.fetch_add(1, Ordering::SeqCst); // the effect happens at once
    tokio::time::sleep(Duration::from_millis(500)).await; // then waits on a reply
    format!("sent {cents}")
}

#[tokio::test]
async fn a_stopped_call_with_side_effects_may_have_taken_effect() {
    let registry = Registry::builder().tools(tools![transfer]).build().unwrap();
    let (server, agent) = paying("transfer", registry);
    let agent = agent
        .limits(Limits::default().call_timeout(Some(Duration::from_millis(100))))
        .build()
        .unwrap();
    agent.run("pay").await.unwrap();
    let result = &tool_messages(&bodies(&server)[1])[0];
    println!(
        "effects: {}, model told: {result}",
        EFFECTS.load(Ordering::SeqCst)
    );
    assert!(
        !(EFFECTS.load(Ordering::SeqCst) == 1 && result.contains("Try a smaller request")),
        "the effect happened; the model was told to try again"
    );
}

// Absurd token counts from the endpoint saturate; the budget holds.
#[tokio::test]
async fn absurd_token_counts_saturate() {
    let huge = |calls: bool| {
        let message = if calls {
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "echo", "arguments": "{\"text\":\"x\"}"}}]})
        } else {
            json!({"role": "assistant", "content": "hi"})
        };
        Reply::json(
            &json!({"choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {"prompt_tokens": u64::MAX, "completion_tokens": 1}}),
        )
    };
    let server = TestServer::replying(vec![huge(true), huge(false)]);
    let agent = Agent::builder(model(&server), registry())
        .limits(Limits::default().max_tokens(Some(1000)))
        .build()
        .unwrap();
    let outcome = agent.run("go").await.unwrap();
    assert_eq!(outcome.stop, StopReason::TokenBudget);
}

// A query parameter's value (a key) never shows in a transport error.
#[tokio::test]
async fn a_query_secret_never_shows_in_a_transport_error() {
    let model = HttpModel::gemini("g")
        .base_url("http://127.0.0.1:9/v1beta")
        .no_key()
        .query("key", "SECRET-KEY-123")
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let error = Agent::new(model, registry()).run("go").await.unwrap_err();
    let text = format!("{error} / {error:?}");
    assert!(!text.contains("SECRET-KEY-123"), "{text}");
}

// A run resumed within a step opens and closes that step for the host.
#[tokio::test]
async fn a_resumed_step_is_opened_and_closed_for_the_host() {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "send_message", json!({"text": "hi"}))]),
        chat_text("done"),
    ]);
    let agent = Agent::new(model(&server), registry());
    let mut session = agent.session();
    agent.send(&mut session, "go").await.unwrap();
    session.decide("c1", Decision::Deny("no".into())).unwrap();
    let (run, mut events) = agent.resume(&mut session).events();
    run.await.unwrap();
    let mut seen = Vec::new();
    while let Some(event) = events.recv().await {
        seen.push(match event {
            Event::StepStarted { step } => format!("start {step}"),
            Event::StepEnded { step } => format!("end {step}"),
            Event::Result { step, .. } => format!("result {step}"),
            Event::Denied { step, .. } => format!("denied {step}"),
            Event::Text { step, .. } => format!("text {step}"),
            Event::Usage { step, .. } => format!("usage {step}"),
            other => format!("{other:?}"),
        });
    }
    println!("{seen:?}");
    assert_eq!(
        seen.first().map(String::as_str),
        Some("start 1"),
        "{seen:?}"
    );
}

// A host-edited call that was interrupted is run again as edited, never
// as the model's original.
static RECIPIENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Wires money to someone.
#[tool(needs_approval, idempotent)]
async fn wire(
    /** Who. */
    to: String,
) -> String {
    RECIPIENTS.lock().unwrap().push(to.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;
    format!("wired to {to}")
}

#[tokio::test]
async fn an_interrupted_edited_call_runs_again_as_edited() {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "wire", json!({"to": "attacker"}))]),
        chat_text("done"),
    ]);
    let registry = Arc::new(Registry::builder().tools(tools![wire]).build().unwrap());
    let agent = Agent::builder(model(&server), Arc::clone(&registry))
        .approval(|pending| async move {
            Decision::Edit(pending.call.with_arguments(json!({"to": "safe"})))
        })
        .build()
        .unwrap();
    let mut session = interrupted(&agent).await;
    println!("reloaded: {:?}", session.calls()[0].status);
    println!("after reload: {:?}", session.calls()[0].status);
    agent.resume(&mut session).await.unwrap();
    let recipients = RECIPIENTS.lock().unwrap().clone();
    println!("recipients: {recipients:?}");
    assert!(
        !recipients.contains(&"attacker".to_owned()),
        "the unedited, never-approved call ran: {recipients:?}"
    );
}

// A store that fails after the first call's result: a call that never
// started stays approved, not "may have run".
static STORE_SAVES: AtomicUsize = AtomicUsize::new(0);
static NOTED: AtomicUsize = AtomicUsize::new(0);

#[derive(Default, Clone)]
struct Flaky(Mem);

impl SessionStore for Flaky {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            if STORE_SAVES.fetch_add(1, Ordering::SeqCst) == 1 {
                return Err(StoreError::Other("disk full".into()));
            }
            self.0.save(session).await
        })
    }
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        self.0.load(id)
    }
}

/// Notes something.
#[tool]
async fn note(
    /** Text. */
    text: String,
) -> String {
    NOTED.fetch_add(1, Ordering::SeqCst);
    format!("noted {text}")
}

#[tokio::test]
async fn a_store_failing_mid_turn_leaves_unstarted_calls_approved() {
    let server = TestServer::replying(vec![
        chat_calls(&[
            ("c1", "note", json!({"text": "a"})),
            ("c2", "note", json!({"text": "b"})),
        ]),
        chat_text("done"),
    ]);
    let registry = Registry::builder().tools(tools![note]).build().unwrap();
    let agent = Agent::builder(model(&server), registry)
        .store(Flaky::default())
        .limits(Limits::default().max_concurrent_calls(1))
        .build()
        .unwrap();
    let mut session = agent.session();
    let error = agent.send(&mut session, "go").await.unwrap_err();
    println!("error: {error}; ran {}", NOTED.load(Ordering::SeqCst));
    let mut session = Session::from_json(&session.to_json().unwrap()).unwrap();
    let statuses: Vec<String> = session
        .calls()
        .iter()
        .map(|p| format!("{}: {:?}", p.call.id, p.status))
        .collect();
    println!("{statuses:?}");
    let outcome = agent.resume(&mut session).await.unwrap();
    println!(
        "after resume: {:?}, pending {:?}",
        outcome.stop,
        outcome
            .pending
            .iter()
            .map(|p| &p.call.id)
            .collect::<Vec<_>>()
    );
    assert!(
        !outcome.is_paused(),
        "c2 never started (ran {} of 2), yet the host must decide whether it ran",
        NOTED.load(Ordering::SeqCst)
    );
}

// The file store keeps sessions to their owner, and refuses a file that
// holds another id.
#[tokio::test]
async fn the_file_store_keeps_sessions_to_their_owner() {
    use std::os::unix::fs::PermissionsExt;
    let folder = std::env::temp_dir().join(format!("toolkit-store-modes-{}", std::process::id()));
    let store = toolkit_agent::FileStore::new(&folder).unwrap();
    let server = TestServer::replying(vec![chat_text("hi")]);
    let agent = Agent::new(model(&server), registry());
    let mut session = agent.session();
    session.set_id("alice").unwrap();
    agent
        .send(&mut session, "my password is hunter2")
        .await
        .unwrap();
    store.save(&session).await.unwrap();
    let mode = std::fs::metadata(folder.join("alice.json"))
        .unwrap()
        .permissions()
        .mode();
    let dir_mode = std::fs::metadata(&folder).unwrap().permissions().mode();
    println!(
        "file mode {:o}, folder mode {:o}",
        mode & 0o777,
        dir_mode & 0o777
    );
    std::fs::copy(folder.join("alice.json"), folder.join("bob.json")).unwrap();
    let misplaced = store.load("bob").await.unwrap_err();
    // The store says what failed; its source, why.
    assert!(
        matches!(
            &misplaced,
            toolkit_agent::StoreError::Session(toolkit_agent::SessionError::Misplaced { .. })
        ),
        "{misplaced:?}"
    );
    let chain = toolkit_tests::error_chain::messages(&misplaced).join(": ");
    assert!(chain.contains("copied or renamed"), "{chain}");
    assert_eq!(
        mode & 0o077,
        0,
        "session file readable by others: {:o}",
        mode & 0o777
    );
    assert_eq!(
        dir_mode & 0o077,
        0,
        "folder open to others: {:o}",
        dir_mode & 0o777
    );
    let _ = std::fs::remove_dir_all(&folder);
}

// The names renamed in 0.1.1 still compile (with a deprecation warning
// naming the new form) and send what the new form sends.
#[tokio::test]
#[allow(deprecated)]
async fn the_earlier_parallel_calls_setters_send_what_settings_send() {
    let server = TestServer::replying(vec![chat_text("a"), chat_text("b")]);
    let earlier = Agent::builder(model(&server), registry())
        .parallel_calls(false)
        .build()
        .unwrap();
    earlier.run("one").await.unwrap();
    let new = Agent::builder(model(&server), registry())
        .settings(toolkit_agent::Settings::new().parallel_calls(false))
        .build()
        .unwrap();
    new.run("one").await.unwrap();
    let sent = bodies(&server);
    assert_eq!(sent[0]["parallel_tool_calls"], json!(false), "{}", sent[0]);
    assert_eq!(sent[0], sent[1]);

    let mut conversation = earlier.session().conversation().clone();
    conversation.set_parallel_calls(true);
    assert_eq!(conversation.settings().parallel_calls, Some(true));
}
