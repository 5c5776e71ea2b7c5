//! The mouse beyond clicks: hovering, pressing and holding, dragging. Each
//! is real input through the DevTools `Input` domain, so the page sees
//! trusted mouse and pointer events as from a person; a native HTML5 drag
//! and drop, which Chromium runs as a drag of the operating system, is
//! intercepted (`Input.setInterceptDrags`) and carried to its target with
//! `Input.dispatchDragEvent`.

use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchDragEventParams, DispatchDragEventType, DispatchMouseEventParams,
    DispatchMouseEventType, DragData, EventDragIntercepted, MouseButton, SetInterceptDragsParams,
};
use chromiumoxide::listeners::EventStream;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use super::input::{ClickPoint, DRAIN, Effects, Watch, await_effects, front, watch};
use super::live_element;
use super::map::{Element, MAX_TEXT_CHARS};
use crate::browser::{Browser, Session};
use crate::error::BrowserError;

/// The longest press [`Browser::hold`] makes.
pub const MAX_HOLD: Duration = Duration::from_secs(10);

/// The farthest [`Browser::drag`] moves by an offset, in CSS pixels along
/// each axis: beyond any screen.
pub const MAX_DRAG_OFFSET: f64 = 10_000.0;

/// How many moves a drag makes on its way: enough for a page that follows
/// the pointer (a slider, a sortable list) to see it pass over what lies
/// between.
const DRAG_STEPS: u32 = 12;

/// How long a drag waits, after each move, for the browser to say it
/// started a native drag (which it does once the mouse has moved a few
/// pixels with the button down on something draggable).
const DRAG_START_WAIT: Duration = Duration::from_millis(15);

/// How long a hover leaves the page to react (a menu that opens after a
/// short delay or a transition) before comparing what it shows.
const HOVER_SETTLE: Duration = Duration::from_millis(200);

/// What [`Browser::hover`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Hovered {
    /// The element hovered, as it was before.
    pub element: Element,
    /// How many elements the page's own document (not its frames or
    /// shadow roots) showed before the hover.
    pub shown_before: u32,
    /// How many it showed afterwards.
    pub shown_after: u32,
    /// A navigation or tab the hover caused (rare, but a page may).
    pub effects: Effects,
}

/// What [`Browser::hold`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Held {
    /// The element held, as it was before.
    pub element: Element,
    /// How long the button was held down.
    pub held: Duration,
    /// What releasing it caused (a navigation, a new tab).
    pub effects: Effects,
}

/// Where [`Browser::drag`] drops.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum DragEnd {
    /// Onto the element of this number, at the point a click on it would
    /// land.
    Element(u32),
    /// By this many CSS pixels to the right (`dx`) and down (`dy`).
    Offset {
        /// Pixels to the right (negative: to the left).
        dx: f64,
        /// Pixels down (negative: up).
        dy: f64,
    },
}

/// What [`Browser::drag`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Dragged {
    /// The element dragged, as it was before.
    pub element: Element,
    /// The element dropped onto, for [`DragEnd::Element`].
    pub target: Option<Element>,
    /// Where the drag started, in top-level viewport CSS pixels.
    pub from: (f64, f64),
    /// Where it ended.
    pub to: (f64, f64),
    /// Whether the page started a native HTML5 drag and drop (a
    /// `draggable` element, a link, an image), carried as drag events;
    /// otherwise the page followed the mouse events itself.
    pub native: bool,
    /// What the drop caused (a navigation, a new tab).
    pub effects: Effects,
}

#[derive(Deserialize)]
struct Shown {
    shown: u32,
}

/// Scrolls element `index` into view and finds where a click on it
/// lands, as [`Browser::click`] does.
async fn point(
    session: &mut Session,
    page: &Page,
    index: u32,
) -> Result<(Element, f64, f64), BrowserError> {
    look(session, page, index).await.map(|(point, _)| point)
}

/// [`point`], and whether the look had to scroll.
async fn look(
    session: &mut Session,
    page: &Page,
    index: u32,
) -> Result<((Element, f64, f64), bool), BrowserError> {
    let args = serde_json::json!({ "index": index, "maxText": MAX_TEXT_CHARS });
    let point: ClickPoint = session.call(page, "clickPoint", args).await?;
    let element = live_element(index, point.stale, point.el, session.redactor())?;
    if let Some(reason) = point.not_clickable {
        return Err(BrowserError::NotClickable { index, reason });
    }
    match (point.x, point.y) {
        (Some(x), Some(y)) => Ok(((element, x, y), point.scrolled)),
        _ => Err(BrowserError::script("the element's point is missing")),
    }
}

/// Starts watching for what the pointer causes, brings the tab to the
/// front and moves the mouse to `at`, as a person's hand arrives.
async fn move_onto(
    session: &mut Session,
    page: &Page,
    at: (f64, f64),
) -> Result<Watch, BrowserError> {
    let watch = watch(session, page).await?;
    front(session, page).await?;
    pointer(session, page, DispatchMouseEventType::MouseMoved, at, false).await?;
    Ok(watch)
}

/// One mouse event at (x, y), the left button down during it when
/// `down` (a press, a move while pressed).
async fn pointer(
    session: &mut Session,
    page: &Page,
    kind: DispatchMouseEventType,
    (x, y): (f64, f64),
    down: bool,
) -> Result<(), BrowserError> {
    let mut params = DispatchMouseEventParams::new(kind.clone(), x, y);
    let moved = kind == DispatchMouseEventType::MouseMoved;
    params.button = Some(if moved && !down {
        MouseButton::None
    } else {
        MouseButton::Left
    });
    params.buttons = Some(i64::from(
        down && kind != DispatchMouseEventType::MouseReleased,
    ));
    if !moved {
        params.click_count = Some(1);
    }
    session
        .exec(page, params, "moving the mouse")
        .await
        .map(drop)
}

async fn drag_event(
    session: &mut Session,
    page: &Page,
    kind: DispatchDragEventType,
    (x, y): (f64, f64),
    data: &DragData,
) -> Result<(), BrowserError> {
    let params = DispatchDragEventParams::new(kind, x, y, data.clone());
    session.exec(page, params, "dragging").await.map(drop)
}

/// Presses at `from`, moves to `to` in steps and releases there. A
/// native drag the browser starts on the way is carried on as drag
/// events (enter, over at each later step, drop). Whether there was
/// one.
async fn drag_path(
    session: &mut Session,
    page: &Page,
    intercepted: &mut EventStream<EventDragIntercepted>,
    from: (f64, f64),
    to: (f64, f64),
) -> Result<bool, BrowserError> {
    pointer(
        session,
        page,
        DispatchMouseEventType::MouseMoved,
        from,
        false,
    )
    .await?;
    pointer(
        session,
        page,
        DispatchMouseEventType::MousePressed,
        from,
        true,
    )
    .await?;
    let mut data: Option<DragData> = None;
    for step in 1..=DRAG_STEPS {
        let t = f64::from(step) / f64::from(DRAG_STEPS);
        let at = (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t);
        match &data {
            Some(data) => {
                drag_event(session, page, DispatchDragEventType::DragOver, at, data).await?;
            }
            None => {
                pointer(session, page, DispatchMouseEventType::MouseMoved, at, true).await?;
                if let Ok(Some(event)) =
                    tokio::time::timeout(DRAG_START_WAIT, intercepted.next()).await
                {
                    drag_event(
                        session,
                        page,
                        DispatchDragEventType::DragEnter,
                        at,
                        &event.data,
                    )
                    .await?;
                    drag_event(
                        session,
                        page,
                        DispatchDragEventType::DragOver,
                        at,
                        &event.data,
                    )
                    .await?;
                    data = Some(event.data.clone());
                }
            }
        }
    }
    if let Some(data) = &data {
        drag_event(session, page, DispatchDragEventType::Drop, to, data).await?;
    }
    pointer(
        session,
        page,
        DispatchMouseEventType::MouseReleased,
        to,
        true,
    )
    .await?;
    Ok(data.is_some())
}

impl Browser {
    /// Moves the mouse onto element `index` (scrolled into view first, at
    /// the point a click would land) without clicking: the page gets
    /// `mouseover`, `mouseenter`, `pointermove` and its `:hover` styles.
    /// The mouse stays there until the next action moves it.
    ///
    /// # Errors
    ///
    /// [`BrowserError::StaleElement`], [`BrowserError::NotClickable`] for
    /// a hidden or covered element.
    pub async fn hover(&self, index: u32) -> Result<Hovered, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        let (element, x, y) = point(&mut session, &page, index).await?;
        let before: Shown = session
            .call(&page, "shownCount", serde_json::json!({}))
            .await?;
        let watch = move_onto(&mut session, &page, (x, y)).await?;
        tokio::time::sleep(HOVER_SETTLE).await;
        let effects = await_effects(&mut session, watch, &page, false, DRAIN, false).await?;
        let after = if effects.navigated || effects.new_tab.is_some() {
            before.shown
        } else {
            let after: Shown = session
                .call(&page, "shownCount", serde_json::json!({}))
                .await?;
            after.shown
        };
        Ok(Hovered {
            element,
            shown_before: before.shown,
            shown_after: after,
            effects,
        })
    }

    /// Presses the left mouse button on element `index` (scrolled into
    /// view first), keeps it down for `duration`, then releases it there:
    /// a press-and-hold control (hold to confirm, a long press) sees one
    /// long press, not a click and a wait.
    ///
    /// # Errors
    ///
    /// [`BrowserError::InvalidInput`] for a duration longer than
    /// [`MAX_HOLD`]; [`BrowserError::StaleElement`];
    /// [`BrowserError::NotClickable`] for a hidden or covered element.
    pub async fn hold(&self, index: u32, duration: Duration) -> Result<Held, BrowserError> {
        if duration > MAX_HOLD {
            return Err(BrowserError::invalid(format!(
                "a press can last at most {} seconds, not {:.1}",
                MAX_HOLD.as_secs(),
                duration.as_secs_f64()
            )));
        }
        let (page, element, at, watch) = {
            let mut session = self.live().await?;
            let page = session.current();
            let (element, x, y) = point(&mut session, &page, index).await?;
            let watch = move_onto(&mut session, &page, (x, y)).await?;
            pointer(
                &mut session,
                &page,
                DispatchMouseEventType::MousePressed,
                (x, y),
                true,
            )
            .await?;
            (page, element, (x, y), watch)
        };
        // The session is free meanwhile: the press is the browser's state.
        let pressed = Pressed {
            page: Some(page.clone()),
            at,
        };
        tokio::time::sleep(duration).await;
        pressed.disarm();
        let mut session = self.live().await?;
        pointer(
            &mut session,
            &page,
            DispatchMouseEventType::MouseReleased,
            at,
            true,
        )
        .await?;
        let effects = await_effects(&mut session, watch, &page, false, DRAIN, false).await?;
        Ok(Held {
            element,
            held: duration,
            effects,
        })
    }

    /// Drags element `index` onto another element or by an offset, like a
    /// person with a mouse: presses on it, moves in steps to the end point
    /// with the button down, releases there. A page that follows pointer
    /// or mouse events (a slider, a sortable list) sees every move; a
    /// native HTML5 drag and drop (a `draggable` element) gets its
    /// `dragstart`, `dragenter`, `dragover` and `drop`, since the browser's
    /// drag is intercepted and carried to the end point as drag events.
    ///
    /// # Errors
    ///
    /// [`BrowserError::StaleElement`]; [`BrowserError::NotClickable`] for
    /// a hidden or covered element; [`BrowserError::InvalidInput`] for an
    /// offset that is not a finite number within [`MAX_DRAG_OFFSET`], or
    /// two elements that do not fit in the view together.
    pub async fn drag(&self, index: u32, end: DragEnd) -> Result<Dragged, BrowserError> {
        if let DragEnd::Offset { dx, dy } = end
            && !(dx.is_finite()
                && dy.is_finite()
                && dx.abs() <= MAX_DRAG_OFFSET
                && dy.abs() <= MAX_DRAG_OFFSET)
        {
            return Err(BrowserError::invalid(format!(
                "a drag moves at most {MAX_DRAG_OFFSET} pixels along each axis; {dx} by {dy} \
                 is not a move that can be made"
            )));
        }
        let mut session = self.live().await?;
        let page = session.current();
        let (element, x, y) = point(&mut session, &page, index).await?;
        let (target, from, to) = match end {
            DragEnd::Offset { dx, dy } => (None, (x, y), (x + dx, y + dy)),
            DragEnd::Element(other) => {
                point(&mut session, &page, other).await?;
                // Bringing the target into view may have scrolled the
                // element away, and the element the target: both are in
                // view at once when a last look at the target, after the
                // element's, scrolls nothing.
                let (_, sx, sy) = point(&mut session, &page, index).await?;
                let ((target, tx2, ty2), scrolled) = look(&mut session, &page, other).await?;
                if scrolled {
                    return Err(BrowserError::invalid(format!(
                        "elements [{index}] and [{other}] do not fit in the view together, so \
                         one cannot be dragged onto the other; drag [{index}] by an offset in \
                         steps instead"
                    )));
                }
                (Some(target), (sx, sy), (tx2, ty2))
            }
        };
        let mut intercepted = page
            .event_listener::<EventDragIntercepted>()
            .await
            .map_err(|e| session.classify(e.into(), "watching for a drag"))?;
        let watch = watch(&mut session, &page).await?;
        front(&mut session, &page).await?;
        session
            .exec(
                &page,
                SetInterceptDragsParams::new(true),
                "intercepting drags",
            )
            .await?;
        let dragged = drag_path(&mut session, &page, &mut intercepted, from, to).await;
        if dragged.is_err() {
            // Left pressed, the button would turn the next action's moves
            // into a drag.
            let _ = pointer(
                &mut session,
                &page,
                DispatchMouseEventType::MouseReleased,
                to,
                true,
            )
            .await;
        }
        // Left on, it would keep a person's (or a later action's) drags
        // from reaching the page.
        let released = session
            .exec(
                &page,
                SetInterceptDragsParams::new(false),
                "releasing drags",
            )
            .await;
        let native = dragged?;
        // A tab the drop closed has nothing left to switch off.
        if let Err(error) = released
            && error.is_fatal()
        {
            return Err(error);
        }
        let effects = await_effects(&mut session, watch, &page, false, DRAIN, false).await?;
        Ok(Dragged {
            element,
            target,
            from,
            to,
            native,
            effects,
        })
    }
}

/// A press that a hold still has to release: dropped before the hold's
/// end (a time limit, a cancelled call), it releases the button itself,
/// so that the next action's moves are not a drag.
struct Pressed {
    page: Option<Page>,
    at: (f64, f64),
}

impl Pressed {
    /// The hold goes on to release the button itself.
    fn disarm(mut self) {
        self.page = None;
    }
}

impl Drop for Pressed {
    fn drop(&mut self) {
        let Some(page) = self.page.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut params = DispatchMouseEventParams::new(
            DispatchMouseEventType::MouseReleased,
            self.at.0,
            self.at.1,
        );
        params.button = Some(MouseButton::Left);
        params.click_count = Some(1);
        runtime.spawn(async move {
            let _ = page.execute(params).await;
        });
    }
}
