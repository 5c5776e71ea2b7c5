//! Tool search through an MCP client: a server process offers the 1,223
//! tools of the GitHub REST catalog
//! (toolkit-agent/tests/fixtures/tool_catalog/), its client defers them
//! all, and an agent on a scripted Chat Completions model finds one with
//! `search_tools` and calls it in the server.
//!
//! This test binary is also the MCP server: run with
//! `TOOLKIT_TOOL_SEARCH_TEST_SERVE=1` it serves the catalog on stdio.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_agent::{Agent, HttpModel, RetryPolicy, TOOL_SEARCH_TOOL};
use toolkit_core::{CallContext, Registry, ToolDef, name};
use toolkit_mcp::{McpClient, McpServer};
use toolkit_tests::http::{Reply, Request, TestServer};
use toolkit_tests::runner::{self, Test};

const SERVE: &str = "TOOLKIT_TOOL_SEARCH_TEST_SERVE";
const CATALOG: &str =
    include_str!("../../../toolkit-agent/tests/fixtures/tool_catalog/github-rest.json");

/// The catalog's tools, each answering with its own name.
fn catalog() -> Registry {
    let catalog: Value = serde_json::from_str(CATALOG).unwrap();
    let tools = catalog["tools"].as_array().unwrap().iter().map(|tool| {
        let original = tool["name"].as_str().unwrap().to_owned();
        let called = original.clone();
        ToolDef::builder(name::portable(&original))
            .description(tool["description"].as_str().unwrap())
            .input_schema(tool["input_schema"].clone())
            .handler(move |_: Value, _: CallContext| {
                let called = called.clone();
                async move { format!("{called} ran") }
            })
    });
    Registry::builder().tools(tools).build().unwrap()
}

/// The server copy: serves the catalog on stdio.
fn serve() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        McpServer::new(Arc::new(catalog()))
            .serve_stdio()
            .await
            .unwrap();
    });
}

fn chat_call(id: &str, name: &str, arguments: Value) -> Reply {
    Reply::json(
        &json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}]}}]}),
    )
}

fn names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn found_and_called_in_the_server() {
    let registry = Arc::new(Registry::builder().build().unwrap());
    let me = std::env::current_exe().unwrap();
    let client = McpClient::command("github", me, Vec::<String>::new())
        .env(SERVE, "1")
        .prefix("gh")
        .defer_tools(true)
        .connect()
        .await
        .unwrap();
    let synced = client.attach(&registry).await.unwrap();
    assert!(synced.refused.is_empty(), "{:?}", synced.refused);
    assert_eq!(registry.names().count(), 1_223);
    let server = TestServer::replying([
        chat_call(
            "c1",
            TOOL_SEARCH_TOOL,
            json!({"query": "star a repository for the authenticated user"}),
        ),
        chat_call(
            "c2",
            "gh_activity_star-repo-for-authenticated-user",
            json!({"owner": "octocat", "repo": "hello-world"}),
        ),
        Reply::json(&json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Starred."}}]})),
    ]);
    let model = HttpModel::openai_chat("m")
        .base_url(server.base_url())
        .no_key()
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let agent = Agent::builder(model, Arc::clone(&registry))
        .build()
        .unwrap();
    let outcome = agent.run("Star octocat/hello-world.").await.unwrap();
    assert_eq!(outcome.answer.as_deref(), Some("Starred."));
    let bodies: Vec<Value> = server.requests().iter().map(Request::json).collect();
    assert_eq!(names(&bodies[0]), [TOOL_SEARCH_TOOL]);
    let second = names(&bodies[1]);
    assert!(
        second.contains(&"gh_activity_star-repo-for-authenticated-user".to_owned()),
        "{second:?}"
    );
    // The server ran the call.
    let last = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last["content"],
        "activity/star-repo-for-authenticated-user ran"
    );
    client.close().await;
}

fn main() -> ExitCode {
    if std::env::var(SERVE).is_ok() {
        serve();
        return ExitCode::SUCCESS;
    }
    runner::run(vec![Test::new("found_and_called_in_the_server", || {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(found_and_called_in_the_server())
    })])
}
