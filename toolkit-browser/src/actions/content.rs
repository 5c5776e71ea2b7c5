//! Reading the page: `extract`, `find_text`, `screenshot`.

use toolkit_core::{ToolResult, tool};

use super::{EXTRACT_PAGE_CHARS, Reply, act, here, page_line};
use crate::browser::Browser;
use crate::error::BrowserError;
use crate::page::pictures::{bounds, in_view};

/// Read the current page's text as markdown (headings, paragraphs, links,
/// lists, tables), 10000 characters at a time.
///
/// A longer page says where the next part starts: call extract again with
/// that start.
#[tool(catalogue = false)]
pub async fn extract(
    /// The character offset to start reading at (default 0), as the
    /// previous part gave it.
    start: Option<u32>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |_| {
        // Redacted whole (by `page_text`) before it is cut, so that no part
        // can hold a piece of a secret, and offsets refer to what the model
        // reads.
        let text = browser.page_text().await?;
        let markdown = &text.markdown;
        let start = start.unwrap_or(0) as usize;
        let part = page_of(markdown, start, EXTRACT_PAGE_CHARS);
        let page = page_line(&text.title, &text.url);
        if part.total == 0 {
            return Ok(
                Reply::text(format!("The page {page} has no readable text."))
                    .memory(format!("Read {}: no text", text.url)),
            );
        }
        let mut body = part_text(&part, start, &page, "extract")?;
        if part.end == part.total && text.truncated {
            body.push_str("\n\n[The page has more text than can be read.]");
        }
        Ok(Reply::text(body).with_show_once().memory(format!(
            "Read characters {start}-{} of {} of the text of {}",
            part.end, part.total, text.url
        )))
    })
    .await
}

/// The reply's text for `part` of the text of `what`, which began at
/// `start`, ending with how to read on through `action` when more is left;
/// an error for a start past the end.
pub(crate) fn part_text(
    part: &Part,
    start: usize,
    what: &str,
    action: &str,
) -> Result<String, BrowserError> {
    if start >= part.total {
        return Err(BrowserError::invalid(format!(
            "start {start} is past the end of the text of {what}, which has {} characters",
            part.total
        )));
    }
    let mut body = format!(
        "Text of {what}, characters {start}-{} of {}:\n\n{}",
        part.end, part.total, part.text
    );
    if part.end < part.total {
        body.push_str(&format!(
            "\n\n[{} more characters: call {action} with start={} to read on.]",
            part.total - part.end,
            part.end
        ));
    }
    Ok(body)
}

/// One part of a text.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Part {
    /// The part.
    pub(crate) text: String,
    /// The offset after it, in characters.
    pub(crate) end: usize,
    /// The whole text's length, in characters.
    pub(crate) total: usize,
}

/// The part of `text` from character `start`, at most `size` characters,
/// ending at a line break (else a space) in its last quarter when there is
/// one, so that the next part starts on a fresh line.
pub(crate) fn page_of(text: &str, start: usize, size: usize) -> Part {
    let chars: Vec<char> = text.chars().collect();
    let total = chars.len();
    if start >= total {
        return Part {
            text: String::new(),
            end: total,
            total,
        };
    }
    let hard_end = (start + size).min(total);
    let mut end = hard_end;
    if hard_end < total {
        let floor = start + size * 3 / 4;
        let window = &chars[floor..hard_end];
        if let Some(k) = window.iter().rposition(|c| *c == '\n') {
            end = floor + k + 1;
        } else if let Some(k) = window.iter().rposition(|c| *c == ' ') {
            end = floor + k + 1;
        }
    }
    Part {
        text: chars[start..end].iter().collect(),
        end,
        total,
    }
}

/// Scroll to a text on the current page (case does not matter) and show
/// where it is.
#[tool(catalogue = false)]
pub async fn find_text(
    /// The text to find.
    text: String,
    /// Which occurrence to scroll to, from 1 (default 1).
    occurrence: Option<u32>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |_| {
        let found = browser.find_text(&text, occurrence.unwrap_or(1)).await?;
        let Some(found) = found else {
            return Err(BrowserError::invalid(format!(
                "the text {text:?} is not on the page (hidden text does not count); try \
                 fewer words, or extract to read the page"
            )));
        };
        let which = if found.found == 1 {
            "the only occurrence".to_owned()
        } else {
            format!("occurrence {} of {}", found.nth, found.found)
        };
        Ok(Reply::text(format!(
            "Scrolled to {which} of {text:?}: {:?}.",
            found.context
        ))
        .memory(format!("Scrolled to {text:?} ({which})")))
    })
    .await
}

/// Take a screenshot of the visible part of the current page, to see
/// layout, images or anything the page map does not show. With numbered,
/// each interactive element in view is outlined and labelled with its
/// number from the page map.
#[tool(catalogue = false)]
pub async fn screenshot(
    /// Draw the page map's element numbers on their elements (default
    /// false).
    numbered: Option<bool>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |_| {
        let numbered = numbered.unwrap_or(false);
        let (png, masked, drawn) = if numbered {
            let (png, map, masked) = browser.numbered_screenshot_masked().await?;
            let (width, height) = (map.scroll.viewport_width, map.scroll.viewport_height);
            let drawn = map
                .elements
                .iter()
                .filter(|e| in_view(bounds(e), width, height))
                .count();
            (png, masked, Some(drawn))
        } else {
            let (png, masked) = browser.screenshot_masked().await?;
            (png, masked, None)
        };
        let (width, height) = browser.config().viewport();
        let page = here(&browser).await?;
        let info = browser.page_info().await?;
        let numbers = match drawn {
            Some(n) => format!(
                " The numbers of the {n} interactive element(s) in view are drawn on them, \
                 as in the page map."
            ),
            None => String::new(),
        };
        Ok(Reply::text(format!(
            "Screenshot of {page}: the visible {width}x{height} part of the page.{numbers}"
        ))
        .png(png)
        .with_show_once()
        .memory(format!("Took a screenshot of {}", info.url))
        .attribute("masked_secret_elements", masked))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::page_of;

    #[test]
    fn parts_end_at_line_breaks_and_cover_the_text() {
        let text = "line one\nline two\nline three\n".repeat(50);
        let total = text.chars().count();
        let mut start = 0;
        let mut joined = String::new();
        while start < total {
            let part = page_of(&text, start, 100);
            assert!(part.end > start && part.end - start <= 100);
            if part.end < total {
                assert!(part.text.ends_with('\n'), "{:?}", part.text);
            }
            joined.push_str(&part.text);
            start = part.end;
        }
        assert_eq!(joined, text);
    }

    #[test]
    fn offsets_count_characters_not_bytes() {
        let text = "é".repeat(30);
        let part = page_of(&text, 10, 10);
        assert_eq!(
            (part.text.chars().count(), part.end, part.total),
            (10, 20, 30)
        );
        assert_eq!(page_of(&text, 40, 10).text, "");
        let words = "word ".repeat(10);
        assert!(page_of(&words, 0, 12).text.ends_with(' '));
    }
}
