//! Our client driving the reference MCP servers from npm:
//! `@modelcontextprotocol/server-everything` (every kind of content,
//! progress, structured content; over stdio and Streamable HTTP) and
//! `@modelcontextprotocol/server-filesystem` (a real tool set, in a
//! temporary folder).
//!
//! The servers come from `TOOLKIT_NODE_MODULES` (`scripts/test` installs
//! them); the test fails when they are missing, unless
//! `TOOLKIT_SKIP_MCP_TESTS=1`.

mod support;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use toolkit_core::{
    Block, Cancellation, Progress, ProgressSink, Provider, Registry, ToolCall, ToolDef,
};
use toolkit_mcp::{McpClient, UNSHOWN_CONTENT};
use toolkit_tests::runner::{self, Test};

fn module(path: &str) -> PathBuf {
    let modules = std::env::var("TOOLKIT_NODE_MODULES").unwrap_or_else(|_| {
        panic!("TOOLKIT_NODE_MODULES is not set: run scripts/test, which installs the reference servers, or set TOOLKIT_SKIP_MCP_TESTS=1")
    });
    let path = PathBuf::from(modules).join(path);
    assert!(
        path.exists(),
        "{} is missing: run scripts/deps node",
        path.display()
    );
    path
}

async fn text(registry: &Registry, name: &str, arguments: serde_json::Value) -> String {
    registry
        .dispatch((name, arguments.to_string().as_str()))
        .await
        .result
        .to_text()
}

/// Every provider takes every tool of the server, as the registry
/// lowered them.
fn every_provider_takes(registry: &Registry) {
    for provider in Provider::ALL {
        let definitions = registry
            .tool_list(provider)
            .unwrap_or_else(|error| panic!("{provider:?}: {error}"));
        assert_eq!(definitions.len(), registry.names().count());
    }
}

async fn everything(client: &McpClient) {
    let registry = Registry::builder()
        .tools(client.tools().await.expect("tools"))
        .build()
        .expect("the server's tools are valid");
    every_provider_takes(&registry);
    let names: Vec<String> = registry.names().collect();
    assert!(
        names.contains(&"everything_get-tiny-image".to_owned()),
        "{names:?}"
    );
    let definitions = registry
        .tool_list(Provider::Mcp)
        .expect("definitions")
        .to_value();
    let echo = definitions
        .as_array()
        .expect("a list")
        .iter()
        .find(|tool| tool["name"] == "everything_echo")
        .expect("echo");
    assert_eq!(echo["annotations"]["readOnlyHint"], true);

    assert_eq!(
        text(&registry, "everything_echo", json!({"message": "hello"})).await,
        "Echo: hello"
    );
    let sum = text(&registry, "everything_get-sum", json!({"a": 2, "b": 3})).await;
    assert!(sum.contains('5'), "{sum}");
    // Checked here before the server sees it.
    let wrong = registry
        .dispatch(("everything_get-sum", r#"{"a": "two", "b": 3}"#))
        .await;
    assert!(wrong.result.is_error());

    let image = registry
        .dispatch(("everything_get-tiny-image", "{}"))
        .await
        .result;
    assert!(
        image.content().iter().any(
            |block| matches!(block, Block::Image { image } if image.mime_type() == "image/png")
        ),
        "{image:?}"
    );

    let links = registry
        .dispatch(("everything_get-resource-links", r#"{"count": 2}"#))
        .await
        .result;
    let uris: Vec<&str> = links
        .content()
        .iter()
        .filter_map(|block| match block {
            Block::ResourceLink { link } => Some(link.uri()),
            _ => None,
        })
        .collect();
    assert_eq!(uris.len(), 2, "{links:?}");
    assert!(uris.iter().all(|uri| !uri.is_empty()), "{links:?}");

    let embedded = registry
        .dispatch((
            "everything_get-resource-reference",
            r#"{"resourceType": "Text", "resourceId": 1}"#,
        ))
        .await
        .result;
    assert!(
        embedded.content().iter().any(
            |block| matches!(block, Block::Resource { resource } if resource.text().is_some())
        ),
        "{embedded:?}"
    );
    let blob = registry
        .dispatch((
            "everything_get-resource-reference",
            r#"{"resourceType": "Blob", "resourceId": 2}"#,
        ))
        .await
        .result;
    assert!(
        blob.content().iter().any(
            |block| matches!(block, Block::Resource { resource } if resource.blob().is_some())
        ),
        "{blob:?}"
    );
    assert!(!blob.attributes().contains_key(UNSHOWN_CONTENT), "{blob:?}");

    let structured = registry
        .dispatch((
            "everything_get-structured-content",
            r#"{"location": "Chicago"}"#,
        ))
        .await
        .result;
    let value = match structured.content() {
        [Block::Json { value }] => value.clone(),
        _ => structured.attributes()[toolkit_mcp::STRUCTURED_CONTENT].clone(),
    };
    assert!(value.get("temperature").is_some(), "{structured:?}");

    // Progress, from the server's long operation to the host.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = Arc::clone(&seen);
        ProgressSink::new(move |report: Progress| seen.lock().unwrap().push(report))
    };
    let call = ToolCall::new(
        "1",
        "everything_trigger-long-running-operation",
        json!({"duration": 1, "steps": 4}),
    );
    let long = registry.dispatch(&call).progress(&sink).await;
    assert!(!long.result.is_error(), "{:?}", long.result);
    let reports = seen.lock().unwrap().clone();
    assert!(reports.len() >= 3, "{reports:?}");
    assert_eq!(reports[0].total, Some(4.0));

    // Cancelling a long operation ends the call at once.
    let cancellation = Cancellation::new();
    let call = ToolCall::new(
        "2",
        "everything_trigger-long-running-operation",
        json!({"duration": 30, "steps": 3}),
    );
    let started = Instant::now();
    let running = registry.dispatch(&call).cancellation(&cancellation);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancellation.cancel();
    };
    let (outcome, ()) = tokio::join!(running, cancel);
    assert!(outcome.result.is_error());
    assert!(started.elapsed() < Duration::from_secs(10));
    // The server keeps serving.
    assert_eq!(
        text(&registry, "everything_echo", json!({"message": "again"})).await,
        "Echo: again"
    );
    offers(client).await;
}

/// Its resources read and its prompts filled in.
async fn offers(client: &McpClient) {
    let resources = client.resources().await.expect("the resources");
    let first = resources.first().expect("a resource");
    assert!(first.uri().starts_with("demo://"), "{first:?}");
    let read = client.read_resource(first.uri()).await.expect("read");
    assert_eq!(read[0].uri(), first.uri());
    assert!(read[0].text().is_some_and(|text| !text.is_empty()));

    let templates = client.resource_templates().await.expect("the templates");
    assert!(
        templates
            .iter()
            .any(|template| template.uri_template == "demo://resource/dynamic/text/{resourceId}"),
        "{templates:?}"
    );
    let read = client
        .read_resource("demo://resource/dynamic/text/1")
        .await
        .expect("read");
    assert!(
        read[0]
            .text()
            .is_some_and(|text| text.starts_with("Resource 1:")),
        "{read:?}"
    );
    let blob = client
        .read_resource("demo://resource/dynamic/blob/1")
        .await
        .expect("read");
    assert!(blob[0].blob().is_some(), "{blob:?}");

    let prompts = client.prompts().await.expect("the prompts");
    let arguments = &prompts
        .iter()
        .find(|prompt| prompt.name == "args-prompt")
        .expect("args-prompt")
        .arguments;
    let required: Vec<(&str, bool)> = arguments
        .iter()
        .map(|argument| (argument.name.as_str(), argument.required))
        .collect();
    assert_eq!(required, [("city", true), ("state", false)]);
    let filled = client
        .get_prompt("args-prompt", [("city", "Paris")])
        .await
        .expect("a filled prompt");
    assert!(
        matches!(&filled.messages[..], [message] if matches!(&message.content, Block::Text { text } if text == "What's weather in Paris?")),
        "{filled:?}"
    );
    let simple = client
        .get_prompt("simple-prompt", std::iter::empty::<(String, String)>())
        .await
        .expect("a filled prompt");
    assert_eq!(simple.messages.len(), 1);
}

async fn filesystem() {
    let folder = std::env::temp_dir().join(format!("toolkit-mcp-fs-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a folder");
    let folder = folder.canonicalize().expect("a real path");
    std::fs::write(folder.join("notes.txt"), "milk\neggs\n").expect("a file");
    let server = module("@modelcontextprotocol/server-filesystem/dist/index.js");
    let client = McpClient::command("fs", "node", [server.as_os_str(), folder.as_os_str()])
        .connect()
        .await
        .expect("server-filesystem starts");
    let registry = Arc::new(Registry::builder().build().expect("a registry"));
    let attached = client.attach(&registry).await.expect("attached");
    assert!(attached.refused.is_empty(), "{:?}", attached.refused);
    assert!(
        attached.added.contains(&"fs_read_text_file".to_owned()),
        "{:?}",
        attached.added
    );
    every_provider_takes(&registry);
    let read_only = registry.get("fs_read_text_file").expect("a tool");
    assert_eq!(read_only.annotations().read_only, Some(true));

    let path = |name: &str| folder.join(name).to_string_lossy().into_owned();
    let listing = text(&registry, "fs_list_directory", json!({"path": path("")})).await;
    assert!(listing.contains("notes.txt"), "{listing}");
    let notes = text(
        &registry,
        "fs_read_text_file",
        json!({"path": path("notes.txt")}),
    )
    .await;
    assert!(notes.contains("milk\neggs"), "{notes}");
    let written = registry
        .dispatch((
            "fs_write_file",
            json!({"path": path("plan.txt"), "content": "ship it"})
                .to_string()
                .as_str(),
        ))
        .await;
    assert!(!written.result.is_error(), "{:?}", written.result);
    assert_eq!(
        std::fs::read_to_string(folder.join("plan.txt")).expect("written"),
        "ship it"
    );
    // Outside the allowed folder: the server's error, as a result the model
    // reads.
    let outside = registry
        .dispatch(("fs_read_text_file", r#"{"path": "/etc/passwd"}"#))
        .await
        .result;
    assert!(outside.is_error(), "{outside:?}");
    assert!(
        !outside.to_text().contains("root:"),
        "{}",
        outside.to_text()
    );
    client.close().await;
    let _ = std::fs::remove_dir_all(&folder);
}

/// server-everything over stdio.
async fn everything_over_stdio() {
    let everything_js = module("@modelcontextprotocol/server-everything/dist/index.js");
    let stdio = McpClient::command(
        "everything",
        "node",
        [everything_js.as_os_str(), "stdio".as_ref()],
    )
    .connect()
    .await
    .expect("server-everything starts");
    // A 2025-11-25 server: `server/discover` refused, a session opened.
    assert_eq!(stdio.revision().await.as_deref(), Some("2025-11-25"));
    everything(&stdio).await;
    stdio.close().await;
}

/// server-everything over Streamable HTTP.
async fn everything_over_http() {
    let everything_js = module("@modelcontextprotocol/server-everything/dist/index.js");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let mut node = tokio::process::Command::new("node")
        .arg(&everything_js)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "server-everything never listened"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = McpClient::http("everything", &url)
        .connect()
        .await
        .expect("server-everything over HTTP");
    // A 2025-11-25 server: `server/discover` answered with a `4xx`, a
    // session opened.
    assert_eq!(http.revision().await.as_deref(), Some("2025-11-25"));
    everything(&http).await;
    // Told to speak 2026-07-28, the client does not fall back, and says
    // the server answered but cannot be spoken to.
    let modern = McpClient::http("everything", &url)
        .stateless(true)
        .connect()
        .await
        .expect_err("a 2025-11-25 server");
    assert_eq!(
        modern.kind(),
        toolkit_mcp::ClientErrorKind::Incompatible,
        "{modern}"
    );
    http.close().await;
    let _ = node.kill().await;
}

/// A server replaced by one of the other era between two runs of its
/// command: our server (2026-07-28) first, then, once a marker file
/// exists, server-everything (2025-11-25). After ours crashes, the client's
/// `server/discover` to the new process is refused, so it drops the era it
/// had learned, probes again and opens a session; calls reach the new
/// server.
async fn era_probed_again() {
    let everything_js = module("@modelcontextprotocol/server-everything/dist/index.js");
    let folder = std::env::temp_dir().join(format!("toolkit-mcp-swap-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("a temporary folder");
    let marker = folder.join("legacy");
    let me = std::env::current_exe().expect("the test's own path");
    let script = format!(
        "if [ -e '{}' ]; then exec node '{}' stdio; else exec '{}'; fi",
        marker.display(),
        everything_js.display(),
        me.display()
    );
    let client = McpClient::command("swap", "sh", ["-c", script.as_str()])
        .env("TOOLKIT_MCP_TEST_SERVE", "1")
        .connect()
        .await
        .expect("our server starts");
    assert_eq!(client.revision().await.as_deref(), Some("2026-07-28"));
    let registry = Registry::builder()
        .tools(client.tools().await.expect("our tools"))
        .build()
        .expect("a registry");
    std::fs::write(&marker, "").expect("the marker");
    let crashed = registry.dispatch(("swap_crash", "{}")).await.result;
    assert!(crashed.is_error(), "{crashed:?}");
    let tools = client.tools().await.expect("the new server's tools");
    assert_eq!(client.revision().await.as_deref(), Some("2025-11-25"));
    assert!(
        tools
            .iter()
            .any(|tool| tool.name() == "swap_get-tiny-image"),
        "{:?}",
        tools.iter().map(ToolDef::name).collect::<Vec<_>>()
    );
    let registry = Registry::builder()
        .tools(tools)
        .build()
        .expect("a registry");
    assert_eq!(
        text(&registry, "swap_echo", json!({"message": "again"})).await,
        "Echo: again"
    );
    client.close().await;
    let _ = std::fs::remove_dir_all(&folder);
}

/// The scenarios on a runtime each (multi-threaded, as a host's): a failed
/// scenario's children and connections end with it.
fn block_on(future: impl std::future::Future<Output = ()>) {
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(future);
}

fn main() -> ExitCode {
    if support::serve_if_asked() {
        return ExitCode::SUCCESS;
    }
    const SKIP: &str = "TOOLKIT_SKIP_MCP_TESTS";
    runner::run(vec![
        Test::new(
            "everything_over_stdio",
            || block_on(everything_over_stdio()),
        )
        .skip_when(SKIP),
        Test::new("everything_over_http", || block_on(everything_over_http())).skip_when(SKIP),
        Test::new("filesystem", || block_on(filesystem())).skip_when(SKIP),
        Test::new("era_probed_again", || block_on(era_probed_again())).skip_when(SKIP),
    ])
}
