//! A real run's traces, exported over OTLP to Arize Phoenix and read back
//! through Phoenix's REST API: an agent on llama-server (Gemma 3 270M)
//! calls a tool served over MCP by another process, both processes export
//! with `toolkit_examples::otlp`, and the stored spans must have the
//! conventions' names, parents, attributes and token counts, no content
//! while capture is off, content once it is on, and never the planted
//! secret.
//!
//! This test binary is also the MCP server: run with
//! `TOOLKIT_PHOENIX_TEST_SERVE=URL` it serves its forecast tool over stdio
//! and exports to URL, which is how the agent's MCP client starts it.
//!
//! Needs `TOOLKIT_PHOENIX` (`phoenix`, from `scripts/deps phoenix`) and the
//! model parts; it fails, rather than skips, when they are missing, unless
//! `TOOLKIT_SKIP_PHOENIX_TESTS=1` (or `TOOLKIT_SKIP_MODEL_TESTS=1`). With
//! `TOOLKIT_PHOENIX_SCREENSHOT=FILE.png`, headless Chromium also takes a
//! picture of the traced run in Phoenix's UI.

#[path = "../../../toolkit-agent/tests/support/llama.rs"]
mod llama;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolkit_agent::{
    Agent, HttpModel, Limits, Model, ModelFuture, OnProgress, RetryPolicy, StopReason,
};
use toolkit_core::{Provider, Registry, telemetry, tool, tools};
use toolkit_mcp::{McpClient, McpServer};
use toolkit_tests::runner::{self, Test};

/// Set in the server copy of this binary: where it exports.
const SERVE: &str = "TOOLKIT_PHOENIX_TEST_SERVE";
/// Set to `1` in the server copy to capture content there too.
const CAPTURE: &str = "TOOLKIT_PHOENIX_TEST_CAPTURE";
/// The server copy's environment variable holding the forecast service's
/// key.
const KEY_VARIABLE: &str = "TOOLKIT_PHOENIX_TEST_FORECAST_KEY";
/// Planted as the model's API key, in the server's environment and in its
/// tool's state: no stored span may hold it.
const SECRET: &str = "sk-planted-0c5e1f9b7d2a4e86";
/// A word of the task only: stored while content is captured, never
/// otherwise.
const PLACE: &str = "Zanzibar";
const AGENT: &str = "Forecaster";

/// The forecast service's key: host state, never shown to the model.
struct ForecastKey(String);

/// Tells the weather of a city.
#[tool]
fn forecast(
    /// The city.
    city: String,
    #[tool(state)] key: Arc<ForecastKey>,
) -> String {
    // The key would open a real service; the answer never holds it.
    let signed = !key.0.is_empty();
    format!("Sunny in {city}, 28 C (signed: {signed}).")
}

/// The server copy: serves `forecast` on stdio, exporting its spans.
fn serve(endpoint: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let export = toolkit_examples::otlp::install(endpoint, "phoenix-test-forecast").unwrap();
        telemetry::capture_content(std::env::var(CAPTURE).is_ok_and(|value| value == "1"));
        let key = std::env::var(KEY_VARIABLE).unwrap_or_default();
        let registry = Registry::builder()
            .tools(tools![forecast])
            .state(Arc::new(ForecastKey(key)))
            .build()
            .unwrap();
        McpServer::new(Arc::new(registry))
            .serve_stdio()
            .await
            .unwrap();
        // Sends what is left before the process ends.
        drop(export);
    });
}

/// Gemma, made to call a tool on a run's first step (the template's call
/// tag prefilled, as `llama::InCall` does) and to answer in text once a
/// tool has answered: a 270M model does neither reliably on its own.
struct CallFirst(HttpModel);

impl CallFirst {
    fn shaped(request: &Value) -> Value {
        let mut request = request.clone();
        let answered = request["messages"]
            .as_array()
            .is_some_and(|messages| messages.iter().any(|message| message["role"] == "tool"));
        if answered {
            request["tool_choice"] = json!("none");
        } else {
            request["tool_choice"] = json!("required");
            // One call, then the end of the turn.
            request["parallel_tool_calls"] = json!(false);
            if let Some(messages) = request["messages"].as_array_mut() {
                messages.push(json!({"role": "assistant", "content": llama::InCall::CALL_TAG}));
            }
        }
        request
    }
}

impl Model for CallFirst {
    fn provider(&self) -> Provider {
        self.0.provider()
    }

    fn complete<'a>(&'a self, request: &'a Value) -> ModelFuture<'a> {
        Box::pin(async move { self.0.complete(&Self::shaped(request)).await })
    }

    fn stream<'a>(&'a self, request: &'a Value, progress: OnProgress<'a>) -> ModelFuture<'a> {
        Box::pin(async move { self.0.stream(&Self::shaped(request), progress).await })
    }
}

/// A running `phoenix serve`, stopped when dropped.
struct Phoenix {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    url: String,
    dir: PathBuf,
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(self.dir.join("phoenix.log")).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            eprintln!(
                "the end of Phoenix's output:\n{}",
                lines[lines.len().saturating_sub(40)..].join("\n")
            );
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Phoenix {
    fn start(program: &str) -> Phoenix {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("toolkit-phoenix-{port}"));
        std::fs::create_dir_all(&dir).unwrap();
        let log = std::fs::File::create(dir.join("phoenix.log")).unwrap();
        let child = Command::new(program)
            .arg("serve")
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", port.to_string())
            // Its OTLP/gRPC listener, unused here, on a free port too.
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_WORKING_DIR", &dir)
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("{program} does not start: {error}"));
        Phoenix {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
        }
    }

    /// Waits until the REST API answers (its database is migrated first:
    /// about 40 s on two busy cores).
    async fn ready(&mut self, http: &reqwest::Client) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("phoenix exited: {status}");
            }
            let reply = http.get(format!("{}/v1/projects", self.url)).send().await;
            if reply.is_ok_and(|reply| reply.status().is_success()) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(240),
                "Phoenix did not come up"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Every span of the default project.
    async fn spans(&self, http: &reqwest::Client) -> Vec<Value> {
        let mut spans = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut url = format!("{}/v1/projects/default/spans?limit=1000", self.url);
            if let Some(cursor) = &cursor {
                url.push_str(&format!("&cursor={cursor}"));
            }
            let page: Value = http
                .get(url)
                .send()
                .await
                .unwrap()
                .error_for_status()
                .unwrap()
                .json()
                .await
                .unwrap();
            spans.extend(page["data"].as_array().unwrap().iter().cloned());
            match page["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => return spans,
            }
        }
    }

    /// The default project's global id, for the UI's addresses.
    async fn project_id(&self, http: &reqwest::Client) -> String {
        let projects: Value = http
            .get(format!("{}/v1/projects", self.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        projects["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|project| project["name"] == "default")
            .and_then(|project| project["id"].as_str())
            .expect("the default project")
            .to_owned()
    }
}

/// An attribute by its dotted name, whether the store keeps attributes
/// flat or nested by the name's parts.
fn attribute<'a>(span: &'a Value, name: &str) -> Option<&'a Value> {
    let attributes = &span["attributes"];
    if let Some(value) = attributes.get(name) {
        return Some(value);
    }
    name.split('.')
        .try_fold(attributes, |value, part| value.get(part))
}

fn number(span: &Value, name: &str) -> Option<u64> {
    let value = attribute(span, name)?;
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|text| text.parse().ok()))
}

fn text<'a>(span: &'a Value, name: &str) -> Option<&'a str> {
    attribute(span, name).and_then(Value::as_str)
}

fn id(span: &Value) -> &str {
    span["context"]["span_id"].as_str().unwrap()
}

fn trace(span: &Value) -> &str {
    span["context"]["trace_id"].as_str().unwrap()
}

fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|span| span["name"] == name).collect()
}

/// The content attributes of the conventions: recorded only while
/// capture is on.
const CONTENT: &[&str] = &[
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
];

/// What one run left in Phoenix.
struct Stored {
    /// The run's trace: the agent's spans and the server's.
    run: Vec<Value>,
    /// The server's `execute_tool forecast` span.
    served: Value,
    usage: toolkit_core::response::Usage,
    /// Why the run stopped, as the outcome says.
    stop: String,
    trace_id: String,
}

/// Runs the agent once, with a server process of its own, and waits until
/// Phoenix holds the spans of both processes.
async fn run_once(
    phoenix: &Phoenix,
    http: &reqwest::Client,
    llama: &llama::Server,
    export: &toolkit_examples::otlp::Otlp,
    capture: bool,
) -> Stored {
    telemetry::capture_content(capture);
    let endpoint = format!("{}/v1/traces", phoenix.url);
    let registry = Arc::new(Registry::builder().build().unwrap());
    let me = std::env::current_exe().unwrap();
    let client = McpClient::command("weather", me, Vec::<String>::new())
        .env(SERVE, &endpoint)
        .env(CAPTURE, if capture { "1" } else { "0" })
        .env(KEY_VARIABLE, SECRET)
        .timeout(Duration::from_secs(120))
        .connect()
        .await
        .unwrap();
    let synced = client.attach(&registry).await.unwrap();
    assert!(synced.refused.is_empty(), "{:?}", synced.refused);
    let model = HttpModel::openai_chat("gemma")
        .base_url(&llama.base_url)
        .key(SECRET)
        .timeout(Duration::from_secs(600))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let agent = Agent::builder(CallFirst(model), registry.clone())
        .name(AGENT)
        .instructions("Answer in one short sentence.")
        .limits(Limits::default().max_steps(3))
        .configure(|conversation| conversation.settings_mut().max_output_tokens = Some(48))
        .build()
        .unwrap();
    let outcome = agent
        .run(format!("What is the weather in {PLACE}?"))
        .await
        .unwrap();
    assert_eq!(outcome.steps, 2, "{outcome:?}");
    // The server process exits when its input closes, sending its spans.
    client.close().await;
    export.flush().unwrap();

    let started = Instant::now();
    loop {
        let spans = phoenix.spans(http).await;
        let root = spans.iter().find(|span| {
            span["name"] == format!("invoke_agent {AGENT}")
                && text(span, "gen_ai.conversation.id") == Some(outcome.session_id.as_str())
        });
        // The server's spans are in the run's trace: its MCP span's parent
        // came in the request's `_meta`.
        let run: Vec<Value> = root.map_or(Vec::new(), |root| {
            spans
                .iter()
                .filter(|span| trace(span) == trace(root))
                .cloned()
                .collect()
        });
        let served = named(&run, "execute_tool forecast")
            .first()
            .map(|span| (*span).clone());
        if let (Some(root), Some(served)) = (root, served) {
            let trace_id = trace(root).to_owned();
            return Stored {
                run,
                served,
                usage: outcome.usage,
                stop: match outcome.stop {
                    StopReason::Answered => "answered",
                    StopReason::Truncated => "truncated",
                    _ => "another",
                }
                .to_owned(),
                trace_id,
            };
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "Phoenix does not hold the run's spans: {:#}",
            Value::Array(spans)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The structure, names and attributes every run has, whatever the
/// capture.
fn check_shape(stored: &Stored) {
    let run = &stored.run;
    let names: Vec<&str> = run
        .iter()
        .filter_map(|span| span["name"].as_str())
        .collect();
    let roots = named(run, &format!("invoke_agent {AGENT}"));
    assert_eq!(roots.len(), 1, "{names:?}");
    let root = roots[0];
    assert!(
        root["parent_id"].is_null(),
        "the run is the trace's root: {root:#}"
    );
    assert_eq!(text(root, "gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(text(root, "gen_ai.agent.name"), Some(AGENT));
    assert_eq!(text(root, "gen_ai.provider.name"), Some("openai"));
    // Answered, or cut off by the bound on the answer's length.
    assert_eq!(
        text(root, "toolkit.run.stop_reason"),
        Some(stored.stop.as_str())
    );
    assert!(
        ["answered", "truncated"].contains(&stored.stop.as_str()),
        "{}",
        stored.stop
    );
    assert_eq!(number(root, "toolkit.run.steps"), Some(2));

    let chats = named(run, "chat gemma");
    assert_eq!(chats.len(), 2, "{names:?}");
    let (mut input, mut output) = (0, 0);
    for chat in &chats {
        assert_eq!(chat["parent_id"].as_str(), Some(id(root)), "{chat:#}");
        assert_eq!(text(chat, "gen_ai.operation.name"), Some("chat"));
        assert_eq!(text(chat, "gen_ai.provider.name"), Some("openai"));
        assert_eq!(text(chat, "gen_ai.request.model"), Some("gemma"));
        assert_eq!(text(chat, "server.address"), Some("127.0.0.1"));
        assert!(number(chat, "server.port").is_some(), "{chat:#}");
        assert!(
            text(chat, "gen_ai.response.finish_reasons").is_some(),
            "{chat:#}"
        );
        input += number(chat, "gen_ai.usage.input_tokens").expect("input tokens");
        output += number(chat, "gen_ai.usage.output_tokens").expect("output tokens");
    }
    // The counts are llama-server's, as the run's outcome summed them.
    assert_eq!(
        (input, output),
        (stored.usage.input_tokens, stored.usage.output_tokens)
    );
    assert_eq!(
        number(root, "gen_ai.usage.input_tokens"),
        Some(stored.usage.input_tokens)
    );
    assert_eq!(
        number(root, "gen_ai.usage.output_tokens"),
        Some(stored.usage.output_tokens)
    );
    assert!(stored.usage.input_tokens > 0 && stored.usage.output_tokens > 0);

    let calls = named(run, "execute_tool weather_forecast");
    assert_eq!(calls.len(), 1, "{names:?}");
    let call = calls[0];
    assert_eq!(call["parent_id"].as_str(), Some(id(root)), "{call:#}");
    assert_eq!(text(call, "gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(text(call, "gen_ai.tool.name"), Some("weather_forecast"));
    assert_eq!(text(call, "gen_ai.tool.type"), Some("function"));
    assert!(text(call, "gen_ai.tool.call.id").is_some(), "{call:#}");

    // The MCP hop: the client's span is a child of the agent's call; the
    // server's, in the other process, a child of the client's.
    let hops = named(run, "tools/call forecast");
    assert_eq!(hops.len(), 2, "{names:?}");
    let client = hops
        .iter()
        .find(|span| span["parent_id"].as_str() == Some(id(call)))
        .unwrap_or_else(|| panic!("no client span under the call: {hops:#?}"));
    let server = hops
        .iter()
        .find(|span| span["parent_id"].as_str() == Some(id(client)))
        .unwrap_or_else(|| panic!("no server span under the client's: {hops:#?}"));
    for hop in [client, server] {
        assert_eq!(text(hop, "mcp.method.name"), Some("tools/call"), "{hop:#}");
        assert_eq!(text(hop, "gen_ai.tool.name"), Some("forecast"), "{hop:#}");
        assert_eq!(text(hop, "network.transport"), Some("pipe"), "{hop:#}");
    }
    let served = &stored.served;
    assert_eq!(served["parent_id"].as_str(), Some(id(server)), "{served:#}");
    assert_eq!(text(served, "gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(text(served, "gen_ai.tool.name"), Some("forecast"));
    assert_eq!(
        text(served, "gen_ai.tool.description"),
        Some("Tells the weather of a city.")
    );
}

fn check_content(stored: &Stored, capture: bool) {
    // The server's spans are in the run's trace.
    let everything: Vec<&Value> = stored.run.iter().collect();
    for span in &everything {
        for name in CONTENT {
            let found = attribute(span, name);
            if !capture {
                assert!(found.is_none(), "{name} without capture: {span:#}");
            }
        }
    }
    let text_of_all = serde_json::to_string(&everything).unwrap();
    assert_eq!(
        text_of_all.contains(PLACE),
        capture,
        "the task's words are stored exactly when content is captured"
    );
    if capture {
        let chats = named(&stored.run, "chat gemma");
        let first = chats
            .iter()
            .find(|chat| {
                text(chat, "gen_ai.input.messages").is_some_and(|m| !m.contains("\"tool\""))
            })
            .expect("the first request's messages");
        let messages: Value =
            serde_json::from_str(text(first, "gen_ai.input.messages").unwrap()).unwrap();
        assert_eq!(messages[0]["role"], "user", "{messages:#}");
        assert!(
            messages[0]["parts"][0]["content"]
                .as_str()
                .is_some_and(|task| task.contains(PLACE)),
            "{messages:#}"
        );
        for chat in &chats {
            assert!(text(chat, "gen_ai.output.messages").is_some(), "{chat:#}");
            assert!(text(chat, "gen_ai.tool.definitions").is_some(), "{chat:#}");
        }
        let call = named(&stored.run, "execute_tool weather_forecast")[0];
        assert!(
            text(call, "gen_ai.tool.call.arguments").is_some(),
            "{call:#}"
        );
        assert!(
            text(&stored.served, "gen_ai.tool.call.result")
                .is_some_and(|r| r.starts_with("Sunny in")),
            "{:#}",
            stored.served
        );
    }
}

/// A picture of the run in Phoenix's UI, by headless Chromium.
fn screenshot(phoenix: &Phoenix, project: &str, trace_id: &str, file: &str) {
    let chromium = std::env::var("CHROME").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    let page = format!("{}/projects/{project}/traces/{trace_id}", phoenix.url);
    let profile = phoenix.dir.join("chromium");
    let status = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--window-size=1440,900")
        // The UI renders from scripts and its API: time for both.
        .arg("--virtual-time-budget=20000")
        .arg(format!("--screenshot={file}"))
        .arg(&page)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|error| panic!("{chromium} does not start: {error}"));
    assert!(status.success(), "chromium: {status}");
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    assert!(size > 0, "no screenshot at {file}");
    println!("phoenix: the trace's page {page}, pictured in {file} ({size} bytes)");
}

async fn check(phoenix: &mut Phoenix, llama: &llama::Server) {
    let http = toolkit_http::client_builder()
        .unwrap()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    phoenix.ready(&http).await;
    let export = toolkit_examples::otlp::install(
        &format!("{}/v1/traces", phoenix.url),
        "phoenix-test-agent",
    )
    .unwrap();

    let quiet = run_once(phoenix, &http, llama, &export, false).await;
    check_shape(&quiet);
    check_content(&quiet, false);

    let told = run_once(phoenix, &http, llama, &export, true).await;
    check_shape(&told);
    check_content(&told, true);

    // Nowhere in anything stored: not the model's key (sent in a header),
    // not the server's environment or its tool's state.
    let all = serde_json::to_string(&phoenix.spans(&http).await).unwrap();
    assert!(!all.contains(SECRET), "the secret was stored: {all}");

    if let Ok(file) = std::env::var("TOOLKIT_PHOENIX_SCREENSHOT")
        && !file.is_empty()
    {
        let project = phoenix.project_id(&http).await;
        screenshot(phoenix, &project, &told.trace_id, &file);
    }
    drop(export);
}

fn main() -> ExitCode {
    if let Ok(endpoint) = std::env::var(SERVE) {
        serve(&endpoint);
        return ExitCode::SUCCESS;
    }
    runner::run(vec![
        Test::new("a_traced_run_reaches_phoenix", traced_run)
            .skip_when("TOOLKIT_SKIP_PHOENIX_TESTS")
            .skip_when("TOOLKIT_SKIP_MODEL_TESTS"),
    ])
}

fn traced_run() {
    let program = std::env::var("TOOLKIT_PHOENIX")
        .ok()
        .filter(|value| !value.is_empty())
        .expect(
            "TOOLKIT_PHOENIX is not set: run scripts/deps phoenix, then \
             `eval \"$(scripts/deps --print-env)\"` (scripts/test does both), \
             or set TOOLKIT_SKIP_PHOENIX_TESTS=1 to skip this test",
        );
    let started = Instant::now();
    let mut phoenix = Phoenix::start(&program);
    let Some(llama) = llama::start(4096) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(check(&mut phoenix, &llama));
    println!("phoenix: ok in {:.0} s", started.elapsed().as_secs_f64());
}
