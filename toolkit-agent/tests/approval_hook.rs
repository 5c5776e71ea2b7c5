//! The guide's approval hook, as docs/round-trip.md prints it, against
//! every dialect: OpenAI Chat and Responses send a call's arguments as
//! JSON text, Anthropic and Gemini as an object, and the hook must read
//! them the same way on all four. A scripted server plays the model.

use std::sync::Mutex;

use serde_json::{Value, json};
use toolkit_agent::{Agent, CallStatus, Decision, HttpModel, Provider};
use toolkit_core::{Registry, tool, tools};
use toolkit_tests::http::{Reply, TestServer};

/// The meetings booked, in order.
static BOOKED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Book a meeting.
#[tool]
fn create_event(
    /// Who to meet.
    with: String,
    /// The day.
    day: String,
) -> String {
    BOOKED.lock().unwrap().push(format!("{with} on {day}"));
    format!("Booked with {with} on {day}.")
}

/// The model's turn: three calls, on Sunday, Saturday and Monday, in the
/// provider's own shape.
fn calling(provider: Provider) -> Value {
    let days = [
        ("call_1", "Sunday"),
        ("call_2", "Saturday"),
        ("call_3", "Monday"),
    ];
    match provider {
        Provider::OpenAi => {
            let calls: Vec<Value> = days
                .iter()
                .map(|(id, day)| {
                    json!({"id": id, "type": "function", "function": {"name": "create_event",
                        "arguments": format!(r#"{{"with": "Ada", "day": "{day}"}}"#)}})
                })
                .collect();
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
        }
        Provider::OpenAiResponses => {
            let items: Vec<Value> = days
                .iter()
                .map(|(id, day)| {
                    json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
                        "name": "create_event", "status": "completed",
                        "arguments": format!(r#"{{"with":"Ada","day":"{day}"}}"#)})
                })
                .collect();
            json!({"status": "completed", "output": items})
        }
        Provider::Anthropic => {
            let blocks: Vec<Value> = days
                .iter()
                .map(|(id, day)| {
                    json!({"type": "tool_use", "id": id, "name": "create_event",
                        "input": {"with": "Ada", "day": day}})
                })
                .collect();
            json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
                "content": blocks})
        }
        Provider::Gemini => {
            let parts: Vec<Value> = days
                .iter()
                .map(|(id, day)| {
                    json!({"functionCall": {"id": id, "name": "create_event",
                        "args": {"with": "Ada", "day": day}}})
                })
                .collect();
            json!({"candidates": [{"finishReason": "STOP",
                "content": {"role": "model", "parts": parts}}]})
        }
        other => panic!("no script for {other}"),
    }
}

/// The model's answer after the results.
fn answering(provider: Provider) -> Value {
    match provider {
        Provider::OpenAi => json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Done."}}]}),
        Provider::OpenAiResponses => json!({"status": "completed", "output": [{"type": "message",
            "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}]}),
        Provider::Anthropic => json!({"type": "message", "role": "assistant",
            "stop_reason": "end_turn", "content": [{"type": "text", "text": "Done."}]}),
        Provider::Gemini => json!({"candidates": [{"finishReason": "STOP",
            "content": {"role": "model", "parts": [{"text": "Done."}]}}]}),
        other => panic!("no script for {other}"),
    }
}

#[tokio::test]
async fn the_guides_hook_denies_and_edits_the_same_calls_on_every_dialect() {
    for provider in [
        Provider::OpenAi,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
    ] {
        BOOKED.lock().unwrap().clear();
        let server = TestServer::replying(vec![
            Reply::json(&calling(provider)),
            Reply::json(&answering(provider)),
        ]);
        let model = HttpModel::for_provider(provider, "m")
            .base_url(server.base_url())
            .key("k")
            .build()
            .unwrap();
        let registry = Registry::builder()
            .tools(tools![create_event])
            .build()
            .unwrap();
        let agent = Agent::builder(model, registry)
            .needs_approval("create_event")
            // The guide's hook, line for line (checked below).
            .approval(|pending| async move {
                // The arguments read as an object whatever the provider sent.
                let arguments = pending.call.arguments();
                match pending.status {
                    // The process stopped while this call ran: it may have
                    // booked already, so a person checks before anything else.
                    CallStatus::MayHaveRun { .. } => Decision::Defer,
                    _ if arguments["day"] == "Sunday" => {
                        Decision::Deny("no meetings on Sundays".into())
                    }
                    // Saturdays move to Friday; the model is told of the change.
                    _ if arguments["day"] == "Saturday" => {
                        let mut call = pending.call.clone();
                        match call.arguments_mut() {
                            Some(arguments) => {
                                arguments.insert("day".into(), "Friday".into());
                                Decision::Edit(call)
                            }
                            None => Decision::Deny("no meetings on Saturdays".into()),
                        }
                    }
                    _ => Decision::Approve,
                }
            })
            .build()
            .unwrap();

        let outcome = agent.run("Book meetings with Ada.").await.unwrap();
        assert_eq!(outcome.answer.as_deref(), Some("Done."), "{provider}");
        // Sunday denied, Saturday run as Friday, Monday run as made (the
        // two ran at once, so in either order).
        let mut booked = BOOKED.lock().unwrap().clone();
        booked.sort();
        assert_eq!(booked, ["Ada on Friday", "Ada on Monday"], "{provider}");
        // The model reads the denial, and that its Saturday call ran as
        // the host changed it.
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{provider}");
        let sent = requests[1].json().to_string();
        assert!(
            sent.contains("no meetings on Sundays"),
            "{provider}: {sent}"
        );
        assert!(
            sent.contains("The host changed `day` of this call before it ran"),
            "{provider}: {sent}"
        );
        assert!(
            sent.contains("Booked with Ada on Monday."),
            "{provider}: {sent}"
        );
    }
}

/// The hook above is the guide's, so that what the guide prints is what
/// runs here: every line of the guide's hook stands in this file, in the
/// same order, one after the other.
#[test]
fn the_hook_is_the_one_the_guide_prints() {
    let guide = include_str!("../../docs/round-trip.md");
    let here = include_str!("approval_hook.rs");
    let start = guide
        .find(".approval(|pending| async move {")
        .expect("the guide shows an approval hook");
    let hook: Vec<&str> = guide[start..]
        .lines()
        .map(str::trim)
        .take_while(|line| *line != "})")
        .chain(["})"])
        .collect();
    assert!(hook.len() > 10, "{hook:?}");
    let lines: Vec<&str> = here.lines().map(str::trim).collect();
    let found = lines
        .windows(hook.len())
        .any(|window| window == hook.as_slice());
    assert!(
        found,
        "the guide's hook differs from the one tested here:\n{}",
        hook.join("\n")
    );
}
