//! Serves the browser toolbox of `toolkit-browser` (a headless Chromium,
//! launched here) over MCP, so that any MCP client can drive a browser
//! through this SDK: on standard input and output, or over Streamable HTTP.
//!
//! ```text
//! cargo run -q -p toolkit-e2e --example serve_browser
//! cargo run -q -p toolkit-e2e --example serve_browser -- --http 127.0.0.1:8080
//! cargo run -q -p toolkit-e2e --example serve_browser -- --allow-domain '*.wikipedia.org'
//! ```
//!
//! The toolbox's safety policy holds for every client: `--allow-domain`
//! (repeatable) limits the sites the browser may open. Needs Chromium
//! (`apt-get install -y --no-install-recommends chromium`, or set `CHROME`).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use toolkit_browser::{Browser, BrowserConfig, SafetyPolicy};
use toolkit_mcp::{HttpOptions, McpServer};

const USAGE: &str = "usage: browser [--http ADDRESS:PORT] [--allow-domain PATTERN]...";

struct Options {
    http: Option<SocketAddr>,
    domains: Vec<String>,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        http: None,
        domains: Vec::new(),
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--http" => {
                let address = arguments.next().ok_or("--http takes an address")?;
                options.http = Some(
                    address
                        .parse()
                        .map_err(|_| format!("not an address: {address}"))?,
                );
            }
            "--allow-domain" => options
                .domains
                .push(arguments.next().ok_or("--allow-domain takes a pattern")?),
            _ => return Err(format!("unknown argument `{argument}`")),
        }
    }
    Ok(options)
}

async fn serve(browser: &Browser, options: &Options) -> Result<(), Box<dyn std::error::Error>> {
    let mut policy = SafetyPolicy::builder();
    if !options.domains.is_empty() {
        policy = policy.allow_domains(options.domains.iter().cloned());
    }
    let registry = toolkit_browser::registry(browser.clone(), policy.build()?).build()?;
    let server =
        McpServer::new(Arc::new(registry)).identity("toolkit-browser", env!("CARGO_PKG_VERSION"));
    match options.http {
        Some(address) => {
            let listener = tokio::net::TcpListener::bind(address).await?;
            eprintln!("serving the browser toolbox at http://{address}/mcp");
            server.serve_http(listener, &HttpOptions::new()).await?;
        }
        None => server.serve_stdio().await?,
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(error) => {
            eprintln!("browser: {error}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let browser = match Browser::launch(BrowserConfig::default()).await {
        Ok(browser) => browser,
        Err(error) => {
            eprintln!("browser: Chromium did not start: {error}");
            return ExitCode::FAILURE;
        }
    };
    let served = serve(&browser, &options).await;
    // Closing ends the browser's processes and removes its profile.
    let closed = browser.close().await;
    match (served, closed) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(error), _) => {
            eprintln!("browser: {error}");
            ExitCode::FAILURE
        }
        (Ok(()), Err(error)) => {
            eprintln!("browser: the browser did not close cleanly: {error}");
            ExitCode::FAILURE
        }
    }
}
