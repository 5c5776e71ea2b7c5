//! What a tool run by the agent reaches through its `CallContext`: log
//! messages, progress reports, questions for the user, the host's model
//! and the host's roots, all through the host the agent was given
//! (`AgentBuilder::call_host`). A host that cannot answer a kind of
//! question refuses it at once, naming the capability; one that never
//! answers is given up on at the tool's time limit.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolkit_agent::Agent;
use toolkit_core::{
    AskError, Asker, Asking, CallContext, CallHost, ElicitAction, ElicitRequest, Elicited,
    LogLevel, LogSink, ProgressSink, Registry, Root, RootsRequest, SampleRequest, Sampled, tool,
    tools,
};
use toolkit_tests::asking::Answering;
use toolkit_tests::http::TestServer;

#[path = "support/chat.rs"]
mod chat;

use chat::{bodies, chat_calls, chat_text, model, tool_messages};

/// How a question went: its answer, or the kind of error.
fn outcome<T>(asked: Result<T, AskError>, answer: impl FnOnce(T) -> String) -> String {
    match asked {
        Ok(value) => answer(value),
        Err(AskError::NoAsker) => "no asker".to_owned(),
        Err(AskError::Unsupported(capability)) => format!("no {capability}"),
        Err(AskError::TimedOut(limit)) => format!("timed out after {} ms", limit.as_millis()),
        Err(other) => format!("other: {other}"),
    }
}

/// Logs, reports progress, then asks the user, the model and the roots,
/// each within `limit_ms`, and says how each went.
#[tool]
async fn survey(
    /// How long each question may wait, in milliseconds.
    limit_ms: u64,
    #[tool(context)] call: CallContext,
) -> String {
    let within = Duration::from_millis(limit_ms);
    call.log(LogLevel::Warning, "surveying");
    call.report_progress(1.0, Some(3.0), Some("asking"));
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let name = call.elicit("Your name?", schema, within).await;
    let name = outcome(name, |answer| {
        let content = answer.content.unwrap_or_default();
        format!(
            "{} {}",
            answer.action,
            content["name"].as_str().unwrap_or("-")
        )
    });
    let sampled = call.sample(SampleRequest::new("Say hi.", 10), within).await;
    let sampled = outcome(sampled, |sampled| sampled.text);
    let roots = call
        .roots_with(RootsRequest::new().key("workspace"), within)
        .await;
    let roots = outcome(roots, |roots| {
        let roots: Vec<String> = roots
            .iter()
            .map(|root| format!("{} ({})", root.uri, root.name.as_deref().unwrap_or("-")))
            .collect();
        roots.join(", ")
    });
    call.report_progress(3.0, Some(3.0), None);
    format!("name: {name}; model: {sampled}; roots: {roots}")
}

/// Answers only the user's questions: the others are refused by the
/// trait's defaults.
struct UserOnly;

impl Asker for UserOnly {
    fn elicit(&self, _request: ElicitRequest) -> Asking<'_, Elicited> {
        Box::pin(async { Ok(Elicited::new(ElicitAction::Decline)) })
    }
}

/// Never answers anything.
struct Silent;

impl Asker for Silent {
    fn elicit(&self, _request: ElicitRequest) -> Asking<'_, Elicited> {
        Box::pin(std::future::pending())
    }

    fn sample(&self, _request: SampleRequest) -> Asking<'_, Sampled> {
        Box::pin(std::future::pending())
    }

    fn roots(&self, _request: RootsRequest) -> Asking<'_, Vec<Root>> {
        Box::pin(std::future::pending())
    }
}

/// What the tool answered, run by an agent with `host` (none: the agent's
/// default), each question waiting at most `limit_ms`.
async fn surveyed(host: Option<CallHost>, limit_ms: u64) -> String {
    let server = TestServer::replying(vec![
        chat_calls(&[("c1", "survey", json!({"limit_ms": limit_ms}))]),
        chat_text("done"),
    ]);
    let registry = Registry::builder().tools(tools![survey]).build().unwrap();
    let mut agent = Agent::builder(model(&server), registry);
    if let Some(host) = host {
        agent = agent.call_host(host);
    }
    agent.build().unwrap().run("Survey.").await.unwrap();
    let mut messages = tool_messages(&bodies(&server)[1]);
    assert_eq!(messages.len(), 1, "{messages:?}");
    messages.remove(0)
}

#[tokio::test]
async fn a_tools_log_progress_and_questions_reach_the_agents_host() {
    let logs = Arc::new(Mutex::new(Vec::new()));
    let progress = Arc::new(Mutex::new(Vec::new()));
    let answers = Answering::new(json!({"name": "Ada"}), "hi").with_roots([
        Root::new("file:///home/ada/notes").name("notes"),
        Root::new("file:///tmp"),
    ]);
    let (logs_into, progress_into) = (Arc::clone(&logs), Arc::clone(&progress));
    let host = CallHost::new()
        .log(LogSink::new(move |message| {
            logs_into
                .lock()
                .unwrap()
                .push(format!("{}: {}", message.level, message.message));
        }))
        .progress(ProgressSink::new(move |report| {
            progress_into
                .lock()
                .unwrap()
                .push((report.done, report.total, report.message));
        }))
        .asker(answers.clone());
    assert_eq!(
        surveyed(Some(host), 5_000).await,
        "name: accept Ada; model: hi; roots: file:///home/ada/notes (notes), file:///tmp (-)"
    );
    assert_eq!(*logs.lock().unwrap(), ["warning: surveying"]);
    assert_eq!(
        *progress.lock().unwrap(),
        [
            (1.0, Some(3.0), Some("asking".to_owned())),
            (3.0, Some(3.0), None)
        ]
    );
    assert_eq!(
        answers.asked(),
        ["Your name?", "Say hi.", "roots workspace"]
    );
}

#[tokio::test]
async fn questions_the_host_cannot_answer_are_refused_naming_the_capability() {
    assert_eq!(
        surveyed(Some(CallHost::new().asker(UserOnly)), 5_000).await,
        "name: decline -; model: no sampling; roots: no roots"
    );
    // A host without an asker, and an agent given no host at all.
    for host in [Some(CallHost::new()), None] {
        assert_eq!(
            surveyed(host, 5_000).await,
            "name: no asker; model: no asker; roots: no asker"
        );
    }
}

#[tokio::test]
async fn a_question_nobody_answers_ends_at_its_time_limit() {
    assert_eq!(
        surveyed(Some(CallHost::new().asker(Silent)), 20).await,
        "name: timed out after 20 ms; model: timed out after 20 ms; roots: timed out after 20 ms"
    );
}
