//! Serves the example registry (a document-and-calendar assistant) over
//! MCP: on standard input and output, or over Streamable HTTP.
//!
//! ```text
//! cargo run -q -p toolkit-mcp --example serve
//! cargo run -q -p toolkit-mcp --example serve -- --http 127.0.0.1:8080
//! cargo run -q -p toolkit-mcp --example serve -- --http 127.0.0.1:8080 --stateless
//! ```
//!
//! Point any MCP client at the command, or at `http://127.0.0.1:8080/mcp`;
//! for example the Inspector:
//! `npx @modelcontextprotocol/inspector cargo run -q -p toolkit-mcp --example serve`.
//! `--stateless` serves every request on its own, so that several copies
//! can stand behind one load balancer.
//!
//! `--otlp URL` sends the spans of the calls it serves to an OpenTelemetry
//! collector's OTLP/HTTP traces URL (Phoenix:
//! `http://127.0.0.1:6006/v1/traces`), as the service `toolkit-mcp-serve`;
//! `--capture-content` records arguments and results in them. Built with
//! the crate's `opentelemetry` feature (`--features opentelemetry`), a
//! served call's spans continue the trace of the client that sent it.
//!
//! `--server-json NAME` prints the `server.json` the MCP Registry takes
//! for this server under `NAME` (`io.github.you/assistant`), instead of
//! serving: `--package TYPE:IDENTIFIER` (`oci:ghcr.io/you/assistant:0.1.0`),
//! `--remote URL` and `--repository URL` say where to get or reach it.
//!
//! ```text
//! cargo run -q -p toolkit-mcp --example serve -- --server-json io.github.you/assistant \
//!     --remote https://assistant.example.com/mcp > server.json
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use toolkit_mcp::{HttpOptions, McpServer};

const USAGE: &str = "usage: serve [--http ADDRESS:PORT [--stateless]] [--otlp URL] [--capture-content]
       serve --server-json NAME [--package TYPE:IDENTIFIER]... [--remote URL]... [--repository URL]";

#[tokio::main]
async fn main() -> ExitCode {
    let mut http: Option<SocketAddr> = None;
    let mut stateless = false;
    let mut otlp: Option<String> = None;
    let mut entry: Option<String> = None;
    let mut packages: Vec<(String, String)> = Vec::new();
    let mut remotes: Vec<String> = Vec::new();
    let mut repository: Option<String> = None;
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--http" => match arguments.next().map(|address| address.parse()) {
                Some(Ok(address)) => http = Some(address),
                _ => {
                    eprintln!("serve: --http takes an address such as 127.0.0.1:8080\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--stateless" => stateless = true,
            "--otlp" => match arguments.next() {
                Some(endpoint) => otlp = Some(endpoint),
                None => {
                    eprintln!("serve: --otlp takes a URL\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--capture-content" => toolkit_core::telemetry::capture_content(true),
            "--server-json" | "--package" | "--remote" | "--repository" => {
                let Some(value) = arguments.next() else {
                    eprintln!("serve: {argument} takes a value\n{USAGE}");
                    return ExitCode::from(2);
                };
                match argument.as_str() {
                    "--server-json" => entry = Some(value),
                    "--remote" => remotes.push(value),
                    "--repository" => repository = Some(value),
                    _ => match value.split_once(':') {
                        Some((kind, identifier)) => {
                            packages.push((kind.to_owned(), identifier.to_owned()));
                        }
                        None => {
                            eprintln!("serve: --package takes TYPE:IDENTIFIER\n{USAGE}");
                            return ExitCode::from(2);
                        }
                    },
                }
            }
            _ => {
                eprintln!("serve: unknown argument `{argument}`\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    // Dropped when serving ends (standard input closed), which sends the
    // spans still waiting.
    let _export = match &otlp {
        Some(endpoint) => match toolkit_examples::otlp::install(endpoint, "toolkit-mcp-serve") {
            Ok(export) => Some(export),
            Err(error) => {
                eprintln!("serve: {error}");
                return ExitCode::FAILURE;
            }
        },
        None => None,
    };
    let registry = match toolkit_examples::registry() {
        Ok(registry) => Arc::new(registry),
        Err(error) => {
            eprintln!("serve: {error}");
            return ExitCode::FAILURE;
        }
    };
    let server = McpServer::new(registry)
        .identity("toolkit-assistant", env!("CARGO_PKG_VERSION"))
        .title("Documents and calendar")
        .description("Reads documents and books meetings: the toolkit's example tools");
    if let Some(name) = entry {
        let mut entry = server.server_json(name);
        for (kind, identifier) in packages {
            entry = entry.package(kind, identifier);
        }
        for url in remotes {
            entry = entry.remote(url);
        }
        if let Some(url) = repository {
            entry = entry.repository(url, "github");
        }
        return match entry.to_json() {
            Ok(json) => {
                println!("{json:#}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("serve: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let served = match http {
        Some(address) => {
            let listener = match tokio::net::TcpListener::bind(address).await {
                Ok(listener) => listener,
                Err(error) => {
                    eprintln!("serve: cannot listen on {address}: {error}");
                    return ExitCode::FAILURE;
                }
            };
            eprintln!("serving MCP at http://{address}/mcp");
            let options = HttpOptions::new().stateless(stateless);
            server.serve_http(listener, &options).await
        }
        None => server.serve_stdio().await,
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("serve: {error}");
            ExitCode::FAILURE
        }
    }
}
