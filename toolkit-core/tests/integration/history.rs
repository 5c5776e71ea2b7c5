//! Memory across steps: what the model sees of earlier results.

use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{Block, History, OutputBudget, ToolCallResult, ToolResult};
use toolkit_tests::fixtures::{ScratchDir, png};
use toolkit_tests::judges::anthropic;

fn call(id: &str, name: &str, result: ToolResult) -> ToolCallResult {
    ToolCallResult::new(id, name, result)
}

/// A step whose listing is shown once and leaves a memory line.
fn record_listing(history: &mut History) {
    history
        .record(vec![call(
            "c1",
            "list",
            ToolResult::text("PRODUCT-DATA")
                .with_show_once()
                .with_memory("Found 50 products"),
        )])
        .unwrap();
}

/// Three steps: a show-once listing with a memory line, a failure, a plain
/// text with a memory line.
fn three_steps(history: &mut History) {
    record_listing(history);
    history
        .record(vec![call("c2", "open", ToolResult::error("timeout"))])
        .unwrap();
    history
        .record(vec![call(
            "c3",
            "read",
            ToolResult::text("PAGE-TEXT").with_memory("Read the pricing page"),
        )])
        .unwrap();
}

#[test]
fn show_once_content_is_seen_at_the_next_step_only() {
    let mut history = History::new();
    record_listing(&mut history);
    let step_2 = history.render();
    assert!(step_2.contains("PRODUCT-DATA"), "{step_2}");
    assert!(step_2.contains("Found 50 products"));

    history
        .record(vec![call("c2", "open", ToolResult::text("opened"))])
        .unwrap();
    let step_3 = history.render();
    assert!(!step_3.contains("PRODUCT-DATA"), "{step_3}");
    assert!(step_3.contains("Memory: Found 50 products"));
    assert!(step_3.contains("shown once"));

    // Nothing is lost: the history keeps the full result.
    assert_eq!(
        history.step(1).unwrap()[0].result.as_text(),
        Ok("PRODUCT-DATA")
    );
}

#[test]
fn errors_memories_and_plain_content_are_always_seen() {
    let mut history = History::new();
    three_steps(&mut history);
    history
        .record(vec![call("c4", "wait", ToolResult::text("waited"))])
        .unwrap();
    let seen = history.render();
    assert!(seen.contains("Error: timeout"), "{seen}");
    assert!(seen.contains("Memory: Found 50 products"));
    assert!(seen.contains("PAGE-TEXT"));
    assert!(seen.contains("Memory: Read the pricing page"));
    assert!(seen.contains("waited"));
    assert!(!seen.contains("PRODUCT-DATA"));
    let order = [
        "<step 1>",
        "[list c1]",
        "<step 2>",
        "[open c2]",
        "<step 3>",
        "<step 4>",
    ];
    let positions: Vec<usize> = order.iter().map(|s| seen.find(s).unwrap()).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{seen}");
}

#[test]
fn views_can_be_emitted_to_any_provider() {
    let mut history = History::new();
    three_steps(&mut history);
    let view = history.view(1);
    assert_eq!(view.len(), 1);
    assert!(view[0].result.to_text().contains("Found 50 products"));
    let message = &emit::anthropic(&view, &EmitOptions::default()).items[0];
    anthropic::check_user_message(message).unwrap();
    assert!(history.view(0).is_empty());
    assert!(history.view(9).is_empty());
}

#[test]
fn long_content_is_saved_whole_and_shown_by_its_beginning() {
    let dir = ScratchDir::new("history-budget");
    let mut history = History::with_budget(OutputBudget::new(20, &dir));
    let long = "0123456789".repeat(10);
    history
        .record(vec![call(
            "call/1",
            "extract",
            ToolResult::blocks([Block::text(&long), Block::image(png())]),
        )])
        .unwrap();
    let file = history.saved_file(1, 0).expect("saved").to_path_buf();
    assert_eq!(file.parent().unwrap(), &*dir);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        long,
        "nothing lost"
    );

    let view = history.view(1);
    let blocks = view[0].result.content();
    let Block::Text { text } = &blocks[0] else {
        panic!("{blocks:?}")
    };
    assert!(text.starts_with("01234567890123456789…\n"), "{text}");
    assert!(!text.contains(&long));
    let name = file.file_name().unwrap().to_str().unwrap();
    assert!(text.contains(name), "names the file: {text}");
    assert!(text.contains("20 of 100 characters"), "{text}");
    assert!(
        !name.contains('/'),
        "the call id cannot make a path: {name}"
    );
    assert!(matches!(blocks[1], Block::Image { .. }), "images kept");

    // Short content is left alone and not saved.
    history
        .record(vec![call("c2", "short", ToolResult::text("tiny"))])
        .unwrap();
    assert!(history.saved_file(2, 0).is_none());
    assert_eq!(history.view(2)[0].result.as_text(), Ok("tiny"));
}

#[test]
fn show_once_content_is_saved_so_it_can_be_read_back() {
    let dir = ScratchDir::new("history-once");
    let mut history = History::with_budget(OutputBudget::new(1000, &dir));
    three_steps(&mut history);
    let file = history.saved_file(1, 0).expect("show-once content saved");
    assert_eq!(std::fs::read_to_string(file).unwrap(), "PRODUCT-DATA");
    let seen = history.render();
    assert!(
        seen.contains(file.file_name().unwrap().to_str().unwrap()),
        "{seen}"
    );
}

#[test]
fn a_budget_folder_that_cannot_be_written_loses_nothing() {
    let scratch = ScratchDir::new("history-blocked");
    let dir = scratch.join("outputs");
    std::fs::write(&dir, "a file where the folder should be").unwrap();
    let mut history = History::with_budget(OutputBudget::new(5, &dir));
    let error = history
        .record(vec![call("c1", "extract", ToolResult::text("0123456789"))])
        .unwrap_err();
    assert_eq!(error.step, 1);
    assert_eq!(error.failures[0].0, "c1");
    assert!(error.to_string().contains("not saved"));
    assert_eq!(history.len(), 1, "the step is recorded all the same");
    assert_eq!(
        history.view(1)[0].result.as_text(),
        Ok("0123456789"),
        "shown whole"
    );
}

#[tokio::test]
async fn the_model_reads_a_saved_output_back_page_by_page() {
    use toolkit_core::builtin::read_output;
    use toolkit_core::{Registry, tools};

    let dir = ScratchDir::new("history-read");
    let budget = OutputBudget::new(10, &dir);
    let mut history = History::with_budget(budget.clone());
    let long = "abcdefghij".repeat(2) + "tail";
    history
        .record(vec![call("c1", "extract", ToolResult::text(&long))])
        .unwrap();
    let name = history
        .saved_file(1, 0)
        .unwrap()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();

    let registry = Registry::builder()
        .tools(tools![read_output])
        .state(budget)
        .build()
        .unwrap();
    let read = |args: serde_json::Value| {
        let registry = &registry;
        async move { registry.dispatch(("read_output", &args)).await.result }
    };
    let first = read(serde_json::json!({"file": name})).await;
    assert_eq!(
        first.as_text().unwrap(),
        format!("[`{name}`, page 1 of 3. Read page 2 for more.]\nabcdefghij")
    );
    let last = read(serde_json::json!({"file": name, "page": 3})).await;
    assert_eq!(
        last.as_text().unwrap(),
        format!("[`{name}`, page 3 of 3.]\ntail")
    );

    let past = read(serde_json::json!({"file": name, "page": 4})).await;
    assert!(past.error_message().unwrap().contains("has 3 page(s)"));

    // Only files of the folder, by plain name.
    let outside = ScratchDir::new("history-read-outside");
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    for sneaky in [
        format!(
            "../{}/secret.txt",
            outside.file_name().unwrap().to_str().unwrap()
        ),
        outside.join("secret.txt").display().to_string(),
        "missing.txt".to_owned(),
    ] {
        let result = read(serde_json::json!({"file": sneaky})).await;
        assert!(result.is_error(), "{sneaky}");
        assert!(!result.to_text().contains("secret\n"), "{sneaky}");
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.join("secret.txt"), dir.join("link.txt")).unwrap();
        let result = read(serde_json::json!({"file": "link.txt"})).await;
        assert_eq!(
            result.error_message(),
            Some("there is no saved output named `link.txt`")
        );
    }
}
