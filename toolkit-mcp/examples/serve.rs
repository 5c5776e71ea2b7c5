//! Serves the example registry (a document-and-calendar assistant) over
//! MCP on standard input and output.
//!
//! ```text
//! cargo run -q -p toolkit-mcp --example serve
//! ```
//!
//! Point any MCP client at that command, for example the Inspector:
//! `npx @modelcontextprotocol/inspector cargo run -q -p toolkit-mcp --example serve`.

use std::sync::Arc;

#[tokio::main]
async fn main() {
    let registry = match toolkit_examples::registry() {
        Ok(registry) => Arc::new(registry),
        Err(error) => {
            eprintln!("serve: {error}");
            std::process::exit(1);
        }
    };
    if let Err(error) = toolkit_mcp::serve_stdio(registry).await {
        eprintln!("serve: {error}");
        std::process::exit(1);
    }
}
