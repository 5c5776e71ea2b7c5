//! The navigation guard: stops page loads to sites the [`SafetyPolicy`]
//! does not allow, before any byte is fetched: top-level pages, frames,
//! redirect hops, popups, form submissions of any size, and speculative
//! loads (speculation-rules prefetch and prerender).
//!
//! It uses the DevTools `Fetch` domain at the *browser* level, on a
//! connection of its own. Enabled there, `Fetch` pauses the document (and
//! prefetch) requests of every tab, popups included from their very first
//! request (a tab opened by a page starts loading before any per-tab setup
//! could run), and every redirect hop is paused again as a request of its
//! own. The guard answers each paused request: continue, or fail it with
//! `BlockedByClient`, which leaves the frame on Chromium's error page.
//!
//! Why a connection of its own: requests paused by a browser-level `Fetch`
//! must be answered on that same browser-level session, and chromiumoxide's
//! browser handle cannot be shared with a task (it needs `&mut` for process
//! management). A second DevTools client is cheap and independent: it closes
//! with the browser.
//!
//! # Failing closed
//!
//! Chromium lets every paused request go on when the client that paused it
//! disconnects, so the guard's connection must never drop while the browser
//! lives:
//!
//! - No message is too large: a paused form submission carries its whole
//!   body twice (text and base64), so a 7 MiB POST is a 16 MiB message, the
//!   WebSocket library's default limit. The guard's connection has none.
//! - A message the guard cannot read is still answered: its request id is
//!   found in the raw text and the request is failed.
//! - Every request is decided from its own URL, with no lookup that could
//!   fail or time out first.
//!
//! If the connection drops all the same, the guard connects again at once;
//! if it cannot, the next action starts a new guard before anything else
//! (see `Session::sync_guard`), and every action checks where the tab is
//! (see `check_navigation` in the actions).

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use async_tungstenite::tungstenite::Message;
use async_tungstenite::tungstenite::protocol::WebSocketConfig;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use super::policy::SafetyPolicy;
use crate::error::BrowserError;

/// A navigation (or speculative load) the guard stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockedNavigation {
    /// The URL that was refused (for a redirect, the hop that was).
    pub url: String,
    /// Why, in words for the model.
    pub reason: String,
    /// The frame that was to load it: a tab's main frame has the tab's
    /// target id. Empty for a load not tied to a frame.
    pub frame_id: String,
    /// What was being loaded: `Document` for a page or a frame,
    /// `Prefetch` or `Prerender` for a speculative load.
    pub resource_type: String,
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

    /// The next message, parsed; `None` once the connection is gone. A
    /// message that is not valid JSON but names a paused request becomes a
    /// `Fetch.requestPaused` event without a URL, which the guard refuses:
    /// a request it cannot read is a request it cannot allow.
    async fn receive(&mut self) -> Option<Value> {
        loop {
            let bytes = match self.ws.next().await? {
                Ok(Message::Text(text)) => text.as_bytes().to_vec(),
                Ok(Message::Binary(bytes)) => bytes.to_vec(),
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => continue,
            };
            match serde_json::from_slice(&bytes) {
                Ok(value) => return Some(value),
                Err(_) => {
                    if let Some(id) = unreadable_request(&bytes) {
                        return Some(json!({
                            "method": "Fetch.requestPaused",
                            "params": { "requestId": id, "request": { "url": "" } },
                        }));
                    }
                }
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
    /// Connects to the browser at `ws_url`, starts intercepting document
    /// and prefetch requests, and answers them by `policy` until the
    /// connection closes or the guard is dropped.
    pub(crate) async fn start(
        ws_url: &str,
        policy: SafetyPolicy,
        log: BlockedLog,
        limit: Duration,
    ) -> Result<Self, BrowserError> {
        let conn = connect(ws_url, limit)
            .await
            .map_err(|detail| BrowserError::Launch {
                detail: format!("the navigation guard could not start: {detail}"),
            })?;
        let ws_url = ws_url.to_owned();
        let task = tokio::spawn(async move {
            let mut conn = conn;
            loop {
                serve(conn, &policy, &log).await;
                // The connection dropped while the browser may still run:
                // Chromium let the requests it held go on, so a new
                // connection takes over at once rather than at the next
                // action. A browser that is gone refuses it, and the guard
                // ends.
                tokio::time::sleep(Duration::from_millis(20)).await;
                match connect(&ws_url, limit).await {
                    Ok(again) => conn = again,
                    Err(_) => return,
                }
            }
        });
        Ok(Self { task })
    }
}

/// Opens the guard's connection and starts intercepting, within `limit`.
async fn connect(ws_url: &str, limit: Duration) -> Result<Conn, String> {
    let setup = async {
        // No size limit: a message the guard cannot receive would drop
        // the connection, and Chromium would let the request through.
        let config = WebSocketConfig::default()
            .max_message_size(None)
            .max_frame_size(None);
        let (ws, _) = async_tungstenite::tokio::connect_async_with_config(ws_url, Some(config))
            .await
            .map_err(|e| e.to_string())?;
        let mut conn = Conn {
            ws,
            next_id: 0,
            backlog: VecDeque::new(),
        };
        // The tabs, as events: a tab's main frame has its target's id.
        conn.request("Target.setDiscoverTargets", json!({ "discover": true }))
            .await?;
        // Every request: Chromium's filter knows no prefetch type, and the
        // kind of a request is decided here (see `decides`).
        let pattern = json!({ "urlPattern": "*", "requestStage": "Request" });
        conn.request("Fetch.enable", json!({ "patterns": [pattern] }))
            .await?;
        Ok::<_, String>(conn)
    };
    tokio::time::timeout(limit, setup)
        .await
        .map_err(|_| format!("no answer within {:.0}s", limit.as_secs_f64()))?
}

/// Whether the guard decides on a request: documents (pages, frames,
/// prerendered pages) and speculative loads (speculation rules, `<link
/// rel=prefetch>`: a `Sec-Purpose` header says so). Scripts, images,
/// `fetch()` and the like are not navigations: a page on an allowed site may
/// load them from anywhere.
fn decides(params: &Value) -> bool {
    matches!(
        kind_of(params).as_str(),
        "Document" | "Prefetch" | "Prerender" | ""
    )
}

async fn serve(mut conn: Conn, policy: &SafetyPolicy, log: &BlockedLog) {
    // The ids of the tabs (page targets), kept from the target events.
    let mut tabs: HashSet<String> = HashSet::new();
    while let Some(event) = conn.event().await {
        let params = &event["params"];
        match event["method"].as_str() {
            Some("Target.targetCreated" | "Target.targetInfoChanged") => {
                let info = &params["targetInfo"];
                if let (Some("page"), Some(id)) = (info["type"].as_str(), info["targetId"].as_str())
                {
                    tabs.insert(id.to_owned());
                }
                continue;
            }
            Some("Target.targetDestroyed") => {
                if let Some(id) = params["targetId"].as_str() {
                    tabs.remove(id);
                }
                continue;
            }
            Some("Fetch.requestPaused") => {}
            _ => continue,
        }
        let Some(request_id) = params["requestId"].as_str().map(str::to_owned) else {
            continue;
        };
        let url = params["request"]["url"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let verdict = if url.is_empty() {
            Err("the browser's description of the request could not be read".to_owned())
        } else if !decides(params) {
            Ok(())
        } else {
            policy.check_url(&url)
        };
        let sent = match verdict {
            Ok(()) => {
                conn.send("Fetch.continueRequest", json!({ "requestId": request_id }))
                    .await
            }
            Err(reason) => {
                // Recorded before the answer, so an action that sees the
                // error page also finds the reason.
                let text = |key: &str| params[key].as_str().unwrap_or_default().to_owned();
                if let Ok(mut blocked) = log.lock() {
                    blocked.push(BlockedNavigation {
                        url,
                        reason,
                        frame_id: text("frameId"),
                        resource_type: kind_of(params),
                    });
                }
                // A tab's page gets an empty `204 No Content`: Chromium then
                // commits nothing, so the tab stays on the page it was on,
                // unloaded and untouched. A frame's load and a speculative
                // load are failed (a frame shows an error; a page whose
                // frame never finishes would never finish loading either).
                let frame = params["frameId"].as_str().unwrap_or_default();
                if is_document(params) && tabs.contains(frame) {
                    conn.send(
                        "Fetch.fulfillRequest",
                        json!({ "requestId": request_id, "responseCode": 204, "body": "" }),
                    )
                    .await
                } else {
                    conn.send(
                        "Fetch.failRequest",
                        json!({ "requestId": request_id, "errorReason": "BlockedByClient" }),
                    )
                    .await
                }
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

/// Whether a paused request loads a document that someone asked for (not
/// a speculative one).
fn is_document(params: &Value) -> bool {
    kind_of(params) == "Document"
}

/// What a paused request loads: its resource type, except that a
/// speculative load says so in its `Sec-Purpose` header (a prerendered page
/// is a document request of a page nobody opened).
fn kind_of(params: &Value) -> String {
    let purpose = params["request"]["headers"]
        .as_object()
        .and_then(|headers| {
            headers.iter().find(|(k, _)| {
                k.eq_ignore_ascii_case("sec-purpose") || k.eq_ignore_ascii_case("purpose")
            })
        })
        .and_then(|(_, v)| v.as_str())
        .unwrap_or_default();
    if purpose.contains("prerender") {
        "Prerender".into()
    } else if purpose.contains("prefetch") {
        "Prefetch".into()
    } else {
        params["resourceType"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// The id of the paused request a message names, found in its raw text
/// (for a message that is not valid JSON).
fn unreadable_request(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    if !text.contains("Fetch.requestPaused") {
        return None;
    }
    let key = "\"requestId\":\"";
    let start = text.find(key)? + key.len();
    let end = text[start..].find('"')? + start;
    Some(text[start..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::unreadable_request;

    #[test]
    fn an_unreadable_paused_request_is_still_named() {
        let raw = br#"{"method":"Fetch.requestPaused","params":{"requestId":"interception-job-7.0","request":{"url":"http://x/"#;
        assert_eq!(
            unreadable_request(raw).as_deref(),
            Some("interception-job-7.0")
        );
        assert_eq!(
            unreadable_request(br#"{"method":"Page.loadEventFired""#),
            None
        );
    }
}
