//! The mouse beyond clicks: `hover`, `hold`, `drag`.

use std::time::Duration;

use toolkit_core::{ToolResult, tool};

use super::{Reply, act, check_navigation, effects_sentence, label, stop_if_fatal};
use crate::browser::Browser;
use crate::error::BrowserError;
use crate::page::pointer::{DragEnd, MAX_HOLD};

/// Move the mouse onto the element numbered `index` without clicking it,
/// as a person pointing at it: menus and tooltips that open on hover
/// appear (look at the next page map for them, marked *).
#[tool(catalogue = false)]
pub async fn hover(
    /// The element's number in the page map.
    index: u32,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        let before = browser.current_tab().await?;
        let hovered = browser.hover(index).await;
        stop_if_fatal(&hovered)?;
        let note = check_navigation(&browser, &policy, Some(&before.id)).await?;
        let hovered = hovered?;
        let what = label(&hovered.element);
        let change = match hovered.shown_after.cmp(&hovered.shown_before) {
            std::cmp::Ordering::Greater => format!(
                "{} more element(s) are shown now (a menu or tooltip may have opened).",
                hovered.shown_after - hovered.shown_before
            ),
            std::cmp::Ordering::Less => format!(
                "{} element(s) fewer are shown now.",
                hovered.shown_before - hovered.shown_after
            ),
            // A count, not a comparison: a menu moved into view or
            // unfolded in place leaves it as it was.
            std::cmp::Ordering::Equal => "The number of elements shown did not change.".to_owned(),
        };
        Ok(
            Reply::text(format!("Moved the mouse onto {what}, without clicking."))
                .say(change)
                .say(effects_sentence(&browser, &hovered.effects).await?)
                .say(note)
                .memory(format!("Hovered over {what}")),
        )
    })
    .await
}

/// Press and hold the mouse button on the element numbered `index` for a
/// number of seconds (at most 10), then release it: for controls that act
/// only after a long press ("hold to confirm").
#[tool(catalogue = false)]
pub async fn hold(
    /// The element's number in the page map.
    index: u32,
    /// How long to hold, in seconds (fractions are fine; at most 10).
    seconds: f64,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        if !seconds.is_finite() || seconds <= 0.0 || seconds > MAX_HOLD.as_secs_f64() {
            return Err(BrowserError::invalid(format!(
                "seconds must be more than 0 and at most {}, not {seconds}",
                MAX_HOLD.as_secs()
            )));
        }
        let before = browser.current_tab().await?;
        let held = browser.hold(index, Duration::from_secs_f64(seconds)).await;
        stop_if_fatal(&held)?;
        let note = check_navigation(&browser, &policy, Some(&before.id)).await?;
        let held = held?;
        let what = label(&held.element);
        let time = held.held.as_secs_f64();
        Ok(Reply::text(format!(
            "Held the mouse button down on {what} for {time:.1} s, then released it."
        ))
        .say(effects_sentence(&browser, &held.effects).await?)
        .say(note)
        .memory(format!("Held {what} for {time:.1} s")))
    })
    .await
}

/// Drag the element numbered `index` with the mouse and drop it onto the
/// element numbered `to`, or move it by dx and dy pixels (for a slider,
/// or a list whose items are reordered by dragging). Give either `to` or
/// an offset.
#[tool(catalogue = false)]
pub async fn drag(
    /// The number of the element to drag.
    index: u32,
    /// The number of the element to drop it onto.
    to: Option<u32>,
    /// Pixels to move to the right (negative: to the left), instead of `to`.
    dx: Option<f64>,
    /// Pixels to move down (negative: up), instead of `to`.
    dy: Option<f64>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        let end = match (to, dx, dy) {
            (Some(to), None, None) => DragEnd::Element(to),
            (None, None, None) => {
                return Err(BrowserError::invalid(
                    "say where to drag to: `to` (an element's number), or `dx` and `dy` \
                     (pixels)",
                ));
            }
            (None, dx, dy) => DragEnd::Offset {
                dx: dx.unwrap_or(0.0),
                dy: dy.unwrap_or(0.0),
            },
            (Some(_), _, _) => {
                return Err(BrowserError::invalid(
                    "give either `to` or an offset (`dx`, `dy`), not both",
                ));
            }
        };
        let before = browser.current_tab().await?;
        let dragged = browser.drag(index, end).await;
        stop_if_fatal(&dragged)?;
        let note = check_navigation(&browser, &policy, Some(&before.id)).await?;
        let dragged = dragged?;
        let what = label(&dragged.element);
        let onto = match (&dragged.target, end) {
            (Some(target), _) => format!("onto {}", label(target)),
            (None, DragEnd::Offset { dx, dy }) => format!("by {dx:.0} px right, {dy:.0} px down"),
            (None, DragEnd::Element(to)) => format!("onto [{to}]"),
        };
        let how = if dragged.native {
            "The page took it as a drag and drop."
        } else {
            ""
        };
        Ok(Reply::text(format!("Dragged {what} {onto}."))
            .say(how)
            .say(effects_sentence(&browser, &dragged.effects).await?)
            .say(note)
            .memory(format!("Dragged {what} {onto}")))
    })
    .await
}
