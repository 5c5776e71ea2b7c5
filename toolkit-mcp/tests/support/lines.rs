//! A client that sends JSON-RPC lines to a server on an in-process pipe
//! (`McpServer::serve_lines`) and reads its answers, one line each.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use toolkit_mcp::McpServer;

pub struct Lines {
    input: DuplexStream,
    output: tokio::io::Lines<BufReader<DuplexStream>>,
}

impl Lines {
    /// Starts `server` on a task of its own.
    pub fn start(server: McpServer) -> Self {
        let (input, server_input) = tokio::io::duplex(1 << 16);
        let (server_output, output) = tokio::io::duplex(1 << 16);
        tokio::spawn(server.serve_lines(BufReader::new(server_input), server_output));
        Self {
            input,
            output: BufReader::new(output).lines(),
        }
    }

    /// Sends one message.
    pub async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.input
            .write_all(line.as_bytes())
            .await
            .expect("written");
    }

    /// The next message the server writes.
    pub async fn answer(&mut self) -> Value {
        let line = self
            .output
            .next_line()
            .await
            .expect("read")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    }

    /// Sends a request and returns the next message.
    pub async fn ask(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.answer().await
    }
}
