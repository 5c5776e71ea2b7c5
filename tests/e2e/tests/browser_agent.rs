//! The browser agent example (tests/e2e/examples/browser_agent.rs),
//! driven here by a real model (llama.cpp's server with Gemma 3 270M) on the
//! fixture site, in a real Chromium: it runs its steps, each showing the
//! page map and running the model's calls, and stops cleanly at the step
//! limit even though so small a model never finishes the task.

#[path = "../../../toolkit-agent/tests/support/llama.rs"]
mod llama;

#[allow(dead_code)]
#[path = "../examples/browser_agent.rs"]
mod example;

// The fixture site of the browser scenarios (tests/browser/), and how they
// find Chromium.
#[allow(dead_code)]
#[path = "../../../toolkit-browser/tests/browser/support/chromium.rs"]
mod chromium;
#[allow(dead_code)]
#[path = "../../../toolkit-browser/tests/browser/support/pages.rs"]
mod pages;
#[path = "../../../toolkit-browser/tests/browser/support/site.rs"]
mod site;

use toolkit_agent::StopReason;
use toolkit_tests::http::TestServer;
use toolkit_tests::skip::skipped;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_agent_runs_steps_and_stops_at_the_limit() {
    if skipped(chromium::SKIP_VAR) {
        return;
    }
    let config = chromium::config();
    // The tool definitions and a page map take ~4,000 tokens.
    let Some(server) = llama::start(16_384) else {
        return;
    };
    let site = TestServer::start(site::routes());
    let record = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("browser-agent-record-{}", site.port()));
    let _ = std::fs::remove_dir_all(&record);
    let options = example::Options::parse(
        [
            "--base-url",
            &server.base_url,
            "--model",
            "gemma",
            "--dialect",
            "openai",
            "--max-steps",
            "3",
            "--max-tokens",
            "64",
            "--tool-choice",
            "required",
            "--start-url",
            &site.url("/form"),
            "--record",
            record.to_str().expect("a UTF-8 path"),
            "Type toolkit into the Query field, press Search, then call done.",
        ]
        .map(String::from),
    )
    .unwrap();
    let mut lines = Vec::new();
    let mut print = |line: String| lines.push(line);
    // The model's own calls: see `llama::InCall`.
    let outcome = example::run_with(server.calling_model(), &options, config, &mut print).await;
    let printed = lines.join("\n");
    let outcome = outcome.unwrap_or_else(|error| panic!("{error}\n{printed}"));
    eprintln!("{printed}");

    assert!(
        matches!(outcome.stop, StopReason::StepLimit | StopReason::Done),
        "a clean stop: {:?}\n{printed}",
        outcome.stop
    );
    if matches!(outcome.stop, StopReason::StepLimit) {
        assert_eq!(outcome.steps, 3, "{printed}");
    }
    assert!(outcome.usage.input_tokens > 0);
    for step in 1..=outcome.steps {
        assert!(printed.contains(&format!("step {step}\n")), "{printed}");
    }
    // Each step showed the page: the form's fields and button.
    let maps: Vec<&str> = lines
        .iter()
        .filter(|line| line.starts_with("  page map: "))
        .map(String::as_str)
        .collect();
    assert_eq!(maps.len(), outcome.steps, "{printed}");
    assert!(
        maps.iter()
            .all(|line| !line.starts_with("  page map: 0 elements")),
        "{printed}"
    );
    // The model's own calls ran (or were answered with an error), each with
    // its result printed.
    let calls = lines
        .iter()
        .filter(|line| line.starts_with("  call "))
        .count();
    let results = lines.iter().filter(|line| line.contains(" → ")).count();
    assert!(calls >= outcome.steps, "a call every step: {printed}");
    assert_eq!(calls, results, "{printed}");
    assert!(printed.contains("stopped: "), "{printed}");
    // The record: a section per call that ran (a call whose arguments do
    // not fit the schema is answered before it runs), and an animation.
    let html = std::fs::read_to_string(record.join("run.html")).expect("run.html");
    let sections = html.matches("<section class=\"step").count();
    assert!(sections <= calls, "{sections} of {calls}\n{printed}");
    assert_eq!(html.matches("<section class=\"end\"").count(), 1);
    assert!(
        printed.contains(&format!("record: {sections} step(s)")),
        "{printed}"
    );
    let gif = std::fs::read(record.join("run.gif")).expect("run.gif");
    assert!(gif.starts_with(b"GIF89a"), "{:?}", &gif[..6]);
}
