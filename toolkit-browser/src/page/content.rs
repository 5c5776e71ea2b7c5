//! Reading the page: its text as markdown, and finding a text on it.

use serde::{Deserialize, Serialize};

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::GetResourceContentParams;

use crate::browser::{Browser, MAX_DOWNLOAD_READ_BYTES, Session, pdf_text};
use crate::error::BrowserError;

/// The most characters of markdown [`Browser::page_text`] converts; a page
/// with more is cut there ([`PageText::truncated`]).
pub const MAX_PAGE_TEXT_CHARS: u32 = 2_000_000;

/// The readable text of a page (see [`Browser::page_text`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PageText {
    /// The page's URL.
    pub url: String,
    /// The page's title.
    pub title: String,
    /// The text as markdown.
    pub markdown: String,
    /// The page had more text than [`MAX_PAGE_TEXT_CHARS`].
    pub truncated: bool,
}

/// How many characters of text [`Browser::find_text`] quotes on each side
/// of what it found.
const FIND_CONTEXT_CHARS: usize = 60;

/// Where [`Browser::find_text`] found a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TextMatch {
    /// How many times the text occurs (counting stops at 1000).
    pub found: u32,
    /// Which occurrence was scrolled to, from 1.
    pub nth: u32,
    /// The occurrence with some text around it.
    pub context: String,
    /// The vertical scroll position afterwards, CSS pixels.
    #[serde(rename = "scroll")]
    pub scroll_y: i64,
}

#[derive(Deserialize)]
struct TextVersion {
    version: String,
}

/// One occurrence of a text, with what surrounds it.
#[derive(Deserialize)]
struct FindWindow {
    before: String,
    hit: String,
    after: String,
}

/// Every occurrence of a text, unscrolled (see [`Browser::find_text`]).
#[derive(Deserialize)]
struct FindSurvey {
    #[serde(default)]
    windows: Vec<FindWindow>,
}

#[derive(Deserialize)]
struct FindReply {
    found: u32,
    #[serde(default)]
    nth: u32,
    #[serde(default)]
    before: String,
    #[serde(default)]
    hit: String,
    #[serde(default)]
    after: String,
    #[serde(default)]
    scroll: i64,
}

/// The text of the PDF the tab shows in the browser's viewer (at `url`),
/// read with the limits of `read_download`; `None` when the tab shows no
/// PDF.
async fn viewer_pdf_text(
    session: &mut Session,
    page: &Page,
    url: &str,
) -> Result<Option<String>, BrowserError> {
    let kind = session
        .evaluate_isolated(page, "document.contentType", "reading the document's type")
        .await?;
    if kind != "application/pdf" {
        return Ok(None);
    }
    let frame = page
        .mainframe()
        .await
        .ok()
        .flatten()
        .ok_or_else(|| BrowserError::protocol("the tab has no document"))?;
    // The browser keeps the file when the server allows caching it;
    // otherwise the page fetches it again, as its own script could.
    let cached = session
        .exec(
            page,
            GetResourceContentParams::new(frame, url),
            "reading the PDF the tab shows",
        )
        .await;
    let bytes = match cached {
        Ok(content) if content.base64_encoded => decode_base64(&content.content)?,
        Ok(content) => content.content.into_bytes(),
        Err(e) if e.is_fatal() => return Err(e),
        Err(_) => fetch_again(session, page).await?,
    };
    let name = url::Url::parse(url)
        .ok()
        .and_then(|u| u.path_segments()?.next_back().map(str::to_owned))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| url.to_owned());
    if bytes.len() as u64 > MAX_DOWNLOAD_READ_BYTES {
        return Err(BrowserError::invalid(format!(
            "the PDF {name:?} the tab shows has {} bytes, more than the {} MiB a PDF can be \
             read with",
            bytes.len(),
            MAX_DOWNLOAD_READ_BYTES >> 20
        )));
    }
    let text = tokio::task::spawn_blocking(move || pdf_text(&bytes, &name))
        .await
        .map_err(|e| BrowserError::Io {
            detail: format!("reading the PDF failed: {e}"),
        })??;
    Ok(Some(text))
}

/// The PDF the tab shows, fetched again by the page (its cookies, its
/// origin), at most [`MAX_DOWNLOAD_READ_BYTES`] read.
async fn fetch_again(session: &mut Session, page: &Page) -> Result<Vec<u8>, BrowserError> {
    let expression = format!(
        "(async () => {{
          const answer = await fetch(location.href, {{ credentials: 'include' }});
          if (!answer.ok) return {{ status: answer.status }};
          const reader = answer.body.getReader();
          const parts = [];
          let size = 0;
          for (;;) {{
            const {{ done, value }} = await reader.read();
            if (done) break;
            size += value.length;
            if (size > {MAX_DOWNLOAD_READ_BYTES}) {{ reader.cancel(); return {{ size }}; }}
            parts.push(value);
          }}
          let text = '';
          for (const part of parts) {{
            for (let i = 0; i < part.length; i += 0x8000) {{
              text += String.fromCharCode.apply(null, part.subarray(i, i + 0x8000));
            }}
          }}
          return {{ base64: btoa(text) }};
        }})()"
    );
    let answer = session
        .evaluate_isolated(page, &expression, "reading the PDF the tab shows")
        .await?;
    if let Some(base64) = answer["base64"].as_str() {
        return decode_base64(base64);
    }
    if let Some(size) = answer["size"].as_u64() {
        return Err(BrowserError::invalid(format!(
            "the PDF the tab shows has more than {size} bytes, more than the {} MiB a PDF can \
             be read with",
            MAX_DOWNLOAD_READ_BYTES >> 20
        )));
    }
    Err(BrowserError::invalid(format!(
        "the PDF the tab shows cannot be read: its server answered {} when it was asked again",
        answer["status"]
    )))
}

fn decode_base64(text: &str) -> Result<Vec<u8>, BrowserError> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| BrowserError::protocol(format!("the PDF came back garbled: {e}")))
}

impl Browser {
    /// The current tab's readable text as markdown: headings, paragraphs,
    /// links with absolute URLs, lists, tables, preformatted text and
    /// quotes, including open shadow roots and same-origin frames, without
    /// hidden elements and form field values. A PDF the tab shows in the
    /// browser's viewer is read as [`read_download`](Self::read_download)
    /// reads a downloaded one (the `pdf` feature). Secrets of the [policy](Self::set_policy) are shown
    /// as placeholders.
    ///
    /// # Errors
    ///
    /// A dead session, or a page that breaks the conversion.
    pub async fn page_text(&self) -> Result<PageText, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        // The text of one version of a document is converted (and
        // redacted) once: reading a long page part by part asks for it
        // again and again.
        let version: TextVersion = session
            .call(&page, "textVersion", serde_json::json!({}))
            .await?;
        let key = format!(
            "{}|{}|{}",
            page.target_id().as_ref(),
            version.version,
            self.policy_generation()
        );
        if let Some(text) = self.cached::<PageText>(&key) {
            return Ok(text);
        }
        let args = serde_json::json!({ "maxChars": MAX_PAGE_TEXT_CHARS });
        let mut text: PageText = session.call(&page, "extract", args).await?;
        // The browser's PDF viewer holds no text of the PDF: it is read
        // from the file, as a downloaded PDF is.
        if text.markdown.trim().is_empty()
            && let Some(pdf) = viewer_pdf_text(&mut session, &page, &text.url).await?
        {
            let cut = usize::try_from(MAX_PAGE_TEXT_CHARS).unwrap_or(usize::MAX);
            text.truncated = pdf.chars().count() > cut;
            text.markdown = pdf.chars().take(cut).collect();
        }
        drop(session);
        let policy = self.policy();
        let r = policy.redactor();
        r.redact_in_place(&mut text.markdown);
        r.redact_in_place(&mut text.url);
        r.redact_in_place(&mut text.title);
        self.cache(key, text.clone());
        Ok(text)
    }

    /// Scrolls to occurrence `nth` (from 1; the first when out of range) of
    /// `text` on the current tab (ignoring case and runs of white space;
    /// through open shadow roots, same-origin frames and scroll
    /// containers). `None` when the text is not on the page.
    ///
    /// # Errors
    ///
    /// [`BrowserError::InvalidInput`] for an empty text, or a dead session.
    pub async fn find_text(&self, text: &str, nth: u32) -> Result<Option<TextMatch>, BrowserError> {
        if text.trim().is_empty() {
            return Err(BrowserError::invalid("the text to find is empty"));
        }
        let policy = self.policy();
        let redactor = policy.redactor();
        let mut session = self.live().await?;
        let page = session.current();
        let args = if policy.has_secrets() {
            // An occurrence that touches a secret is no occurrence: were it
            // counted (or quoted around), asking for a text piece by piece
            // would tell whether a secret holds it. Only the others count.
            let survey = serde_json::json!({ "text": text, "survey": true });
            let survey: FindSurvey = session.call(&page, "findText", survey).await?;
            let clean: Vec<usize> = (0..survey.windows.len())
                .filter(|&i| {
                    let w = &survey.windows[i];
                    !redactor.touches(&w.before, &w.hit, &w.after)
                })
                .collect();
            let Some(&last) = clean.last() else {
                return Ok(None);
            };
            let which = usize::try_from(nth.max(1) - 1).unwrap_or(usize::MAX);
            let pick = clean.get(which).copied().unwrap_or(last);
            let found = u32::try_from(clean.len()).unwrap_or(u32::MAX);
            let nth = u32::try_from(clean.iter().position(|&i| i == pick).unwrap_or(0) + 1)
                .unwrap_or(u32::MAX);
            Some((
                serde_json::json!({ "text": text, "pick": pick }),
                found,
                nth,
            ))
        } else {
            None
        };
        let (args, counted) = match args {
            Some((args, found, nth)) => (args, Some((found, nth))),
            None => (serde_json::json!({ "text": text, "nth": nth.max(1) }), None),
        };
        let reply: FindReply = session.call(&page, "findText", args).await?;
        // The page may have changed since the survey: what was scrolled to
        // is checked again.
        if reply.found == 0 || redactor.touches(&reply.before, &reply.hit, &reply.after) {
            return Ok(None);
        }
        let (found, nth) = counted.unwrap_or((reply.found, reply.nth));
        // Redacted as one text before it is cut to its window: a window
        // that ended inside a secret would show a piece of it.
        let context =
            redactor.redact_window(&reply.before, &reply.hit, &reply.after, FIND_CONTEXT_CHARS);
        Ok(Some(TextMatch {
            found,
            nth,
            context,
            scroll_y: reply.scroll,
        }))
    }
}
