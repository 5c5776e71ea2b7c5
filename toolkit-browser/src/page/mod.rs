//! The current page: its map, trusted input (clicks and keys; hovering,
//! holding and dragging), navigation, scrolling and
//! screenshots, forms, and its readable text. Each file adds the
//! operations of one concern to [`Browser`](crate::Browser).

pub(crate) mod content;
pub(crate) mod forms;
pub(crate) mod input;
pub(crate) mod map;
pub(crate) mod navigation;
pub(crate) mod pictures;
pub(crate) mod pointer;
pub(crate) mod view;

use crate::error::BrowserError;
use crate::safety::Redactor;

/// What the page script found for element `index`, or the stale-element
/// error when it found nothing or says the number's element is gone: the
/// one answer every operation on a numbered element gives for a number
/// that no longer names an element.
pub(crate) fn live<T>(index: u32, stale: bool, found: Option<T>) -> Result<T, BrowserError> {
    match found {
        Some(found) if !stale => Ok(found),
        _ => Err(BrowserError::StaleElement { index }),
    }
}

/// [`live`] for an element, redacted (and its texts cut) as it is read.
pub(crate) fn live_element(
    index: u32,
    stale: bool,
    found: Option<map::Element>,
    redactor: &Redactor,
) -> Result<map::Element, BrowserError> {
    let mut element = live(index, stale, found)?;
    element.redact(redactor);
    Ok(element)
}
