//! The official Python SDK's clients against our server: stdio, and
//! Streamable HTTP.
//!
//! This test binary is also the server (see `support`): run with
//! `TOOLKIT_MCP_TEST_SERVE=1` it serves its test registry over stdio, which
//! is how the Python client, started by the test, launches it; over HTTP
//! the test starts a copy serving on a free port. The client is `TOOLKIT_PYTHON` (a
//! Python with the `mcp` package; `scripts/test` installs one), and the test
//! fails, rather than skips, when it is missing, unless
//! `TOOLKIT_SKIP_MCP_TESTS=1`.

mod support;

use std::process::{Command, ExitCode};

use serde_json::{Value, json};
use toolkit_tests::runner::{self, Test};

fn main() -> ExitCode {
    if support::serve_if_asked() {
        return ExitCode::SUCCESS;
    }
    const SKIP: &str = "TOOLKIT_SKIP_MCP_TESTS";
    runner::run(vec![
        Test::new("stdio", || {
            let me = std::env::current_exe().expect("the test's own path");
            check(&drive(&python(), "stdio", &me.to_string_lossy()));
        })
        .skip_when(SKIP),
        Test::new("streamable_http", || {
            let server = support::HttpServer::start(false);
            check(&drive(&python(), "http", &server.url));
        })
        .skip_when(SKIP),
    ])
}

/// The Python with the `mcp` package.
fn python() -> String {
    std::env::var("TOOLKIT_PYTHON").unwrap_or_else(|_| {
        panic!("TOOLKIT_PYTHON is not set: run scripts/test, which installs a Python with the `mcp` package, or set TOOLKIT_SKIP_MCP_TESTS=1")
    })
}

/// Runs the Python client against a server and returns what it saw.
fn drive(python: &str, mode: &str, target: &str) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python_client.py");
    let output = Command::new(python)
        .arg(script)
        .arg(mode)
        .arg(target)
        .output()
        .expect("the Python client starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python client failed ({mode}):\n{stderr}"
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&output.stdout)))
}

fn check(seen: &Value) {
    assert_eq!(seen["server"]["name"], "toolkit-mcp", "{seen}");
    assert_eq!(seen["capabilities"]["tools"]["listChanged"], true, "{seen}");

    let tools = seen["tools"].as_array().expect("a tool list");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, support::TOOLS);
    assert_eq!(
        tools[0]["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true})
    );
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(tools[3]["title"], "Weather today");
    assert_eq!(tools[3]["outputSchema"]["type"], "object");

    assert_eq!(
        seen["add"]["content"],
        json!([{"type": "text", "text": "5"}])
    );
    assert_eq!(seen["add"]["isError"], false);

    // A mistake the model made is a result it can read, not a protocol error.
    assert_eq!(seen["bad_arguments"]["isError"], true, "{seen}");
    let text = seen["bad_arguments"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("at `a`"), "{text}");
    assert_eq!(seen["failing"]["isError"], true);
    assert_eq!(
        seen["failing"]["content"][0]["text"],
        "Error: the disk is full"
    );

    let image = &seen["image"]["content"];
    assert_eq!(image[0]["text"], "one pixel");
    assert_eq!(image[1]["type"], "image");
    assert_eq!(image[1]["mimeType"], "image/png");

    assert_eq!(
        seen["structured"]["structuredContent"],
        json!({"city": "Oslo", "celsius": 21})
    );

    // An unknown tool is a JSON-RPC error: invalid params.
    assert_eq!(seen["unknown"]["code"], -32602, "{seen}");

    assert_eq!(seen["counted"]["content"][0]["text"], "counted to 3");
    let progress = seen["progress"].as_array().expect("progress reports");
    assert_eq!(
        progress.iter().map(|report| &report[0]).collect::<Vec<_>>(),
        [&json!(1.0), &json!(2.0), &json!(3.0)],
        "{seen}"
    );
    assert_eq!(progress[0][1], 3.0);
    assert_eq!(progress[0][2], "step 1");

    assert_eq!(seen["toggle"]["content"][0]["text"], "disabled: true");
    let after: Vec<&str> = seen["tools_after"]
        .as_array()
        .expect("a second list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let expected: Vec<&str> = support::TOOLS
        .into_iter()
        .filter(|n| *n != "fail")
        .collect();
    assert_eq!(after, expected);

    // A client without the capabilities: the tool's question is refused,
    // naming what is missing.
    for (tool, capability) in [
        ("confirm", "elicitation"),
        ("summarize", "sampling"),
        ("workspace", "roots"),
    ] {
        let refused = &seen[format!("{tool}_refused")];
        assert_eq!(refused["isError"], true, "{seen}");
        let text = refused["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains(&format!("`{capability}`")), "{text}");
    }
    // A client with them: the questions arrive as asked, the answers reach
    // the tools.
    let asked = &seen["asked"];
    assert_eq!(asked["elicit"][1]["message"], "Really go?", "{seen}");
    assert_eq!(
        asked["elicit"][1]["requestedSchema"]["properties"]["sure"]["type"],
        "boolean"
    );
    assert_eq!(
        seen["confirm"]["content"][0]["text"],
        "accept: {\"sure\":true}"
    );
    let sampled = &asked["sample"][0];
    assert_eq!(sampled["maxTokens"], 50, "{seen}");
    assert_eq!(sampled["systemPrompt"], "You summarize in one line.");
    assert_eq!(
        sampled["messages"][0]["content"]["text"],
        "Summarize: a long day"
    );
    assert_eq!(
        seen["summarize"]["content"][0]["text"],
        "tiny-model said: all is well"
    );
    assert_eq!(
        seen["workspace"]["content"][0]["text"],
        "roots: file:///home/ada/notes (notes), file:///tmp",
        "{seen}"
    );
    assert_eq!(asked["roots"], 1, "{seen}");
    // A prompt asks as a tool does: refused without the capability (an
    // error naming it), answered with it.
    let refused = &seen["plan_refused"];
    assert_eq!(refused["code"], -32603, "{seen}");
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(message.contains("`elicitation`"), "{message}");
    assert_eq!(asked["elicit"][0]["message"], "What is the goal?", "{seen}");
    assert_eq!(
        seen["plan"]["messages"][0]["content"]["text"],
        "Plan how to reach the goal the client gave.",
        "{seen}"
    );
    // A client that never answers: each question ends at the tool's limit.
    for kind in ["elicit", "sample", "roots"] {
        let result = &seen["impatient"][kind];
        assert_eq!(result["isError"], true, "{seen}");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("no answer within 0.1 s"), "{kind}: {text}");
    }
    // Log messages: every level, as the client set none.
    let levels: Vec<&Value> = asked["logs"]
        .as_array()
        .expect("log messages")
        .iter()
        .map(|log| &log["level"])
        .collect();
    assert_eq!(
        levels,
        [&json!("debug"), &json!("info"), &json!("error")],
        "{seen}"
    );
    assert_eq!(asked["logs"][0]["logger"], "chatty");
    assert_eq!(asked["logs"][0]["data"], "looking around");
}
