//! Failures that must stay small and visible: an absurd tool name, a lazy
//! text that reads itself, a lazy text that panicked, as later steps see it.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{CallError, History, Registry, ToolCallResult, ToolResult, tool, tools};
use toolkit_tests::fixtures::within;

/// Searches the index.
#[tool(catalogue = false)]
fn search(
    /// The query.
    query: String,
) -> String {
    query
}

/// Takes a screenshot.
#[tool(catalogue = false)]
fn screenshot() -> String {
    "shot".into()
}

#[tokio::test]
async fn an_absurd_tool_name_is_answered_briefly() {
    let registry = Registry::builder()
        .tools(tools![search, screenshot])
        .build()
        .unwrap();

    // A million characters that hold a real name: no suggestion, and the
    // name comes back cut.
    let huge = format!("search{}", "x".repeat(1_000_000));
    let outcome = registry.dispatch((&huge, "{}")).await;
    let message = outcome.result.error_message().unwrap().to_owned();
    assert!(message.len() < 300, "{} characters", message.len());
    assert!(
        message.starts_with("there is no tool named `searchxxx"),
        "{message}"
    );
    assert!(message.contains("(1000006 characters)"), "{message}");
    match outcome.error {
        Some(CallError::UnknownTool { name, suggestions }) => {
            assert_eq!(name.len(), huge.len(), "the host keeps the whole name");
            assert!(suggestions.is_empty(), "{suggestions:?}");
        }
        other => panic!("{other:?}"),
    }

    // Multi-byte characters are cut on a character boundary.
    let wide = "é".repeat(10_000);
    let outcome = registry.dispatch((&wide, "{}")).await;
    let message = outcome.result.error_message().unwrap();
    assert!(message.chars().count() < 200, "{message}");

    // Every provider's message stays short too.
    let turn = [ToolCallResult::new("call_1", "x", outcome.result.clone())];
    let chat = emit::openai_chat(&turn, &EmitOptions::default()).to_json();
    assert!(chat.to_string().len() < 400, "{chat}");

    // Names of a plausible length still get suggestions.
    let typo = registry.dispatch(("serach", "{}")).await;
    assert_eq!(
        typo.result.error_message(),
        Some("there is no tool named `serach`; did you mean `search`?")
    );
    let long_typo = format!("{}search", "x".repeat(60));
    let outcome = registry.dispatch((&long_typo, "{}")).await;
    assert!(
        outcome.result.error_message().unwrap().contains("`search`"),
        "{:?}",
        outcome.result.error_message()
    );
}

#[test]
fn a_lazy_text_that_reads_itself_gets_an_error() {
    let seen = within(Duration::from_secs(20), || {
        let slot: Arc<Mutex<Option<ToolResult>>> = Arc::new(Mutex::new(None));
        let inside = Arc::clone(&slot);
        let result = ToolResult::lazy_text(move || {
            let me = inside.lock().unwrap().clone().expect("set before reading");
            // Reading itself, every way there is.
            let text = me.to_text();
            let error = me.error_message().map(str::to_owned);
            let content = me.content().len();
            format!("inner: {text} | {error:?} | {content}")
        });
        *slot.lock().unwrap() = Some(result.clone());
        let outer = result.to_text();
        let again = result.clone().to_text();
        (outer, again, result.is_error())
    });
    let (outer, again, failed) = seen;
    assert!(
        outer.starts_with("inner: Error: the tool's lazy text was read by its own supplier"),
        "{outer}"
    );
    assert!(outer.contains("Some(\"the tool's lazy text"), "{outer}");
    assert_eq!(outer, again, "computed once, cached");
    // The supplier returned normally: the result itself is its text.
    assert!(!failed);
}

#[test]
fn a_lazy_text_read_from_two_threads_still_runs_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&runs);
    let result = ToolResult::lazy_text(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        thread::sleep(Duration::from_millis(50));
        "slow".to_owned()
    });
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let result = result.clone();
            thread::spawn(move || result.to_text())
        })
        .collect();
    for reader in readers {
        assert_eq!(reader.join().unwrap(), "slow");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// Step 1's view holds the panic as an error, for every emitter.
fn assert_step_one_failed(history: &History) {
    let view = history.view(1);
    let failed = &view[0].result;
    assert!(failed.is_error(), "step view lost the error: {failed:?}");
    let message = failed.error_message().unwrap();
    assert!(
        message.contains("the report generator crashed"),
        "{message}"
    );
    assert!(!view[1].result.is_error());

    let emitted = emit::anthropic(&view, &EmitOptions::default()).to_json();
    let block = &emitted[0]["content"][0];
    assert_eq!(block["is_error"], true, "{emitted}");
    assert!(
        block.to_string().contains("the report generator crashed"),
        "{emitted}"
    );
}

#[test]
fn the_history_keeps_a_panicking_lazy_texts_error() {
    let mut history = History::new();
    let exploding = ToolResult::lazy_text(|| panic!("the report generator crashed"))
        .with_memory("Tried to build the report");
    history
        .record(vec![
            ToolCallResult::new("call_1", "report", exploding),
            ToolCallResult::new("call_2", "search", ToolResult::text("3 hits")),
        ])
        .unwrap();
    // Seen at the next step, and at every step after.
    assert_step_one_failed(&history);
    history
        .record(vec![ToolCallResult::new(
            "call_3",
            "search",
            ToolResult::text("4 hits"),
        )])
        .unwrap();
    assert_step_one_failed(&history);

    let rendered = history.render();
    assert!(
        rendered.contains("Error: the tool panicked: the report generator crashed"),
        "{rendered}"
    );
    assert!(rendered.contains("Memory: Tried to build the report"));
    // The recorded step itself is untouched.
    assert!(history.step(1).unwrap()[0].result.is_error());
}
