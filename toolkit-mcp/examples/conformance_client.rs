//! The client the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) checks: `McpClient` against the
//! suite's mock server, doing what the scenario named in
//! `MCP_CONFORMANCE_SCENARIO` asks.
//!
//! ```text
//! cargo run -q -p toolkit-mcp --example conformance_client -- http://127.0.0.1:8080/mcp
//! ```
//!
//! Given the URL alone, the client finds the revision the server speaks
//! (`server/discover`, falling back to `initialize` for a 2025-11-25
//! server), as any host's `McpClient` does. `--stateless` (2026-07-28
//! without asking) and `--session` (a 2025-11-25 session) choose it
//! instead, as `McpClientBuilder::stateless` does.
//!
//! `scripts/conformance` runs it through `conformance client --command`,
//! which starts it once per scenario with the mock server's URL. Every
//! scenario connects and lists the tools; `tools_call` also calls
//! `add_numbers`, `elicitation-sep1034-client-defaults` a tool whose server
//! asks a question (answered with the schema's defaults),
//! `json-schema-2020-12-preservation` sends a tool's schema, as the client
//! holds it, back to `json_schema_echo`, and `sse-retry` calls a tool whose
//! answer comes on a resumed stream. The tool calls a scenario's context
//! (`MCP_CONFORMANCE_CONTEXT`) names are made in its order. The `auth/*`
//! scenarios authorize with OAuth (the pre-registered client the context
//! gives, if any), the user's approval being the authorization server's
//! redirect, read without following it; then they call the first tool.
//! The scenarios it cannot follow are listed, with their reason, in
//! `toolkit-mcp/conformance/expected-failures-*.yml`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_core::{Asker, Asking, ElicitAction, ElicitRequest, Elicited, Provider, Registry};
use toolkit_mcp::{Authorizer, Authorizing, McpClient, OAuth};

const USAGE: &str = "usage: conformance_client [--stateless | --session] URL   (the scenario in MCP_CONFORMANCE_SCENARIO)";

/// Accepts every question without filling anything in: the client then
/// answers with the defaults the question's schema gives.
struct AcceptDefaults;

impl Asker for AcceptDefaults {
    fn elicit(&self, _request: ElicitRequest) -> Asking<'_, Elicited> {
        Box::pin(async { Ok(Elicited::new(ElicitAction::Accept)) })
    }
}

/// Approves like a user who always agrees: the suite's authorization
/// server approves at once, so the authorization URL is fetched and the
/// redirect it answers with is where the browser would land.
struct FollowRedirect(reqwest::Client);

impl Authorizer for FollowRedirect {
    fn authorize<'a>(&'a self, url: &'a str) -> Authorizing<'a> {
        Box::pin(async move {
            let response = self
                .0
                .get(url)
                .send()
                .await
                .map_err(|error| error.to_string())?;
            response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|location| location.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| {
                    format!(
                        "no redirect from the authorization server ({})",
                        response.status()
                    )
                })
        })
    }
}

/// The redirect URI the client registers; nothing listens there, as the
/// redirect is read from the authorization server's answer.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The client ID metadata document the suite expects a client to name.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

async fn run(
    url: String,
    stateless: Option<bool>,
    scenario: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    // What the scenario gives the client: pre-registered credentials, the
    // tool calls to make.
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|context| serde_json::from_str(&context).ok())
        .unwrap_or_default();
    let mut builder = McpClient::http("conformance", url).prefix("");
    if let Some(stateless) = stateless {
        builder = builder.stateless(stateless);
    }
    let mut builder = builder
        .asker(AcceptDefaults)
        .timeout(Duration::from_secs(20));
    if scenario.starts_with("auth/") {
        let fetcher = toolkit_http::client_builder()?
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let mut oauth = OAuth::new(REDIRECT_URI, FollowRedirect(fetcher))
            .client_name("toolkit-mcp conformance client")
            .client_metadata_url(CLIENT_METADATA_URL);
        if let Some(id) = context["client_id"].as_str() {
            oauth = oauth.client_id(id);
        }
        if let Some(secret) = context["client_secret"].as_str() {
            oauth = oauth.client_secret(secret);
        }
        builder = builder.oauth(oauth);
    }
    let client = builder.connect().await?;
    let tools = client.tools().await?;
    let first = tools.first().map(|tool| tool.name().to_owned());
    let registry = Arc::new(Registry::builder().tools(tools).build()?);
    // The calls the scenario asks for, in its order.
    for call in context["toolCalls"].as_array().into_iter().flatten() {
        let name = call["name"].as_str().unwrap_or_default();
        let outcome = registry
            .dispatch((name, &call["arguments"].to_string()))
            .await;
        if let Some(error) = outcome.error {
            return Err(format!("{name} failed: {error}").into());
        }
    }
    match scenario {
        "tools_call" => {
            let outcome = registry
                .dispatch(("add_numbers", r#"{"a": 2, "b": 3}"#))
                .await;
            if let Some(error) = outcome.error {
                return Err(format!("add_numbers failed: {error}").into());
            }
            println!("add_numbers: {}", outcome.result.to_text());
        }
        // The server asks a question with defaults while the tool runs.
        "elicitation-sep1034-client-defaults" => {
            let outcome = registry
                .dispatch(("test_client_elicitation_defaults", "{}"))
                .await;
            if let Some(error) = outcome.error {
                return Err(format!("test_client_elicitation_defaults failed: {error}").into());
            }
        }
        // Tools whose server asks in the call's answer (multi-round
        // input), called together.
        "sep-2322-client-request-state" => {
            let (a, b, c, d) = tokio::join!(
                registry.dispatch(("test_mrtr_echo_state", "{}")),
                registry.dispatch(("test_mrtr_no_state", "{}")),
                registry.dispatch(("test_mrtr_unrelated", "{}")),
                registry.dispatch(("test_mrtr_no_result_type", "{}")),
            );
            for outcome in [a, b, c, d] {
                println!("{}", outcome.result.to_text());
            }
        }
        // The call's response stream is closed after its priming event: the
        // answer comes on the stream resumed after `retry`.
        "sse-retry" => {
            let outcome = registry.dispatch(("test_reconnection", "{}")).await;
            if let Some(error) = outcome.error {
                return Err(format!("test_reconnection failed: {error}").into());
            }
        }
        // The one tool with a well-formed `x-mcp-header` parameter.
        "http-invalid-tool-headers" => {
            let outcome = registry
                .dispatch(("valid_tool", r#"{"region": "us-west"}"#))
                .await;
            if let Some(error) = outcome.error {
                return Err(format!("valid_tool failed: {error}").into());
            }
        }
        // The schema of a server's tool, as the client holds it for MCP
        // (as the server wrote it), sent back.
        "json-schema-2020-12-preservation" => {
            let tools = client.tools().await?;
            let focal = tools
                .iter()
                .find(|tool| tool.name() == "json_schema_2020_12_tool")
                .ok_or("no json_schema_2020_12_tool")?;
            let schema: Value = serde_json::from_str(focal.schema().lowered(Provider::Mcp)?)?;
            let outcome = registry
                .dispatch((
                    "json_schema_echo",
                    json!({"schema": schema}).to_string().as_str(),
                ))
                .await;
            if let Some(error) = outcome.error {
                return Err(format!("json_schema_echo failed: {error}").into());
            }
        }
        // A request of every kind that carries `Mcp-Method` (and
        // `Mcp-Name`): a call, and the resources and prompts read.
        "http-standard-headers" => {
            let outcome = registry.dispatch(("test_headers", "{}")).await;
            if let Some(error) = outcome.error {
                return Err(format!("test_headers failed: {error}").into());
            }
            let resources = client.resources().await?;
            let first = resources.first().ok_or("the server listed no resource")?;
            client.read_resource(first.uri()).await?;
            let prompts = client.prompts().await?;
            let prompt = prompts.first().ok_or("the server listed no prompt")?;
            client
                .get_prompt(&prompt.name, std::iter::empty::<(String, String)>())
                .await?;
        }
        // An authorized call, after the authorized listing.
        _ if scenario.starts_with("auth/") => {
            let name = first.ok_or("the server listed no tool")?;
            let outcome = registry.dispatch((&name, "{}")).await;
            if let Some(error) = outcome.error {
                return Err(format!("{name} failed: {error}").into());
            }
        }
        _ => {}
    }
    client.close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut arguments: Vec<String> = std::env::args().skip(1).collect();
    // The revision chosen rather than found.
    let stateless = match arguments.first().map(String::as_str) {
        Some("--stateless") => Some(true),
        Some("--session") => Some(false),
        _ => None,
    };
    if stateless.is_some() {
        arguments.remove(0);
    }
    let [url] = <[String; 1]>::try_from(arguments).unwrap_or_else(|_| {
        eprintln!("conformance_client: one URL\n{USAGE}");
        std::process::exit(2)
    });
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(url, stateless, &scenario).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("conformance_client ({scenario}): {error}");
            ExitCode::FAILURE
        }
    }
}
