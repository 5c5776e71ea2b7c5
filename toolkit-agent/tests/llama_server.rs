//! Against a real model: llama.cpp's server with Gemma 3 270M, started here
//! on 127.0.0.1. `scripts/deps` builds both; `scripts/test` exports where
//! they are. Missing parts fail the tests (set TOOLKIT_SKIP_MODEL_TESTS=1
//! to skip them on purpose).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use toolkit_agent::{
    Agent, Conversation, HttpModel, Limits, Model, ModelError, StopReason, ToolChoice,
};
use toolkit_core::Provider;
use toolkit_core::ToolCallResult;

struct Server {
    child: Child,
    base_url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// Starts llama-server, or `None` when the tests are skipped on purpose.
fn start() -> Option<Server> {
    if env("TOOLKIT_SKIP_MODEL_TESTS").as_deref() == Some("1") {
        return None;
    }
    let missing = "the real-model tests need llama-server and Gemma 3 270M: run scripts/deps, then \
                   `eval \"$(scripts/deps --print-env)\"` (scripts/test does both), \
                   or set TOOLKIT_SKIP_MODEL_TESTS=1 to skip them";
    let server = env("TOOLKIT_LLAMA_SERVER").expect(missing);
    let template = env("TOOLKIT_LLAMA_TEMPLATE").expect(missing);
    let model = env("TOOLKIT_GEMMA_MODEL").expect(missing);
    for path in [&server, &template, &model] {
        assert!(
            std::path::Path::new(path).exists(),
            "{path} does not exist: {missing}"
        );
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(&server)
        .args(["-m", &model, "--jinja", "--chat-template-file", &template])
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "-c",
            "8192",
            "-np",
            "1",
        ])
        .args(["--seed", "7", "--temp", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llama-server starts");
    let server = Server {
        child,
        base_url: format!("http://127.0.0.1:{port}/v1"),
    };
    let health = format!("127.0.0.1:{port}");
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "llama-server did not come up"
        );
        if let Ok(mut stream) = std::net::TcpStream::connect(&health) {
            use std::io::{Read, Write};
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

fn model(server: &Server) -> HttpModel {
    HttpModel::openai_chat("gemma")
        .base_url(&server.base_url)
        .no_key()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap()
}

/// A conversation with the example tools, short answers.
fn fresh() -> Conversation {
    let registry = toolkit_examples::registry().unwrap();
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_instructions("You are a careful assistant. Use the tools.");
    conversation.set_tools(&registry).unwrap();
    conversation.set("max_tokens", json!(48));
    conversation
}

/// A turn as the model writes it when cut off: the second call's arguments
/// end mid-JSON.
fn truncated_turn() -> toolkit_core::response::Turn {
    Provider::OpenAi
        .read(&json!({"choices": [{"index": 0, "finish_reason": "length", "message": {
            "role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "word_count", "arguments": "{\"text\":\"one two\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "convert_temperature", "arguments": "{\"value"}}
            ]}}]}))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn real_model() {
    let Some(server) = start() else { return };
    let model = model(&server);

    // Every tool choice is accepted.
    for choice in [
        ToolChoice::Auto,
        ToolChoice::None,
        ToolChoice::Required,
        ToolChoice::Tool("convert_temperature".into()),
    ] {
        let mut conversation = fresh();
        conversation.set_tool_choice(choice.clone());
        conversation.set_parallel_calls(false);
        conversation.push_user("Convert 20 degrees celsius to fahrenheit.");
        let turn = model.complete(&conversation.request()).await;
        assert!(turn.is_ok(), "{choice:?}: {turn:?}");
    }

    // A truncated call, its results (tool messages), then two user
    // messages: accepted, because the malformed call is echoed as `{}`.
    let registry = toolkit_examples::registry().unwrap();
    let turn = truncated_turn();
    assert!(turn.call_info[1].malformed.is_some());
    let mut conversation = fresh();
    conversation.push_user("Count the words of 'one two', then convert 20 C to F.");
    conversation.push_turn(&turn);
    let outcome = registry.run_turn(&turn.calls).await;
    assert!(
        outcome.results[1].result.is_error(),
        "a malformed call is answered with an error"
    );
    let results: Vec<ToolCallResult> = outcome.results;
    conversation.push_results(&turn, results);
    conversation.push_user("Thanks.");
    conversation.push_user("Now answer in one sentence.");
    let request = conversation.request();
    let reply = model.complete(&request).await;
    assert!(reply.is_ok(), "{reply:?}\n{request:#}");

    // The same conversation with the truncated text echoed verbatim is
    // what the server refuses: the sanitising above is what keeps a run
    // going.
    let mut verbatim = request.clone();
    let messages = verbatim["messages"].as_array_mut().unwrap();
    let assistant = messages
        .iter_mut()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assistant["tool_calls"][1]["function"]["arguments"] = json!("{\"value");
    match model.complete(&verbatim).await {
        Err(ModelError::Status { status, body, .. }) => {
            assert!(status >= 400, "{status}: {body}");
        }
        other => panic!("the server took a malformed echoed call: {other:?}"),
    }

    // Streaming gives a turn, and reports progress.
    let mut conversation = fresh();
    conversation.push_user("Say hello.");
    let mut events = 0;
    let mut progress = |_: &toolkit_core::response::Accumulator| events += 1;
    let streamed = model
        .stream(&conversation.request(), &mut progress)
        .await
        .unwrap();
    assert!(events > 1, "{events} events");
    assert!(!streamed.text.is_empty() || streamed.has_calls());

    // A full run with the example tools: several steps, every request
    // accepted, a clean stop (the small model rarely finishes the task).
    let agent = Agent::new(model.clone(), registry)
        .instructions("Use the tools, then call finish.")
        .tool_choice(ToolChoice::Required)
        .limits(Limits {
            max_steps: 3,
            max_failures: 10,
        })
        .configure(|conversation| conversation.set("max_tokens", json!(64)));
    let outcome = agent
        .run("Convert 20 C to F, then count the words of 'a b c'.")
        .await;
    assert!(
        !matches!(outcome.stop, StopReason::Model(_)),
        "every request was accepted: {:?}",
        outcome.stop
    );
    assert!(outcome.steps >= 1);
    assert!(outcome.usage.input_tokens > 0);
}
