//! JSON-RPC over lines of text (MCP's stdio transport), with answers for
//! what rmcp's own transport drops: a line that is not JSON gets a parse
//! error (`-32700`), a message that is not a JSON-RPC request an invalid
//! request (`-32600`) or invalid params (`-32602`), a line over the size
//! limit an invalid request; and the server keeps reading.

use std::io;
use std::sync::Arc;

use rmcp::model::{ClientRequest, JsonRpcMessage};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

/// The JSON-RPC error codes this transport answers with.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

pub(crate) struct LineTransport<R, W> {
    reader: R,
    line: Vec<u8>,
    // The current line passed the limit: its bytes are dropped up to its end.
    oversized: bool,
    limit: usize,
    writer: Arc<Mutex<W>>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(reader: R, writer: W, limit: usize) -> Self {
        Self {
            reader,
            line: Vec::new(),
            oversized: false,
            limit,
            writer: Arc::new(Mutex::new(writer)),
        }
    }

    /// Reads up to the end of a line; `None` at the end of the input.
    ///
    /// Cancel-safe, as rmcp's service loop needs (it polls `receive` beside
    /// other work): the bytes of a line read so far stay in `self.line`.
    async fn read_line(&mut self) -> io::Result<Option<()>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                // A last line without its newline is an unfinished message.
                return Ok(None);
            }
            let (chunk, ended) = match available.iter().position(|&byte| byte == b'\n') {
                Some(end) => (&available[..end], true),
                None => (available, false),
            };
            if !self.oversized {
                if self.line.len() + chunk.len() > self.limit {
                    self.oversized = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = chunk.len() + usize::from(ended);
            self.reader.consume(used);
            if ended {
                return Ok(Some(()));
            }
        }
    }

    /// Writes one message as one line.
    async fn write(writer: &Mutex<W>, mut line: Vec<u8>) -> io::Result<()> {
        line.push(b'\n');
        let mut writer = writer.lock().await;
        writer.write_all(&line).await?;
        writer.flush().await
    }

    async fn answer_error(
        writer: &Mutex<W>,
        id: Option<&Value>,
        code: i64,
        message: String,
    ) -> io::Result<()> {
        let mut error = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
        // An error about a message whose id cannot be read carries none.
        if let Some(id) = id.filter(|id| id.is_string() || id.is_i64() || id.is_u64()) {
            error["id"] = id.clone();
        }
        let line = serde_json::to_vec(&error).map_err(io::Error::other)?;
        Self::write(writer, line).await
    }

    /// The message on the line just read, or the error it deserves.
    fn parse(
        &mut self,
    ) -> Result<Option<RxJsonRpcMessage<RoleServer>>, (Option<Value>, i64, String)> {
        let line = std::mem::take(&mut self.line);
        let text = line.strip_suffix(b"\r").unwrap_or(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let value: Value = serde_json::from_slice(text)
            .map_err(|error| (None, PARSE_ERROR, format!("Parse error: {error}")))?;
        let id = value.get("id").cloned();
        let request_like = value.get("jsonrpc") == Some(&json!("2.0"))
            && value.get("method").is_some_and(Value::is_string);
        match serde_json::from_value(value) {
            Ok(message) => match standard_method_misread(&message) {
                // rmcp reads a standard request whose params it cannot
                // read as a request of an unknown method.
                Some(method) => Err((id, INVALID_PARAMS, format!("Invalid params for {method}"))),
                None => Ok(Some(message)),
            },
            // A notification gets no answer, even an error.
            Err(_) if request_like && id.is_none() => Ok(None),
            Err(error) if request_like => {
                Err((id, INVALID_PARAMS, format!("Invalid params: {error}")))
            }
            Err(error) => Err((id, INVALID_REQUEST, format!("Invalid request: {error}"))),
        }
    }
}

/// The methods of the protocol's requests from a client.
const STANDARD_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "subscriptions/listen",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
];

/// The method of a standard request that was read as a custom one.
fn standard_method_misread(message: &RxJsonRpcMessage<RoleServer>) -> Option<&str> {
    match message {
        JsonRpcMessage::Request(request) => match &request.request {
            ClientRequest::CustomRequest(custom)
                if STANDARD_METHODS.contains(&custom.method.as_str()) =>
            {
                Some(&custom.method)
            }
            _ => None,
        },
        _ => None,
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        let line = serde_json::to_vec(&item);
        async move { Self::write(&writer, line.map_err(io::Error::other)?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.read_line().await.ok()??;
            if std::mem::take(&mut self.oversized) {
                let message = format!(
                    "Invalid request: the message is longer than the limit of {} bytes",
                    self.limit
                );
                Self::answer_error(&self.writer, None, INVALID_REQUEST, message)
                    .await
                    .ok()?;
                continue;
            }
            match self.parse() {
                Ok(Some(message)) => return Some(message),
                Ok(None) => {}
                Err((id, code, message)) => {
                    Self::answer_error(&self.writer, id.as_ref(), code, message)
                        .await
                        .ok()?;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}
