//! The browser toolbox served over MCP, as the `serve_browser` example
//! serves it, driven by our client: a real headless Chromium opens a page
//! this test serves on 127.0.0.1, and the page's text comes back over MCP.
//!
//! The test binary is its own server: with `TOOLKIT_MCP_TEST_BROWSER=1` it
//! launches Chromium and serves the toolbox on stdio. The test fails when
//! Chromium is missing, unless `TOOLKIT_SKIP_BROWSER_TESTS=1`.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use toolkit_browser::{Browser, BrowserConfig, SafetyPolicy};
use toolkit_core::Registry;
use toolkit_mcp::{McpClient, McpServer};
use toolkit_tests::http::{Route, TestServer};
use toolkit_tests::runner::{self, Test};

/// Serves the toolbox on stdio, allowing only 127.0.0.1.
async fn serve() {
    let browser = Browser::launch(BrowserConfig::default())
        .await
        .expect("Chromium starts");
    let policy = SafetyPolicy::builder()
        .allow_domains(["127.0.0.1"])
        .build()
        .expect("a policy");
    let registry = toolkit_browser::registry(browser.clone(), policy)
        .build()
        .expect("the toolbox");
    let served = McpServer::new(Arc::new(registry)).serve_stdio().await;
    let _ = browser.close().await;
    served.expect("served");
}

/// A one-page site on a free port of 127.0.0.1, served until the test
/// ends.
fn site() -> TestServer {
    TestServer::start([(
        "/",
        Route::html(
            "<html><head><title>Pantry</title></head><body><h1>Pantry</h1>\
             <p>Three jars of honey.</p><a href=\"/more\">More</a></body></html>",
        ),
    )])
}

async fn run() {
    let me = std::env::current_exe().expect("the test's own path");
    let client = McpClient::command("browser", me, Vec::<String>::new())
        .env("TOOLKIT_MCP_TEST_BROWSER", "1")
        .prefix("")
        .connect()
        .await
        .expect("the browser server starts");
    let registry = Registry::builder()
        .tools(client.tools().await.expect("the toolbox"))
        .build()
        .expect("the toolbox's tools are valid");
    let names: Vec<String> = registry.names().collect();
    for expected in ["navigate", "click", "extract", "screenshot", "done"] {
        assert!(names.iter().any(|name| name == expected), "{names:?}");
    }
    let site = site();
    let opened = registry
        .dispatch((
            "navigate",
            json!({"url": site.url("/")}).to_string().as_str(),
        ))
        .await
        .result;
    assert!(!opened.is_error(), "{}", opened.to_text());
    let text = opened.to_text();
    assert!(text.contains("Pantry"), "{text}");
    // The policy holds for MCP clients too.
    let refused = registry
        .dispatch(("navigate", r#"{"url": "https://example.com"}"#))
        .await
        .result;
    assert!(refused.is_error(), "{}", refused.to_text());
    let found = registry
        .dispatch(("find_text", r#"{"text": "honey"}"#))
        .await
        .result;
    assert!(!found.is_error(), "{}", found.to_text());
    client.close().await;
}

fn main() -> ExitCode {
    if std::env::var_os("TOOLKIT_MCP_TEST_BROWSER").is_some() {
        tokio::runtime::Runtime::new()
            .expect("a runtime")
            .block_on(serve());
        return ExitCode::SUCCESS;
    }
    runner::run(vec![
        Test::new("a_page_read_over_mcp", || {
            tokio::runtime::Runtime::new()
                .expect("a runtime")
                .block_on(run());
        })
        .skip_when("TOOLKIT_SKIP_BROWSER_TESTS"),
    ])
}
