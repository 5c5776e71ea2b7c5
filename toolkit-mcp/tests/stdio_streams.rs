//! `McpServer::serve_stdio` on the standard streams a client may give it:
//! pipes (Rust's and Python's child processes), Unix socket pairs (Node.js's
//! child processes), one socket as both, and a standard error that shares
//! standard output's pipe (`2>&1`). The first two are served without
//! blocking, the last two through tokio's blocking streams; every one
//! answers, and each stream is back in blocking mode once serving ends.
//!
//! The test binary is its own server: started with
//! `TOOLKIT_MCP_STDIO_STREAMS=1`, it serves a tool that says whether its
//! standard input and output are non-blocking, then writes the streams'
//! final mode to standard error, read from `/proc/self/fdinfo` (Linux).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_core::{Registry, tool, tools};
use toolkit_tests::runner::{self, Test};

const SERVE: &str = "TOOLKIT_MCP_STDIO_STREAMS";

/// `O_NONBLOCK`, in the octal flags `/proc/self/fdinfo` shows on Linux.
const O_NONBLOCK: u32 = 0o4000;

/// Whether the descriptor is in non-blocking mode.
fn non_blocking(fd: u32) -> bool {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).expect("fdinfo");
    let flags = info
        .lines()
        .find_map(|line| line.strip_prefix("flags:"))
        .expect("a flags line");
    let flags = u32::from_str_radix(flags.trim(), 8).expect("octal flags");
    flags & O_NONBLOCK != 0
}

/// The mode of standard input and output while the call runs.
#[tool]
async fn modes() -> String {
    format!("input {} output {}", non_blocking(0), non_blocking(1))
}

fn serve() {
    let registry = Arc::new(
        Registry::builder()
            .tools(tools![modes])
            .build()
            .expect("valid"),
    );
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(toolkit_mcp::McpServer::new(registry).serve_stdio())
        .expect("served");
    eprintln!(
        "after: input {} output {}",
        non_blocking(0),
        non_blocking(1)
    );
}

/// What the server said and how it ended.
struct Served {
    /// The tool's text: the streams' mode while serving.
    during: String,
    /// The streams' mode after serving, from its standard error.
    after: String,
}

fn send(input: &mut impl Write, message: Value) {
    writeln!(input, "{message}").expect("the server reads");
    input.flush().expect("the server reads");
}

/// Initializes, calls `modes`, closes the input, and returns the tool's
/// text.
fn talk(mut input: impl Write, output: impl Read) -> String {
    let mut lines = BufReader::new(output).lines();
    let mut next = || -> Value {
        let line = lines.next().expect("an answer").expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line}"))
    };
    send(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "stdio-streams", "version": "0"}}}),
    );
    assert_eq!(next()["id"], 1);
    send(
        &mut input,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        &mut input,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "modes", "arguments": {}}}),
    );
    let answer = next();
    assert_eq!(answer["id"], 2, "{answer}");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
        .to_owned()
}

/// What the server wrote to its standard error, once it has ended well.
fn ended(mut process: std::process::Child) -> String {
    let mut after = String::new();
    process
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut after)
        .expect("its standard error");
    assert!(process.wait().expect("it ends").success(), "{after}");
    after
}

fn child() -> Command {
    let mut command = Command::new(std::env::current_exe().expect("the test's own path"));
    command.env(SERVE, "1");
    command
}

/// Over pipes, standard error its own.
fn pipes() -> Served {
    let mut process = child()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let during = talk(
        process.stdin.take().expect("stdin"),
        process.stdout.take().expect("stdout"),
    );
    Served {
        during,
        after: ended(process),
    }
}

/// Over a socket pair each, as Node.js connects its child processes.
fn sockets() -> Served {
    let (input, theirs_in) = UnixStream::pair().expect("a socket pair");
    let (output, theirs_out) = UnixStream::pair().expect("a socket pair");
    let process = child()
        .stdin(Stdio::from(OwnedFd::from(theirs_in)))
        .stdout(Stdio::from(OwnedFd::from(theirs_out)))
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let during = talk(&input, &output);
    input
        .shutdown(std::net::Shutdown::Write)
        .expect("the input closed");
    Served {
        during,
        after: ended(process),
    }
}

/// One socket as both standard input and output.
fn one_socket() -> Served {
    let (ours, theirs) = UnixStream::pair().expect("a socket pair");
    let theirs_too = theirs.try_clone().expect("a second descriptor");
    let process = child()
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::from(OwnedFd::from(theirs_too)))
        .stderr(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let during = talk(&ours, &ours);
    ours.shutdown(std::net::Shutdown::Write)
        .expect("the input closed");
    Served {
        during,
        after: ended(process),
    }
}

/// Standard error on standard output's pipe (`2>&1`).
fn shared_error() -> Served {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    let writer_too = writer.try_clone().expect("a second end");
    let mut process = child()
        .stdin(Stdio::piped())
        .stdout(writer)
        .stderr(writer_too)
        .spawn()
        .expect("the server starts");
    let during = talk(process.stdin.take().expect("stdin"), &reader);
    assert!(process.wait().expect("it ends").success());
    let mut after = String::new();
    (&reader).read_to_string(&mut after).expect("the rest");
    Served { during, after }
}

/// The case served in the mode it should be, and left in blocking mode.
fn check(case: &str, served: Served, non_blocking: bool) {
    assert_eq!(
        served.during,
        format!("input {non_blocking} output {non_blocking}"),
        "{case}"
    );
    assert!(
        served.after.contains("after: input false output false"),
        "{case}: {}",
        served.after
    );
}

fn main() -> ExitCode {
    if std::env::var_os(SERVE).is_some() {
        serve();
        return ExitCode::SUCCESS;
    }
    // Served without blocking, or through tokio's streams; blocking after.
    runner::run(vec![
        Test::new("pipes", || check("pipes", pipes(), true)),
        Test::new("socket_pairs", || check("sockets", sockets(), true)),
        Test::new("one_socket", || check("one socket", one_socket(), false)),
        Test::new("shared_standard_error", || {
            check("2>&1", shared_error(), false)
        }),
    ])
}
