//! JSON-RPC over lines of text (MCP's stdio transport), with answers for
//! what rmcp's own transport drops (see [`super::malformed`]), a line over
//! the size limit an invalid request; and the server keeps reading.

use std::io;
use std::sync::Arc;

use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

use super::malformed::{Malformed, read_message};

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

    /// Writes the error answering a malformed line, on a task of its own:
    /// rmcp drops the `receive` future whenever another of its events comes
    /// first, and an answer written inside it would then be lost (or cut).
    fn answer_error(writer: &Arc<Mutex<W>>, error: Malformed) -> io::Result<()> {
        let line = serde_json::to_vec(&error.to_response()).map_err(io::Error::other)?;
        let writer = Arc::clone(writer);
        tokio::spawn(async move {
            // A client that stopped reading also closes our input: the next
            // read ends the session.
            let _ = Self::write(&writer, line).await;
        });
        Ok(())
    }

    /// The message on the line just read, or the error it deserves.
    fn parse(&mut self) -> Result<Option<RxJsonRpcMessage<RoleServer>>, Malformed> {
        let line = std::mem::take(&mut self.line);
        read_message(line.strip_suffix(b"\r").unwrap_or(&line))
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
                Self::answer_error(&self.writer, Malformed::too_large(self.limit)).ok()?;
                continue;
            }
            match self.parse() {
                Ok(Some(message)) => return Some(message),
                Ok(None) => {}
                Err(error) => {
                    Self::answer_error(&self.writer, error).ok()?;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}
