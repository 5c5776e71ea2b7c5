//! `tools/call` throughput and latency, over stdio and Streamable HTTP,
//! with 1 and 64 concurrent clients: our server, rmcp's own
//! `#[tool_router]` server with the same tool, and (when installed) the
//! reference TypeScript server's `echo`, all driven by one client (rmcp's)
//! in one run. Our tool is measured twice: as an `async fn`, which runs on
//! the serving task as rmcp runs its tool (the like-for-like comparison),
//! and as a plain `fn`, which we run on the blocking pool.
//!
//! ```text
//! cargo bench -p toolkit-mcp --bench calls               # both tables
//! cargo bench -p toolkit-mcp --bench calls -- clients    # one of them
//! cargo bench -p toolkit-mcp --bench calls -- servers http   # one transport
//! ```
//!
//! Each server runs in a process of its own (this binary, started again to
//! serve). Over stdio, "64 clients" are 64 tasks sharing the one
//! connection a stdio server has, each waiting for its answer before
//! asking again; over HTTP they are 64 connections (sessions). Rounds
//! alternate the servers so that the machine's noise falls on all alike;
//! the ratio is ours over rmcp's median throughput. A second table puts
//! the clients side by side: rmcp's and ours, one call at a time, against
//! our server. Without `--bench`
//! (`cargo test --benches`) it runs a few calls of each, as a test.
//!
//! A pair of servers whose tool also logs one message per call: the client
//! sets the level (`logging/setLevel`, `info`) and the message (`info`) is
//! sent to it before the result, by ours through the call's
//! `CallContext::log`, by rmcp's through its peer.
#![allow(deprecated)] // logging: deprecated by SEP-2577, part of 2025-11-25

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, LoggingLevel, LoggingMessageNotificationParam, ServerCapabilities,
    ServerConfig, SetLevelRequestParams,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, RoleClient, RoleServer, RunningService, ServiceExt,
};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, ServerHandler, tool_handler};
use rmcp::{tool, tool_router};
use serde_json::{Map, Value, json};
use tokio::io::AsyncBufReadExt;
use toolkit_core::{Registry, tools};

#[path = "../tests/support/http_client.rs"]
mod http_support;

/// The tool as rmcp runs its sync functions: on the task that serves the
/// call. An `async fn` tool runs so with us.
mod inline {
    /// Repeats the text.
    #[toolkit_core::tool]
    pub async fn echo(
        /// What to repeat.
        text: String,
    ) -> String {
        text
    }
}

/// The tool logging one message per call, as an `async fn`.
mod logging {
    use toolkit_core::{CallContext, LogLevel};

    /// Repeats the text, saying so in the log.
    #[toolkit_core::tool]
    pub async fn echo(
        /// What to repeat.
        text: String,
        #[tool(context)] call: CallContext,
    ) -> String {
        call.log(LogLevel::Info, "echoing");
        text
    }
}

/// The tool as a plain `fn`, which we run on tokio's blocking pool (so that
/// a tool that blocks never holds up the server): a pool round trip more
/// per call.
mod blocking {
    /// Repeats the text.
    #[toolkit_core::tool]
    pub fn echo(
        /// What to repeat.
        text: String,
    ) -> String {
        text
    }
}

/// rmcp's own server with the same tool.
#[derive(Clone)]
struct RmcpEcho;

#[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
struct EchoArgs {
    /// What to repeat.
    text: String,
}

#[tool_router(server_handler)]
impl RmcpEcho {
    #[tool(description = "Repeats the text.")]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

/// rmcp's own server with the logging tool: it keeps the level its client
/// set, and sends a message at or above it through the call's peer. Its
/// router is made per call, as `RmcpEcho`'s (`#[tool_handler]`'s default).
#[derive(Clone)]
struct RmcpLoggingEcho {
    /// The least severe level wanted (`LoggingLevel as u8`), `NO_LEVEL`
    /// until the client sets one.
    level: Arc<AtomicU8>,
}

const NO_LEVEL: u8 = u8::MAX;

#[rmcp::tool_router]
impl RmcpLoggingEcho {
    fn new() -> Self {
        Self {
            level: Arc::new(AtomicU8::new(NO_LEVEL)),
        }
    }

    #[tool(description = "Repeats the text, saying so in the log.")]
    async fn echo(
        &self,
        Parameters(EchoArgs { text }): Parameters<EchoArgs>,
        peer: Peer<RoleServer>,
    ) -> String {
        let least = self.level.load(Ordering::Relaxed);
        if least != NO_LEVEL && LoggingLevel::Info as u8 >= least {
            let mut message =
                LoggingMessageNotificationParam::new(LoggingLevel::Info, json!("echoing"));
            message.logger = Some("echo".to_owned());
            let _ = peer.notify_logging_message(message).await;
        }
        text
    }
}

#[tool_handler]
impl ServerHandler for RmcpLoggingEcho {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_logging()
                .enable_tools()
                .build(),
        )
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level.store(request.level as u8, Ordering::Relaxed);
        Ok(())
    }
}

const SERVE: &str = "TOOLKIT_MCP_BENCH_SERVE";

/// Serves one of the two Rust servers, on stdio or on HTTP (printing the
/// address first).
async fn serve(mode: &str) {
    let (server, transport) = mode.split_once('-').expect("SERVER-TRANSPORT");
    let tools = match server {
        "ours_sync" => tools![blocking::echo],
        "ours_logging" => tools![logging::echo],
        _ => tools![inline::echo],
    };
    let registry = Arc::new(Registry::builder().tools(tools).build().expect("valid"));
    let ours = toolkit_mcp::McpServer::new(registry);
    match (server, transport) {
        ("ours" | "ours_sync" | "ours_logging", "stdio") => {
            ours.serve_stdio().await.expect("served")
        }
        ("rmcp", "stdio") => {
            let running = RmcpEcho
                .serve(rmcp::transport::stdio())
                .await
                .expect("served");
            let _ = running.waiting().await;
        }
        ("rmcp_logging", "stdio") => {
            let running = RmcpLoggingEcho::new()
                .serve(rmcp::transport::stdio())
                .await
                .expect("served");
            let _ = running.waiting().await;
        }
        (_, "http") => {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a port");
            println!("http://{}/mcp", listener.local_addr().expect("an address"));
            let app = match server {
                "rmcp" => {
                    let service = rmcp::transport::StreamableHttpService::new(
                        || Ok(RmcpEcho),
                        Arc::new(LocalSessionManager::default()),
                        Default::default(),
                    );
                    axum::Router::new().route_service("/mcp", service)
                }
                "rmcp_logging" => {
                    // A handler per session, as ours: each keeps its
                    // client's level.
                    let service = rmcp::transport::StreamableHttpService::new(
                        || Ok(RmcpLoggingEcho::new()),
                        Arc::new(LocalSessionManager::default()),
                        Default::default(),
                    );
                    axum::Router::new().route_service("/mcp", service)
                }
                _ => ours.router(&toolkit_mcp::HttpOptions::new()),
            };
            // As `McpServer::serve_http` does, for every server alike.
            let listener = axum::serve::ListenerExt::tap_io(listener, |stream| {
                let _ = stream.set_nodelay(true);
            });
            axum::serve(listener, app).await.expect("served");
        }
        _ => panic!("unknown mode {mode}"),
    }
}

/// A server under test, running in its own process.
struct Subject {
    label: &'static str,
    /// The command that starts it.
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// The tool and the argument that carries the text.
    tool: &'static str,
    argument: &'static str,
    /// The HTTP server process and its endpoint.
    http: Option<(tokio::process::Child, String)>,
    /// Whether its tool logs a message per call: each client then sets
    /// the level first.
    logs: bool,
}

impl Subject {
    fn rust(label: &'static str, server: &str, transport: &str) -> Self {
        Self {
            label,
            program: std::env::current_exe().expect("this binary"),
            args: Vec::new(),
            env: vec![(SERVE.to_owned(), format!("{server}-{transport}"))],
            tool: "echo",
            argument: "text",
            http: None,
            logs: server.ends_with("_logging"),
        }
    }

    /// `server-everything`'s `echo`, from the node modules `scripts/test`
    /// installs.
    fn everything(transport: &str) -> Option<Self> {
        let modules = std::env::var_os("TOOLKIT_NODE_MODULES")?;
        let script =
            PathBuf::from(modules).join("@modelcontextprotocol/server-everything/dist/index.js");
        script.exists().then(|| Self {
            label: "server-everything (TypeScript)",
            program: "node".into(),
            args: vec![
                script.to_string_lossy().into_owned(),
                if transport == "http" {
                    "streamableHttp"
                } else {
                    "stdio"
                }
                .to_owned(),
            ],
            env: Vec::new(),
            tool: "echo",
            argument: "message",
            http: None,
            logs: false,
        })
    }

    fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.iter().cloned())
            .kill_on_drop(true);
        command
    }

    /// Starts the HTTP server process, once.
    async fn start_http(&mut self) -> String {
        if let Some((_, url)) = &self.http {
            return url.clone();
        }
        let mut command = self.command();
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let port = free_port();
        command.env("PORT", port.to_string());
        let mut child = command.spawn().expect("the server starts");
        let url = if self.label.starts_with("server-everything") {
            // It prints nothing useful to stdout; wait for its port.
            let url = format!("http://127.0.0.1:{port}/mcp");
            wait_for_port(port).await;
            url
        } else {
            let stdout = child.stdout.take().expect("a stdout");
            let mut line = String::new();
            tokio::io::BufReader::new(stdout)
                .read_line(&mut line)
                .await
                .expect("an address");
            line.trim().to_owned()
        };
        self.http = Some((child, url.clone()));
        url
    }

    async fn connect(
        &mut self,
        transport: &str,
        listener: Listener,
    ) -> RunningService<RoleClient, Listener> {
        let connection = if transport == "stdio" {
            let (child, _) = TokioChildProcess::builder(self.command())
                .stderr(Stdio::null())
                .spawn()
                .expect("the server starts");
            listener.serve(child).await.expect("initialized")
        } else {
            let url = self.start_http().await;
            let config = StreamableHttpClientTransportConfig::with_uri(url);
            listener
                .serve(StreamableHttpClientTransport::with_client(
                    http_client(),
                    config,
                ))
                .await
                .expect("initialized")
        };
        if self.logs {
            connection
                .peer()
                .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
                .await
                .expect("the level set");
        }
        connection
    }

    fn params(&self) -> CallToolRequestParams {
        let mut arguments = Map::new();
        arguments.insert(self.argument.to_owned(), json!("hello"));
        CallToolRequestParams::new(self.tool).with_arguments(arguments)
    }
}

/// The benchmark's client handler: counts the log messages it hears.
#[derive(Clone, Default)]
struct Listener {
    logs: Arc<AtomicUsize>,
}

impl ClientHandler for Listener {
    async fn on_logging_message(
        &self,
        _params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.fetch_add(1, Ordering::Relaxed);
    }
}

/// The HTTP client rmcp's `from_uri` would make (no idle connections kept).
fn http_client() -> reqwest::Client {
    http_support::plain_http_builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("an HTTP client")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

async fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One round's figures.
struct Round {
    calls_per_second: f64,
    latencies: Vec<Duration>,
}

/// `calls` calls of the subject's tool, from `clients` concurrent clients.
async fn round(subject: &mut Subject, transport: &str, clients: usize, calls: usize) -> Round {
    let params = subject.params();
    // Over stdio the clients share the one connection; over HTTP each has
    // its own.
    let mut connections = Vec::new();
    let connection_count = if transport == "stdio" { 1 } else { clients };
    let listener = Listener::default();
    for _ in 0..connection_count {
        connections.push(subject.connect(transport, listener.clone()).await);
    }
    let peers: Vec<Peer<RoleClient>> = (0..clients)
        .map(|i| connections[i % connection_count].peer().clone())
        .collect();
    // Warm up each client.
    for peer in &peers {
        check(peer.call_tool_once(params.clone()).await);
    }
    let per_client = calls / clients;
    let started = Instant::now();
    let tasks: Vec<_> = peers
        .into_iter()
        .map(|peer| {
            let params = params.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(per_client);
                for _ in 0..per_client {
                    let asked = Instant::now();
                    check(peer.call_tool_once(params.clone()).await);
                    latencies.push(asked.elapsed());
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(calls);
    for task in tasks {
        latencies.extend(task.await.expect("a client"));
    }
    let elapsed = started.elapsed();
    // The messages are heard (over HTTP on the session's own stream, so
    // some may come after the round).
    let heard = listener.logs.load(Ordering::Relaxed);
    assert_eq!(
        heard > 0,
        subject.logs,
        "{heard} log messages from {}",
        subject.label
    );
    for mut connection in connections {
        let _ = connection.close().await;
    }
    Round {
        calls_per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
        latencies,
    }
}

fn check(answer: Result<rmcp::model::CallToolResponse, rmcp::ServiceError>) {
    let value = match answer.expect("an answer") {
        rmcp::model::CallToolResponse::Complete(result) => {
            serde_json::to_value(result).expect("JSON")
        }
        other => panic!("not a result: {other:?}"),
    };
    let text = value["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("hello"), "{value}");
    assert_ne!(value["isError"], Value::Bool(true), "{value}");
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn percentile(latencies: &mut [Duration], p: f64) -> Duration {
    latencies.sort();
    let index = ((latencies.len() as f64 - 1.0) * p).round() as usize;
    latencies[index]
}

async fn run(full: bool) {
    let rounds = if full { 7 } else { 1 };
    println!(
        "| transport | clients | server | calls/s (median of {rounds}) | p50 | p99 | ours ÷ rmcp |"
    );
    println!("|---|---|---|---|---|---|---|");
    for transport in transports() {
        let mut subjects = vec![
            Subject::rust("toolkit-mcp, async fn", "ours", transport),
            Subject::rust("rmcp #[tool_router]", "rmcp", transport),
            Subject::rust("toolkit-mcp, sync fn", "ours_sync", transport),
            Subject::rust("toolkit-mcp, async fn, logs", "ours_logging", transport),
            Subject::rust("rmcp #[tool_router], logs", "rmcp_logging", transport),
        ];
        if full && let Some(everything) = Subject::everything(transport) {
            subjects.push(everything);
        }
        for clients in [1, 64] {
            let calls = if full {
                clients.max(1) * 60 + 2000
            } else {
                clients * 2
            };
            let mut figures: Vec<(Vec<f64>, Vec<Duration>)> =
                subjects.iter().map(|_| (Vec::new(), Vec::new())).collect();
            for _ in 0..rounds {
                for (subject, (throughputs, latencies)) in subjects.iter_mut().zip(&mut figures) {
                    let measured = round(subject, transport, clients, calls).await;
                    throughputs.push(measured.calls_per_second);
                    latencies.extend(measured.latencies);
                }
            }
            let medians: Vec<f64> = figures
                .iter_mut()
                .map(|(throughputs, _)| median(throughputs))
                .collect();
            for (i, (subject, (_, latencies))) in subjects.iter().zip(&mut figures).enumerate() {
                // Ours (both kinds of tool) over rmcp's, row by row.
                let ratio = match i {
                    0 => format!("**{:.2}**", medians[0] / medians[1]),
                    2 => format!("{:.2}", medians[2] / medians[1]),
                    3 => format!("**{:.2}**", medians[3] / medians[4]),
                    _ => String::new(),
                };
                println!(
                    "| {transport} | {clients} | {} | {:.0} | {:.0} µs | {:.0} µs | {ratio} |",
                    subject.label,
                    medians[i],
                    percentile(latencies, 0.5).as_secs_f64() * 1e6,
                    percentile(latencies, 0.99).as_secs_f64() * 1e6,
                );
            }
        }
    }
}

/// The client side: one host calling our server (`async fn` tool) one
/// call at a time, through rmcp's client and through ours (the server's
/// tools attached to a [`Registry`], called by name as an agent's calls
/// are). What a host pays per call, protocol and transport included.
async fn clients(full: bool) {
    let (rounds, calls) = if full { (5, 2000) } else { (1, 3) };
    println!();
    println!("| transport | client | calls/s (median of {rounds}) | p50 | p99 | ours ÷ rmcp |");
    println!("|---|---|---|---|---|---|");
    for transport in transports() {
        let mut subject = Subject::rust("toolkit-mcp, async fn", "ours", transport);
        let ours = our_client(&mut subject, transport).await;
        let mut figures = [(Vec::new(), Vec::new()), (Vec::new(), Vec::new())];
        for _ in 0..rounds {
            let measured = round(&mut subject, transport, 1, calls).await;
            figures[0].0.push(measured.calls_per_second);
            figures[0].1.extend(measured.latencies);
            // On a worker thread, as `round` runs rmcp's clients.
            let measured = tokio::spawn(our_round(Arc::clone(&ours), calls))
                .await
                .expect("our client's round");
            figures[1].0.push(measured.calls_per_second);
            figures[1].1.extend(measured.latencies);
        }
        let medians: Vec<f64> = figures
            .iter_mut()
            .map(|(throughputs, _)| median(throughputs))
            .collect();
        for (i, (label, (_, latencies))) in ["rmcp's client", "toolkit-mcp's `McpClient`"]
            .into_iter()
            .zip(&mut figures)
            .enumerate()
        {
            let ratio = if i == 1 {
                format!("**{:.2}**", medians[1] / medians[0])
            } else {
                String::new()
            };
            println!(
                "| {transport} | {label} | {:.0} | {:.0} µs | {:.0} µs | {ratio} |",
                medians[i],
                percentile(latencies, 0.5).as_secs_f64() * 1e6,
                percentile(latencies, 0.99).as_secs_f64() * 1e6,
            );
        }
    }
}

/// A registry holding the subject's tools, reached through our client.
async fn our_client(subject: &mut Subject, transport: &str) -> Arc<Registry> {
    let builder = if transport == "stdio" {
        let mut builder = toolkit_mcp::McpClient::command(
            "bench",
            subject.program.clone(),
            subject.args.iter().cloned(),
        );
        for (key, value) in &subject.env {
            builder = builder.env(key, value);
        }
        builder
    } else {
        toolkit_mcp::McpClient::http("bench", subject.start_http().await)
    };
    // The revision the figures have always been taken in: a 2025-11-25
    // session, not the one the client would find.
    let client = builder.stateless(false).connect().await.expect("connected");
    let registry = Arc::new(Registry::builder().build().expect("empty"));
    let attached = client.attach(&registry).await.expect("listed");
    assert_eq!(attached.added, ["bench_echo"], "{:?}", attached.refused);
    registry
}

async fn our_round(registry: Arc<Registry>, calls: usize) -> Round {
    let arguments = json!({"text": "hello"});
    // Warm up.
    let _ = registry.dispatch(("bench_echo", &arguments)).await;
    let mut latencies = Vec::with_capacity(calls);
    let started = Instant::now();
    for _ in 0..calls {
        let asked = Instant::now();
        let outcome = registry.dispatch(("bench_echo", &arguments)).await;
        latencies.push(asked.elapsed());
        assert_eq!(outcome.result.to_text(), "hello", "{:?}", outcome.result);
    }
    Round {
        calls_per_second: calls as f64 / started.elapsed().as_secs_f64(),
        latencies,
    }
}

/// The transports to measure: both, or the one named on the command line
/// (`-- servers http`).
fn transports() -> Vec<&'static str> {
    let named: Vec<&'static str> = ["stdio", "http"]
        .into_iter()
        .filter(|transport| std::env::args().any(|argument| argument == *transport))
        .collect();
    if named.is_empty() {
        vec!["stdio", "http"]
    } else {
        named
    }
}

fn main() {
    if let Ok(mode) = std::env::var(SERVE) {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(serve(&mode));
        return;
    }
    let full = std::env::args().any(|argument| argument == "--bench");
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(async {
            // `-- servers` or `-- clients`: one table only.
            let only = |table: &str| {
                let named: Vec<String> = std::env::args()
                    .filter(|a| a == "servers" || a == "clients")
                    .collect();
                named.is_empty() || named.iter().any(|a| a == table)
            };
            if only("servers") {
                run(full).await;
            }
            if only("clients") {
                clients(full).await;
            }
        });
}
