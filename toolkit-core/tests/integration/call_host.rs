//! What the host offers a running call: log messages, and answers to the
//! questions a tool asks (elicitation, sampling), with their time limit and
//! the call's cancellation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolkit_core::{
    AskError, Asker, Asking, CallContext, CallHost, Cancellation, ElicitRequest, Elicited,
    LogLevel, LogSink, Registry, SampleRequest, ToolCall, tool, tools,
};
use toolkit_tests::asking::Answering;

/// Logs, then asks the user, then the model.
#[tool]
async fn ask_both(
    /// How long to wait for each answer, in milliseconds.
    within_ms: u64,
    #[tool(context)] call: CallContext,
) -> String {
    call.log(LogLevel::Debug, "asking");
    let within = Duration::from_millis(within_ms);
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let elicited = match call.elicit("Your name?", schema, within).await {
        Ok(answer) => format!("{} {}", answer.action, answer.content.unwrap_or_default()),
        Err(error) => error.to_string(),
    };
    let sampled = match call.sample(SampleRequest::new("Hi", 10), within).await {
        Ok(sampled) => format!("{} by {}", sampled.text, sampled.model),
        Err(error) => error.to_string(),
    };
    format!("{elicited} | {sampled}")
}

/// Never answers.
struct Silent;

impl Asker for Silent {
    fn elicit(&self, _request: ElicitRequest) -> Asking<'_, Elicited> {
        Box::pin(std::future::pending())
    }
}

fn call(within_ms: u64) -> ToolCall {
    ToolCall::new("1", "ask_both", json!({"within_ms": within_ms}))
}

async fn text(
    registry: &Registry,
    host: &CallHost,
    cancellation: &Cancellation,
    within_ms: u64,
) -> String {
    let outcome = registry
        .dispatch(&call(within_ms))
        .cancellation(cancellation)
        .host(host)
        .await;
    outcome.result.as_text().expect("a text").to_owned()
}

#[tokio::test]
async fn questions_reach_the_asker_and_its_answers_the_tool() {
    let registry = Registry::builder().tools(tools![ask_both]).build().unwrap();
    let answering = Answering::new(json!({"name": "Ada"}), "Hello");
    let logs = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&logs);
    let host = CallHost::new()
        .asker(answering.clone())
        .log(LogSink::new(move |message| {
            into.lock().unwrap().push(message)
        }));
    let answer = text(&registry, &host, &Cancellation::new(), 10_000).await;
    assert_eq!(answer, r#"accept {"name":"Ada"} | Hello by tiny"#);
    assert_eq!(answering.asked(), ["Your name?", "Hi"]);
    let logs = logs.lock().unwrap();
    assert_eq!(logs.len(), 1);
    assert_eq!(
        (logs[0].level, logs[0].message.as_str()),
        (LogLevel::Debug, "asking")
    );
}

#[tokio::test]
async fn a_question_without_an_answer_says_why() {
    let registry = Registry::builder().tools(tools![ask_both]).build().unwrap();
    // Nobody to ask: neither `run` nor a host without an asker has one.
    let plain = registry.dispatch(&call(10)).await;
    let nobody = AskError::NoAsker.to_string();
    assert_eq!(
        plain.result.as_text(),
        Ok(format!("{nobody} | {nobody}").as_str())
    );
    // An asker that answers one kind only refuses the other, naming it; one
    // that never answers runs into the time limit.
    let silent = CallHost::new().asker(Silent);
    let answer = text(&registry, &silent, &Cancellation::new(), 20).await;
    assert_eq!(
        answer,
        format!(
            "{} | {}",
            AskError::TimedOut(Duration::from_millis(20)),
            AskError::Unsupported("sampling")
        )
    );
    assert!(answer.contains("`sampling`"), "{answer}");
    // A cancelled call stops waiting.
    let cancelled = Cancellation::new();
    cancelled.cancel();
    let answer = text(&registry, &silent, &cancelled, 60_000).await;
    assert!(
        answer.starts_with(&AskError::Cancelled.to_string()),
        "{answer}"
    );
}
