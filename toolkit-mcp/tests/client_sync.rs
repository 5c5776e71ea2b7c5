//! What a registry holds after `attach` and after the list changes the
//! client follows, against our server over stdio: a server whose name
//! starts with a digit gets portable names, and a tool the registry
//! refuses is reported, the others of the same change still added.
//!
//! The test binary is its own server: started with
//! `TOOLKIT_MCP_TEST_SERVE=1` it serves the tools below on stdio, two of
//! them disabled until `reveal` is called.

use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_core::name::is_portable;
use toolkit_core::{CallContext, Problem, Provider, Registry, ToolDef, tool, tools};
use toolkit_mcp::{McpClient, McpClientBuilder, Synced};
use toolkit_tests::runner::{self, Test};

/// The registry being served, for `reveal`.
static SERVED: OnceLock<Arc<Registry>> = OnceLock::new();

/// Echoes a text.
#[tool]
fn echo(
    /// The text.
    text: String,
) -> String {
    text
}

/// Enables `clash` and `fresh`.
#[tool]
fn reveal() -> String {
    let registry = SERVED.get().expect("set before serving");
    let both = registry.set_enabled("clash", true) && registry.set_enabled("fresh", true);
    format!("revealed: {both}")
}

/// A tool whose name the host's registry holds already.
#[tool]
fn clash() -> String {
    "the server's clash".to_owned()
}

/// A tool nothing else is named like.
#[tool]
fn fresh() -> String {
    "fresh from the server".to_owned()
}

fn serve() {
    let registry = Arc::new(
        Registry::builder()
            .tools(tools![echo, reveal, clash, fresh])
            .build()
            .expect("the test tools are valid"),
    );
    registry.set_enabled("clash", false);
    registry.set_enabled("fresh", false);
    let _ = SERVED.set(Arc::clone(&registry));
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    if let Err(error) = runtime.block_on(toolkit_mcp::McpServer::new(registry).serve_stdio()) {
        eprintln!("{error}");
        std::process::exit(1);
    }
}

fn ours(name: &str) -> McpClientBuilder {
    let me = std::env::current_exe().expect("the test's own path");
    McpClient::command(name, me, Vec::<String>::new()).env("TOOLKIT_MCP_TEST_SERVE", "1")
}

/// A tool of the host's own, answering `answer`.
fn local(name: &str, answer: &'static str) -> ToolDef {
    ToolDef::builder(name)
        .description("A tool of the host.")
        .source("the host")
        .handler(move |_: Value, _: CallContext| async move { answer.to_owned() })
}

async fn text(registry: &Registry, name: &str, arguments: Value) -> String {
    let outcome = registry
        .dispatch((name, arguments.to_string().as_str()))
        .await;
    outcome.result.to_text()
}

/// A server named `1password`: `attach` takes all its tools under names
/// every provider accepts, and calls reach the server's own names.
async fn leading_digit() {
    let client = ours("1password").connect().await.expect("connected");
    let registry = Arc::new(Registry::builder().build().expect("a registry"));
    let synced = client.attach(&registry).await.expect("attached");
    assert_eq!(synced.added, ["_1password_echo", "_1password_reveal"]);
    assert!(synced.removed.is_empty() && synced.refused.is_empty());
    assert_eq!(*client.synced().borrow(), synced);
    for name in registry.names() {
        assert!(is_portable(&name), "{name}");
    }
    for provider in Provider::ALL {
        registry
            .tool_list(provider)
            .unwrap_or_else(|error| panic!("{provider:?}: {error}"));
    }
    assert_eq!(
        text(&registry, "_1password_echo", json!({"text": "hi"})).await,
        "hi"
    );
    client.close().await;
}

/// The names and server names of a report's refused tools.
fn refused(synced: &Synced) -> Vec<(&str, &str)> {
    synced
        .refused
        .iter()
        .map(|refused| (refused.name.as_str(), refused.original.as_str()))
        .collect()
}

/// Tools whose names the host's registry holds already: refused at
/// `attach` and on a list change, reported with the registry's error, the
/// host's own tools untouched and the other tools added.
async fn refusals() {
    let registry = Arc::new(
        Registry::builder()
            .tool(local("_1password_echo", "the host's echo"))
            .tool(local("_1password_clash", "the host's clash"))
            .build()
            .expect("a registry"),
    );
    let client = ours("1password").connect().await.expect("connected");
    let synced = client
        .attach(&registry)
        .await
        .expect("attached despite a refusal");
    assert_eq!(synced.added, ["_1password_reveal"]);
    assert_eq!(refused(&synced), [("_1password_echo", "echo")]);
    let error = &synced.refused[0].error;
    assert!(
        matches!(error.problems(), [Problem::Duplicate { name, first, second }]
            if name == "_1password_echo"
                && first == "the host"
                && second == "MCP server `1password`, tool `echo`"),
        "{error:?}"
    );
    assert_eq!(
        text(&registry, "_1password_echo", json!({"text": "x"})).await,
        "the host's echo"
    );

    let mut changes = client.synced();
    assert_eq!(
        text(&registry, "_1password_reveal", json!({})).await,
        "revealed: true"
    );
    // The server may announce each tool it enables apart: the report
    // wanted is the one that adds `fresh`.
    let report = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            changes.changed().await.expect("the client is open");
            let report = changes.borrow_and_update().clone();
            if !report.added.is_empty() {
                return report;
            }
        }
    })
    .await
    .expect("the list change was followed");
    assert_eq!(report.added, ["_1password_fresh"]);
    assert!(report.removed.is_empty(), "{report:?}");
    // Refused before and refused again: every tool the registry does not
    // hold is named, in the server's order.
    assert_eq!(
        refused(&report),
        [("_1password_echo", "echo"), ("_1password_clash", "clash")]
    );
    let message = report.refused[1].error.to_string();
    assert!(
        message.contains("_1password_clash") && message.contains("tool `clash`"),
        "{message}"
    );
    assert_eq!(
        text(&registry, "_1password_fresh", json!({})).await,
        "fresh from the server"
    );
    assert_eq!(
        text(&registry, "_1password_clash", json!({})).await,
        "the host's clash"
    );
    client.close().await;
}

/// A scenario on a runtime of its own (multi-threaded, as a host's): a
/// failed scenario's child server ends with it.
fn block_on(future: impl std::future::Future<Output = ()>) {
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(future);
}

fn main() -> ExitCode {
    if std::env::var_os("TOOLKIT_MCP_TEST_SERVE").is_some() {
        serve();
        return ExitCode::SUCCESS;
    }
    runner::run(vec![
        Test::new("a_leading_digit", || block_on(leading_digit())),
        Test::new("refusals", || block_on(refusals())),
    ])
}
