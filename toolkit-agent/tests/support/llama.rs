//! A real model for the tests: llama.cpp's server with Gemma 3 270M,
//! started on 127.0.0.1 by the test that needs it and stopped when dropped.
//! `scripts/deps` builds both; `scripts/test` exports where they are.
//! Missing parts fail the tests (set TOOLKIT_SKIP_MODEL_TESTS=1 to skip
//! them on purpose).
//!
//! Shared by toolkit-agent's tests and toolkit-browser's browser-agent test
//! (included by path: a test helper, not an API).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolkit_agent::{HttpModel, Model, ModelFuture, OnProgress, RetryPolicy};
use toolkit_core::Provider;

/// A running llama-server.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
    /// Where the server's own output goes: shown when a test fails, as
    /// the one place that says why the server dropped a connection.
    log: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let exited = self.child.try_wait().ok().flatten();
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(60)..].join("\n");
            eprintln!(
                "llama-server {} ({}); the end of its output:\n{tail}",
                match exited {
                    Some(status) => format!("had exited: {status}"),
                    None => "was still running".to_owned(),
                },
                self.log.display(),
            );
        }
    }
}

impl Server {
    /// The server's model, made to answer with calls (see [`InCall`]).
    pub fn calling_model(&self) -> InCall {
        InCall(self.model())
    }

    /// A Chat Completions client for the server. The timeout is generous
    /// (two cores, shared with the other tests), and nothing is retried: a
    /// request sent again would queue behind the one still being answered.
    pub fn model(&self) -> HttpModel {
        HttpModel::openai_chat("gemma")
            .base_url(&self.base_url)
            .no_key()
            .timeout(Duration::from_secs(600))
            .retry(RetryPolicy::none())
            .build()
            .unwrap()
    }
}

/// A model whose every answer starts inside a tool call.
///
/// With `tool_choice: "required"`, this llama.cpp build constrains the
/// output to calls but lets free text come first, and a 270M model writes
/// text until it runs out of tokens. So each request ends with an assistant
/// message holding the template's call tag (Qwen2.5's `<tool_call>`):
/// llama-server continues that message (its assistant prefill), the
/// grammar takes the tag as already written, and from the first generated
/// token the model writes a call: which tool, which arguments, and, when
/// `max_tokens` cuts it off, a truncated call, are the model's own. The
/// server parses the result into `tool_calls` as usual.
#[derive(Clone)]
pub struct InCall(pub HttpModel);

impl InCall {
    /// What Qwen2.5's template writes before a call.
    pub const CALL_TAG: &str = "<tool_call>\n";

    fn prefilled(request: &Value) -> Value {
        let mut request = request.clone();
        if let Some(messages) = request["messages"].as_array_mut() {
            messages.push(json!({"role": "assistant", "content": Self::CALL_TAG}));
        }
        request
    }
}

impl Model for InCall {
    fn provider(&self) -> Provider {
        self.0.provider()
    }

    fn complete<'a>(&'a self, request: &'a Value) -> ModelFuture<'a> {
        Box::pin(async move { self.0.complete(&Self::prefilled(request)).await })
    }

    fn stream<'a>(&'a self, request: &'a Value, progress: OnProgress<'a>) -> ModelFuture<'a> {
        Box::pin(async move { self.0.stream(&Self::prefilled(request), progress).await })
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// Starts llama-server with `context` tokens of context, or `None` when the
/// model tests are skipped on purpose.
pub fn start(context: u32) -> Option<Server> {
    if toolkit_tests::skip::skipped("TOOLKIT_SKIP_MODEL_TESTS") {
        return None;
    }
    let missing = "the real-model tests need llama-server and Gemma 3 270M: run scripts/deps, then \
                   `eval \"$(scripts/deps --print-env)\"` (scripts/test does both), \
                   or set TOOLKIT_SKIP_MODEL_TESTS=1 to skip them";
    let server = env("TOOLKIT_LLAMA_SERVER").expect(missing);
    let template = env("TOOLKIT_LLAMA_TEMPLATE").expect(missing);
    let model = env("TOOLKIT_GEMMA_MODEL").expect(missing);
    for path in [&server, &template, &model] {
        assert!(Path::new(path).exists(), "{path} does not exist: {missing}");
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = std::env::temp_dir().join(format!("toolkit-llama-server-{port}.log"));
    let output = std::fs::File::create(&log).expect("a log file for llama-server");
    let child = Command::new(&server)
        .args(["-m", &model, "--jinja", "--chat-template-file", &template])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", &context.to_string(), "-np", "1"])
        .args(["--seed", "7", "--temp", "0"])
        .stdout(Stdio::null())
        .stderr(output)
        .spawn()
        .expect("llama-server starts");
    let server = Server {
        child,
        base_url: format!("http://127.0.0.1:{port}/v1"),
        log,
    };
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "llama-server did not come up"
        );
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.write_all(b"GET /health HTTP/1.0\r\n\r\n");
            let mut reply = String::new();
            let _ = stream.read_to_string(&mut reply);
            if reply.starts_with("HTTP/1.1 200") || reply.starts_with("HTTP/1.0 200") {
                return Some(server);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
