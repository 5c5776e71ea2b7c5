//! A call's arguments read the same whatever form the provider sent them
//! in, and what a host reads is what the tool runs with.

use serde_json::{Value, json};
use toolkit_core::{Registry, ToolCall, tool, tools};

/// Book a meeting.
#[tool]
fn book(
    /// The day.
    day: String,
) -> String {
    format!("booked on {day}")
}

fn registry() -> Registry {
    Registry::builder().tools(tools![book]).build().unwrap()
}

#[test]
fn text_and_object_read_as_the_same_object() {
    let text = ToolCall::from_text("c1", "book", r#"{"day": "Sunday"}"#);
    let string = ToolCall::new("c1", "book", json!(r#"{"day": "Sunday"}"#));
    let object = ToolCall::new("c1", "book", json!({"day": "Sunday"}));
    assert_eq!(text.arguments(), object.arguments());
    assert_eq!(string.arguments(), object.arguments());
    assert_eq!(text.arguments()["day"], "Sunday");
    // No arguments read as an empty object, in either form.
    for none in [
        ToolCall::from_text("c2", "book", " "),
        ToolCall::new("c2", "book", Value::Null),
    ] {
        assert_eq!(none.arguments(), &json!({}), "{none:?}");
        assert!(!none.is_malformed());
    }
}

#[test]
fn unusable_text_reads_as_null_and_is_kept() {
    for (written, why) in [
        (r#"{"day": "Sun"#, "not valid JSON"),
        (r#"{"day": "Monday", "day": "Sunday"}"#, "more than once"),
        ("[1, 2]", "must be a JSON object"),
    ] {
        let call = ToolCall::from_text("c1", "book", written);
        assert!(call.is_malformed(), "{written}");
        assert_eq!(call.arguments(), &Value::Null, "{written}");
        assert_eq!(call.arguments()["day"], Value::Null, "{written}");
        assert_eq!(call.arguments_text(), Some(written));
        assert_eq!(call.arguments_json(), written);
        assert!(call.clone().arguments_mut().is_none(), "{written}");
        // Never run: the model is told why.
        let outcome = tokio_run(registry().dispatch_turn(std::slice::from_ref(&call)));
        let message = outcome.results[0]
            .result
            .error_message()
            .unwrap()
            .to_owned();
        assert!(message.contains(why), "{written}: {message}");
    }
}

#[test]
fn a_repeated_key_cannot_show_the_host_one_value_and_the_tool_another() {
    // Read by a hook first (the parse is kept), then run: refused either way.
    let call = ToolCall::from_text("c1", "book", r#"{"day": "Monday", "day": "Sunday"}"#);
    assert_eq!(call.arguments()["day"], Value::Null);
    let outcome = tokio_run(registry().dispatch_turn(std::slice::from_ref(&call)));
    assert!(outcome.results[0].result.is_error());
}

#[test]
fn what_the_host_read_is_what_the_tool_runs_with() {
    let call = ToolCall::from_text("c1", "book", r#"{"day": "Friday"}"#);
    assert_eq!(call.arguments()["day"], "Friday");
    let outcome = tokio_run(registry().dispatch_turn(std::slice::from_ref(&call)));
    assert_eq!(outcome.results[0].result.to_text(), "booked on Friday");
}

#[test]
fn edits_change_the_arguments_and_drop_the_models_text() {
    let mut call = ToolCall::from_text("c1", "book", r#"{"day": "Saturday"}"#);
    call.arguments_mut()
        .unwrap()
        .insert("day".into(), json!("Friday"));
    assert_eq!(call.arguments(), &json!({"day": "Friday"}));
    assert_eq!(call.arguments_text(), None);
    assert_eq!((call.id.as_str(), call.name.as_str()), ("c1", "book"));
    let outcome = tokio_run(registry().dispatch_turn(std::slice::from_ref(&call)));
    assert_eq!(outcome.results[0].result.to_text(), "booked on Friday");

    let replaced = call.with_arguments(json!({"day": "Tuesday"}));
    assert_eq!(replaced.arguments()["day"], "Tuesday");
    assert_eq!(replaced.into_arguments(), json!({"day": "Tuesday"}));
}

#[test]
fn saved_calls_keep_the_form_they_came_in() {
    for saved in [
        json!({"id": "c1", "name": "book", "arguments": "{\"day\":\"Friday\"}"}),
        json!({"id": "c1", "name": "book", "arguments": {"day": "Friday"}}),
    ] {
        let call: ToolCall = serde_json::from_value(saved.clone()).unwrap();
        // Read once: reading does not change what is saved.
        assert_eq!(call.arguments()["day"], "Friday");
        assert_eq!(serde_json::to_value(&call).unwrap(), saved);
    }
}

fn tokio_run<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}
