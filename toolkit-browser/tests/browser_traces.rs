//! Browser actions as a recording subscriber sees them, in a real
//! Chromium on the fixture site: each action's `execute_tool` span carries
//! the page's address as `url.full`, and with content capture on, neither
//! the arguments nor the results it records hold a secret, whether the
//! model named it by its placeholder or wrote its value.
//!
//! A binary of its own: content capture is one switch for the process.

// The fixture site of the browser scenarios (tests/browser/), and how they
// find Chromium.
#[allow(dead_code)]
#[path = "browser/support/chromium.rs"]
mod chromium;
#[allow(dead_code)]
#[path = "browser/support/pages.rs"]
mod pages;
#[path = "browser/support/site.rs"]
mod site;

use serde_json::{Value, json};
use toolkit_browser::{Browser, SafetyPolicy};
use toolkit_core::Registry;
use toolkit_core::telemetry::{self, attr};
use toolkit_tests::http::TestServer;
use toolkit_tests::skip::skipped;
use toolkit_tests::trace::{Recorder, SpanRecord};

const SECRET: &str = "hunter2 s3cr&t!";

/// The forms of the secret a leak would show.
const LEAKS: [&str; 5] = [SECRET, "hunter2", "s3cr&t", "s3cr%26t", "s3cr\\u0026t"];

async fn index(browser: &Browser, needle: &str) -> u32 {
    let map = browser.page_map().await.expect("page map");
    map.elements
        .iter()
        .find(|e| e.render().contains(needle))
        .map(|e| e.index)
        .unwrap_or_else(|| panic!("no element with `{needle}` in:\n{}", map.render()))
}

async fn call(registry: &Registry, name: &str, arguments: Value) -> String {
    let outcome = registry.dispatch((name, &arguments)).await;
    assert!(outcome.error.is_none(), "{name}: {:?}", outcome.error);
    assert!(
        !outcome.result.is_error(),
        "{name}: {}",
        outcome.result.to_text()
    );
    outcome.result.to_text()
}

fn field<'s>(span: &'s SpanRecord, name: &str) -> &'s str {
    span.field(name)
        .unwrap_or_else(|| panic!("no `{name}` in {span:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_carry_the_page_address_and_never_a_secret() {
    if skipped(chromium::SKIP_VAR) {
        return;
    }
    telemetry::capture_content(true);
    let site = TestServer::start(site::routes());
    let browser = chromium::launch().await;
    let policy = SafetyPolicy::builder()
        .allow_domains(["127.0.0.1"])
        .secret("password", SECRET)
        .build()
        .unwrap();
    let registry = toolkit_browser::registry(browser.clone(), policy)
        .build()
        .unwrap();
    let recorder = Recorder::default();
    let login = site.url("/login");
    {
        let _default = tracing::subscriber::set_default(recorder.clone());
        call(&registry, "navigate", json!({"url": login})).await;
        let user = index(&browser, "name=user").await;
        let pw = index(&browser, "name=pw").await;
        // The model names the secret, as it should...
        let typed = call(
            &registry,
            "input",
            json!({"index": pw, "text": "<secret>password</secret>"}),
        )
        .await;
        assert!(typed.contains("<secret>password</secret>"), "{typed}");
        // ...or writes its value, which the page then echoes.
        call(&registry, "input", json!({"index": user, "text": SECRET})).await;
        let submit = index(&browser, "Log in").await;
        // A GET form: the secret goes into the next page's query.
        let submitted = call(&registry, "click", json!({"index": submit})).await;
        assert!(submitted.contains("/welcome"), "{submitted}");
    }
    browser.close().await.unwrap();
    telemetry::capture_content(false);

    let recorded = recorder.all_text();
    for leak in LEAKS {
        assert!(!recorded.contains(leak), "`{leak}` recorded:\n{recorded}");
    }

    let navigate = recorder.span("execute_tool navigate");
    assert_eq!(field(&navigate, attr::URL_FULL), login);
    let inputs = recorder.spans_named("execute_tool input");
    assert_eq!(inputs.len(), 2);
    for input in &inputs {
        assert_eq!(field(input, attr::URL_FULL), login);
        assert!(
            field(input, attr::TOOL_CALL_RESULT).contains("Typed"),
            "{input:#?}"
        );
    }
    // The placeholder as the model wrote it; the value the model wrote,
    // replaced by it.
    for input in &inputs {
        let arguments: Value =
            serde_json::from_str(field(input, attr::TOOL_CALL_ARGUMENTS)).unwrap();
        assert_eq!(arguments["text"], "<secret>password</secret>");
    }
    // The query held the secret: the address is kept without it.
    let click = recorder.span("execute_tool click");
    assert_eq!(field(&click, attr::URL_FULL), site.url("/welcome"));
    // The page echoed the secret into its title and text: the result
    // recorded shows the placeholder.
    assert!(
        field(&click, attr::TOOL_CALL_RESULT).contains("<secret>password</secret>"),
        "{click:#?}"
    );
}
