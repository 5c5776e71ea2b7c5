//! Our server's messages on the wire, each validated against the official
//! MCP JSON Schema of its revision (2025-11-25, in `tests/data/`), and what
//! it does with cancellation and with a malformed message.
//!
//! The test binary is its own server (see `support`): it starts itself with
//! `TOOLKIT_MCP_TEST_SERVE=1` and talks JSON-RPC to that child over pipes,
//! line by line, as an MCP client over stdio does.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::schema::Revision;
use toolkit_tests::runner::{self, Test};

fn assert_valid(definition: &str, value: &Value) {
    support::schema::assert_valid(Revision::V2025_11_25, definition, value);
}

/// The server's request size limit in this test.
const MAX_BYTES: usize = 64 * 1024;

struct Server {
    child: Child,
    input: ChildStdin,
    lines: mpsc::Receiver<Value>,
    /// List changes that came while an answer was awaited: a change is
    /// announced by a task of its own, so it may come before or after the
    /// answer to the call that made it.
    skipped: std::collections::VecDeque<Value>,
}

impl Server {
    fn start() -> Self {
        let mut child = Command::new(std::env::current_exe().expect("the test's own path"))
            .env("TOOLKIT_MCP_TEST_SERVE", "1")
            .env("TOOLKIT_MCP_TEST_MAX_BYTES", MAX_BYTES.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let input = child.stdin.take().expect("a stdin");
        let output: ChildStdout = child.stdout.take().expect("a stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(output).lines() {
                let Ok(line) = line else { break };
                // Every line the server writes must be one JSON message.
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|error| panic!("not JSON ({error}): {line}"));
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            input,
            lines,
            skipped: std::collections::VecDeque::new(),
        }
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    fn send_raw(&mut self, line: &str) {
        writeln!(self.input, "{line}").expect("the server reads");
        self.input.flush().expect("the server reads");
    }

    /// The next message not yet seen, validated as a JSON-RPC message.
    fn next(&mut self) -> Value {
        if let Some(message) = self.skipped.pop_front() {
            return message;
        }
        self.read()
    }

    fn read(&mut self) -> Value {
        let message = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .expect("the server answers within 10 s");
        assert_valid("JSONRPCMessage", &message);
        message
    }

    /// The response to request `id`, skipping notifications (checked too).
    fn response(&mut self, id: i64) -> Value {
        loop {
            let message = self
                .lines
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("no answer to request {id} within 10 s"));
            assert_valid("JSONRPCMessage", &message);
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            assert!(
                message.get("id").is_none(),
                "an answer to another request: {message}"
            );
            assert_valid("ServerNotification", &message);
            if message["method"] == "notifications/tools/list_changed"
                || message["method"] == "notifications/resources/updated"
            {
                self.skipped.push_back(message);
            }
        }
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        let response = self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
        assert_valid("JSONRPCResultResponse", &response);
        assert_valid("CallToolResult", &response["result"]);
        response["result"].clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Resources, templates, subscriptions and prompts, every answer valid by
/// the schema.
fn resources_and_prompts(server: &mut Server) {
    let list = server.request(60, "resources/list", json!({}));
    assert_valid("ListResourcesResult", &list["result"]);
    let uris: Vec<&Value> = list["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|resource| &resource["uri"])
        .collect();
    assert_eq!(
        uris,
        [
            &json!("notes://readme"),
            &json!("notes://pixel"),
            &json!("notes://broken")
        ]
    );
    assert_eq!(list["result"]["resources"][0]["mimeType"], "text/markdown");
    assert_eq!(
        list["result"]["resources"][0]["description"],
        "How the notes are kept."
    );
    let templates = server.request(61, "resources/templates/list", json!({}));
    assert_valid("ListResourceTemplatesResult", &templates["result"]);
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "notes://day/{day}"
    );

    let readme = server.request(62, "resources/read", json!({"uri": "notes://readme"}));
    assert_valid("ReadResourceResult", &readme["result"]);
    assert_eq!(
        readme["result"]["contents"],
        json!([{"uri": "notes://readme", "text": "# Notes", "mimeType": "text/markdown"}])
    );
    let pixel = server.request(63, "resources/read", json!({"uri": "notes://pixel"}));
    assert_valid("ReadResourceResult", &pixel["result"]);
    assert_eq!(pixel["result"]["contents"][0]["blob"], "AQID");
    let day = server.request(64, "resources/read", json!({"uri": "notes://day/monday"}));
    assert_valid("ReadResourceResult", &day["result"]);
    assert_eq!(
        day["result"]["contents"][0]["text"],
        "Nothing happened on monday."
    );
    assert_eq!(day["result"]["contents"][0]["uri"], "notes://day/monday");
    // A URI no resource or template has: the resource-not-found error of
    // 2025-11-25, naming it; a reader that fails: an internal error.
    let unknown = server.request(65, "resources/read", json!({"uri": "notes://day/a/b"}));
    assert_valid("JSONRPCErrorResponse", &unknown);
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    assert_eq!(unknown["error"]["data"]["uri"], "notes://day/a/b");
    let broken = server.request(66, "resources/read", json!({"uri": "notes://broken"}));
    assert_eq!(broken["error"]["code"], -32603, "{broken}");
    assert!(
        broken["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the disk is full")),
        "{broken}"
    );

    // A subscribed resource's change is announced.
    let subscribed = server.request(67, "resources/subscribe", json!({"uri": "notes://readme"}));
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    let touched = server.call(68, "touch", json!({"uri": "notes://readme"}));
    assert_eq!(touched["content"][0]["text"], "touched notes://readme");
    let updated = server.next();
    assert_valid("ResourceUpdatedNotification", &updated);
    assert_eq!(updated["params"]["uri"], "notes://readme");
    let unsubscribed = server.request(
        69,
        "resources/unsubscribe",
        json!({"uri": "notes://readme"}),
    );
    assert_eq!(unsubscribed["result"], json!({}), "{unsubscribed}");

    let prompts = server.request(70, "prompts/list", json!({}));
    assert_valid("ListPromptsResult", &prompts["result"]);
    assert_eq!(
        prompts["result"]["prompts"][0],
        json!({"name": "greet", "title": "Greeting", "description": "Asks for a greeting.", "arguments": [
            {"name": "name", "required": true, "description": "Who to greet."},
            {"name": "mood", "required": false, "description": "How they feel."}
        ]})
    );
    let greet = server.request(
        71,
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada", "mood": "glad"}}),
    );
    assert_valid("GetPromptResult", &greet["result"]);
    assert_eq!(
        greet["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Greet Ada, who is glad."}}])
    );
    let missing = server.request(
        72,
        "prompts/get",
        json!({"name": "greet", "arguments": {"mood": "glad"}}),
    );
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(
        missing["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`name`")),
        "{missing}"
    );
    let not_text = server.request(
        73,
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": 5}}),
    );
    assert_eq!(not_text["error"]["code"], -32602, "{not_text}");
    let unknown = server.request(74, "prompts/get", json!({"name": "nope"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let look = server.request(75, "prompts/get", json!({"name": "look"}));
    assert_valid("GetPromptResult", &look["result"]);
    let messages = &look["result"]["messages"];
    assert_eq!(messages[0]["content"]["type"], "image");
    assert_eq!(messages[0]["content"]["mimeType"], "image/png");
    assert_eq!(messages[1]["content"]["resource"]["uri"], "notes://readme");
    assert_eq!(messages[2]["role"], "assistant");
}

/// A server of its own, past `initialize`, whose answer is checked.
fn initialized() -> Server {
    let mut server = Server::start();
    let init = server.request(
        1,
        "initialize",
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "wire-test", "version": "0"}
        }),
    );
    assert_valid("JSONRPCResultResponse", &init);
    assert_valid("InitializeResult", &init["result"]);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    // Logging always; resources (with subscriptions) and prompts since the
    // server offers some.
    let capabilities = &init["result"]["capabilities"];
    assert_eq!(capabilities["logging"], json!({}));
    assert_eq!(capabilities["resources"]["subscribe"], true);
    assert!(capabilities["prompts"].is_object(), "{capabilities}");
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server
}

/// The tool list and calls: results, images, structured content, a
/// failing tool, bad arguments, an unknown tool.
fn tools() {
    let mut server = initialized();
    let list = server.request(2, "tools/list", json!({}));
    assert_valid("ListToolsResult", &list["result"]);
    assert_eq!(support::tool_names(&list["result"]), support::TOOLS);
    // Parameters in declaration order on the wire.
    let add_params: Vec<&String> = list["result"]["tools"][0]["inputSchema"]["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .collect();
    assert_eq!(add_params, ["a", "b"]);

    assert_eq!(
        server.call(3, "add", json!({"a": 2, "b": 3}))["content"][0]["text"],
        "5"
    );
    assert_eq!(
        server.call(4, "pixel", json!({}))["content"][1]["type"],
        "image"
    );
    assert_eq!(
        server.call(5, "weather", json!({"city": "Oslo"}))["structuredContent"],
        json!({"city": "Oslo", "celsius": 21})
    );
    assert_eq!(server.call(6, "fail", json!({}))["isError"], true);
    assert_eq!(server.call(7, "add", json!({"a": "two"}))["isError"], true);

    let unknown = server.request(8, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_valid("JSONRPCErrorResponse", &unknown);
    assert_eq!(unknown["error"]["code"], -32602);
}

/// Malformed messages: each gets a JSON-RPC error, and the server keeps
/// serving.
fn malformed_messages() {
    let mut server = initialized();
    let error = |server: &mut Server, line: &str| {
        server.send_raw(line);
        let answer = server.next();
        assert_valid("JSONRPCErrorResponse", &answer);
        answer
    };
    let parse = error(&mut server, "{this is not json");
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert!(parse.get("id").is_none(), "{parse}");
    let shape = error(&mut server, r#"{"jsonrpc": "2.0", "id": 41, "params": 3}"#);
    assert_eq!(shape["error"]["code"], -32600, "{shape}");
    assert_eq!(shape["id"], 41, "{shape}");
    let batch = error(&mut server, "[1, 2]");
    assert_eq!(batch["error"]["code"], -32600, "{batch}");
    let params = error(
        &mut server,
        r#"{"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": {"arguments": {}}}"#,
    );
    assert_eq!(params["error"]["code"], -32602, "{params}");
    assert_eq!(params["id"], 42, "{params}");
    let huge = format!(
        r#"{{"jsonrpc": "2.0", "id": 43, "method": "tools/call", "params": {{"name": "add", "arguments": {{"pad": "{}"}}}}}}"#,
        "x".repeat(MAX_BYTES)
    );
    let too_large = error(&mut server, &huge);
    assert_eq!(too_large["error"]["code"], -32600, "{too_large}");
    assert!(
        too_large["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("limit")),
        "{too_large}"
    );
    // A notification the server cannot read gets no answer.
    server.send_raw(r#"{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": 5}"#);
    let after = server.request(9, "tools/list", json!({}));
    assert_valid("ListToolsResult", &after["result"]);
}

/// Progress: reported by the tool, sent because the request asked.
fn progress() {
    let mut server = initialized();
    server.send(&json!({
        "jsonrpc": "2.0", "id": 50, "method": "tools/call",
        "params": {"name": "count", "arguments": {"to": 4}, "_meta": {"progressToken": "p-50"}}
    }));
    let mut progress = Vec::new();
    let result = loop {
        let message = server.next();
        if message.get("id") == Some(&json!(50)) {
            break message;
        }
        assert_valid("ServerNotification", &message);
        assert_valid("ProgressNotification", &message);
        assert_eq!(message["params"]["progressToken"], "p-50");
        assert_eq!(message["params"]["total"], 4.0);
        progress.push(message["params"]["progress"].as_f64().expect("a number"));
    };
    assert_valid("CallToolResult", &result["result"]);
    assert_eq!(result["result"]["content"][0]["text"], "counted to 4");
    assert_eq!(progress, [1.0, 2.0, 3.0, 4.0]);
    // Without a token, no notification.
    let quiet = server.call(51, "count", json!({"to": 2}));
    assert_eq!(quiet["content"][0]["text"], "counted to 2");
}

/// Log messages: every level until the client sets one, then those at
/// or above it, each before the result and named for the tool.
fn logging() {
    let mut server = initialized();
    let heard = |server: &mut Server, id: i64| {
        server.send(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "chatty", "arguments": {}}
        }));
        let mut levels = Vec::new();
        loop {
            let message = server.next();
            if message.get("id") == Some(&json!(id)) {
                assert_eq!(message["result"]["content"][0]["text"], "chatted");
                return levels;
            }
            assert_valid("LoggingMessageNotification", &message);
            assert_eq!(message["params"]["logger"], "chatty");
            levels.push(
                message["params"]["level"]
                    .as_str()
                    .expect("a level")
                    .to_owned(),
            );
        }
    };
    assert_eq!(heard(&mut server, 52), ["debug", "info", "error"]);
    let set = server.request(53, "logging/setLevel", json!({"level": "info"}));
    assert_valid("JSONRPCResultResponse", &set);
    assert_eq!(set["result"], json!({}));
    assert_eq!(heard(&mut server, 54), ["info", "error"]);
    let bad = server.request(55, "logging/setLevel", json!({"level": "loud"}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
}

/// Resources and prompts, listed, read and subscribed to.
fn resources_and_prompts_offered() {
    resources_and_prompts(&mut initialized());
}

/// Cancellation reaches the tool.
fn cancellation() {
    let mut server = initialized();
    server.send(&json!({
        "jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "slow", "arguments": {}}
    }));
    std::thread::sleep(Duration::from_millis(200));
    let cancel = json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 10, "reason": "the user moved on"}
    });
    assert_valid("JSONRPCNotification", &cancel);
    server.send(&cancel);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut id = 11;
    loop {
        let seen = server.request(
            id,
            "tools/call",
            json!({"name": "was_cancelled", "arguments": {}}),
        );
        // `response` fails on any answer to another id: the cancelled call
        // gets none, as the protocol asks.
        if seen["result"]["content"][0]["text"] == "true" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the tool never saw the cancellation"
        );
        std::thread::sleep(Duration::from_millis(50));
        id += 1;
    }
}

/// A change to the tool list is announced.
fn list_changes() {
    let mut server = initialized();
    // Straight after `initialized`: the change may be handled before the
    // notification is, and must be announced all the same.
    server.call(100, "toggle", json!({"name": "fail"}));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let message = server.next();
        if message["method"] == "notifications/tools/list_changed" {
            assert_valid("ServerNotification", &message);
            break;
        }
        assert!(Instant::now() < deadline, "no list_changed notification");
    }
}

fn main() -> ExitCode {
    if support::serve_if_asked() {
        return ExitCode::SUCCESS;
    }
    runner::run(vec![
        Test::new("initialize", || drop(initialized())),
        Test::new("tools", tools),
        Test::new("malformed_messages", malformed_messages),
        Test::new("progress", progress),
        Test::new("logging", logging),
        Test::new("resources_and_prompts", resources_and_prompts_offered),
        Test::new("cancellation", cancellation),
        Test::new("list_changes", list_changes),
    ])
}
