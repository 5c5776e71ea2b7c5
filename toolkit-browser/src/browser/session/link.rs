//! A DevTools connection of the session's own for frames from other sites.
//!
//! Chromium puts a frame from another site in a process of its own (an
//! out-of-process iframe), with a DevTools target of its own: the tab's
//! session cannot run anything in it. chromiumoxide attaches to such
//! targets but offers no way to send commands to them, so the page map
//! reaches them through this second connection to the browser: it attaches
//! to each frame target it needs (flat sessions, as chromiumoxide's own),
//! and sends commands with the frame's session id. One task owns the
//! socket; requests wait on their answer by id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use async_tungstenite::tokio::TokioAdapter;
use async_tungstenite::tungstenite::client::IntoClientRequest;
use async_tungstenite::tungstenite::handshake::client::Response;
use async_tungstenite::tungstenite::{Error as WsError, Message};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

type Waiters = Arc<StdMutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// The connection: a task owning the socket, and the requests waiting on
/// it.
pub(crate) struct FrameLink {
    outgoing: mpsc::UnboundedSender<String>,
    waiters: Waiters,
    next_id: AtomicU64,
    /// Frame target id → the session attached to it.
    sessions: HashMap<String, String>,
    task: JoinHandle<()>,
}

impl Drop for FrameLink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FrameLink {
    /// Connects to the browser's DevTools address.
    pub(crate) async fn connect(ws_url: &str, limit: Duration) -> Result<Self, String> {
        let (ws, _) = tokio::time::timeout(limit, open(ws_url))
            .await
            .map_err(|_| format!("no answer within {:.0}s", limit.as_secs_f64()))?
            .map_err(|e| e.to_string())?;
        let (outgoing, rx) = mpsc::unbounded_channel();
        let waiters: Waiters = Arc::default();
        let task = tokio::spawn(pump(ws, rx, Arc::clone(&waiters)));
        Ok(Self {
            outgoing,
            waiters,
            next_id: AtomicU64::new(0),
            sessions: HashMap::new(),
            task,
        })
    }

    /// Whether the connection is gone (the browser closed it).
    pub(crate) fn is_closed(&self) -> bool {
        self.task.is_finished()
    }

    /// Sends `method` to `session` (the browser itself when `None`) and
    /// waits for its answer, at most `limit`. Requests may run at once.
    pub(crate) async fn request(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.waiters).insert(id, tx);
        if self.outgoing.send(message.to_string()).is_err() {
            lock(&self.waiters).remove(&id);
            return Err("the DevTools connection for frames closed".into());
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err("the DevTools connection for frames closed".into()),
            Err(_) => {
                lock(&self.waiters).remove(&id);
                Err(format!(
                    "{method} got no answer within {:.0}s",
                    limit.as_secs_f64()
                ))
            }
        }
    }

    /// The session attached to the frame target `target`, attaching on
    /// first use.
    pub(crate) async fn session(
        &mut self,
        target: &str,
        limit: Duration,
    ) -> Result<String, String> {
        if let Some(session) = self.sessions.get(target) {
            return Ok(session.clone());
        }
        let params = json!({ "targetId": target, "flatten": true });
        let attached = self
            .request(None, "Target.attachToTarget", params, limit)
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .ok_or("Target.attachToTarget answered no session")?
            .to_owned();
        self.sessions.insert(target.to_owned(), session.clone());
        Ok(session)
    }

    /// Forgets a session the browser no longer knows (its frame target
    /// went and came back), so the next use attaches again.
    pub(crate) fn forget_session(&mut self, session: &str) {
        self.sessions.retain(|_, s| s != session);
    }

    /// Keeps only the sessions of these targets (the others' frames are
    /// gone).
    pub(crate) fn retain(&mut self, live: &dyn Fn(&str) -> bool) {
        self.sessions.retain(|target, _| live(target));
    }
}

fn lock<T>(m: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

type Socket = async_tungstenite::WebSocketStream<TokioAdapter<TcpStream>>;

/// Opens the WebSocket with Nagle's algorithm off: the map sends the
/// walks of several frames at once, and with it on each request after the
/// first waited for the browser to acknowledge the one before
/// (docs/performance.md).
async fn open(ws_url: &str) -> Result<(Socket, Response), WsError> {
    let request = ws_url.into_client_request()?;
    let host = request.uri().host().unwrap_or("127.0.0.1");
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = request.uri().port_u16().unwrap_or(80);
    let tcp = TcpStream::connect((host.as_str(), port)).await?;
    tcp.set_nodelay(true)?;
    async_tungstenite::tokio::client_async(request, tcp).await
}

/// Writes what requests send, and hands each answer to its request.
async fn pump(mut ws: Socket, mut rx: mpsc::UnboundedReceiver<String>, waiters: Waiters) {
    loop {
        tokio::select! {
            out = rx.recv() => {
                let Some(text) = out else { break };
                if ws.send(Message::Text(text.into())).await.is_err() {
                    break;
                }
            }
            incoming = ws.next() => {
                let value: Value = match incoming {
                    Some(Ok(Message::Text(text))) => match serde_json::from_str(text.as_str()) {
                        Ok(v) => v,
                        Err(_) => continue,
                    },
                    Some(Ok(Message::Binary(bytes))) => match serde_json::from_slice(&bytes) {
                        Ok(v) => v,
                        Err(_) => continue,
                    },
                    Some(Ok(_)) => continue,
                    Some(Err(_)) | None => break,
                };
                let Some(id) = value["id"].as_u64() else { continue };
                let Some(waiter) = lock(&waiters).remove(&id) else { continue };
                let answer = match value.get("error") {
                    Some(error) => Err(error["message"].as_str().unwrap_or("error").to_owned()),
                    None => Ok(value["result"].clone()),
                };
                let _ = waiter.send(answer);
            }
        }
    }
    // Every request still waiting learns that the connection is gone.
    lock(&waiters).clear();
}
