//! What older results and observations look like in the request the
//! conversation renders, in every dialect: show-once content leaves after
//! one step, memory lines and errors stay, long outputs are cut to their
//! beginning and a file, older observations shrink to their later line.

use serde_json::{Value, json};
use toolkit_agent::{Conversation, Observation};
use toolkit_core::response::Turn;
use toolkit_core::{OutputBudget, Provider, ToolCallResult, ToolResult};

const DIALECTS: [Provider; 4] = [
    Provider::OpenAi,
    Provider::OpenAiResponses,
    Provider::Anthropic,
    Provider::Gemini,
];

/// A provider's response body holding one call of `tool` with id `id`.
fn one_call(provider: Provider, id: &str, tool: &str) -> Turn {
    let body = match provider {
        Provider::OpenAiResponses => json!({"status": "completed", "output": [
            {"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": tool,
             "arguments": "{}", "status": "completed"}]}),
        Provider::Anthropic => json!({"id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": id, "name": tool, "input": {}}],
            "stop_reason": "tool_use"}),
        Provider::Gemini => json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": id, "name": tool, "args": {}}}]}, "finishReason": "STOP"}]}),
        _ => json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": tool, "arguments": "{}"}}]}}]}),
    };
    provider.read(&body).unwrap()
}

/// Runs one step whose single call returns `result`, and returns the
/// request body the step after it sends.
fn step(conversation: &mut Conversation, id: &str, result: ToolResult) -> String {
    let turn = one_call(conversation.provider(), id, "tool");
    conversation.push_turn(&turn);
    let pushed = conversation.push_results(&turn, vec![ToolCallResult::new(id, "tool", result)]);
    assert!(pushed.problems.is_empty() && pushed.unsaved.is_none());
    conversation.request().to_string()
}

#[test]
fn show_once_content_is_sent_once_and_its_memory_stays() {
    for provider in DIALECTS {
        let mut conversation = Conversation::new(provider);
        conversation.push_user("List the products, then open one.");
        let listing = ToolResult::text("PRODUCT-DATA")
            .with_show_once()
            .with_memory("Found 50 products");
        let after_1 = step(&mut conversation, "c1", listing);
        assert!(after_1.contains("PRODUCT-DATA"), "{provider:?}: {after_1}");
        assert!(after_1.contains("Memory: Found 50 products"), "{after_1}");

        let after_2 = step(&mut conversation, "c2", ToolResult::error("timeout"));
        assert!(!after_2.contains("PRODUCT-DATA"), "{provider:?}: {after_2}");
        assert!(after_2.contains("Memory: Found 50 products"), "{after_2}");
        assert!(after_2.contains("was shown once"), "{after_2}");
        assert!(after_2.contains("timeout"), "{after_2}");

        // Still answered, in place: the call keeps exactly one result.
        let after_3 = step(&mut conversation, "c3", ToolResult::text("opened"));
        assert!(after_3.contains("timeout"), "errors stay: {after_3}");
        assert_eq!(after_3.matches("Found 50 products").count(), 1);
        assert_eq!(conversation.history().len(), 3);
        assert_eq!(
            conversation.history().step(1).unwrap()[0]
                .result
                .content()
                .len(),
            1,
            "the history keeps the content whole"
        );
    }
}

#[test]
fn results_are_emitted_once_and_kept() {
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.push_user("Go.");
    step(&mut conversation, "c1", ToolResult::text("first"));
    let before: Vec<Value> = conversation.items().to_vec();
    step(&mut conversation, "c2", ToolResult::text("second"));
    assert_eq!(
        &conversation.items()[..before.len()],
        &before[..],
        "earlier items are left as they were"
    );
}

#[test]
fn long_outputs_are_cut_to_their_beginning_and_a_file() {
    let dir = std::env::temp_dir().join(format!("toolkit-agent-budget-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for provider in DIALECTS {
        let mut conversation = Conversation::new(provider);
        conversation.set_output_budget(OutputBudget::new(100, &dir));
        conversation.push_user("Read the page.");
        let page = format!("HEAD{}TAIL", "x".repeat(5_000));
        let request = step(&mut conversation, "c1", ToolResult::text(page.clone()));
        assert!(request.contains("HEAD"), "{provider:?}: {request}");
        assert!(!request.contains("TAIL"), "{provider:?}: cut");
        assert!(request.len() < 2_000, "{} bytes", request.len());
        let file = conversation.history().saved_file(1, 0).unwrap();
        assert_eq!(std::fs::read_to_string(file).unwrap(), page);
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(request.contains(name), "the model is told the file's name");
        assert!(
            !request.contains(dir.to_str().unwrap()),
            "but not the host's folder"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn older_observations_shrink_to_their_later_line() {
    for provider in DIALECTS {
        let mut conversation = Conversation::new(provider);
        conversation.push_user("Sign up.");
        conversation
            .push_observation(Observation::new("MAP-ONE [1]<button>Go</button>").later("page 1"));
        let first = conversation.request().to_string();
        assert!(first.contains("MAP-ONE"), "{provider:?}: {first}");

        let listing = ToolResult::text("LISTING").with_show_once();
        step(&mut conversation, "c1", listing);
        conversation.push_observation(Observation::new("MAP-TWO").later("page 2"));
        // The show-once listing becomes older here, and its items are
        // emitted again: the observation after it must stay in place.
        step(&mut conversation, "c2", ToolResult::text("clicked"));
        conversation.push_observation(Observation::new("MAP-THREE"));
        let request = conversation.request().to_string();
        assert!(!request.contains("MAP-ONE") && !request.contains("MAP-TWO"));
        assert!(request.contains("page 1") && request.contains("page 2"));
        assert!(request.contains("MAP-THREE"), "{provider:?}: {request}");
        assert!(!request.contains("LISTING"), "{provider:?}: {request}");
        let body: Value = serde_json::from_str(&request).unwrap();
        let text = body.to_string();
        let order = ["page 1", "c1", "page 2", "c2", "MAP-THREE"].map(|needle| {
            text.rfind(needle)
                .unwrap_or_else(|| panic!("{needle} in {text}"))
        });
        assert!(order.is_sorted(), "{provider:?}: {order:?} in {text}");
    }
}

#[test]
fn anthropic_gets_one_user_message_after_results_with_the_results_first() {
    let mut conversation = Conversation::new(Provider::Anthropic);
    conversation.push_user("Sign up.");
    conversation.push_observation(Observation::new("MAP-ONE"));
    step(&mut conversation, "c1", ToolResult::text("clicked"));
    conversation.push_observation(Observation::new("MAP-TWO"));
    let request = conversation.request();
    let messages = request["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{request:#}");
    let types: Vec<&str> = messages[2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|block| block["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["tool_result", "text"], "{request:#}");
    assert_eq!(
        messages[0]["content"][1]["text"],
        Observation::DEFAULT_LATER
    );
}
