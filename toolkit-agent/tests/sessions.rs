//! Sessions, approval rules, per-run values and limits, over a real local
//! HTTP server answering with scripted Chat Completions responses.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_agent::{
    Agent, BuildError, CallStatus, Decision, HttpModel, Limits, RunError, Session, StopReason,
    ToolLimits,
};
use toolkit_core::{CallContext, Registry, RunState, ToolDef, tool, tools};
use toolkit_tests::http::TestServer;

mod support;
use support::chat::{bodies, chat_calls, chat_text, model, tool_messages};

use support::tools::{delete_file, echo, send_message, tag};

use support::answers::{City, no_city};

#[derive(Clone)]
struct User(&'static str);

/// Who the run acts for.
#[tool]
fn whoami(#[tool(state)] user: User) -> String {
    user.0.to_owned()
}

fn registry() -> Registry {
    Registry::builder()
        .tools(tools![echo, delete_file, send_message])
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_conversation_continues_through_its_json_form() {
    let server = TestServer::replying(vec![chat_text("Hello, Ada."), chat_text("You are Ada.")]);
    let agent = Agent::builder(model(&server), registry())
        .instructions("Be brief.")
        .build()
        .unwrap();
    let mut session = agent.session();
    let first = agent.send(&mut session, "I am Ada.").await.unwrap();
    assert_eq!(first.answer.as_deref(), Some("Hello, Ada."));
    assert!(session.is_ended());

    let saved = session.to_json().unwrap();
    let mut session = Session::from_json(&saved).unwrap();
    let second = agent.send(&mut session, "Who am I?").await.unwrap();
    assert_eq!(second.answer.as_deref(), Some("You are Ada."));
    assert_eq!(second.steps, 1, "steps count per run");

    let received = bodies(&server);
    let messages = received[1]["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(messages[2]["content"], "Hello, Ada.");
    assert_eq!(messages[3]["content"], "Who am I?");

    // Resuming a run that ended is refused.
    let error = agent.resume(&mut session).await.unwrap_err();
    assert!(matches!(error, RunError::Session(_)), "{error}");
}

#[tokio::test]
async fn instructions_and_tools_may_change_between_turns() {
    let server = TestServer::replying(vec![chat_text("one"), chat_text("two")]);
    let registry = Arc::new(registry());
    let first = Agent::builder(model(&server), Arc::clone(&registry))
        .instructions("First instructions.")
        .build()
        .unwrap();
    let mut session = first.session();
    first.send(&mut session, "a").await.unwrap();
    registry.remove("echo");
    let second = Agent::builder(model(&server), Arc::clone(&registry))
        .instructions("Second instructions.")
        .build()
        .unwrap();
    second.send(&mut session, "b").await.unwrap();
    let received = bodies(&server);
    assert_eq!(
        received[1]["messages"][0]["content"],
        "Second instructions."
    );
    let names = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(names(&received[0]).contains(&"echo".to_owned()));
    assert!(!names(&received[1]).contains(&"echo".to_owned()));
}

#[tokio::test]
async fn a_tool_added_during_a_run_is_offered_at_the_next_request() {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "echo", json!({"text": "x"}))]),
        chat_text("ok"),
    ]);
    let registry = Arc::new(registry());
    let added = Arc::clone(&registry);
    let agent = Agent::builder(model(&server), Arc::clone(&registry))
        .observe(move |step| {
            if step == 2 {
                let late = ToolDef::builder("late_tool")
                    .description("Arrived during the run.")
                    .handler(|_: Value, _: CallContext| async { "late" });
                added.add(late).unwrap();
            }
            async { None }
        })
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let received = bodies(&server);
    let offered = |body: &Value| body.to_string().contains("late_tool");
    assert!(!offered(&received[0]));
    assert!(offered(&received[1]));
}

#[tokio::test]
async fn calls_needing_approval_pause_the_run_and_resume_with_decisions() {
    let server = TestServer::replying(vec![
        chat_calls(&[
            ("c1", "echo", json!({"text": "first"})),
            ("c2", "send_message", json!({"text": "hi"})),
            ("c3", "delete_file", json!({"path": "/tmp/x"})),
        ]),
        chat_text("finished"),
    ]);
    let agent = Agent::new(model(&server), registry());
    let mut session = agent.session();
    let outcome = agent.send(&mut session, "go").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Paused);
    let waiting: Vec<&str> = outcome
        .pending
        .iter()
        .map(|p| p.call.name.as_str())
        .collect();
    assert_eq!(
        waiting,
        ["send_message", "delete_file"],
        "declared, and destructive"
    );
    assert!(
        outcome
            .pending
            .iter()
            .all(|p| matches!(p.status, CallStatus::AwaitingApproval))
    );
    // Nothing of the turn ran yet; a message cannot be sent meanwhile.
    assert_eq!(server.requests().len(), 1);
    let refused = agent.send(&mut session, "hello?").await.unwrap_err();
    assert!(matches!(refused, RunError::Session(_)));

    // Saved, loaded, decided: the run goes on.
    let mut session = Session::from_json(&session.to_json().unwrap()).unwrap();
    session
        .decide(
            "c2",
            Decision::Edit(toolkit_core::ToolCall::new(
                "ignored",
                "send_message",
                json!({"text": "hello"}),
            )),
        )
        .unwrap();
    assert!(
        session.decide("c1", Decision::Approve).is_err(),
        "c1 did not wait"
    );
    assert!(session.decide("c9", Decision::Approve).is_err());
    assert!(session.decide("c3", Decision::Defer).is_err());
    let paused_again = agent.resume(&mut session).await.unwrap();
    assert_eq!(paused_again.stop, StopReason::Paused, "c3 still waits");
    session
        .decide("c3", Decision::Deny("not that file".into()))
        .unwrap();
    let outcome = agent.resume(&mut session).await.unwrap();
    assert_eq!(outcome.stop, StopReason::Answered);
    let sent = &bodies(&server)[1];
    let results = tool_messages(sent);
    assert_eq!(results[0], "first");
    // The edited call ran with the host's arguments, and the model is
    // told so; its output follows the tool messages.
    assert!(
        results[1].contains("The host changed `text` of this call before it ran"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("not that file"), "{}", results[2]);
    let last = sent["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user", "{last}");
    assert!(last.to_string().contains("sent: hello"), "{last}");
}

#[tokio::test]
async fn trusted_destructive_tools_run_and_an_async_hook_decides() {
    let server = TestServer::replying(vec![
        chat_calls(&[
            ("c1", "delete_file", json!({"path": "a"})),
            ("c2", "send_message", json!({"text": "hi"})),
        ]),
        chat_text("done"),
    ]);
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    let agent = Agent::builder(model(&server), registry())
        .trust("delete_file")
        .approval(move |pending| {
            count.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                assert_eq!(pending.call.name, "send_message");
                Decision::Approve
            }
        })
        .build()
        .unwrap();
    let outcome = agent.run("go").await.unwrap();
    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(
        tool_messages(&bodies(&server)[1]),
        ["deleted a", "sent: hi"]
    );
}

#[test]
fn rules_naming_unknown_tools_are_build_errors() {
    let server = TestServer::replying(vec![]);
    for build in [
        Agent::builder(model(&server), registry()).needs_approval("ecoh"),
        Agent::builder(model(&server), registry()).stop_after("ecoh"),
        Agent::builder(model(&server), registry()).trust("ecoh"),
        Agent::builder(model(&server), registry()).tool_limits("ecoh", ToolLimits::new()),
    ] {
        match build.build() {
            Err(BuildError::UnknownTool { name, known, .. }) => {
                assert_eq!(name, "ecoh");
                assert!(known.contains(&"echo".to_owned()));
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn each_run_gives_its_tools_its_own_values() {
    let registry = Arc::new(
        Registry::builder()
            .tools(tools![whoami])
            .state_per_run::<User>()
            .build()
            .unwrap(),
    );
    let script = || vec![chat_calls(&[("c1", "whoami", json!({}))]), chat_text("ok")];
    let (first, second) = (
        TestServer::replying(script()),
        TestServer::replying(script()),
    );
    let ada = Agent::new(model(&first), Arc::clone(&registry));
    let bob = Agent::new(model(&second), Arc::clone(&registry));
    let (a, b) = tokio::join!(
        ada.run("who?").state(RunState::new().with(User("ada"))),
        bob.run("who?").state(RunState::new().with(User("bob"))),
    );
    a.unwrap();
    b.unwrap();
    assert_eq!(tool_messages(&bodies(&first)[1]), ["ada"]);
    assert_eq!(tool_messages(&bodies(&second)[1]), ["bob"]);

    // A run that gives none: the tool's call is an error result.
    let third = TestServer::replying(script());
    Agent::new(model(&third), Arc::clone(&registry))
        .run("who?")
        .await
        .unwrap();
    let result = &tool_messages(&bodies(&third)[1])[0];
    assert!(result.contains("User"), "{result}");
}

static RUNNING: AtomicUsize = AtomicUsize::new(0);
static MOST: AtomicUsize = AtomicUsize::new(0);
static SAW_CANCELLATION: AtomicBool = AtomicBool::new(false);

/// Works for a while, counting how many run at once.
#[tool]
async fn busy(
    /** Milliseconds. */
    ms: u64,
) -> String {
    let now = RUNNING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST.fetch_max(now, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    RUNNING.fetch_sub(1, Ordering::SeqCst);
    "worked".to_owned()
}

/// Works until cancelled.
#[tool]
fn stubborn(#[tool(context)] call: CallContext) -> String {
    for _ in 0..500 {
        if call.cancellation().is_cancelled() {
            SAW_CANCELLATION.store(true, Ordering::SeqCst);
            return "stopped".to_owned();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    "finished".to_owned()
}

#[tokio::test]
async fn limits_hold_time_concurrency_uses_and_tokens() {
    let limited = || {
        Registry::builder()
            .tools(tools![busy, stubborn, echo])
            .build()
            .unwrap()
    };

    // A call over its time limit is an error result, and its work is told
    // to stop.
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "stubborn", json!({}))]),
        chat_text("ok"),
    ]);
    let agent = Agent::builder(model(&server), limited())
        .limits(Limits::default().call_timeout(Some(Duration::from_millis(100))))
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let result = &tool_messages(&bodies(&server)[1])[0];
    assert!(result.contains("time limit"), "{result}");
    for _ in 0..200 {
        if SAW_CANCELLATION.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        SAW_CANCELLATION.load(Ordering::SeqCst),
        "the tool saw the cancellation"
    );

    // Calls at once: the run's cap, then the tool's.
    for (run_cap, tool_cap, expected) in [(2, None, 2), (8, Some(1), 1)] {
        MOST.store(0, Ordering::SeqCst);
        let calls: Vec<(String, &str, Value)> = (0..6)
            .map(|i| (format!("c{i}"), "busy", json!({"ms": 30})))
            .collect();
        let calls: Vec<(&str, &str, Value)> = calls
            .iter()
            .map(|(id, name, args)| (id.as_str(), *name, args.clone()))
            .collect();
        let server = TestServer::replying(vec![chat_calls(&calls), chat_text("ok")]);
        let mut builder = Agent::builder(model(&server), limited())
            .limits(Limits::default().max_concurrent_calls(run_cap));
        if let Some(cap) = tool_cap {
            builder = builder.tool_limits("busy", ToolLimits::new().max_concurrent(cap));
        }
        builder.build().unwrap().run("go").await.unwrap();
        assert_eq!(MOST.load(Ordering::SeqCst), expected);
        assert_eq!(
            tool_messages(&bodies(&server)[1]).len(),
            6,
            "every call answered, in order"
        );
    }

    // Uses per run.
    let server = TestServer::replying(vec![
        chat_calls(&[
            ("c1", "echo", json!({"text": "one"})),
            ("c2", "echo", json!({"text": "two"})),
        ]),
        chat_text("ok"),
    ]);
    Agent::builder(model(&server), limited())
        .tool_limits("echo", ToolLimits::new().max_uses(1))
        .build()
        .unwrap()
        .run("go")
        .await
        .unwrap();
    let results = tool_messages(&bodies(&server)[1]);
    assert_eq!(results[0], "one");
    assert!(results[1].contains("may be used 1 time"), "{}", results[1]);

    // The token budget: 15 tokens spent by the first step.
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "echo", json!({"text": "one"}))]),
        chat_text("never asked"),
    ]);
    let outcome = Agent::builder(model(&server), limited())
        .limits(Limits::default().max_tokens(Some(15)))
        .build()
        .unwrap()
        .run("go")
        .await
        .unwrap();
    assert_eq!(outcome.stop, StopReason::TokenBudget);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn failures_are_errors_a_host_can_question_mark() {
    // Tools the provider refuses are a tool error, not a model error.
    let server = TestServer::replying(vec![]);
    let maps = Registry::builder().tools(tools![tag]).build().unwrap();
    let agent = Agent::builder(model(&server), maps)
        .strict(true)
        .build()
        .unwrap();
    let error = agent.run("go").await.unwrap_err();
    assert!(matches!(error, RunError::Tools(_)), "{error}");
    assert!(server.requests().is_empty());

    // An endpoint that is not there.
    let closed = HttpModel::openai_chat("m")
        .base_url("http://127.0.0.1:9")
        .no_key()
        .retry(toolkit_agent::RetryPolicy::none())
        .build()
        .unwrap();
    let error = Agent::new(closed, registry()).run("go").await.unwrap_err();
    assert!(matches!(error, RunError::Model(_)), "{error}");
}

#[tokio::test]
async fn a_typed_run_asks_in_the_schema_and_sends_back_what_does_not_fit() {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "echo", json!({"text": "Tokyo"}))]),
        chat_text(r#"{"name": "Tokyo"}"#),
        chat_text(r#"{"name": "Tokyo", "population": 37400000}"#),
    ]);
    let agent = Agent::new(model(&server), registry());
    let mut session = agent.session();
    let typed = agent
        .send(&mut session, "The largest city of Japan?")
        .answer::<City>()
        .await
        .unwrap();
    assert_eq!(
        typed.value,
        Some(City {
            name: "Tokyo".into(),
            population: 37_400_000
        })
    );
    assert_eq!(typed.outcome.stop, StopReason::Answered);
    let received = bodies(&server);
    // Every request asked for the schema, tools beside it.
    for body in &received {
        assert_eq!(body["response_format"]["type"], "json_schema", "{body}");
        assert!(body["tools"].is_array());
    }
    let schema = &received[0]["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["required"], json!(["name", "population"]));
    // The answer that did not fit went back with its problem.
    let last = received[2]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"].as_str().unwrap().contains("population"),
        "{last}"
    );

    // The schema was the run's own: the next message asks for none.
    let server_two = TestServer::replying(vec![chat_text("plain")]);
    let plain = Agent::new(model(&server_two), registry());
    plain.send(&mut session, "Thanks.").await.unwrap();
    assert!(bodies(&server_two)[0].get("response_format").is_none());
}

#[tokio::test]
async fn a_typed_run_by_tool_ends_when_the_answer_fits() {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "final_answer", json!({"name": "Osaka"}))]),
        chat_calls(&[(
            "c2",
            "final_answer",
            json!({"name": "Osaka", "population": 19000000}),
        )]),
    ]);
    let agent = Agent::new(model(&server), registry());
    let typed = agent
        .run("Japan's second city?")
        .answer::<City>()
        .mode(toolkit_agent::AnswerMode::Tool)
        .await
        .unwrap();
    assert_eq!(typed.value.unwrap().population, 19_000_000);
    assert_eq!(typed.outcome.stop, StopReason::Done);
    let received = bodies(&server);
    assert!(received[0].get("response_format").is_none());
    assert_eq!(received[0]["tool_choice"], "required");
    let offered = received[0].to_string();
    assert!(offered.contains("final_answer") && offered.contains("echo"));
    let first = &tool_messages(&received[1])[0];
    assert!(first.contains("population"), "{first}");
}

#[tokio::test]
async fn a_typed_run_out_of_retries_is_an_error_with_the_problems() {
    let server = TestServer::replying(vec![chat_text("Tokyo"), chat_text("Tokyo!")]);
    let agent = Agent::new(model(&server), registry());
    let error = no_city(&agent).await;
    match error {
        RunError::Output {
            problems, answer, ..
        } => {
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert_eq!(problems[0].pointer, "");
            assert!(problems[0].message.contains("not JSON"), "{problems:?}");
            assert_eq!(answer, "Tokyo!");
        }
        other => panic!("{other:?}"),
    }
}

/// Deletes a folder once the user confirms, saying what it does.
#[tool]
async fn clear_folder(
    /// The folder.
    path: String,
    #[tool(context)] call: CallContext,
) -> String {
    call.log(
        toolkit_core::LogLevel::Info,
        format!("asked to clear {path}"),
    );
    let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}});
    match call
        .elicit(format!("Clear {path}?"), schema, Duration::from_secs(5))
        .await
    {
        Ok(answer)
            if answer
                .content
                .as_ref()
                .is_some_and(|c| c["confirm"] == true) =>
        {
            format!("cleared {path}")
        }
        Ok(answer) => format!("left {path}: {}", answer.action),
        Err(error) => format!("could not ask: {error}"),
    }
}

/// Answers every question by confirming, and remembers it was asked.
struct Confirm(Arc<AtomicUsize>);

impl toolkit_core::Asker for Confirm {
    fn elicit(
        &self,
        request: toolkit_core::ElicitRequest,
    ) -> toolkit_core::Asking<'_, toolkit_core::Elicited> {
        self.0.fetch_add(1, Ordering::SeqCst);
        assert!(request.message.starts_with("Clear"));
        Box::pin(async { Ok(toolkit_core::Elicited::accepted(json!({"confirm": true}))) })
    }
}

#[tokio::test]
async fn a_tool_run_by_the_agent_logs_and_asks_through_the_agents_host() {
    let script = || {
        vec![
            chat_calls(&[("c1", "clear_folder", json!({"path": "/tmp/cache"}))]),
            chat_text("done"),
        ]
    };
    let registry = || {
        Registry::builder()
            .tools(tools![clear_folder])
            .build()
            .unwrap()
    };

    let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let into = Arc::clone(&heard);
    let asked = Arc::new(AtomicUsize::new(0));
    let host = toolkit_core::CallHost::new()
        .log(toolkit_core::LogSink::new(move |message| {
            into.lock().unwrap().push(message.message)
        }))
        .asker(Confirm(Arc::clone(&asked)));
    let server = TestServer::replying(script());
    Agent::builder(model(&server), registry())
        .call_host(host)
        .build()
        .unwrap()
        .run("Clear the cache.")
        .await
        .unwrap();
    assert_eq!(tool_messages(&bodies(&server)[1]), ["cleared /tmp/cache"]);
    assert_eq!(*heard.lock().unwrap(), ["asked to clear /tmp/cache"]);
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // Without a host, the question is an error the tool sees.
    let server = TestServer::replying(script());
    Agent::new(model(&server), registry())
        .run("Clear the cache.")
        .await
        .unwrap();
    let result = &tool_messages(&bodies(&server)[1])[0];
    assert!(result.starts_with("could not ask"), "{result}");
}

/// Naps a little.
#[tool]
async fn nap() -> String {
    tokio::time::sleep(Duration::from_millis(150)).await;
    "napped".to_owned()
}

/// Sleeps for five seconds.
#[tool]
async fn sleepy() -> String {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "slept".to_owned()
}

#[tokio::test]
async fn a_tools_own_time_limit_is_the_registrys_and_the_shorter_wins() {
    // The tool's limit, where it is registered, under the run's.
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "sleepy", json!({}))]),
        chat_text("ok"),
    ]);
    let registry = Registry::builder()
        .tools(tools![sleepy])
        .tool_timeout("sleepy", Duration::from_millis(50))
        .build()
        .unwrap();
    let agent = Agent::builder(model(&server), registry).build().unwrap();
    agent.run("go").await.unwrap();
    let result = &tool_messages(&bodies(&server)[1])[0];
    assert!(result.contains("time limit"), "{result}");
    assert!(result.contains("0.05 s"), "the tool's own limit: {result}");

    // The tool's own limit takes the place of the run's: a slow tool can
    // be given more time than the run's other calls.
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "nap", json!({}))]),
        chat_text("ok"),
    ]);
    let registry = Registry::builder()
        .tools(tools![nap])
        .tool_timeout("nap", Duration::from_secs(5))
        .build()
        .unwrap();
    let agent = Agent::builder(model(&server), registry)
        .limits(Limits::default().call_timeout(Some(Duration::from_millis(20))))
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let result = &tool_messages(&bodies(&server)[1])[0];
    assert_eq!(result, "napped");

    // The former per-tool limit on the agent is honoured still, in place
    // of the run's.
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "sleepy", json!({}))]),
        chat_text("ok"),
    ]);
    let registry = Registry::builder().tools(tools![sleepy]).build().unwrap();
    #[allow(deprecated)]
    let limits = ToolLimits::new().timeout(Duration::from_millis(40));
    let agent = Agent::builder(model(&server), registry)
        .tool_limits("sleepy", limits)
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let result = &tool_messages(&bodies(&server)[1])[0];
    assert!(result.contains("0.04 s"), "{result}");
}
