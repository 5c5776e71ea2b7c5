//! The navigation guard: stops top-level page loads to sites the
//! [`SafetyPolicy`] does not allow, before any byte is fetched.
//!
//! It uses the DevTools `Fetch` domain at the *browser* level, on a
//! connection of its own. Enabled there, `Fetch` pauses the document
//! requests of every tab, popups included from their very first request
//! (a tab opened by a page starts loading before any per-tab setup could
//! run), and every redirect hop is paused again as a request of its own. The
//! guard answers each paused request: continue, or fail it with
//! `BlockedByClient`, which leaves the tab on Chromium's error page.
//!
//! Why a connection of its own: requests paused by a browser-level `Fetch`
//! must be answered on that same browser-level session, and chromiumoxide's
//! browser handle cannot be shared with a task (it needs `&mut` for process
//! management). A second DevTools client is cheap and independent: it closes
//! with the browser.
//!
//! Only main frames are checked: frames inside an allowed page may come
//! from any site (a video or a captcha), and the tools cannot act inside a
//! frame from another site anyway.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use async_tungstenite::tungstenite::Message;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::policy::SafetyPolicy;
use crate::error::BrowserError;

/// A top-level navigation the guard stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedNavigation {
    /// The URL that was refused (for a redirect, the hop that was).
    pub url: String,
    /// Why, in words for the model.
    pub reason: String,
}

/// Where the guard records what it blocked, for the actions to report.
pub(crate) type BlockedLog = Arc<StdMutex<Vec<BlockedNavigation>>>;

/// A running guard; dropping it stops it (and Chromium then lets paused
/// requests go on, as it does when any DevTools client disconnects).
pub(crate) struct Guard {
    task: JoinHandle<()>,
}

impl Guard {
    /// Whether the guard stopped (its connection closed or failed).
    pub(crate) fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Socket = async_tungstenite::WebSocketStream<async_tungstenite::tokio::ConnectStream>;

/// One DevTools connection with request/response matching.
struct Conn {
    ws: Socket,
    next_id: u64,
    /// Events that arrived while a response was awaited.
    backlog: VecDeque<Value>,
}

impl Conn {
    async fn send(&mut self, method: &str, params: Value) -> Result<u64, String> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({ "id": id, "method": method, "params": params });
        self.ws
            .send(Message::Text(message.to_string().into()))
            .await
            .map_err(|e| e.to_string())?;
        Ok(id)
    }

    /// The next message, parsed; `None` once the connection is gone.
    async fn receive(&mut self) -> Option<Value> {
        loop {
            match self.ws.next().await? {
                Ok(Message::Text(text)) => {
                    if let Ok(value) = serde_json::from_str(text.as_str()) {
                        return Some(value);
                    }
                }
                Ok(Message::Binary(bytes)) => {
                    if let Ok(value) = serde_json::from_slice(&bytes) {
                        return Some(value);
                    }
                }
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.send(method, params).await?;
        loop {
            let message = self
                .receive()
                .await
                .ok_or_else(|| "the connection closed".to_owned())?;
            if message["id"].as_u64() == Some(id) {
                if let Some(error) = message.get("error") {
                    return Err(error["message"].as_str().unwrap_or("error").to_owned());
                }
                return Ok(message["result"].clone());
            }
            if message.get("method").is_some() {
                self.backlog.push_back(message);
            }
        }
    }

    /// The next event (responses to fire-and-forget commands are skipped).
    async fn event(&mut self) -> Option<Value> {
        if let Some(event) = self.backlog.pop_front() {
            return Some(event);
        }
        loop {
            let message = self.receive().await?;
            if message.get("method").is_some() {
                return Some(message);
            }
        }
    }
}

impl Guard {
    /// Connects to the browser at `ws_url`, starts intercepting top-level
    /// document requests, and answers them by `policy` until the connection
    /// closes or the guard is dropped.
    pub(crate) async fn start(
        ws_url: &str,
        policy: SafetyPolicy,
        log: BlockedLog,
        limit: Duration,
    ) -> Result<Self, BrowserError> {
        let failed = |detail: String| BrowserError::Launch {
            detail: format!("the navigation guard could not start: {detail}"),
        };
        let setup = async {
            let (ws, _) = async_tungstenite::tokio::connect_async(ws_url)
                .await
                .map_err(|e| e.to_string())?;
            let mut conn = Conn {
                ws,
                next_id: 0,
                backlog: VecDeque::new(),
            };
            let pattern = json!({
                "urlPattern": "*",
                "resourceType": "Document",
                "requestStage": "Request",
            });
            conn.request("Fetch.enable", json!({ "patterns": [pattern] }))
                .await?;
            Ok::<_, String>(conn)
        };
        let conn = tokio::time::timeout(limit, setup)
            .await
            .map_err(|_| failed(format!("no answer within {:.0}s", limit.as_secs_f64())))?
            .map_err(failed)?;
        let task = tokio::spawn(serve(conn, policy, log));
        Ok(Self { task })
    }
}

async fn serve(mut conn: Conn, policy: SafetyPolicy, log: BlockedLog) {
    // The ids of the page targets: a page's main frame has its target's id.
    let mut pages: HashSet<String> = HashSet::new();
    while let Some(event) = conn.event().await {
        if event["method"] != "Fetch.requestPaused" {
            continue;
        }
        let params = &event["params"];
        let Some(request_id) = params["requestId"].as_str().map(str::to_owned) else {
            continue;
        };
        let url = params["request"]["url"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let frame = params["frameId"].as_str().unwrap_or_default().to_owned();
        if !pages.contains(&frame) {
            // A frame not known as a page: a subframe, or a tab opened since
            // the last look. A failed look counts the frame as a page, so
            // the check errs on the safe side.
            match conn.request("Target.getTargets", json!({})).await {
                Ok(result) => {
                    pages = page_ids(&result);
                    if !pages.contains(&frame) {
                        let _ = conn
                            .send("Fetch.continueRequest", json!({ "requestId": request_id }))
                            .await;
                        continue;
                    }
                }
                Err(_) => {
                    pages.clear();
                }
            }
        }
        let verdict = policy.check_url(&url);
        let sent = match verdict {
            Ok(()) => {
                conn.send("Fetch.continueRequest", json!({ "requestId": request_id }))
                    .await
            }
            Err(reason) => {
                // Recorded before the answer, so an action that sees the
                // error page also finds the reason.
                if let Ok(mut blocked) = log.lock() {
                    blocked.push(BlockedNavigation { url, reason });
                }
                conn.send(
                    "Fetch.failRequest",
                    json!({ "requestId": request_id, "errorReason": "BlockedByClient" }),
                )
                .await
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

fn page_ids(result: &Value) -> HashSet<String> {
    result["targetInfos"]
        .as_array()
        .map(|targets| {
            targets
                .iter()
                .filter(|t| t["type"] == "page")
                .filter_map(|t| t["targetId"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}
