//! Frames from other sites: the documents the page script cannot enter
//! from the tab's document (`contentDocument` is closed to it), which the
//! session reaches through DevTools instead.
//!
//! A frame from another *site* runs in a process of its own (an
//! out-of-process iframe) with a DevTools target of its own, reached over
//! the frame link (`link.rs`); a frame from the same site but another
//! origin runs in the tab's process, and the tab's own session can create
//! an isolated world in it. Either way the page script runs there as in
//! the tab's document, told by the parent document where the frame sits
//! (`frameBox`, the walk's `frames`), so its coordinates are the tab's.
//!
//! A number handed out inside such a frame is remembered with its
//! [`Route`]: the chain of frame elements leading to it. A call that names
//! it (`click`, `input`...) goes down that chain, asking each parent where
//! the next frame is now, and runs in the frame's document.
//!
//! The frames the last map of a tab walked are remembered
//! ([`KnownFrame`]), so that the next map can walk them while it walks
//! the tab's document (`call_with_frames`) instead of one level after
//! the other.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::target::TargetId;
use chromiumoxide::error::CdpError;
use serde_json::{Value, json};

use super::devtools::RawCommand;
use super::link::FrameLink;
use super::{Fail, Session};
use crate::error::BrowserError;

/// How long a call into a frame's document keeps retrying while the frame
/// is between two documents.
const FRAME_RETRY: Duration = Duration::from_secs(2);

/// One step down to a frame from another site: the frame element's number
/// in its parent document, and the frame it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hop {
    /// The number of the `<iframe>` (or `<frame>`) in its parent document.
    pub(crate) owner: u32,
    /// The DevTools id of the frame.
    pub(crate) frame: String,
    /// Whether the frame runs in a process of its own (its own target).
    pub(crate) remote: bool,
}

/// The frame elements from the tab's document down to a frame from
/// another site.
pub(crate) type Route = Arc<Vec<Hop>>;

/// A DevTools session a document is reached through.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Channel {
    /// The tab's own session (chromiumoxide's).
    Tab,
    /// A frame target's session on the frame link.
    Remote(String),
}

/// A document the page script runs in: the tab's own (`frame: None`), or a
/// frame's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Doc {
    channel: Channel,
    frame: Option<String>,
}

impl Doc {
    /// The tab's own document.
    pub(crate) fn tab() -> Self {
        Self {
            channel: Channel::Tab,
            frame: None,
        }
    }

    /// The DevTools id of the frame whose document this is (`None` for the
    /// tab's own).
    pub(crate) fn frame_id(&self) -> Option<&str> {
        self.frame.as_deref()
    }
}

/// A frame from another site that the last map of a tab walked: the next
/// map walks it again while the tab's document is walked, and keeps that
/// walk if the parent's walk finds the frame where it was.
#[derive(Debug, Clone)]
pub(crate) struct KnownFrame {
    /// The frame id of the document holding the frame element (`None` for
    /// the tab's own).
    pub(crate) parent: Option<String>,
    /// The frame element's number in that document.
    pub(crate) owner: u32,
    /// The frame's document.
    pub(crate) doc: Doc,
    /// Where the frame sat, as the parent's walk reported it (the page
    /// script's `frame`).
    pub(crate) place: Value,
}

/// The answer of a frame walked ahead ([`Session::call_with_frames`]).
pub(crate) enum Ahead {
    /// The page script's answer.
    Answered(String),
    /// No answer within the command time limit: the frame's process is
    /// stuck, and walking it again in the same map would wait as long.
    TimedOut,
    /// Any other failure (the frame's document went, no world yet).
    Failed,
}

/// What the session remembers about frames from other sites.
#[derive(Default)]
pub(crate) struct Frames {
    link: Option<FrameLink>,
    /// The context of the isolated world, per channel and frame.
    worlds: HashMap<(Channel, String), i64>,
    /// Frame element number → the frame it shows.
    frame_ids: HashMap<u32, String>,
    /// Element number → how to reach its frame.
    routes: HashMap<u32, Route>,
    /// The frame targets (out-of-process frames) last seen.
    remote_targets: HashSet<String>,
    /// The frames from other sites the last map walked, and the tab it
    /// was of.
    known: Option<(TargetId, Vec<KnownFrame>)>,
}

/// The most numbers remembered with their route; past it the oldest pages'
/// numbers are forgotten (and are then stale, as they are in any case once
/// their page has gone).
const MAX_ROUTES: usize = 100_000;

impl Session {
    /// The route of element `index`, when it lives in a frame from another
    /// site.
    pub(crate) fn route_of(&self, index: u32) -> Option<Route> {
        self.frames.routes.get(&index).cloned()
    }

    /// Remembers that the numbers `numbers` live at the end of `route`.
    pub(crate) fn remember_route(&mut self, numbers: impl IntoIterator<Item = u32>, route: &Route) {
        if self.frames.routes.len() > MAX_ROUTES {
            self.frames.routes.clear();
        }
        for n in numbers {
            self.frames.routes.insert(n, Arc::clone(route));
        }
    }

    /// Forgets how to reach every number in a frame from another site: a
    /// new policy may not allow a frame an earlier map showed, and the
    /// next map decides again.
    pub(crate) fn forget_routes(&mut self) {
        self.frames.routes.clear();
        self.frames.known = None;
    }

    /// The frames from other sites the last map of `tab` walked.
    pub(crate) fn known_frames(&self, tab: &TargetId) -> Vec<KnownFrame> {
        match &self.frames.known {
            Some((known_tab, frames)) if known_tab == tab => frames.clone(),
            _ => Vec::new(),
        }
    }

    /// Remembers the frames from other sites a map of `tab` walked.
    pub(crate) fn remember_frames(&mut self, tab: &TargetId, frames: Vec<KnownFrame>) {
        self.frames.known = Some((tab.clone(), frames));
    }

    /// Sends one command to the session of `channel`.
    async fn send(
        &mut self,
        page: &Page,
        channel: &Channel,
        method: &'static str,
        params: Value,
    ) -> Result<Value, Fail> {
        match channel {
            Channel::Tab => self.exec_raw(page, RawCommand { method, params }).await,
            Channel::Remote(session) => {
                let limit = self.config.command_timeout;
                let link = self.link().await?;
                let answer = link.request(Some(session), method, params, limit).await;
                answer.map_err(|e| {
                    if e.contains("No session") {
                        link.forget_session(session);
                    }
                    Fail::Cdp(CdpError::ChromeMessage(e))
                })
            }
        }
    }

    /// The frame link, connected on first use (and again after it closed).
    async fn link(&mut self) -> Result<&mut FrameLink, Fail> {
        if self.frames.link.as_ref().is_none_or(FrameLink::is_closed) {
            let limit = self.config.command_timeout;
            let link = FrameLink::connect(&self.ws_url, limit)
                .await
                .map_err(|e| Fail::Cdp(CdpError::ChromeMessage(e)))?;
            self.frames.worlds.retain(|(c, _), _| *c == Channel::Tab);
            self.frames.link = Some(link);
        }
        Ok(self.frames.link.as_mut().expect("connected just above"))
    }

    /// The context of the isolated world in `doc`, created when missing.
    async fn doc_world(&mut self, page: &Page, doc: &Doc) -> Result<i64, Fail> {
        let Some(frame) = &doc.frame else {
            return Ok(*self.world(page).await?.inner());
        };
        let key = (doc.channel.clone(), frame.clone());
        if let Some(id) = self.frames.worlds.get(&key) {
            return Ok(*id);
        }
        let params = json!({ "frameId": frame, "worldName": super::script::WORLD_NAME });
        let created = self
            .send(page, &doc.channel, "Page.createIsolatedWorld", params)
            .await?;
        let id = created["executionContextId"]
            .as_i64()
            .ok_or_else(|| Fail::Cdp(CdpError::msg("no execution context for the frame")))?;
        self.frames.worlds.insert(key, id);
        Ok(id)
    }

    /// Evaluates `expression` in the isolated world of `doc`, returning its
    /// value (or, with `by_value` false, a handle on it).
    async fn doc_eval(
        &mut self,
        page: &Page,
        doc: &Doc,
        expression: &str,
        by_value: bool,
    ) -> Result<Value, Fail> {
        let context = self.doc_world(page, doc).await?;
        let params = json!({
            "expression": expression,
            "contextId": context,
            "returnByValue": by_value,
            "awaitPromise": true,
        });
        let returned = self
            .send(page, &doc.channel, "Runtime.evaluate", params)
            .await?;
        if let Some(details) = returned.get("exceptionDetails") {
            let text = details["exception"]["description"]
                .as_str()
                .or_else(|| details["text"].as_str())
                .unwrap_or("the page script failed");
            return Err(Fail::Cdp(CdpError::ChromeMessage(text.to_owned())));
        }
        Ok(returned["result"].clone())
    }

    /// Calls `method` of the page script in `doc` (see `call_raw`, which
    /// does the same in the tab's document).
    pub(crate) async fn doc_call(
        &mut self,
        page: &Page,
        doc: &Doc,
        method: &str,
        args: &Value,
    ) -> Result<String, Fail> {
        if doc.frame.is_none() {
            return self.call_raw(page, method, args).await;
        }
        let quick = super::script::quick_call(method, args);
        let deadline = Instant::now() + FRAME_RETRY;
        loop {
            let attempt = async {
                match self.doc_eval(page, doc, &quick, true).await?["value"].take() {
                    Value::String(text) => Ok(text),
                    _ => match self
                        .doc_eval(
                            page,
                            doc,
                            &super::script::installing_call(method, args),
                            true,
                        )
                        .await?["value"]
                        .take()
                    {
                        Value::String(text) => Ok(text),
                        other => Err(Fail::Cdp(CdpError::msg(format!(
                            "the page script answered {other} instead of text"
                        )))),
                    },
                }
            };
            match attempt.await {
                Err(fail) if super::script::is_context_gone(&fail) && Instant::now() < deadline => {
                    if let Some(frame) = &doc.frame {
                        self.frames
                            .worlds
                            .remove(&(doc.channel.clone(), frame.clone()));
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                outcome => return outcome,
            }
        }
    }

    /// Calls the page script in several documents at once (frames in
    /// processes of their own run their walks in parallel): each call's
    /// answer, as [`doc_call`](Self::doc_call) gives it. Worlds are made
    /// ready one by one first; a document that lacks the script, or a call
    /// that fails, is tried again alone.
    pub(crate) async fn doc_calls(
        &mut self,
        page: &Page,
        calls: &[(Doc, &str, Value)],
    ) -> Vec<Result<String, Fail>> {
        let mut prepared = Vec::with_capacity(calls.len());
        for (doc, method, args) in calls {
            let world = self.doc_world(page, doc).await;
            prepared.push(world.map(|context| self.quick_evaluate(context, method, args)));
        }
        let this = &*self;
        let sends = calls
            .iter()
            .zip(&prepared)
            .map(|((doc, _, _), params)| async move {
                let params = params.as_ref().ok()?.clone();
                this.evaluate_once(page, doc, params).await
            });
        let answers = futures_util::future::join_all(sends).await;
        let mut out = Vec::with_capacity(calls.len());
        for ((doc, method, args), answer) in calls.iter().zip(answers) {
            out.push(match answer {
                Some(text) => Ok(text),
                None => {
                    let mut args = args.clone();
                    self.add_slack(&mut args);
                    self.doc_call(page, doc, method, &args).await
                }
            });
        }
        out
    }

    /// The `Runtime.evaluate` parameters that call `method` of the page
    /// script in the world `context` (with the redactor's slack added to
    /// `args`), for a document that has the script.
    fn quick_evaluate(&self, context: i64, method: &str, args: &Value) -> Value {
        let mut args = args.clone();
        self.add_slack(&mut args);
        json!({
            "expression": super::script::quick_call(method, &args),
            "contextId": context,
            "returnByValue": true,
            "awaitPromise": true,
        })
    }

    /// One `Runtime.evaluate` in `doc` whose answer is text, with no
    /// retry: `None` when it fails for any reason.
    async fn evaluate_once(&self, page: &Page, doc: &Doc, params: Value) -> Option<String> {
        let limit = self.config.command_timeout;
        let answer = match &doc.channel {
            Channel::Tab => {
                let command = RawCommand {
                    method: "Runtime.evaluate",
                    params,
                };
                match tokio::time::timeout(limit, page.execute(command)).await {
                    Ok(Ok(response)) => response.result,
                    _ => return None,
                }
            }
            Channel::Remote(session) => {
                let link = self.frames.link.as_ref()?;
                let request = link.request(Some(session), "Runtime.evaluate", params, limit);
                request.await.ok()?
            }
        };
        match &answer["result"]["value"] {
            Value::String(text) if answer.get("exceptionDetails").is_none() => Some(text.clone()),
            _ => None,
        }
    }

    /// Calls `method` of the page script in the tab's document and, at the
    /// same time, in the frame documents of `ahead` (each with its own
    /// arguments): the tab's answer as [`call_raw`](Self::call_raw) gives
    /// it, and each frame's (no retry: the caller walks such a frame again
    /// the usual way if it still needs it).
    pub(crate) async fn call_with_frames(
        &mut self,
        page: &Page,
        method: &str,
        args: &Value,
        ahead: &[(Doc, Value)],
    ) -> (Result<String, Fail>, Vec<Ahead>) {
        let mut args = args.clone();
        self.add_slack(&mut args);
        let world = match self.world(page).await {
            Ok(world) => Some(world),
            // The map fails with the tab's document; its frames do not
            // matter.
            Err(fail) if !super::script::is_context_gone(&fail) => {
                return (Err(fail), ahead.iter().map(|_| Ahead::Failed).collect());
            }
            Err(_) => None,
        };
        let prepared: Vec<Option<Value>> = ahead
            .iter()
            .map(|(doc, frame_args)| {
                let frame = doc.frame.as_ref()?;
                let context = self
                    .frames
                    .worlds
                    .get(&(doc.channel.clone(), frame.clone()))?;
                Some(self.quick_evaluate(*context, method, frame_args))
            })
            .collect();
        let this = &*self;
        let quick = super::script::quick_call(method, &args);
        let tab = async {
            match world {
                Some(world) => Some(this.eval_in(page, Some(world), &quick).await),
                None => None,
            }
        };
        let limit = self.config.command_timeout;
        let frames = ahead
            .iter()
            .zip(prepared)
            .map(|((doc, _), params)| async move {
                let Some(params) = params else {
                    return Ahead::Failed;
                };
                let started = Instant::now();
                match this.evaluate_once(page, doc, params).await {
                    Some(text) => Ahead::Answered(text),
                    None if started.elapsed() >= limit => Ahead::TimedOut,
                    None => Ahead::Failed,
                }
            });
        let (tab, frames) = tokio::join!(tab, futures_util::future::join_all(frames));
        let tab = match tab {
            Some(Ok(Value::String(text))) => Ok(text),
            Some(Err(fail)) if !super::script::is_context_gone(&fail) => Err(fail),
            // No script in the document yet, the document went, or no
            // world: the usual call installs the script, creates the world
            // and retries.
            _ => self.call_raw(page, method, &args).await,
        };
        (tab, frames)
    }

    /// An answer of [`doc_calls`](Self::doc_calls), classified and decoded.
    pub(crate) fn decode_call<T: serde::de::DeserializeOwned>(
        &mut self,
        method: &str,
        answer: Result<String, Fail>,
    ) -> Result<T, BrowserError> {
        let text = answer.map_err(|f| self.classify(f, &format!("the page script `{method}`")))?;
        super::script::decode(method, &text)
    }

    /// [`doc_call`](Self::doc_call), classified and decoded.
    pub(crate) async fn call_in<T: serde::de::DeserializeOwned>(
        &mut self,
        page: &Page,
        doc: &Doc,
        method: &str,
        args: &Value,
    ) -> Result<T, BrowserError> {
        let mut args = args.clone();
        self.add_slack(&mut args);
        let answer = self.doc_call(page, doc, method, &args).await;
        let text = answer.map_err(|f| self.classify(f, &format!("the page script `{method}`")))?;
        super::script::decode(method, &text)
    }

    /// The document shown by the frame element `owner` of `parent`, with
    /// the hop that leads there.
    pub(crate) async fn child_doc(
        &mut self,
        page: &Page,
        parent: &Doc,
        owner: u32,
    ) -> Result<(Doc, Hop), Fail> {
        let frame = match self.frames.frame_ids.get(&owner) {
            Some(frame) => frame.clone(),
            None => {
                let getter = format!("window.__toolkitBrowser.frameNode({owner})");
                let handle = self.doc_eval(page, parent, &getter, false).await?;
                let object = handle["objectId"]
                    .as_str()
                    .ok_or_else(|| Fail::Cdp(CdpError::msg("the frame element is gone")))?
                    .to_owned();
                let node = self
                    .send(
                        page,
                        &parent.channel,
                        "DOM.describeNode",
                        json!({ "objectId": object }),
                    )
                    .await?;
                let frame = node["node"]["frameId"]
                    .as_str()
                    .ok_or_else(|| Fail::Cdp(CdpError::msg("the frame shows no document")))?
                    .to_owned();
                // The handle is not needed any more; the renderer would
                // otherwise keep it until the document goes.
                let _ = self
                    .send(
                        page,
                        &parent.channel,
                        "Runtime.releaseObject",
                        json!({ "objectId": object }),
                    )
                    .await;
                self.frames.frame_ids.insert(owner, frame.clone());
                frame
            }
        };
        if !self.frames.remote_targets.contains(&frame) {
            self.refresh_remote_targets(page).await?;
        }
        let remote = self.frames.remote_targets.contains(&frame);
        let hop = Hop {
            owner,
            frame,
            remote,
        };
        let doc = self.hop_doc(parent, &hop).await?;
        Ok((doc, hop))
    }

    /// The document at the end of `hop` from `parent`.
    async fn hop_doc(&mut self, parent: &Doc, hop: &Hop) -> Result<Doc, Fail> {
        let channel = if hop.remote {
            let limit = self.config.command_timeout;
            let session = self
                .link()
                .await?
                .session(&hop.frame, limit)
                .await
                .map_err(|e| Fail::Cdp(CdpError::ChromeMessage(e)))?;
            Channel::Remote(session)
        } else {
            parent.channel.clone()
        };
        Ok(Doc {
            channel,
            frame: Some(hop.frame.clone()),
        })
    }

    /// Notes which frames run in processes of their own now, and forgets
    /// what concerned frame targets that have gone.
    async fn refresh_remote_targets(&mut self, page: &Page) -> Result<(), Fail> {
        let targets = self
            .send(page, &Channel::Tab, "Target.getTargets", json!({}))
            .await;
        let targets = match targets {
            Ok(targets) => targets,
            // A tab's session may not list targets; the browser's can.
            Err(_) => {
                let limit = self.config.command_timeout;
                self.link()
                    .await?
                    .request(None, "Target.getTargets", json!({}), limit)
                    .await
                    .map_err(|e| Fail::Cdp(CdpError::ChromeMessage(e)))?
            }
        };
        self.frames.remote_targets = targets["targetInfos"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter(|t| t["type"] == "iframe")
                    .filter_map(|t| t["targetId"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let live = self.frames.remote_targets.clone();
        if let Some(link) = self.frames.link.as_mut() {
            link.retain(&|t| live.contains(t));
        }
        Ok(())
    }

    /// Calls `method` of the page script in the frame at the end of
    /// `route`, telling it where the frame sits now. A frame element that
    /// has gone makes the answer the page script gives for a stale number.
    pub(crate) async fn call_routed(
        &mut self,
        page: &Page,
        route: &[Hop],
        method: &str,
        args: &Value,
    ) -> Result<String, Fail> {
        let Some(there) = self.descend(page, route, None).await? else {
            return Ok(STALE.to_owned());
        };
        let mut args = args.clone();
        args["frame"] = there.geometry;
        let answer = self.doc_call(page, &there.doc, method, &args).await?;
        if method != "clickPoint" {
            return Ok(answer);
        }
        // The click point was found after scrolling the element into view,
        // which may have moved the frame: ask again where it is, then check
        // that no element of a parent page covers the point.
        let Some(there) = self.descend(page, route, None).await? else {
            return Ok(STALE.to_owned());
        };
        args["frame"] = there.geometry;
        let answer = self.doc_call(page, &there.doc, method, &args).await?;
        let parsed: Value = serde_json::from_str(&answer).unwrap_or_default();
        let ok = &parsed["ok"];
        let (Some(x), Some(y)) = (ok["x"].as_f64(), ok["y"].as_f64()) else {
            return Ok(answer);
        };
        Ok(match self.descend(page, route, Some((x, y))).await? {
            None => STALE.to_owned(),
            Some(Descent {
                blocker: Some(blocker),
                ..
            }) => json!({ "ok": {
                "el": ok["el"],
                "notClickable": format!("it is covered by {blocker}"),
            }})
            .to_string(),
            Some(_) => answer,
        })
    }

    /// Goes down `route` from the tab's document, asking each parent where
    /// the next frame sits; `None` when a frame element on the way has
    /// gone. With a `point` (the tab's coordinates), each parent also
    /// checks that a click there reaches the frame.
    async fn descend(
        &mut self,
        page: &Page,
        route: &[Hop],
        point: Option<(f64, f64)>,
    ) -> Result<Option<Descent>, Fail> {
        let mut doc = Doc::tab();
        let mut geometry = Value::Null;
        let mut blocker = None;
        for hop in route {
            let mut args = json!({ "index": hop.owner });
            if !geometry.is_null() {
                args["frame"] = geometry.clone();
            }
            if let Some((x, y)) = point {
                args["point"] = json!({ "x": x, "y": y });
            }
            let answer = self.doc_call(page, &doc, "frameBox", &args).await?;
            let mut parsed: Value = serde_json::from_str(&answer).unwrap_or_default();
            let ok = parsed["ok"].take();
            if ok.is_null() || ok["stale"] == true {
                return Ok(None);
            }
            if blocker.is_none() {
                blocker = ok["blocker"].as_str().map(str::to_owned);
            }
            doc = self.hop_doc(&doc, hop).await?;
            geometry = ok;
        }
        Ok(Some(Descent {
            doc,
            geometry,
            blocker,
        }))
    }
}

/// Where a route leads now.
struct Descent {
    doc: Doc,
    /// Where the frame sits in the tab (the page script's `frame`).
    geometry: Value,
    /// What covers the checked point, if something does.
    blocker: Option<String>,
}

/// The page script's answer for a number whose element is gone.
const STALE: &str = r#"{"ok":{"stale":true}}"#;
