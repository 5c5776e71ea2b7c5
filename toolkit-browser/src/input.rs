//! Trusted input and navigation: the primitives actions are built from.
//! Clicks and keys go through the DevTools `Input` domain, so the page sees
//! real (`isTrusted`) events, exactly as from a person.

use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams, MouseButton,
};
use chromiumoxide::cdp::browser_protocol::page::{
    BringToFrontParams, CaptureScreenshotFormat, ClientNavigationDisposition,
    EventFrameRequestedNavigation, EventFrameStoppedLoading, EventLoadEventFired,
    EventNavigatedWithinDocument, FrameId, GetNavigationHistoryParams, NavigateParams,
    NavigateToHistoryEntryParams,
};
use chromiumoxide::cdp::browser_protocol::target::{EventTargetCreated, TargetId};
use chromiumoxide::error::CdpError;
use chromiumoxide::listeners::EventStream;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::error::BrowserError;
use crate::keys::{Chord, parse_keys};
use crate::page_map::{Element, MAX_TEXT_CHARS};
use crate::session::{Browser, Fail, Session};
use crate::tabs::TabInfo;

/// How long to wait for the tab a click opened to appear, once the page has
/// asked for it (a `target=_blank` link: the browser creates the tab about
/// 80 ms after the click).
const POPUP_WAIT: Duration = Duration::from_secs(3);

/// chromiumoxide abandons a navigation after its own limit (the navigation
/// time limit, see `Session::launch`); this crate waits a little longer so
/// that chromiumoxide has given up first, and the next navigation is not
/// queued behind a dead one.
const NAVIGATION_MARGIN: Duration = Duration::from_secs(1);

/// How long a page may take to answer a trivial call before
/// [`Browser::navigate`] treats it as stuck in a script.
const HUNG_PROBE: Duration = Duration::from_secs(2);

/// The URL and title of the current tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageInfo {
    /// The URL.
    pub url: String,
    /// The title.
    pub title: String,
}

/// What an action caused besides its own effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Effects {
    /// A tab the action opened. It is now the current tab.
    pub new_tab: Option<TabInfo>,
    /// The current tab loaded a new document (a link, a form submission).
    pub navigated: bool,
    /// A navigation started but had not finished loading within the
    /// navigation time limit.
    pub still_loading: bool,
    /// The current tab's URL afterwards.
    pub url: String,
}

/// The result of [`Browser::click`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClickOutcome {
    /// The element clicked, as it was just before the click.
    pub element: Element,
    /// Where the click landed, in top-level viewport CSS pixels.
    pub x: f64,
    /// Where the click landed, in top-level viewport CSS pixels.
    pub y: f64,
    /// New tab, navigation, final URL.
    pub effects: Effects,
}

/// The result of [`Browser::type_text`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypeOutcome {
    /// The element typed into, as it was before typing.
    pub element: Element,
    /// The field's value read back after typing.
    pub value: String,
    /// Whether the value read back is what was asked for (the text, or the
    /// old value followed by the text when not clearing). A mismatch means
    /// the page reformatted or refused the input (a length limit, a mask,
    /// an autocomplete).
    pub matches: bool,
}

/// The result of [`Browser::scroll`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScrollOutcome {
    /// What was scrolled: `None` for the page, else a short description of
    /// the scrolled container.
    pub container: Option<String>,
    /// How far it actually moved, CSS pixels (negative: up). Zero at the
    /// end of the page.
    pub moved: i64,
    /// Pixels above the visible part afterwards.
    pub above: i64,
    /// Pixels below the visible part afterwards.
    pub below: i64,
    /// The visible height of what was scrolled.
    pub viewport: i64,
}

#[derive(Deserialize)]
struct ClickPoint {
    #[serde(default)]
    stale: bool,
    el: Option<Element>,
    #[serde(rename = "notClickable")]
    not_clickable: Option<String>,
    x: Option<f64>,
    y: Option<f64>,
    target: Option<String>,
}

#[derive(Deserialize)]
struct FocusResult {
    #[serde(default)]
    stale: bool,
    #[serde(rename = "notEditable")]
    not_editable: Option<String>,
    el: Option<Element>,
    /// A value-only input (date, colour...) set directly by the script.
    #[serde(default)]
    done: bool,
    value: Option<String>,
    #[serde(default)]
    empty: bool,
    /// The value before typing.
    #[serde(default)]
    before: String,
}

#[derive(Deserialize)]
struct ReadResult {
    #[serde(default)]
    stale: bool,
    value: Option<String>,
}

#[derive(Deserialize)]
struct ScrollResult {
    #[serde(default)]
    stale: bool,
    #[serde(flatten)]
    outcome: Option<ScrollOutcome>,
}

/// Event subscriptions taken before an action, so that nothing it causes
/// can be missed (gotcha: subscribing after the action races it).
struct Watch {
    created: EventStream<EventTargetCreated>,
    requested: EventStream<EventFrameRequestedNavigation>,
    loaded: EventStream<EventLoadEventFired>,
    stopped: EventStream<EventFrameStoppedLoading>,
    within: EventStream<EventNavigatedWithinDocument>,
}

impl Session {
    async fn watch(&mut self, page: &Page) -> Result<Watch, BrowserError> {
        let subscribed = async {
            Ok::<_, chromiumoxide::error::CdpError>(Watch {
                created: self.cdp.event_listener::<EventTargetCreated>().await?,
                requested: page
                    .event_listener::<EventFrameRequestedNavigation>()
                    .await?,
                loaded: page.event_listener::<EventLoadEventFired>().await?,
                stopped: page.event_listener::<EventFrameStoppedLoading>().await?,
                within: page
                    .event_listener::<EventNavigatedWithinDocument>()
                    .await?,
            })
        }
        .await;
        subscribed.map_err(|e| self.classify(e.into(), "watching the page"))
    }

    async fn front(&mut self, page: &Page) -> Result<(), BrowserError> {
        self.exec(
            page,
            BringToFrontParams::default(),
            "bringing the tab to the front",
        )
        .await
        .map(drop)
    }

    async fn page_info(&mut self, page: &Page) -> Result<PageInfo, BrowserError> {
        self.call(page, "pageInfo", serde_json::Value::Null).await
    }

    /// After an action: notices a tab it opened (and switches to it) or a
    /// navigation it started (and waits for the new document to load).
    ///
    /// Renderer-side events caused by the input (a navigation request)
    /// reach the connection before the answer to any later call to that
    /// renderer, so one round trip (reading the URL, needed anyway) flushes
    /// them; a short drain then collects what the handler has forwarded.
    async fn settle(
        &mut self,
        mut watch: Watch,
        page: &Page,
        expect_popup: bool,
    ) -> Result<Effects, BrowserError> {
        let opener = page.target_id().clone();
        let main_frame = page.mainframe().await.ok().flatten();
        // Its answer is also the URL reported when nothing else happened.
        let flushed = self.page_info(page).await;

        // Collect what has arrived: a navigation request (its disposition
        // says whether a new tab is coming) and a tab already created.
        let mut popup: Option<TargetId> = None;
        let mut navigating = false;
        let mut new_window = expect_popup;
        let note_created = |ev: &EventTargetCreated, popup: &mut Option<TargetId>| {
            let info = &ev.target_info;
            let ours = info.opener_id.as_ref().is_none_or(|o| *o == opener);
            if info.r#type == "page" && ours && popup.is_none() {
                *popup = Some(info.target_id.clone());
            }
        };
        let drained = tokio::time::sleep(Duration::from_millis(3));
        tokio::pin!(drained);
        loop {
            tokio::select! {
                Some(ev) = watch.requested.next() => {
                    let main = main_frame.as_ref().is_none_or(|f| *f == ev.frame_id);
                    match ev.disposition {
                        ClientNavigationDisposition::CurrentTab if main => navigating = true,
                        ClientNavigationDisposition::NewTab
                        | ClientNavigationDisposition::NewWindow => new_window = true,
                        _ => {}
                    }
                }
                Some(ev) = watch.created.next() => note_created(&ev, &mut popup),
                () = &mut drained => break,
            }
        }
        // A tab was asked for but the browser has not created it yet.
        if new_window && popup.is_none() {
            let waiting = async {
                while let Some(ev) = watch.created.next().await {
                    note_created(&ev, &mut popup);
                    if popup.is_some() {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(POPUP_WAIT, waiting).await;
        }

        let mut effects = Effects::default();
        if let Some(id) = popup {
            let new_page = self.page_for(&id).await?;
            self.wait_ready(&new_page).await;
            self.adopt(new_page.clone()).await?;
            let tabs = self.tab_list().await?;
            effects.new_tab = tabs.into_iter().find(|t| t.current);
            effects.url = self.page_info(&new_page).await?.url;
            return Ok(effects);
        }
        if navigating {
            let limit = self.config.navigation_timeout;
            let main = |frame: &FrameId| main_frame.as_ref().is_none_or(|f| f == frame);
            // The new document's load event ends the wait; so does the frame
            // stopping without one (a download, a 204 answer, a cancelled
            // navigation) or a navigation that stayed within the document.
            let ended = async {
                tokio::select! {
                    // A real navigation also stops loading, after its load
                    // event: when both are queued, the load event tells.
                    biased;
                    Some(_) = watch.loaded.next() => true,
                    () = async {
                        while let Some(ev) = watch.stopped.next().await {
                            if main(&ev.frame_id) {
                                break;
                            }
                        }
                    } => false,
                    () = async {
                        while let Some(ev) = watch.within.next().await {
                            if main(&ev.frame_id) {
                                break;
                            }
                        }
                    } => false,
                }
            };
            match tokio::time::timeout(limit, ended).await {
                Ok(loaded) => effects.navigated = loaded,
                Err(_) => {
                    effects.navigated = true;
                    effects.still_loading = true;
                }
            }
            effects.url = self.page_info(page).await?.url;
        } else {
            effects.url = match flushed {
                Ok(info) => info.url,
                Err(_) => self.page_info(page).await?.url,
            };
        }
        Ok(effects)
    }

    /// Waits (briefly) until a freshly opened tab has a document worth
    /// mapping: past `about:blank` and loaded.
    async fn wait_ready(&mut self, page: &Page) {
        let deadline = Instant::now() + self.config.navigation_timeout.min(POPUP_WAIT * 2);
        while Instant::now() < deadline {
            if let Ok(text) = self
                .call_raw(page, "pageInfo", &serde_json::Value::Null)
                .await
                && let Ok(info) = serde_json::from_str::<serde_json::Value>(&text)
            {
                let ok = &info["ok"];
                if ok["ready"] == "complete" && ok["url"] != "about:blank" {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Opens `url` in a new tab, makes it current, and closes `hung`.
    async fn replace_hung_tab(&mut self, hung: &Page, url: &str) -> Result<PageInfo, BrowserError> {
        let fresh = self.new_tab(url).await.map_err(|e| match e {
            BrowserError::Protocol { detail } => BrowserError::Navigation {
                url: url.to_owned(),
                detail,
            },
            other => other,
        })?;
        self.adopt(fresh.clone()).await?;
        // It is no longer current either way; a failure to close it is not
        // the navigation's.
        let _ = self.close_targets(&[hung.target_id().clone()]).await;
        self.page_info(&fresh).await
    }

    async fn mouse(
        &mut self,
        page: &Page,
        kind: DispatchMouseEventType,
        x: f64,
        y: f64,
    ) -> Result<(), BrowserError> {
        let mut params = DispatchMouseEventParams::new(kind.clone(), x, y);
        if kind != DispatchMouseEventType::MouseMoved {
            params.button = Some(MouseButton::Left);
            params.buttons = Some(i64::from(kind == DispatchMouseEventType::MousePressed));
            params.click_count = Some(1);
        }
        self.exec(page, params, "clicking").await.map(drop)
    }

    async fn key(&mut self, page: &Page, chord: &Chord) -> Result<(), BrowserError> {
        for event in chord.events() {
            self.exec(page, event, "pressing keys").await?;
        }
        Ok(())
    }
}

impl Browser {
    /// Clicks element `index` like a person: scrolls it into view, finds a
    /// point where a click reaches it (not covered by another element),
    /// brings the tab to the front, and sends real mouse events. A tab the
    /// click opens becomes current; a navigation it starts is waited for.
    ///
    /// # Errors
    ///
    /// [`BrowserError::StaleElement`] for a number that no longer exists,
    /// [`BrowserError::NotClickable`] when the element is hidden or covered
    /// (the message names what covers it).
    pub async fn click(&self, index: u32) -> Result<ClickOutcome, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current.clone();
        let args = serde_json::json!({ "index": index, "maxText": MAX_TEXT_CHARS });
        let point: ClickPoint = session.call(&page, "clickPoint", args).await?;
        let (Some(element), false) = (point.el, point.stale) else {
            return Err(BrowserError::StaleElement { index });
        };
        if let Some(reason) = point.not_clickable {
            return Err(BrowserError::NotClickable { index, reason });
        }
        let (Some(x), Some(y)) = (point.x, point.y) else {
            return Err(BrowserError::script("the click point is missing"));
        };
        let expect_popup = point
            .target
            .as_deref()
            .is_some_and(|t| !t.is_empty() && t != "_self" && t != "_top" && t != "_parent");
        let watch = session.watch(&page).await?;
        session.front(&page).await?;
        session
            .mouse(&page, DispatchMouseEventType::MouseMoved, x, y)
            .await?;
        session
            .mouse(&page, DispatchMouseEventType::MousePressed, x, y)
            .await?;
        session
            .mouse(&page, DispatchMouseEventType::MouseReleased, x, y)
            .await?;
        let effects = session.settle(watch, &page, expect_popup).await?;
        Ok(ClickOutcome {
            element,
            x,
            y,
            effects,
        })
    }

    /// Types `text` into element `index` (an input, a textarea, a
    /// contenteditable, or an element holding one): focuses it, selects its
    /// content when `clear` (so the text replaces it; an empty text then
    /// deletes it), inserts the text as trusted input (any Unicode, emoji
    /// included, through `Input.insertText`: frameworks such as React see
    /// ordinary input events), and reads the value back.
    ///
    /// # Errors
    ///
    /// [`BrowserError::StaleElement`], or [`BrowserError::NotEditable`] for
    /// an element that takes no text (a button, a checkbox, a disabled or
    /// read-only field).
    pub async fn type_text(
        &self,
        index: u32,
        text: &str,
        clear: bool,
    ) -> Result<TypeOutcome, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current.clone();
        let args = serde_json::json!({
            "index": index,
            "clear": clear,
            "text": text,
            "maxText": MAX_TEXT_CHARS,
        });
        let focus: FocusResult = session.call(&page, "focusField", args).await?;
        if focus.stale {
            return Err(BrowserError::StaleElement { index });
        }
        if let Some(element) = focus.not_editable {
            return Err(BrowserError::NotEditable { index, element });
        }
        let Some(element) = focus.el else {
            return Err(BrowserError::StaleElement { index });
        };
        let expected = if clear {
            text.to_owned()
        } else {
            format!("{}{text}", focus.before)
        };
        if focus.done {
            let value = focus.value.unwrap_or_default();
            let matches = value == text;
            return Ok(TypeOutcome {
                element,
                value,
                matches,
            });
        }
        session.front(&page).await?;
        if !text.is_empty() {
            session
                .exec(&page, InsertTextParams::new(text), "typing")
                .await?;
        } else if clear && !focus.empty {
            let delete = parse_keys("Delete")?;
            for chord in &delete {
                session.key(&page, chord).await?;
            }
        }
        let args = serde_json::json!({ "index": index });
        let read: ReadResult = session.call(&page, "readField", args).await?;
        let (Some(value), false) = (read.value, read.stale) else {
            return Err(BrowserError::StaleElement { index });
        };
        // A contenteditable's text can gain a trailing newline.
        let matches = value == expected || value.trim_end() == expected.trim_end();
        Ok(TypeOutcome {
            element,
            value,
            matches,
        })
    }

    /// Presses keys on the focused element: one combination (`"Enter"`,
    /// `"Control+a"`, `"Shift+Tab"`) or several separated by spaces
    /// (`"Tab Tab Enter"`). Names follow the DOM `key` values (`Escape`,
    /// `ArrowDown`, `PageDown`, `F5`...), with common aliases (`Ctrl`,
    /// `Esc`, `Return`, `Space`, `Up`...). A navigation or a tab the keys
    /// cause is handled as for [`click`](Self::click).
    ///
    /// # Errors
    ///
    /// [`BrowserError::InvalidInput`] for an unknown key name.
    pub async fn press_keys(&self, keys: &str) -> Result<Effects, BrowserError> {
        let chords = parse_keys(keys)?;
        let mut session = self.live().await?;
        let page = session.current.clone();
        let watch = session.watch(&page).await?;
        session.front(&page).await?;
        for chord in &chords {
            session.key(&page, chord).await?;
        }
        session.settle(watch, &page, false).await
    }

    /// Loads `url` in the current tab and waits for it to load. A URL
    /// without a scheme gets `https://` (`http://` for `localhost` and
    /// loopback addresses). A tab whose page is stuck in a script (it does
    /// not answer within two seconds) cannot be navigated away from; it is
    /// replaced by a new tab at `url` (with a new tab id).
    ///
    /// # Errors
    ///
    /// [`BrowserError::Blocked`] when the [policy](Self::set_policy) does
    /// not allow the URL (nothing is loaded), [`BrowserError::Navigation`]
    /// when the page cannot be loaded (the message carries Chromium's
    /// reason; a redirect the policy stopped is
    /// `net::ERR_BLOCKED_BY_CLIENT`, and [`take_blocked`](Self::take_blocked)
    /// says which hop), [`BrowserError::Timeout`] past the navigation time
    /// limit (the page may still be usable).
    pub async fn navigate(&self, url: &str) -> Result<PageInfo, BrowserError> {
        let url = normalize_url(url)?;
        self.check_policy(&url)?;
        let mut session = self.live().await?;
        let page = session.current.clone();
        // A fragment of the current document scrolls within it: Chromium
        // fires no load event, and chromiumoxide's navigation (which waits
        // for one) would hang. The frame's URL comes from the handler, not
        // the renderer, so a page busy in a script cannot stall this.
        let current = page.url().await.ok().flatten().unwrap_or_default();
        if url.contains('#') && strip_fragment(&url) == strip_fragment(&current) {
            let expression = format!("location.href = {}", serde_json::Value::from(url.as_str()));
            let moved = session.eval_raw(&page, &expression).await;
            moved.map_err(|f| session.classify(f, "scrolling to the fragment"))?;
            return session.page_info(&page).await;
        }
        // A page stuck in a script cannot run its unload handlers, and
        // Chromium waits for them before leaving the page: a navigation in
        // that tab would never finish. Such a tab (one that does not answer
        // a trivial call within a moment) is replaced by a new tab at `url`.
        if tokio::time::timeout(HUNG_PROBE, session.eval_in(&page, None, "1"))
            .await
            .is_err()
        {
            return session.replace_hung_tab(&page, &url).await;
        }
        // chromiumoxide waits for the new document's load event itself.
        let limit = session.config.navigation_timeout;
        let navigation = page.execute(NavigateParams::new(url.clone()));
        let outcome = match tokio::time::timeout(limit + NAVIGATION_MARGIN, navigation).await {
            Ok(Ok(response)) => Ok(response.result),
            Ok(Err(CdpError::Timeout)) | Err(_) => Err(Fail::Elapsed(limit)),
            Ok(Err(e)) => Err(Fail::Cdp(e)),
        };
        let returned = outcome.map_err(|f| session.classify(f, &format!("loading {url}")))?;
        if let Some(detail) = returned.error_text.filter(|t| !t.is_empty()) {
            return Err(BrowserError::Navigation { url, detail });
        }
        session.page_info(&page).await
    }

    /// Goes back one page in the current tab's history and waits for the
    /// page to be ready.
    ///
    /// # Errors
    ///
    /// [`BrowserError::NoHistory`] on the tab's first page (the blank page
    /// a tab opens with does not count as one).
    pub async fn go_back(&self) -> Result<PageInfo, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current.clone();
        let history = session
            .exec(
                &page,
                GetNavigationHistoryParams::default(),
                "reading the history",
            )
            .await?;
        let target = history.current_index - 1;
        // The blank page a tab starts on is not a page to go back to (and
        // Chromium detaches the session on the way back to it).
        let entry = usize::try_from(target)
            .ok()
            .and_then(|i| history.entries.get(i))
            .filter(|e| e.url != "about:blank")
            .ok_or(BrowserError::NoHistory)?;
        session
            .exec(
                &page,
                NavigateToHistoryEntryParams::new(entry.id),
                "going back",
            )
            .await?;
        // The history index moves when the earlier page commits (a page
        // from the back-forward cache fires no load event), then the
        // document must be complete.
        let deadline = Instant::now() + session.config.navigation_timeout;
        loop {
            let now = session
                .exec(
                    &page,
                    GetNavigationHistoryParams::default(),
                    "reading the history",
                )
                .await?;
            if now.current_index == target {
                let info: serde_json::Value = session
                    .call(&page, "pageInfo", serde_json::Value::Null)
                    .await?;
                if info["ready"] == "complete" {
                    break;
                }
            }
            if Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
        session.page_info(&page).await
    }

    /// Scrolls by `pages` viewport heights, down or up: the page, or (with
    /// `index`) the scrollable container holding that element. When the
    /// document itself does not scroll (an app shell), the largest visible
    /// scrollable element stands in for the page.
    ///
    /// # Errors
    ///
    /// [`BrowserError::InvalidInput`] for a non-positive or absurd number of
    /// pages, [`BrowserError::StaleElement`] for a gone element.
    pub async fn scroll(
        &self,
        pages: f64,
        down: bool,
        index: Option<u32>,
    ) -> Result<ScrollOutcome, BrowserError> {
        if !(pages.is_finite() && pages > 0.0 && pages <= 100.0) {
            return Err(BrowserError::invalid(format!(
                "cannot scroll {pages} pages: give a number of pages between 0 and 100 \
                 (fractions such as 0.5 are fine) and the direction separately"
            )));
        }
        let mut session = self.live().await?;
        let page = session.current.clone();
        let args = serde_json::json!({ "index": index, "pages": pages, "down": down });
        let result: ScrollResult = session.call(&page, "scroll", args).await?;
        match (result.stale, result.outcome) {
            (false, Some(outcome)) => Ok(outcome),
            _ => Err(BrowserError::StaleElement {
                index: index.unwrap_or_default(),
            }),
        }
    }

    /// A PNG screenshot of the current tab's viewport. With secrets in the
    /// [policy](Self::set_policy), text fields and elements holding one
    /// draw bullets while the screenshot is taken.
    ///
    /// # Errors
    ///
    /// A dead session or a time limit.
    pub async fn screenshot(&self) -> Result<Vec<u8>, BrowserError> {
        Ok(self.screenshot_masked().await?.0)
    }

    /// [`screenshot`](Self::screenshot), and how many elements were masked
    /// because they hold a secret.
    pub(crate) async fn screenshot_masked(&self) -> Result<(Vec<u8>, u32), BrowserError> {
        let secrets = self.policy().map(|p| p.secret_values()).unwrap_or_default();
        let mut session = self.live().await?;
        let page = session.current.clone();
        let mut masked = 0;
        if !secrets.is_empty() {
            let args = serde_json::json!({ "values": secrets });
            let reply: serde_json::Value = session.call(&page, "mask", args).await?;
            masked = reply["masked"]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or_default();
        }
        let params = chromiumoxide::page::ScreenshotParams::builder()
            .format(CaptureScreenshotFormat::Png)
            .build();
        let limit = session.config.command_timeout;
        let shot = match tokio::time::timeout(limit, page.screenshot(params)).await {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(e)) => Err(Fail::Cdp(e)),
            Err(_) => Err(Fail::Elapsed(limit)),
        };
        if masked > 0 {
            // Best effort: a page that navigated meanwhile has nothing left
            // to unmask.
            let _: Result<serde_json::Value, _> =
                session.call(&page, "unmask", serde_json::Value::Null).await;
        }
        let bytes = shot.map_err(|f| session.classify(f, "taking a screenshot"))?;
        Ok((bytes, masked))
    }

    /// The current tab's URL and title.
    ///
    /// # Errors
    ///
    /// A dead or closed session.
    pub async fn page_info(&self) -> Result<PageInfo, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current.clone();
        session.page_info(&page).await
    }

    /// Evaluates a JavaScript expression in the current tab's main frame
    /// (promises are awaited) and returns its JSON value (`null` for values
    /// JSON cannot hold).
    ///
    /// # Errors
    ///
    /// [`BrowserError::Script`] with the exception's message when it throws.
    pub async fn evaluate(&self, expression: &str) -> Result<serde_json::Value, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current.clone();
        let result = session.eval_raw(&page, expression).await;
        result.map_err(|f| session.classify(f, "evaluating the script"))
    }
}

impl Browser {
    /// [`evaluate`](Self::evaluate), then waits for what the script started
    /// (a navigation, a new tab) as [`click`](Self::click) does.
    pub(crate) async fn evaluate_settled(
        &self,
        expression: &str,
    ) -> Result<(serde_json::Value, Effects), BrowserError> {
        let mut session = self.live().await?;
        let page = session.current.clone();
        let watch = session.watch(&page).await?;
        let result = session.eval_raw(&page, expression).await;
        let value = result.map_err(|f| session.classify(f, "evaluating the script"))?;
        let effects = session.settle(watch, &page, false).await?;
        Ok((value, effects))
    }
}

/// The URL without its `#fragment`.
fn strip_fragment(url: &str) -> &str {
    url.split_once('#').map_or(url, |(base, _)| base)
}

/// Completes a URL the way an address bar would.
pub(crate) fn normalize_url(url: &str) -> Result<String, BrowserError> {
    let url = url.trim();
    if url.is_empty() {
        return Err(BrowserError::invalid("the URL is empty"));
    }
    let lower = url.to_ascii_lowercase();
    let has_scheme = lower.contains("://")
        || [
            "about:",
            "data:",
            "file:",
            "javascript:",
            "chrome:",
            "blob:",
        ]
        .iter()
        .any(|s| lower.starts_with(s));
    if has_scheme {
        return Ok(url.to_owned());
    }
    let host = lower.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    let local = host == "localhost" || host.starts_with("127.") || host == "[::1]";
    Ok(format!("{}://{url}", if local { "http" } else { "https" }))
}

#[cfg(test)]
mod tests {
    use super::normalize_url;

    #[test]
    fn urls_are_completed_like_an_address_bar() {
        assert_eq!(normalize_url("example.com").unwrap(), "https://example.com");
        assert_eq!(
            normalize_url("localhost:8080/x").unwrap(),
            "http://localhost:8080/x"
        );
        assert_eq!(
            normalize_url("127.0.0.1:3000").unwrap(),
            "http://127.0.0.1:3000"
        );
        assert_eq!(normalize_url(" http://a.b/c ").unwrap(), "http://a.b/c");
        assert_eq!(normalize_url("about:blank").unwrap(), "about:blank");
        assert!(normalize_url("  ").is_err());
    }
}
