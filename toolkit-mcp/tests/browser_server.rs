//! The browser toolbox served over MCP, as the `serve_browser` example
//! serves it, driven by our client: a real headless Chromium opens a page
//! this test serves on 127.0.0.1, and the page's text comes back over MCP.
//!
//! The test binary is its own server: with `TOOLKIT_MCP_TEST_BROWSER=1` it
//! launches Chromium and serves the toolbox on stdio. The test fails when
//! Chromium is missing, unless `TOOLKIT_SKIP_BROWSER_TESTS=1`.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;

use serde_json::json;
use toolkit_browser::{Browser, BrowserConfig, SafetyPolicy};
use toolkit_core::Registry;
use toolkit_mcp::{McpClient, McpServer};

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

/// A one-page site on a free port of 127.0.0.1.
fn site() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = listener.local_addr().expect("an address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let page = "<html><head><title>Pantry</title></head><body><h1>Pantry</h1>\
                        <p>Three jars of honey.</p><a href=\"/more\">More</a></body></html>";
            let _ = write!(
                &stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    format!("http://{address}/")
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
    let url = site();
    let opened = registry
        .call("navigate", json!({"url": url}).to_string().as_str())
        .await
        .result;
    assert!(!opened.is_error(), "{}", opened.to_text());
    let text = opened.to_text();
    assert!(text.contains("Pantry"), "{text}");
    // The policy holds for MCP clients too.
    let refused = registry
        .call("navigate", r#"{"url": "https://example.com"}"#)
        .await
        .result;
    assert!(refused.is_error(), "{}", refused.to_text());
    let found = registry
        .call("find_text", r#"{"text": "honey"}"#)
        .await
        .result;
    assert!(!found.is_error(), "{}", found.to_text());
    client.close().await;
}

fn main() {
    if std::env::var_os("TOOLKIT_MCP_TEST_BROWSER").is_some() {
        tokio::runtime::Runtime::new()
            .expect("a runtime")
            .block_on(serve());
        return;
    }
    if std::env::var_os("TOOLKIT_SKIP_BROWSER_TESTS").is_some() {
        println!("browser_server: skipped (TOOLKIT_SKIP_BROWSER_TESTS)");
        return;
    }
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(run());
    println!("browser_server: ok");
}
