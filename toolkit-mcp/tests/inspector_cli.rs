//! The MCP Inspector's command line (`@modelcontextprotocol/inspector` 2.x
//! from npm, in `--cli` mode) against our server over stdio and over
//! Streamable HTTP: a second official client.
//!
//! The test binary is its own server (see `support`). The Inspector comes
//! from `TOOLKIT_NODE_MODULES` and runs on the Node 22 of `TOOLKIT_NODE22`
//! (`scripts/test` installs both); the test fails when they are missing,
//! unless `TOOLKIT_SKIP_MCP_TESTS=1`.

mod support;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use serde_json::{Value, json};
use toolkit_tests::runner::{self, Test};

/// How the Inspector reaches the server.
#[derive(Clone, Copy)]
enum Target<'a> {
    /// This binary, started by the Inspector.
    Stdio,
    /// A server at this URL.
    Http(&'a str),
}

/// Runs the Inspector's CLI against the server.
fn inspect(target: Target<'_>, arguments: &[&str]) -> (bool, String, String) {
    let modules = std::env::var("TOOLKIT_NODE_MODULES").unwrap_or_else(|_| {
        panic!("TOOLKIT_NODE_MODULES is not set: run scripts/test, which installs the Inspector, or set TOOLKIT_SKIP_MCP_TESTS=1")
    });
    // Inspector 2.x needs Node 22 or newer; the machine's own may be older.
    let node = std::env::var("TOOLKIT_NODE22").unwrap_or_else(|_| {
        panic!("TOOLKIT_NODE22 is not set: run scripts/test, which installs Node 22, or set TOOLKIT_SKIP_MCP_TESTS=1")
    });
    let launcher = PathBuf::from(modules)
        .join("@modelcontextprotocol/inspector/clients/launcher/build/index.js");
    let me = std::env::current_exe().expect("the test's own path");
    let mut command = Command::new(node);
    command.arg(launcher).arg("--cli");
    match target {
        Target::Stdio => {
            command.arg("-e").arg("TOOLKIT_MCP_TEST_SERVE=1").arg(&me);
        }
        Target::Http(url) => {
            command.arg(url).arg("--transport").arg("http");
        }
    }
    let output = command
        .args(arguments)
        .output()
        .expect("node runs the Inspector");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The JSON document the Inspector printed.
fn json_of(stdout: &str) -> Value {
    let start = stdout
        .find('{')
        .unwrap_or_else(|| panic!("no JSON in: {stdout}"));
    serde_json::from_str(&stdout[start..]).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

fn main() -> ExitCode {
    if support::serve_if_asked() {
        return ExitCode::SUCCESS;
    }
    const SKIP: &str = "TOOLKIT_SKIP_MCP_TESTS";
    runner::run(vec![
        Test::new("stdio", || check(Target::Stdio)).skip_when(SKIP),
        Test::new("streamable_http", || {
            let server = support::HttpServer::start(false);
            check(Target::Http(&server.url));
        })
        .skip_when(SKIP),
    ])
}

/// List, a call, an image, a failing tool and an unknown tool.
fn check(target: Target<'_>) {
    let (ok, stdout, stderr) = inspect(target, &["--method", "tools/list"]);
    assert!(ok, "{stderr}");
    let list = json_of(&stdout);
    assert_eq!(support::tool_names(&list), support::TOOLS);

    let (ok, stdout, stderr) = inspect(
        target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "add",
            "--tool-arg",
            "a=2",
            "--tool-arg",
            "b=40",
        ],
    );
    assert!(ok, "{stderr}");
    let sum = json_of(&stdout);
    assert_eq!(sum["content"], json!([{"type": "text", "text": "42"}]));
    assert_eq!(sum["isError"], false);

    let (ok, stdout, stderr) = inspect(target, &["--method", "tools/call", "--tool-name", "pixel"]);
    assert!(ok, "{stderr}");
    let image = json_of(&stdout);
    assert_eq!(image["content"][1]["type"], "image");
    assert_eq!(image["content"][1]["mimeType"], "image/png");

    // Inspector 2.x prints the result, and exits non-zero naming it an
    // error result.
    let (ok, stdout, stderr) = inspect(target, &["--method", "tools/call", "--tool-name", "fail"]);
    assert!(!ok, "a failing tool makes the Inspector fail: {stdout}");
    assert!(stderr.contains("tool_is_error"), "{stderr}");
    assert_eq!(json_of(&stdout)["isError"], true);

    // Inspector 2.x looks the tool up in the list before calling it (our
    // `-32602` for an unknown tool is checked by the wire tests).
    let (ok, stdout, stderr) = inspect(target, &["--method", "tools/call", "--tool-name", "nope"]);
    assert!(!ok, "an unknown tool is an error: {stdout}");
    assert!(stderr.contains("tool_not_found"), "{stderr}");
}
