//! Our client against our server, over stdio and over Streamable HTTP
//! (with a session, and stateless): the server's tools become run-time
//! tools of a registry, and everything a call carries goes both ways.
//!
//! The test binary is its own server (see `support`).

mod support;

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{HttpServer, block_on};
use toolkit_core::{
    Block, Cancellation, Progress, ProgressSink, Provider, Registry, Root, ToolCall, ToolDef,
};
use toolkit_mcp::McpClient;
use toolkit_tests::asking::Answering;
use toolkit_tests::runner::{self, Test};

fn ours_over_stdio(name: &str) -> toolkit_mcp::McpClientBuilder {
    let me = std::env::current_exe().expect("the test's own path");
    McpClient::command(name, me, Vec::<String>::new()).env("TOOLKIT_MCP_TEST_SERVE", "1")
}

fn names(registry: &Registry) -> Vec<String> {
    registry.names().collect()
}

async fn text(registry: &Registry, name: &str, arguments: Value) -> String {
    let outcome = registry
        .dispatch((name, arguments.to_string().as_str()))
        .await;
    outcome.result.to_text()
}

/// Waits until `check` holds, for up to five seconds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Everything a client does with one server, over any transport.
async fn exercise(client: &McpClient, prefix: &str) {
    let tools = client.tools().await.expect("a tool list");
    let registry = Arc::new(
        Registry::builder()
            .tools(tools)
            .build()
            .expect("valid tools"),
    );
    let expected: Vec<String> = support::TOOLS
        .iter()
        .map(|tool| format!("{prefix}_{tool}"))
        .collect();
    assert_eq!(names(&registry), expected);
    let add = format!("{prefix}_add");
    let named = |tool: &str| format!("{prefix}_{tool}");

    // What the server said of its tools, kept.
    let definitions = registry.tool_list(Provider::Mcp).expect("definitions");
    let definitions = definitions.to_value();
    assert_eq!(
        definitions[0]["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true})
    );
    assert_eq!(definitions[0]["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(definitions[3]["title"], "Weather today");
    assert_eq!(definitions[3]["outputSchema"]["type"], "object");
    // And every provider takes them.
    for provider in Provider::ALL {
        registry
            .tool_list(provider)
            .unwrap_or_else(|error| panic!("{provider:?}: {error}"));
    }

    assert_eq!(text(&registry, &add, json!({"a": 2, "b": 3})).await, "5");
    // Arguments are checked here, before the server sees them.
    let wrong = registry.dispatch((&add, r#"{"a": "two", "b": 1}"#)).await;
    assert!(wrong.result.is_error());
    assert!(
        wrong.result.to_text().contains("at `a`"),
        "{}",
        wrong.result.to_text()
    );

    let failing = registry.dispatch((&named("fail"), "{}")).await.result;
    assert_eq!(failing.error_message(), Some("Error: the disk is full"));

    let pixel = registry.dispatch((&named("pixel"), "{}")).await.result;
    assert!(matches!(
        pixel.content(),
        [Block::Text { .. }, Block::Image { .. }]
    ));

    let weather = registry
        .dispatch((&named("weather"), r#"{"city": "Oslo"}"#))
        .await
        .result;
    assert!(
        matches!(weather.content(), [Block::Json { value }] if *value == json!({"city": "Oslo", "celsius": 21})),
        "{weather:?}"
    );

    // Progress, forwarded from the server's tool to the host.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = Arc::clone(&seen);
        ProgressSink::new(move |report: Progress| seen.lock().unwrap().push(report))
    };
    let call = ToolCall::new("c1", named("count"), json!({"to": 3}));
    let counted = registry.dispatch(&call).progress(&sink).await;
    assert_eq!(counted.result.to_text(), "counted to 3");
    let reports = seen.lock().unwrap().clone();
    let steps: Vec<f64> = reports.iter().map(|report| report.done).collect();
    // Reports are advisory: one still on its way when the result came may
    // be dropped, never one reordered.
    assert!(!steps.is_empty() && steps.is_sorted(), "{steps:?}");
    assert!(
        steps.iter().all(|step| [1.0, 2.0, 3.0].contains(step)),
        "{steps:?}"
    );
    assert_eq!(reports[0].total, Some(3.0));
    assert_eq!(reports[0].message, Some(format!("step {}", steps[0])));

    // Cancellation, forwarded: the server's tool sees it.
    let cancellation = Cancellation::new();
    let slow = ToolCall::new("c2", named("slow"), json!({}));
    let running = registry.dispatch(&slow).cancellation(&cancellation);
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancellation.cancel();
    };
    let (outcome, ()) = tokio::join!(running, cancel);
    assert!(outcome.result.is_error(), "{:?}", outcome.result);
    let was_cancelled = named("was_cancelled");
    let deadline = Instant::now() + Duration::from_secs(5);
    while text(&registry, &was_cancelled, json!({})).await != "true" {
        assert!(Instant::now() < deadline, "the server never saw the cancel");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Tools the server disables or brings back follow in the registry.
async fn list_changes(client: &McpClient, prefix: &str) {
    let registry = Arc::new(Registry::builder().build().expect("a registry"));
    let attached = client.attach(&registry).await.expect("attached");
    assert_eq!(attached.added.len(), support::TOOLS.len());
    assert!(attached.refused.is_empty());
    let fail = format!("{prefix}_fail");
    assert!(registry.is_enabled(&fail));
    let toggled = text(
        &registry,
        &format!("{prefix}_toggle"),
        json!({"name": "fail"}),
    )
    .await;
    assert_eq!(toggled, "disabled: true");
    eventually("the disabled tool leaves the registry", || {
        registry.get(&fail).is_none()
    })
    .await;
    assert_eq!(registry.names().count(), support::TOOLS.len() - 1);
}

/// A server that dies gives an error result, and is started again at the
/// next call.
async fn restart(client: &McpClient, prefix: &str) {
    let registry = Registry::builder()
        .tools(client.tools().await.expect("tools"))
        .build()
        .expect("a registry");
    let whoami = format!("{prefix}_whoami");
    let before = text(&registry, &whoami, json!({})).await;
    let crashed = registry
        .dispatch((&format!("{prefix}_crash"), "{}"))
        .await
        .result;
    assert!(crashed.is_error(), "{crashed:?}");
    assert!(
        crashed.to_text().contains("started again at the next call"),
        "{}",
        crashed.to_text()
    );
    let after = text(&registry, &whoami, json!({})).await;
    assert!(after.parse::<u32>().is_ok(), "{after}");
    assert_ne!(before, after, "the same process answered");
}

/// A time limit cancels the call at the server.
async fn timeout(client: McpClient, prefix: &str) {
    let registry = Registry::builder()
        .tools(client.tools().await.expect("tools"))
        .build()
        .expect("a registry");
    let started = Instant::now();
    let slow = registry
        .dispatch((&format!("{prefix}_slow"), "{}"))
        .await
        .result;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        slow.to_text().contains("did not answer within 0.3 s"),
        "{}",
        slow.to_text()
    );
    let was_cancelled = format!("{prefix}_was_cancelled");
    let deadline = Instant::now() + Duration::from_secs(5);
    while text(&registry, &was_cancelled, json!({})).await != "true" {
        assert!(Instant::now() < deadline, "the server never saw the cancel");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Two servers whose tools clean to one name: refused, both named.
async fn collision() {
    let one = ours_over_stdio("one")
        .prefix("x")
        .connect()
        .await
        .expect("one");
    let two = ours_over_stdio("two")
        .prefix("x")
        .connect()
        .await
        .expect("two");
    let error = Registry::builder()
        .tools(one.tools().await.expect("tools"))
        .tools(two.tools().await.expect("tools"))
        .build()
        .expect_err("two tools named x_add");
    let message = error.to_string();
    assert!(message.contains("x_add"), "{message}");
    assert!(
        message.contains("MCP server `one`, tool `add`")
            && message.contains("MCP server `two`, tool `add`"),
        "{message}"
    );
    // Names are cleaned: dots and other characters become `_`.
    let dotted = ours_over_stdio("my.server v2")
        .connect()
        .await
        .expect("dotted");
    let tools: Vec<ToolDef> = dotted.tools().await.expect("tools");
    assert_eq!(tools[0].name(), "my_server_v2_add");
    one.close().await;
    two.close().await;
    dotted.close().await;
}

/// A server's tools deferred by its client: each is a deferred tool, and
/// an agent then leaves it out of requests until the model finds it; the
/// same server's tools are not deferred otherwise.
async fn deferred() {
    let lazy = ours_over_stdio("lazy")
        .defer_tools(true)
        .connect()
        .await
        .expect("lazy");
    let tools = lazy.tools().await.expect("tools");
    assert!(!tools.is_empty());
    assert!(tools.iter().all(ToolDef::is_deferred));
    let eager = ours_over_stdio("eager").connect().await.expect("eager");
    let tools = eager.tools().await.expect("tools");
    assert!(!tools.iter().any(ToolDef::is_deferred));
    lazy.close().await;
    eager.close().await;
}

/// The server's questions reach the host's asker, and its answers the
/// server's tools: as requests of their own (stdio, 2025-11-25), or in the
/// call's answer and the call made again (stateless HTTP, 2026-07-28).
/// Without an asker, the client lacks the capabilities: the tools' questions
/// are refused, naming them.
async fn questions() {
    answered(ours_over_stdio("asks").stateless(false)).await;
    let server = HttpServer::start(false);
    answered(McpClient::http("asks", &server.url).stateless(true)).await;

    let silent = ours_over_stdio("silent")
        .stateless(false)
        .connect()
        .await
        .expect("connected");
    let registry = Registry::builder()
        .tools(silent.tools().await.expect("a tool list"))
        .build()
        .expect("a registry");
    let refused = text(&registry, "silent_confirm", json!({"what": "go"})).await;
    assert!(refused.contains("`elicitation`"), "{refused}");
    let refused = text(&registry, "silent_workspace", json!({})).await;
    assert!(refused.contains("`roots`"), "{refused}");
    silent.close().await;
}

async fn answered(builder: toolkit_mcp::McpClientBuilder) {
    let answering = Answering::new(json!({"sure": true}), "short")
        .with_roots([Root::new("file:///srv/app").name("app")]);
    let client = builder
        .asker(answering.clone())
        .connect()
        .await
        .expect("connected");
    let registry = Registry::builder()
        .tools(client.tools().await.expect("a tool list"))
        .build()
        .expect("a registry");
    assert_eq!(
        text(&registry, "asks_confirm", json!({"what": "go"})).await,
        r#"accept: {"sure":true}"#
    );
    assert_eq!(
        text(&registry, "asks_summarize", json!({"text": "a day"})).await,
        "tiny said: short"
    );
    assert_eq!(
        text(&registry, "asks_workspace", json!({})).await,
        "roots: file:///srv/app (app)"
    );
    assert_eq!(
        answering.asked(),
        [
            "Really go?",
            "You summarize in one line. | Summarize: a day",
            "roots"
        ]
    );
    client.close().await;
}

/// The server's resources and prompts, read and filled in.
async fn offers(client: &McpClient) {
    let resources = client.resources().await.expect("the resources");
    let uris: Vec<&str> = resources.iter().map(|link| link.uri()).collect();
    assert_eq!(uris, ["notes://readme", "notes://pixel", "notes://broken"]);
    assert_eq!(resources[0].mime_type(), Some("text/markdown"));
    assert_eq!(resources[0].description(), Some("How the notes are kept."));
    let templates = client.resource_templates().await.expect("the templates");
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].uri_template, "notes://day/{day}");
    assert_eq!(
        templates[0].description.as_deref(),
        Some("The notes of one day.")
    );

    let readme = client.read_resource("notes://readme").await.expect("read");
    assert_eq!(readme.len(), 1);
    assert_eq!(
        (readme[0].uri(), readme[0].text(), readme[0].mime_type()),
        ("notes://readme", Some("# Notes"), Some("text/markdown"))
    );
    let pixel = client.read_resource("notes://pixel").await.expect("read");
    assert_eq!(pixel[0].blob(), Some("AQID"));
    let day = client
        .read_resource("notes://day/monday")
        .await
        .expect("read");
    assert_eq!(day[0].text(), Some("Nothing happened on monday."));
    let broken = client
        .read_resource("notes://broken")
        .await
        .expect_err("a failed read");
    assert!(broken.to_string().contains("the disk is full"), "{broken}");

    let prompts = client.prompts().await.expect("the prompts");
    let names: Vec<&str> = prompts.iter().map(|prompt| prompt.name.as_str()).collect();
    assert_eq!(names, ["greet", "look", "plan"]);
    assert_eq!(prompts[0].title.as_deref(), Some("Greeting"));
    let arguments: Vec<(&str, bool)> = prompts[0]
        .arguments
        .iter()
        .map(|argument| (argument.name.as_str(), argument.required))
        .collect();
    assert_eq!(arguments, [("name", true), ("mood", false)]);

    let greet = client
        .get_prompt("greet", [("name", "Ada"), ("mood", "cheerful")])
        .await
        .expect("a filled prompt");
    assert_eq!(greet.messages.len(), 1);
    assert_eq!(greet.messages[0].role, toolkit_mcp::Role::User);
    assert!(
        matches!(&greet.messages[0].content, Block::Text { text } if text == "Greet Ada, who is cheerful."),
        "{greet:?}"
    );
    let look = client
        .get_prompt("look", std::iter::empty::<(String, String)>())
        .await
        .expect("a filled prompt");
    let roles: Vec<toolkit_mcp::Role> = look.messages.iter().map(|m| m.role).collect();
    let kinds: Vec<&str> = look.messages.iter().map(|m| m.content.kind()).collect();
    let (user, assistant) = (toolkit_mcp::Role::User, toolkit_mcp::Role::Assistant);
    assert_eq!(roles, [user, user, assistant]);
    assert_eq!(kinds, ["image", "resource", "text"]);
    let missing = client
        .get_prompt("greet", std::iter::empty::<(String, String)>())
        .await
        .expect_err("a required argument left out");
    assert!(missing.to_string().contains("greet"), "{missing}");
}

/// A server with tools only says so when asked for resources or prompts.
async fn no_offers() {
    let registry = Arc::new(
        Registry::builder()
            .tools([ToolDef::builder("noop")
                .description("Does nothing.")
                .handler(|_: Value, _: toolkit_core::CallContext| async { "done".to_owned() })])
            .build()
            .expect("a registry"),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("an address"));
    let served = tokio::spawn(async move {
        toolkit_mcp::McpServer::new(registry)
            .serve_http(listener, &toolkit_mcp::HttpOptions::new())
            .await
    });
    let client = McpClient::http("bare", &url)
        .connect()
        .await
        .expect("connected");
    let error = client.resources().await.expect_err("no resources");
    assert!(error.to_string().contains("offers no resources"), "{error}");
    let error = client
        .read_resource("a://b")
        .await
        .expect_err("no resources");
    assert!(
        error.to_string().contains("`resources` capability"),
        "{error}"
    );
    let error = client.prompts().await.expect_err("no prompts");
    assert!(error.to_string().contains("offers no prompts"), "{error}");
    client.close().await;
    served.abort();
}

/// Our server over stdio: calls, what it offers, list changes, and a
/// restart of the child, in that order on one client.
async fn over_stdio() {
    let stdio = ours_over_stdio("ours")
        .connect()
        .await
        .expect("connected over stdio");
    exercise(&stdio, "ours").await;
    offers(&stdio).await;
    list_changes(&stdio, "ours").await;
    restart(&stdio, "ours").await;
    stdio.close().await;
}

async fn timeouts() {
    let limited = ours_over_stdio("limited")
        .timeout(Duration::from_millis(300))
        .connect()
        .await
        .expect("connected");
    timeout(limited, "limited").await;
}

/// Our server over Streamable HTTP with a session, which the host chose.
async fn over_http() {
    let server = HttpServer::start(false);
    let http = McpClient::http("web", &server.url)
        .stateless(false)
        .connect()
        .await
        .expect("connected over HTTP");
    assert_eq!(http.revision().await.as_deref(), Some("2025-11-25"));
    exercise(&http, "web").await;
    offers(&http).await;
    list_changes(&http, "web").await;
    http.close().await;
}

/// Our server over Streamable HTTP without sessions.
async fn over_stateless_http() {
    let server = HttpServer::start(false);
    let stateless = McpClient::http("web", &server.url)
        .stateless(true)
        .connect()
        .await
        .expect("connected over stateless HTTP");
    assert_eq!(stateless.revision().await.as_deref(), Some("2026-07-28"));
    exercise(&stateless, "web").await;
    offers(&stateless).await;
    list_changes(&stateless, "web").await;
    stateless.close().await;
}

/// Given the address alone, the client finds that our server speaks
/// 2026-07-28, over stdio and over HTTP in both of the server's modes, and
/// keeps speaking it after the server's process is started again.
async fn revision_found() {
    let stdio = ours_over_stdio("ours").connect().await.expect("connected");
    assert_eq!(stdio.revision().await.as_deref(), Some("2026-07-28"));
    restart(&stdio, "ours").await;
    assert_eq!(stdio.revision().await.as_deref(), Some("2026-07-28"));
    stdio.close().await;
    assert_eq!(stdio.revision().await, None);
    for stateless in [false, true] {
        let server = HttpServer::start(stateless);
        let http = McpClient::http("web", &server.url)
            .connect()
            .await
            .expect("connected over HTTP");
        assert_eq!(
            http.revision().await.as_deref(),
            Some("2026-07-28"),
            "stateless server: {stateless}"
        );
        exercise(&http, "web").await;
        http.close().await;
    }
}

/// A server that cannot be reached, dies at once, never answers or
/// answers `500` is an error of kind `Unreachable`, within the connect
/// time limit: never taken for a 2025-11-25 server, never a hang.
async fn unreachable_is_not_old() {
    use toolkit_mcp::ClientErrorKind;
    let limit = Duration::from_secs(2);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port");
    // An HTTP server that fails every request.
    let failing = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let failing_url = format!("http://{}/mcp", failing.local_addr().expect("an address"));
    let app = axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "the disk is full",
        )
    });
    let serving = tokio::spawn(async move { axum::serve(failing, app).await });
    let builders = [
        (
            "closed port",
            McpClient::http("closed", format!("http://{closed}/mcp")),
        ),
        ("HTTP 500", McpClient::http("failing", &failing_url)),
        (
            "exits at once",
            McpClient::command("exits", "true", Vec::<String>::new()),
        ),
        (
            "no such program",
            McpClient::command("nothing", "/nonexistent/mcp-server", Vec::<String>::new()),
        ),
        ("silent", McpClient::command("silent", "sleep", ["30"])),
    ];
    for (what, builder) in builders {
        let started = Instant::now();
        let error = builder
            .connect_timeout(limit)
            .connect()
            .await
            .expect_err(what);
        assert_eq!(
            error.kind(),
            ClientErrorKind::Unreachable,
            "{what}: {error}"
        );
        assert!(
            started.elapsed() < limit + Duration::from_secs(2),
            "{what}: {:?}",
            started.elapsed()
        );
    }
    serving.abort();
}

fn main() -> ExitCode {
    if support::serve_if_asked() {
        return ExitCode::SUCCESS;
    }
    runner::run(vec![
        Test::new("stdio", || block_on(over_stdio())),
        Test::new("stdio_timeout", || block_on(timeouts())),
        Test::new("name_collision", || block_on(collision())),
        Test::new("deferred_tools", || block_on(deferred())),
        Test::new("questions", || block_on(questions())),
        Test::new("http_with_a_session", || block_on(over_http())),
        Test::new("http_without_offers", || block_on(no_offers())),
        Test::new("http_stateless", || block_on(over_stateless_http())),
        Test::new("revision_found", || block_on(revision_found())),
        Test::new("unreachable_is_not_old", || {
            block_on(unreachable_is_not_old())
        }),
    ])
}
