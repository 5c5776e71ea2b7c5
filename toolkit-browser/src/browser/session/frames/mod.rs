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
//! the tab's document ([`Session::call_ahead`]) instead of one level
//! after the other.
//!
//! What the page map uses from here: [`Doc`] (where a call runs),
//! [`Session::frame_doc`] (the document a frame element shows),
//! [`Session::call_in`], [`Session::call_all`] and
//! [`Session::call_ahead`] (calls in given documents, `calls.rs`,
//! answered as `Answer`s that [`Session::decode`] decodes), and
//! [`Session::remember_numbers`] (where a frame's numbers live).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::target::TargetId;
use chromiumoxide::error::CdpError;
use serde_json::{Value, json};

mod calls;

pub(crate) use calls::Ahead;

use super::devtools::RawCommand;
use super::link::FrameLink;
use super::{Fail, Session};

/// One step down to a frame from another site: the frame element's number
/// in its parent document, and the frame it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Hop {
    /// The number of the `<iframe>` (or `<frame>`) in its parent document.
    owner: u32,
    /// The DevTools id of the frame.
    frame: String,
    /// Whether the frame runs in a process of its own (its own target).
    remote: bool,
}

/// The frame elements from the tab's document down to a frame from
/// another site.
pub(super) type Route = Arc<Vec<Hop>>;

/// A DevTools session a document is reached through.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Channel {
    /// The tab's own session (chromiumoxide's).
    Tab,
    /// A frame target's session on the frame link.
    Remote(String),
}

/// Where a call into the page script runs: the tab's own document
/// ([`Doc::tab`]), or the document of a frame from another site
/// ([`Session::frame_doc`]), with the way down to it from the tab's.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    channel: Channel,
    frame: Option<String>,
    /// The frame elements leading here (empty for the tab's document).
    route: Route,
}

/// Two handles name the same document when they reach the same frame the
/// same way, whichever frame elements led there.
impl PartialEq for Doc {
    fn eq(&self, other: &Self) -> bool {
        self.channel == other.channel && self.frame == other.frame
    }
}

impl Doc {
    /// The tab's own document.
    pub(crate) fn tab() -> Self {
        Self {
            channel: Channel::Tab,
            frame: None,
            route: Route::default(),
        }
    }

    /// The DevTools id of the frame whose document this is (`None` for the
    /// tab's own).
    pub(crate) fn frame_id(&self) -> Option<&str> {
        self.frame.as_deref()
    }

    /// How many frames deep the document is (0 for the tab's own).
    pub(crate) fn depth(&self) -> usize {
        self.route.len()
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
    pub(super) fn route_of(&self, index: u32) -> Option<Route> {
        self.frames.routes.get(&index).cloned()
    }

    /// Whether element `index` was handed out inside a frame from another
    /// site (where some operations, choosing files, cannot reach).
    pub(crate) fn in_other_site_frame(&self, index: u32) -> bool {
        self.frames.routes.contains_key(&index)
    }

    /// Remembers that the numbers `numbers` live in `doc`, a frame's
    /// document: a call that names one of them ([`call`](Self::call)) runs
    /// there.
    pub(crate) fn remember_numbers(&mut self, numbers: impl IntoIterator<Item = u32>, doc: &Doc) {
        let route = Arc::clone(&doc.route);
        self.remember_route(numbers, &route);
    }

    /// Remembers that the numbers `numbers` live at the end of `route`.
    pub(super) fn remember_route(&mut self, numbers: impl IntoIterator<Item = u32>, route: &Route) {
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
    pub(super) fn forget_routes(&mut self) {
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

    /// Sends `method` to the tab `page` over the frame link: a DevTools
    /// session of this crate's own on the tab, beside chromiumoxide's.
    /// chromiumoxide queues every `Page.navigate` sent through it behind
    /// the last one until that one loads or its own fixed limit (30 s)
    /// passes, whatever the session's navigation time limit: a load the
    /// session gave up on would hold up the next navigation that long.
    /// Events still reach chromiumoxide's session (lifecycle, frames).
    pub(crate) async fn tab_request(
        &mut self,
        page: &Page,
        method: &'static str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, Fail> {
        let attach = self.config.command_timeout;
        let target = page.target_id().as_ref().to_owned();
        let link = self.link().await?;
        let session = link
            .session(&target, attach)
            .await
            .map_err(|e| Fail::Cdp(CdpError::ChromeMessage(e)))?;
        let answer = tokio::time::timeout(
            limit,
            link.request(Some(&session), method, params, limit + attach),
        )
        .await
        .map_err(|_| Fail::Elapsed(limit))?;
        answer.map_err(|e| {
            if e.contains("No session") {
                link.forget_session(&session);
            }
            Fail::Cdp(CdpError::ChromeMessage(e))
        })
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

    /// The document shown by the frame element `owner` of `parent`, a
    /// frame from another site; `None` when it cannot be reached (still
    /// loading, gone meanwhile).
    pub(crate) async fn frame_doc(&mut self, page: &Page, parent: &Doc, owner: u32) -> Option<Doc> {
        self.reach_frame(page, parent, owner).await.ok()
    }

    /// [`frame_doc`](Self::frame_doc), and why not.
    async fn reach_frame(&mut self, page: &Page, parent: &Doc, owner: u32) -> Result<Doc, Fail> {
        let frame = match self.frames.frame_ids.get(&owner) {
            Some(frame) => frame.clone(),
            None => {
                let getter = format!("window.__toolkitBrowser.frameNode({owner})");
                let handle = self.evaluate_in_doc(page, parent, &getter, false).await?;
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
        self.hop_doc(parent, hop).await
    }

    /// The document at the end of `hop` from `parent`.
    async fn hop_doc(&mut self, parent: &Doc, hop: Hop) -> Result<Doc, Fail> {
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
        let frame = Some(hop.frame.clone());
        let mut route = Vec::clone(&parent.route);
        route.push(hop);
        Ok(Doc {
            channel,
            frame,
            route: Arc::new(route),
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

    /// The undecoded answer of `method` of the page script in the frame at
    /// the end of `route` (the frame part of [`call`](Self::call)), telling
    /// it where the frame sits now. A frame element that has gone makes the
    /// answer the page script gives for a stale number.
    pub(super) async fn call_routed(
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
        let answer = self.call_text(page, &there.doc, method, &args).await?;
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
        let answer = self.call_text(page, &there.doc, method, &args).await?;
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
            let answer = self.call_text(page, &doc, "frameBox", &args).await?;
            let mut parsed: Value = serde_json::from_str(&answer).unwrap_or_default();
            let ok = parsed["ok"].take();
            if ok.is_null() || ok["stale"] == true {
                return Ok(None);
            }
            if blocker.is_none() {
                blocker = ok["blocker"].as_str().map(str::to_owned);
            }
            doc = self.hop_doc(&doc, hop.clone()).await?;
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
