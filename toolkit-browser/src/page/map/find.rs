//! `find`: the elements of the whole page whose text, role or label
//! holds the words asked for, with their numbers, beyond the band a map
//! covers and whatever its budget left out.

use super::model::{Element, MAX_ELEMENTS};
use super::walk::{Walk, advance_past, walk_args};
use crate::browser::Browser;
use crate::error::BrowserError;

/// How far beyond the viewport the walk of [`Browser::find_elements`]
/// reaches: the whole of any page a browser lays out.
const WHOLE_PAGE_PX: u32 = 10_000_000;

/// What [`Browser::find_elements`] found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FoundElements {
    /// The matching elements, in page order (at most the `limit` asked
    /// for), each numbered as in the page map.
    pub elements: Vec<Element>,
    /// How many elements matched in all.
    pub total: usize,
    /// The viewport's height, CSS pixels: elements whose `y` is below 0 or
    /// at least this much are outside the view.
    pub viewport_height: i64,
}

impl Browser {
    /// The interactive elements of the whole current page (not only the
    /// band a page map covers, and whatever the map's token budget left
    /// out) whose tag, role, label, text, placeholder, field name, type or
    /// link address holds every word of `query` (case does not matter),
    /// numbered as the map numbers them: an action can use the numbers at
    /// once, and acting on an element outside the view scrolls to it.
    /// At most `limit` are returned, in page order, with how many matched.
    ///
    /// Elements are matched as the map shows them, after redaction, so a
    /// secret's value is never found. The page is mapped first (settled,
    /// with its frames from other sites); elements further away are then
    /// numbered by a walk of the tab's own document (shadow roots and
    /// same-origin frames included) over the whole page, so a later map
    /// does not mark them new.
    ///
    /// # Errors
    ///
    /// As [`page_map`](Self::page_map).
    pub async fn find_elements(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<FoundElements, BrowserError> {
        let map = self.page_map().await?;
        let mut elements = map.elements.clone();
        let wide = self.walk_whole_page().await?;
        let policy = self.policy();
        for mut element in wide {
            if map.get(element.index).is_none() {
                element.redact(policy.redactor());
                elements.push(element);
            }
        }
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut matching: Vec<Element> = elements
            .into_iter()
            .filter(|e| !words.is_empty() && matches(e, &words))
            .collect();
        // Page order: top to bottom, then left to right.
        matching.sort_by_key(|e| (e.y, e.x, e.index));
        // `*` (new since the last map) means nothing in a search.
        for e in &mut matching {
            e.is_new = false;
        }
        let total = matching.len();
        matching.truncate(limit);
        Ok(FoundElements {
            elements: matching,
            total,
            viewport_height: map.scroll.viewport_height,
        })
    }

    /// Numbers and describes the interactive elements of the tab's whole
    /// document, as a walk repeated for the last map (which leaves what
    /// the next map marks new as it was, but for these elements).
    async fn walk_whole_page(&self) -> Result<Vec<Element>, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        let base = self.next_index();
        let mut args = walk_args(base, None, (MAX_ELEMENTS, 0), None);
        args["expand"] = WHOLE_PAGE_PX.into();
        args["repeat"] = true.into();
        let walk: Walk = session.call(&page, "walk", args).await?;
        advance_past(self, base, walk.next);
        Ok(walk.elements)
    }
}

/// Whether every word is in one of the element's texts.
fn matches(e: &Element, words: &[String]) -> bool {
    let mut haystack = e.tag.to_lowercase();
    for part in [
        &e.role,
        &e.name,
        &e.text,
        &e.placeholder,
        &e.field_name,
        &e.input_type,
        &e.href,
    ]
    .into_iter()
    .flatten()
    {
        haystack.push(' ');
        haystack.push_str(&part.to_lowercase());
    }
    words.iter().all(|w| haystack.contains(w.as_str()))
}
