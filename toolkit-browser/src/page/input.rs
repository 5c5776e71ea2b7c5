//! Trusted input: clicks, typing and key presses, and what they cause (a
//! navigation, a new tab). Clicks and keys go through the DevTools `Input`
//! domain, so the page sees real (`isTrusted`) events, exactly as from a
//! person.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams, MouseButton,
};
use chromiumoxide::cdp::browser_protocol::page::{
    BringToFrontParams, ClientNavigationDisposition, EventFileChooserOpened,
    EventFrameRequestedNavigation, EventFrameStoppedLoading, EventLoadEventFired,
    EventNavigatedWithinDocument, FrameId, SetInterceptFileChooserDialogParams,
};
use chromiumoxide::cdp::browser_protocol::target::{EventTargetCreated, TargetId};
use chromiumoxide::listeners::EventStream;
use futures_util::{FutureExt as _, StreamExt};
use serde::{Deserialize, Serialize};

use super::map::{Element, MAX_TEXT_CHARS};
use super::navigation::page_info;
use super::{live, live_element};
use crate::browser::{Browser, Session, TabInfo};
use crate::error::BrowserError;
use crate::keys::{Chord, parse_keys};

/// How long to wait for the tab a click opened to appear, once the page has
/// asked for it (a `target=_blank` link: the browser creates the tab about
/// 80 ms after the click).
const POPUP_WAIT: Duration = Duration::from_secs(3);

/// How long to collect the events an input caused, once a round trip to
/// the page has flushed them (see `await_effects`).
pub(crate) const DRAIN: Duration = Duration::from_millis(3);

/// The same after a click on a `javascript:` link, whose script runs in a
/// later task of the page.
const SCRIPT_URL_DRAIN: Duration = Duration::from_millis(250);

/// How long pressing keys waits for the page to run the tasks the keys
/// posted (see `Session::turn`).
const TURN_LIMIT: Duration = Duration::from_millis(100);

/// How long a click on a page with a file input in its document waits for
/// the file chooser it may have opened, besides the ordering below: a
/// margin for a page that opens it a moment after the click. A chooser
/// the click itself opens is seen without it, wherever its input lives
/// (a shadow root, or no document at all): the browser sends its event
/// before it answers the command that switches interception off, which
/// is sent after the click's round trip to the page.
const CHOOSER_SETTLE: Duration = Duration::from_millis(150);

/// How long an action waits for a frame it made load another document.
const FRAME_WAIT: Duration = Duration::from_secs(5);

/// What an action caused besides its own effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[non_exhaustive]
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
#[non_exhaustive]
pub struct Clicked {
    /// The element clicked, as it was just before the click.
    pub element: Element,
    /// Where the click landed, in top-level viewport CSS pixels.
    pub x: f64,
    /// Where the click landed, in top-level viewport CSS pixels.
    pub y: f64,
    /// New tab, navigation, final URL.
    pub effects: Effects,
    /// The click opened a file chooser (a 📎 button whose script clicks a
    /// hidden file input). It was not shown: files are chosen with
    /// [`Browser::upload_file`] on the same element.
    pub file_chooser: bool,
}

/// The result of [`Browser::type_text`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Typed {
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

/// Where a click on an element lands (the page script's `clickPoint`).
#[derive(Deserialize)]
pub(super) struct ClickPoint {
    #[serde(default)]
    pub(super) stale: bool,
    pub(super) el: Option<Element>,
    #[serde(rename = "notClickable")]
    pub(super) not_clickable: Option<String>,
    pub(super) x: Option<f64>,
    pub(super) y: Option<f64>,
    /// Whether the look scrolled the element into view.
    #[serde(default)]
    pub(super) scrolled: bool,
    target: Option<String>,
    /// The element's document has a file input, so a click may open a
    /// file chooser.
    #[serde(default)]
    files: bool,
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

/// Event subscriptions taken before an action, so that nothing it causes
/// can be missed (gotcha: subscribing after the action races it).
pub(crate) struct Watch {
    created: EventStream<EventTargetCreated>,
    requested: EventStream<EventFrameRequestedNavigation>,
    loaded: EventStream<EventLoadEventFired>,
    stopped: EventStream<EventFrameStoppedLoading>,
    within: EventStream<EventNavigatedWithinDocument>,
}

/// Subscribes to the events an action on `page` may cause, before the
/// action, for [`await_effects`] to read after it.
pub(crate) async fn watch(session: &mut Session, page: &Page) -> Result<Watch, BrowserError> {
    let subscribed = async {
        Ok::<_, chromiumoxide::error::CdpError>(Watch {
            created: session.browser_events::<EventTargetCreated>().await?,
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
    subscribed.map_err(|e| session.classify(e.into(), "watching the page"))
}

/// Brings `page`'s tab to the front before input is sent to it, as a
/// person's input would find it.
pub(super) async fn front(session: &mut Session, page: &Page) -> Result<(), BrowserError> {
    session
        .exec(
            page,
            BringToFrontParams::default(),
            "bringing the tab to the front",
        )
        .await
        .map(drop)
}

/// After an action: notices a tab it opened (and switches to it) or a
/// navigation it started (and waits for the new document to load).
///
/// Renderer-side events caused by the input (a navigation request)
/// reach the connection before the answer to any later call to that
/// renderer, so one round trip (reading the URL, needed anyway) flushes
/// them; a short drain then collects what the handler has forwarded.
/// A form the input sent (`form_sent`) requests its navigation only in a
/// task of its own, which may run after that round trip: its request is
/// waited for.
pub(crate) async fn await_effects(
    session: &mut Session,
    mut watch: Watch,
    page: &Page,
    expect_popup: bool,
    drain: Duration,
    form_sent: bool,
) -> Result<Effects, BrowserError> {
    let opener = page.target_id().clone();
    let main_frame = page.mainframe().await.ok().flatten();
    // Its answer is also the URL reported when nothing else happened.
    let flushed = page_info(session, page).await;

    // Collect what has arrived: a navigation request (its disposition
    // says whether a new tab is coming) and a tab already created.
    let mut popup: Option<TargetId> = None;
    let mut navigating = false;
    // A frame of the page that started loading another document (a
    // form posted into it, a link targeting it).
    let mut framed: Option<FrameId> = None;
    // Frames that got a process of their own (a frame from another
    // site, whose later events go to its own target).
    let mut frame_targets: Vec<String> = Vec::new();
    let mut new_window = expect_popup;
    let note_created = |ev: &EventTargetCreated, popup: &mut Option<TargetId>| {
        let info = &ev.target_info;
        let ours = info.opener_id.as_ref().is_none_or(|o| *o == opener);
        if info.r#type == "page" && ours && popup.is_none() {
            *popup = Some(info.target_id.clone());
        }
    };
    let drained = tokio::time::sleep(drain);
    tokio::pin!(drained);
    loop {
        tokio::select! {
            // What has arrived is read before the drain can end the loop.
            biased;
            Some(ev) = watch.requested.next() => {
                let main = main_frame.as_ref().is_none_or(|f| *f == ev.frame_id);
                match ev.disposition {
                    ClientNavigationDisposition::CurrentTab if main => navigating = true,
                    ClientNavigationDisposition::CurrentTab => {
                        framed.get_or_insert(ev.frame_id.clone());
                    }
                    ClientNavigationDisposition::NewTab
                    | ClientNavigationDisposition::NewWindow => new_window = true,
                    _ => {}
                }
            }
            Some(ev) = watch.created.next() => {
                if ev.target_info.r#type == "iframe" {
                    frame_targets.push(ev.target_info.target_id.as_ref().to_owned());
                }
                note_created(&ev, &mut popup);
            }
            () = &mut drained => break,
        }
    }
    if form_sent && !navigating && !new_window && framed.is_none() {
        let requested = async {
            while let Some(ev) = watch.requested.next().await {
                let main = main_frame.as_ref().is_none_or(|f| *f == ev.frame_id);
                if main && ev.disposition == ClientNavigationDisposition::CurrentTab {
                    return true;
                }
            }
            false
        };
        navigating = tokio::time::timeout(FRAME_WAIT, requested)
            .await
            .unwrap_or(false);
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
        let new_page = session.page_for(&id).await?;
        wait_ready(session, &new_page).await;
        session.adopt(new_page.clone()).await?;
        let tabs = session.tab_list().await?;
        effects.new_tab = tabs.into_iter().find(|t| t.current);
        effects.url = page_info(session, &new_page).await?.url;
        return Ok(effects);
    }
    if navigating {
        let limit = session.config().navigation_timeout;
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
        effects.url = page_info(session, page).await?.url;
    } else {
        if let Some(frame) = framed.filter(|f| !frame_targets.iter().any(|t| t == f.as_ref())) {
            // Waited for (briefly), so that what the frame's load
            // caused (a load the policy stopped) is this action's. A
            // frame from another site finishes loading in a process of
            // its own, whose events this tab's session does not get:
            // its target appearing (once the load was allowed) ends
            // the wait too.
            let stopped = async {
                loop {
                    tokio::select! {
                        Some(ev) = watch.stopped.next() => {
                            if ev.frame_id == frame {
                                break;
                            }
                        }
                        Some(ev) = watch.created.next() => {
                            if ev.target_info.target_id.as_ref() == frame.as_ref() {
                                break;
                            }
                        }
                        else => break,
                    }
                }
            };
            let _ = tokio::time::timeout(FRAME_WAIT, stopped).await;
        }
        effects.url = match flushed {
            Ok(info) => info.url,
            Err(_) => page_info(session, page).await?.url,
        };
    }
    Ok(effects)
}

/// Waits (briefly) until a freshly opened tab has a document worth
/// mapping: past `about:blank` and loaded.
async fn wait_ready(session: &mut Session, page: &Page) {
    let deadline = Instant::now() + session.config().navigation_timeout.min(POPUP_WAIT * 2);
    while Instant::now() < deadline {
        // Its page load was stopped: it stays blank, and the action
        // reports why.
        if session.load_stopped(page.target_id()) {
            return;
        }
        if let Ok(info) = session
            .call::<serde_json::Value>(page, "pageInfo", serde_json::Value::Null)
            .await
            && info["ready"] == "complete"
            && info["url"] != "about:blank"
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn mouse(
    session: &mut Session,
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
    session.exec(page, params, "clicking").await.map(drop)
}

/// Switches the interception of file choosers (`Page.setInterceptFileChooserDialog`)
/// on or off; the events of the choosers it catches, from now on.
async fn intercept_choosers(
    session: &mut Session,
    page: &Page,
    on: bool,
) -> Result<EventStream<EventFileChooserOpened>, BrowserError> {
    let opened = page
        .event_listener::<EventFileChooserOpened>()
        .await
        .map_err(|e| session.classify(e.into(), "watching for a file chooser"))?;
    session
        .exec(
            page,
            SetInterceptFileChooserDialogParams::new(on),
            "intercepting the file chooser",
        )
        .await?;
    Ok(opened)
}

async fn key(session: &mut Session, page: &Page, chord: &Chord) -> Result<(), BrowserError> {
    for event in chord.events() {
        session.exec(page, event, "pressing keys").await?;
    }
    Ok(())
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
    pub async fn click(&self, index: u32) -> Result<Clicked, BrowserError> {
        let (mut outcome, chooser) = self.click_watching(index, None).await?;
        // `chooser` is what the click opened, intercepted: a chooser
        // nobody answers stays pending in the page, which is what a
        // person who has not picked a file yet sees too.
        outcome.file_chooser = chooser.is_some();
        Ok(outcome)
    }

    /// [`click`](Self::click), with the file chooser it opens intercepted
    /// (never shown) and returned with the tab it opened in (the tab the
    /// click happened in, which may no longer be current). A chooser the
    /// click opened in its own task is always seen; one opened later is
    /// waited for at most `chooser_wait` after the click settled (by
    /// default, a short while on a page whose document has a file input,
    /// not at all on others).
    pub(crate) async fn click_watching(
        &self,
        index: u32,
        chooser_wait: Option<Duration>,
    ) -> Result<(Clicked, Option<(Page, Arc<EventFileChooserOpened>)>), BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        let args = serde_json::json!({ "index": index, "maxText": MAX_TEXT_CHARS });
        let point: ClickPoint = session.call(&page, "clickPoint", args).await?;
        let element = live_element(index, point.stale, point.el, session.redactor())?;
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
        let watch = watch(&mut session, &page).await?;
        front(&mut session, &page).await?;
        let mut choosers = intercept_choosers(&mut session, &page, true).await?;
        let pressed = async {
            mouse(
                &mut session,
                &page,
                DispatchMouseEventType::MouseMoved,
                x,
                y,
            )
            .await?;
            mouse(
                &mut session,
                &page,
                DispatchMouseEventType::MousePressed,
                x,
                y,
            )
            .await?;
            mouse(
                &mut session,
                &page,
                DispatchMouseEventType::MouseReleased,
                x,
                y,
            )
            .await
        }
        .await;
        if let Err(error) = pressed {
            let _ = intercept_choosers(&mut session, &page, false).await;
            return Err(error);
        }
        // A `javascript:` link runs its script in a task of its own, after
        // the click's round trip: what it starts (a navigation) comes later
        // than what a plain link starts, and must still count as the
        // click's.
        let script_url = element.href.as_deref().is_some_and(|h| {
            h.trim_start()
                .to_ascii_lowercase()
                .starts_with("javascript:")
        });
        let drain = if script_url { SCRIPT_URL_DRAIN } else { DRAIN };
        // Asked before anything else, while the form's navigation (if the
        // click sent one) has not replaced the document yet; a document
        // already replaced answers from the new one, and its navigation
        // was requested before the answer came.
        let form_sent = session
            .call::<serde_json::Value>(&page, "submitted", serde_json::json!({}))
            .await
            .is_ok_and(|sent| sent["navigates"] == true);
        let settled =
            await_effects(&mut session, watch, &page, expect_popup, drain, form_sent).await;
        // A margin for a chooser opened a moment after the click; the
        // session is not needed meanwhile.
        drop(session);
        let chooser_wait = chooser_wait.unwrap_or(if point.files {
            CHOOSER_SETTLE
        } else {
            Duration::ZERO
        });
        let mut chooser = if chooser_wait.is_zero() {
            None
        } else {
            tokio::time::timeout(chooser_wait, choosers.next())
                .await
                .ok()
                .flatten()
        };
        // Left on, it would keep the page's later choosers from a person
        // (a window that is not headless). A tab the click closed has
        // nothing left to switch off.
        let mut session = self.live().await?;
        if let Err(error) = intercept_choosers(&mut session, &page, false).await
            && error.is_fatal()
        {
            return Err(error);
        }
        // The chooser the click opened (in its own task, so before the
        // page answered the settling round trip) reached the browser
        // before that command did, and the browser sent its event before
        // its answer: it is in the stream now, whatever input opened it.
        if chooser.is_none() {
            chooser = choosers.next().now_or_never().flatten();
        }
        let chooser = chooser.map(|event| (page.clone(), event));
        let effects = settled?;
        Ok((
            Clicked {
                element,
                x,
                y,
                effects,
                file_chooser: false,
            },
            chooser,
        ))
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
    ) -> Result<Typed, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        let args = serde_json::json!({
            "index": index,
            "clear": clear,
            "text": text,
            "maxText": MAX_TEXT_CHARS,
        });
        let focus: FocusResult = session.call(&page, "focusField", args).await?;
        live(index, focus.stale, Some(()))?;
        if let Some(element) = focus.not_editable {
            return Err(BrowserError::NotEditable { index, element });
        }
        let element = live_element(index, false, focus.el, session.redactor())?;
        let expected = if clear {
            text.to_owned()
        } else {
            format!("{}{text}", focus.before)
        };
        if focus.done {
            let value = focus.value.unwrap_or_default();
            let matches = value == text;
            let value = session.redactor().redact(&value).into_owned();
            return Ok(Typed {
                element,
                value,
                matches,
            });
        }
        front(&mut session, &page).await?;
        if !text.is_empty() {
            session
                .exec(&page, InsertTextParams::new(text), "typing")
                .await?;
        } else if clear && !focus.empty {
            let delete = parse_keys("Delete")?;
            for chord in &delete {
                key(&mut session, &page, chord).await?;
            }
        }
        let args = serde_json::json!({ "index": index });
        let read: ReadResult = session.call(&page, "readField", args).await?;
        let value = live(index, read.stale, read.value)?;
        // A contenteditable's text can gain a trailing newline.
        let matches = value == expected || value.trim_end() == expected.trim_end();
        // Compared as typed, returned as the model may see it.
        let value = session.redactor().redact(&value).into_owned();
        Ok(Typed {
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
        let page = session.current();
        let watch = watch(&mut session, &page).await?;
        front(&mut session, &page).await?;
        for chord in &chords {
            key(&mut session, &page, chord).await?;
        }
        // Enter in a form field submits the form from a task of its own,
        // whose navigation is requested only once it has run. A click on
        // a submit button posts one too, but right after a click the page
        // runs a timer only after its next frame (16 ms more per click),
        // so a click asks the page whether it sent a form instead.
        session.turn(&page, TURN_LIMIT).await;
        await_effects(&mut session, watch, &page, false, DRAIN, false).await
    }
}

impl Browser {}
