//! The registry the MCP tests serve, and the switch that makes a test
//! binary its own server: started with `TOOLKIT_MCP_TEST_SERVE=1`, it
//! serves this registry over stdio instead of running its tests; with
//! `TOOLKIT_MCP_TEST_SERVE=http` over Streamable HTTP on a free port of
//! 127.0.0.1, whose address it prints as its first line
//! (`TOOLKIT_MCP_TEST_STATELESS=1`: without sessions).
//! `TOOLKIT_MCP_TEST_MAX_BYTES` sets the request size limit.

// Each test binary uses part of this module.
#![allow(dead_code)]

pub mod http_client;
pub mod schema;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use toolkit_core::{Block, CallContext, Image, Json, LogLevel, Registry, ToolResult, tool, tools};

/// Runs a scenario's future on a runtime of its own, multi-threaded as
/// the server's host would run it: one runtime per scenario, so that a
/// failed scenario's tasks, children and connections end with it instead
/// of disturbing the next.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(future)
}

/// Adds two numbers.
#[tool(read_only, idempotent)]
fn add(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
) -> String {
    (a + b).to_string()
}

/// Always fails.
#[tool]
fn fail() -> Result<String, String> {
    Err("the disk is full".to_owned())
}

/// A one-pixel image.
#[tool]
fn pixel() -> ToolResult {
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let image = Image::from_base64("image/png", PNG).expect("a valid PNG");
    ToolResult::blocks([Block::text("one pixel"), Block::image(image)])
}

/// A forecast.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: i32,
}

/// Today's weather.
#[tool(title = "Weather today")]
fn weather(
    /// The city.
    city: String,
) -> Json<Forecast> {
    Json(Forecast { city, celsius: 21 })
}

/// The registry being served, for `toggle`.
static SERVED: OnceLock<Arc<Registry>> = OnceLock::new();

/// Disables a tool.
#[tool]
async fn toggle(
    /// The tool to disable.
    name: String,
) -> String {
    let registry = SERVED.get().expect("set before serving");
    format!("disabled: {}", registry.set_enabled(&name, false))
}

/// Whether `slow` saw its call cancelled.
static CANCELLED: AtomicBool = AtomicBool::new(false);

/// Waits up to ten seconds, unless the call is cancelled.
#[tool]
async fn slow(#[tool(context)] call: CallContext) -> String {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(10)) => "slept".to_owned(),
        () = call.cancellation().cancelled() => {
            CANCELLED.store(true, Ordering::SeqCst);
            "cancelled".to_owned()
        }
    }
}

/// Whether a call of `slow` was cancelled.
#[tool]
fn was_cancelled() -> String {
    CANCELLED.load(Ordering::SeqCst).to_string()
}

/// Counts to `to`, reporting progress at each step.
#[tool]
async fn count(
    /// Where to stop.
    to: u32,
    #[tool(context)] call: CallContext,
) -> String {
    for step in 1..=to {
        call.report_progress(
            f64::from(step),
            Some(f64::from(to)),
            Some(&format!("step {step}")),
        );
        // Apart enough that a loaded machine still hands the reports on
        // before the answer (a report still on its way then may be
        // dropped: progress is advisory).
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    format!("counted to {to}")
}

/// The server process's id.
#[tool(read_only)]
fn whoami() -> String {
    std::process::id().to_string()
}

/// Ends the server process at once, as a crash would.
#[tool]
fn crash() -> String {
    std::process::exit(3)
}

/// Logs one message at `debug`, one at `info` and one at `error`.
#[tool]
fn chatty(#[tool(context)] call: CallContext) -> String {
    call.log(LogLevel::Debug, "looking around");
    call.log(LogLevel::Info, "found three things");
    call.log(LogLevel::Error, "one of them is broken");
    "chatted".to_owned()
}

/// Where `touch` announces resource changes.
static UPDATES: OnceLock<toolkit_mcp::ResourceUpdates> = OnceLock::new();

/// Says the resource changed, to the clients subscribed to it.
#[tool]
fn touch(
    /// The resource's URI.
    uri: String,
) -> String {
    UPDATES.get().expect("set before serving").updated(&uri);
    format!("touched {uri}")
}

/// Asks the user to confirm, and says what they answered.
#[tool]
async fn confirm(
    /// What to confirm.
    what: String,
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"sure": {"type": "boolean", "description": "Whether to go on."}},
        "required": ["sure"]
    });
    let answer = call
        .elicit(format!("Really {what}?"), schema, Duration::from_secs(10))
        .await
        .map_err(|error| error.to_string())?;
    let content = answer.content.unwrap_or_default();
    Ok(format!("{}: {content}", answer.action))
}

/// Asks the client's model to summarize a text.
#[tool]
async fn summarize(
    /// The text.
    text: String,
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let request = toolkit_core::SampleRequest::new(format!("Summarize: {text}"), 50)
        .system("You summarize in one line.");
    let sampled = call
        .sample(request, Duration::from_secs(10))
        .await
        .map_err(|error| error.to_string())?;
    Ok(format!("{} said: {}", sampled.model, sampled.text))
}

/// Lists the client's roots.
#[tool]
async fn workspace(#[tool(context)] call: CallContext) -> Result<String, String> {
    let roots = call
        .roots(Duration::from_secs(10))
        .await
        .map_err(|error| error.to_string())?;
    let roots: Vec<String> = roots
        .iter()
        .map(|root| match &root.name {
            Some(name) => format!("{} ({name})", root.uri),
            None => root.uri.clone(),
        })
        .collect();
    Ok(format!("roots: {}", roots.join(", ")))
}

/// Asks one question (`elicit`, `sample` or `roots`), waiting at most
/// 100 ms for the answer.
#[tool]
async fn impatient(
    /// What to ask.
    kind: String,
    #[tool(context)] call: CallContext,
) -> Result<String, String> {
    let within = Duration::from_millis(100);
    let asked = match kind.as_str() {
        "elicit" => call
            .elicit(
                "Anything?",
                serde_json::json!({"type": "object", "properties": {"note": {"type": "string"}}}),
                within,
            )
            .await
            .map(|answer| answer.action.to_string()),
        "sample" => call
            .sample(toolkit_core::SampleRequest::new("Anything?", 10), within)
            .await
            .map(|sampled| sampled.text),
        "roots" => call
            .roots(within)
            .await
            .map(|roots| roots.len().to_string()),
        other => return Err(format!("no question of kind {other}")),
    };
    asked.map_err(|error| error.to_string())
}

/// The names of the served tools, in order.
pub const TOOLS: [&str; 16] = [
    "add",
    "fail",
    "pixel",
    "weather",
    "toggle",
    "slow",
    "was_cancelled",
    "count",
    "whoami",
    "crash",
    "chatty",
    "touch",
    "confirm",
    "summarize",
    "workspace",
    "impatient",
];

fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .tools(tools![
                add,
                fail,
                pixel,
                weather,
                toggle,
                slow,
                was_cancelled,
                count,
                whoami,
                crash,
                chatty,
                touch,
                confirm,
                summarize,
                workspace,
                impatient
            ])
            .build()
            .expect("the test tools are valid"),
    )
}

/// The served resources and prompts: a fixed text, a template, a
/// resource whose reader fails; a prompt with a required and an optional
/// argument, one with an image and an embedded resource, and one that asks
/// the user first.
fn with_resources_and_prompts(server: toolkit_mcp::McpServer) -> toolkit_mcp::McpServer {
    use toolkit_mcp::{
        Prompt, PromptContent, PromptMessage, Resource, ResourceContents, ResourceTemplate,
    };
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let day = ResourceTemplate::new("notes://day/{day}", "day", |_uri, variables| async move {
        let day = &variables["day"];
        Ok(ResourceContents::text(
            "text/plain",
            format!("Nothing happened on {day}."),
        ))
    })
    .description("The notes of one day.");
    let broken = Resource::new("notes://broken", "broken", || async {
        Err(toolkit_mcp::ResourceError::new("the disk is full"))
    });
    let greet = Prompt::new("greet", |arguments| async move {
        let name = &arguments["name"];
        let text = match arguments.get("mood") {
            Some(mood) => format!("Greet {name}, who is {mood}."),
            None => format!("Greet {name}."),
        };
        Ok(vec![PromptMessage::user(text)])
    })
    .title("Greeting")
    .description("Asks for a greeting.")
    .argument("name", "Who to greet.", true)
    .argument("mood", "How they feel.", false);
    let picture = Image::from_base64("image/png", PNG).expect("a valid PNG");
    let look = Prompt::fixed(
        "look",
        [
            PromptMessage::user(picture),
            PromptMessage::user(PromptContent::Resource {
                uri: "notes://readme".to_owned(),
                contents: ResourceContents::text("text/markdown", "# Notes"),
            }),
            PromptMessage::assistant("I see one pixel and a heading."),
        ],
    );
    let plan = Prompt::asking("plan", |_arguments, context| async move {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"goal": {"type": "string"}},
            "required": ["goal"]
        });
        let question = toolkit_core::ElicitRequest::new("What is the goal?", schema).key("goal");
        let answer = context
            .elicit_with(question, Duration::from_secs(10))
            .await?;
        let content = answer.content.unwrap_or_default();
        let goal = content["goal"].as_str().unwrap_or("none");
        Ok(vec![PromptMessage::user(format!(
            "Plan how to reach {goal}."
        ))])
    })
    .description("Plans the work, once the user gives the goal.");
    server
        .resource(
            Resource::text("notes://readme", "readme", "text/markdown", "# Notes")
                .description("How the notes are kept."),
        )
        .resource(Resource::binary(
            "notes://pixel",
            "pixel",
            "image/png",
            vec![1, 2, 3],
        ))
        .resource(broken)
        .resource_template(day)
        .prompt(greet)
        .prompt(look)
        .prompt(plan)
}

/// Serves the registry over stdio and returns `true` when this process was
/// started as the server; `false` when it should run its tests.
pub fn serve_if_asked() -> bool {
    let Some(mode) = std::env::var_os("TOOLKIT_MCP_TEST_SERVE") else {
        return false;
    };
    let registry = registry();
    let _ = SERVED.set(Arc::clone(&registry));
    let mut server = with_resources_and_prompts(toolkit_mcp::McpServer::new(registry));
    let _ = UPDATES.set(server.resource_updates());
    if let Some(limit) = std::env::var("TOOLKIT_MCP_TEST_MAX_BYTES")
        .ok()
        .and_then(|limit| limit.parse().ok())
    {
        server = server.max_request_bytes(limit);
    }
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let served = runtime.block_on(async move {
        if mode == "http" {
            let stateless = std::env::var_os("TOOLKIT_MCP_TEST_STATELESS").is_some();
            let options = toolkit_mcp::HttpOptions::new().stateless(stateless);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a free port");
            let address = listener.local_addr().expect("an address");
            println!("http://{address}/mcp");
            server.serve_http(listener, &options).await
        } else {
            server.serve_stdio().await
        }
    });
    if let Err(error) = served {
        eprintln!("{error}");
        std::process::exit(1);
    }
    true
}

/// A copy of this test binary serving over Streamable HTTP, ended when
/// dropped.
pub struct HttpServer {
    child: std::process::Child,
    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    /// Starts one; `stateless` serves without sessions.
    pub fn start(stateless: bool) -> Self {
        Self::start_with(stateless, &[])
    }

    /// Starts one with more environment variables.
    pub fn start_with(stateless: bool, env: &[(&str, &str)]) -> Self {
        use std::io::BufRead;
        let mut command =
            std::process::Command::new(std::env::current_exe().expect("the test's own path"));
        command
            .env("TOOLKIT_MCP_TEST_SERVE", "http")
            .envs(env.iter().copied())
            .stdout(std::process::Stdio::piped());
        if stateless {
            command.env("TOOLKIT_MCP_TEST_STATELESS", "1");
        }
        let mut child = command.spawn().expect("the server starts");
        let stdout = child.stdout.take().expect("a stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server prints its address");
        assert!(line.starts_with("http://"), "not an address: {line:?}");
        Self {
            child,
            url: line.trim().to_owned(),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The tool names of a `tools/list` result, in order.
pub fn tool_names(result: &serde_json::Value) -> Vec<&str> {
    result["tools"]
        .as_array()
        .expect("a tool list")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect()
}

/// A plain HTTP client for the tests' own requests to 127.0.0.1 (see
/// [`http_client::plain_http_builder`]).
pub fn plain_http_client() -> reqwest::Client {
    http_client::plain_http_builder()
        .build()
        .expect("an HTTP client")
}
