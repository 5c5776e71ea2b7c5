//! Searching the page map: `find`.

use std::fmt::Write as _;

use toolkit_core::{ToolResult, tool};

use super::{Reply, act};
use crate::browser::Browser;
use crate::error::BrowserError;

/// How many elements one `find` lists.
pub const FIND_LIMIT: usize = 30;

/// Find interactive elements anywhere on the current page (also those the
/// page map does not show: further down, or left out for its size) by
/// words of their text, label, role or tag (`"button submit"`, `"next"`,
/// `"checkbox terms"`), with their numbers and where links lead. Use the
/// numbers directly: acting on an element scrolls to it.
#[tool(catalogue = false)]
pub async fn find(
    /// Words that must all appear in the element's text, label, role, tag,
    /// placeholder, field name or link address (case does not matter).
    query: String,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |_| {
        if query.split_whitespace().next().is_none() {
            return Err(BrowserError::invalid(
                "give find some words of the element's text, label or role",
            ));
        }
        let found = browser.find_elements(&query, FIND_LIMIT).await?;
        if found.total == 0 {
            return Err(BrowserError::invalid(format!(
                "no interactive element of the page matches {query:?}; try fewer or other \
                 words, or find_text for text that is not a control"
            )));
        }
        let mut text = format!("{} element(s) match {query:?}", found.total);
        if found.total > found.elements.len() {
            let _ = write!(
                text,
                " (the first {} listed; add words to narrow)",
                found.elements.len()
            );
        }
        text.push_str(":\n");
        let vh = found.viewport_height.max(1);
        for e in &found.elements {
            text.push_str(&e.render_with_href());
            #[allow(clippy::cast_precision_loss)] // page offsets are far below 2^52 px
            let pages = |px: i64| px as f64 / vh as f64;
            if e.y + e.h <= 0 {
                let _ = write!(
                    text,
                    " (above the view, {:.1} pages up)",
                    pages(-(e.y + e.h))
                );
            } else if e.y >= vh {
                let _ = write!(text, " (below the view, {:.1} pages down)", pages(e.y - vh));
            }
            text.push('\n');
        }
        let numbers: Vec<String> = found.elements.iter().map(|e| e.index.to_string()).collect();
        Ok(Reply::text(text.trim_end().to_owned())
            .memory(format!("Found {query:?}: [{}]", numbers.join("], ["))))
    })
    .await
}
