//! The official Python SDK's stdio client against our server.
//!
//! This test binary is also the server: run with `TOOLKIT_MCP_TEST_SERVE=1`
//! it serves its test registry over stdio, which is how the Python client,
//! started by the test, launches it. The client is `TOOLKIT_PYTHON` (a
//! Python with the `mcp` package; `scripts/test` installs one), and the test
//! fails, rather than skips, when it is missing, unless
//! `TOOLKIT_SKIP_MCP_TESTS=1`.

mod support;

use std::process::Command;

use serde_json::{Value, json};

fn main() {
    if support::serve_if_asked() {
        return;
    }
    if std::env::var_os("TOOLKIT_SKIP_MCP_TESTS").is_some() {
        println!("python_client: skipped (TOOLKIT_SKIP_MCP_TESTS)");
        return;
    }
    let python = std::env::var("TOOLKIT_PYTHON").unwrap_or_else(|_| {
        panic!("TOOLKIT_PYTHON is not set: run scripts/test, which installs a Python with the `mcp` package, or set TOOLKIT_SKIP_MCP_TESTS=1")
    });
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python_client.py");
    let me = std::env::current_exe().expect("the test's own path");
    let output = Command::new(&python)
        .arg(script)
        .arg(&me)
        .output()
        .expect("the Python client starts");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python client failed:\n{stderr}"
    );
    let seen: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&output.stdout)));
    check(&seen);
    println!("python_client: ok");
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
}
