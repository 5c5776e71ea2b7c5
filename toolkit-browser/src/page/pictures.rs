//! Pictures of the page for vision models: a screenshot with the page
//! map's element numbers drawn on their boxes, or with one element
//! outlined.
//!
//! The numbers are drawn by the browser itself, on a layer added to the
//! page for the one screenshot and removed right after it, rather than
//! painted onto the PNG afterwards: Chromium already renders text and
//! boxes at the page's scale, and the crate needs no image or font code.
//! The layer is made in the crate's isolated world (the page's scripts
//! cannot patch what makes it), holds its boxes in a closed shadow root
//! (the page's styles and scripts cannot reach inside), is styled with
//! inline declarations marked important (which win over every style sheet
//! of the page) and shown in the top layer (above modal dialogs). What a
//! page can still do is see a `<div>` appear as the last child of
//! `<html>` for the length of a screenshot, and remove or hide it: the
//! picture then lacks its numbers. Numbers in a picture are never what an
//! action acts on (the actions take numbers of the page map, resolved in
//! the page script), so a page that spoils or fakes them, as any page can
//! by drawing labels of its own, misleads only what the model reads from
//! the picture.

use serde::Serialize;

use crate::browser::{Browser, Session};
use crate::error::BrowserError;
use crate::page::map::{Element, PageMap};

/// The colour of the outlines and number labels, as RGB: a strong pink
/// that few pages use, with white numbers on it.
pub const OUTLINE_RGB: [u8; 3] = [255, 0, 102];

/// The page script that draws the layer (`js/overlay.js`).
const OVERLAY: &str = include_str!("../js/overlay.js");

/// The expression that removes the layer, when it is still there.
const ERASE: &str = "(() => { const o = window.__toolkitBrowserOverlay; \
     if (!o) return false; o.host.remove(); clearTimeout(o.timer); \
     delete window.__toolkitBrowserOverlay; return true; })()";

/// One box to outline, in viewport CSS pixels, with its number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Mark {
    i: u32,
    x: i64,
    y: i64,
    w: i64,
    h: i64,
}

impl Mark {
    pub(crate) fn of(element: &Element) -> Self {
        Self {
            i: element.index,
            x: element.x,
            y: element.y,
            w: element.w,
            h: element.h,
        }
    }
}

/// Whether any of the box `[x, y, w, h]` (viewport CSS pixels) lies in a
/// viewport of `width`×`height`: the one test of what a picture shows, so
/// that an outline is drawn, counted and recorded alike.
pub(crate) fn in_view([x, y, w, h]: [i64; 4], width: i64, height: i64) -> bool {
    x < width && y < height && x + w > 0 && y + h > 0
}

/// The box of `element`, as [`in_view`] takes it.
pub(crate) fn bounds(element: &Element) -> [i64; 4] {
    [element.x, element.y, element.w, element.h]
}

impl Browser {
    /// A PNG screenshot of the current tab's viewport with every element of
    /// a fresh [page map](Self::page_map) that is in view outlined and
    /// labelled with its number, and that map. Secrets are masked as in
    /// [`screenshot`](Self::screenshot).
    ///
    /// The numbers are drawn on a layer added to the page for the
    /// screenshot and removed right after it, also when the screenshot
    /// fails (see the guide's browser chapter, "Pictures").
    ///
    /// # Errors
    ///
    /// As [`page_map`](Self::page_map) and [`screenshot`](Self::screenshot).
    pub async fn numbered_screenshot(&self) -> Result<(Vec<u8>, PageMap), BrowserError> {
        let (png, map, _) = self.numbered_screenshot_masked().await?;
        Ok((png, map))
    }

    /// [`numbered_screenshot`](Self::numbered_screenshot), and how many
    /// elements were masked because they hold a secret.
    pub(crate) async fn numbered_screenshot_masked(
        &self,
    ) -> Result<(Vec<u8>, PageMap, u32), BrowserError> {
        let map = self.page_map().await?;
        let marks: Vec<Mark> = map.elements.iter().map(Mark::of).collect();
        let (png, masked) = self.screenshot_marked(&marks).await?;
        Ok((png, map, masked))
    }

    /// A PNG screenshot of the current tab's viewport with `elements`
    /// outlined and labelled with their numbers (those out of view are
    /// left out), as [`numbered_screenshot`](Self::numbered_screenshot)
    /// draws them; an element's box is where it was when it was looked up
    /// ([`element`](Self::element), [`page_map`](Self::page_map)).
    ///
    /// # Errors
    ///
    /// As [`screenshot`](Self::screenshot).
    pub async fn outlined_screenshot(&self, elements: &[Element]) -> Result<Vec<u8>, BrowserError> {
        let marks: Vec<Mark> = elements.iter().map(Mark::of).collect();
        Ok(self.screenshot_marked(&marks).await?.0)
    }
}

/// Draws `marks` over the current page of `session` (those in view). Returns
/// whether a layer was added, so that the caller knows to [`erase`] it.
pub(crate) async fn draw(
    session: &mut Session,
    page: &chromiumoxide::Page,
    marks: &[Mark],
) -> Result<bool, BrowserError> {
    let (width, height) = session.config().viewport();
    let shown: Vec<Mark> = marks
        .iter()
        .copied()
        .filter(|m| in_view([m.x, m.y, m.w, m.h], i64::from(width), i64::from(height)))
        .collect();
    if shown.is_empty() {
        return Ok(false);
    }
    let [r, g, b] = OUTLINE_RGB;
    let colour = format!("rgb({r}, {g}, {b})");
    // Longer than any screenshot may take, so only a screenshot given up
    // half-way (its future dropped) leaves it to the timer.
    let ttl = session.config().command_timeout.as_millis() + 1000;
    let marks = serde_json::to_string(&shown).unwrap_or_else(|_| "[]".to_owned());
    let expression = format!("({OVERLAY})({marks}, {colour:?}, {ttl})");
    session
        .evaluate_isolated(page, &expression, "drawing the element numbers")
        .await?;
    Ok(true)
}

/// Removes the layer [`draw`] added. Best effort: a page that navigated
/// meanwhile took the layer with its document.
pub(crate) async fn erase(session: &mut Session, page: &chromiumoxide::Page) {
    let _ = session
        .evaluate_isolated(page, ERASE, "erasing the element numbers")
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_boxes_in_view_are_drawn() {
        assert!(in_view([0, 0, 10, 10], 100, 100));
        assert!(in_view([-5, -5, 10, 10], 100, 100));
        assert!(in_view([95, 95, 10, 10], 100, 100));
        assert!(!in_view([0, 100, 10, 10], 100, 100));
        assert!(!in_view([0, -10, 10, 10], 100, 100));
        assert!(!in_view([100, 0, 10, 10], 100, 100));
        assert!(!in_view([-10, 0, 10, 10], 100, 100));
    }

    #[test]
    fn the_overlay_is_one_function_expression() {
        let body = OVERLAY.trim_end();
        assert!(body.ends_with("})"), "{body}");
        assert!(body.contains("(function (marks, colour, ttl)"));
    }
}
