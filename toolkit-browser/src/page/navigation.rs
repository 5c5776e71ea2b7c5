//! Where the current tab is and going places: loading a URL, going back,
//! and the URL and title of the page.

use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    GetNavigationHistoryParams, NavigateToHistoryEntryParams,
};
use serde::{Deserialize, Serialize};

use crate::browser::{Browser, Session};
use crate::error::BrowserError;

/// How long a page may take to answer a trivial call before
/// [`Browser::navigate`] treats it as stuck in a script.
const HUNG_PROBE: Duration = Duration::from_secs(2);

/// The URL and title of the current tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PageInfo {
    /// The URL.
    pub url: String,
    /// The title.
    pub title: String,
}

pub(crate) async fn page_info(
    session: &mut Session,
    page: &Page,
) -> Result<PageInfo, BrowserError> {
    let mut info: PageInfo = session
        .call(page, "pageInfo", serde_json::Value::Null)
        .await?;
    session.redactor().redact_in_place(&mut info.url);
    session.redactor().redact_in_place(&mut info.title);
    Ok(info)
}

/// Opens `url` in a new tab, makes it current, and closes `hung`.
async fn replace_hung_tab(
    session: &mut Session,
    hung: &Page,
    url: &str,
) -> Result<PageInfo, BrowserError> {
    let fresh = session.new_tab(url).await.map_err(|e| match e {
        BrowserError::Protocol { detail } => BrowserError::Navigation {
            url: url.to_owned(),
            detail,
        },
        other => other,
    })?;
    session.adopt(fresh.clone()).await?;
    // It is no longer current either way; a failure to close it is not
    // the navigation's.
    let _ = session.close_targets(&[hung.target_id().clone()]).await;
    page_info(session, &fresh).await
}

impl Browser {
    /// Loads `url` in the current tab and waits for it to load. A URL
    /// without a scheme gets `https://` (`http://` for `localhost` and
    /// loopback addresses). A tab whose page is stuck in a script (it does
    /// not answer within two seconds) cannot be navigated away from; it is
    /// replaced by a new tab at `url` (with a new tab id).
    ///
    /// # Errors
    ///
    /// [`BrowserError::Blocked`] when the [policy](Self::set_policy) does
    /// not allow the URL or its scheme is not one a URL may be opened at
    /// (http, https, `about:blank` and the schemes the policy allows; never
    /// the browser's error page): nothing is loaded. [`BrowserError::Navigation`]
    /// when the page cannot be loaded (the message carries Chromium's
    /// reason; a redirect the policy stopped is
    /// `net::ERR_BLOCKED_BY_CLIENT`, and [`take_blocked`](Self::take_blocked)
    /// says which hop), or when its server sent nothing back within the
    /// navigation time limit (the message names the server; the load is
    /// stopped and the tab keeps the page it showed).
    /// [`BrowserError::Timeout`] when the page answered but had not
    /// finished loading within the limit: the load is stopped where it
    /// got to, and the page is usable. Either way the call returns within
    /// the limit and a moment, waiting for the session included.
    pub async fn navigate(&self, url: &str) -> Result<PageInfo, BrowserError> {
        // The time limit counts from here, waiting for the session
        // included.
        let started = Instant::now();
        let url = normalize_url(url)?;
        self.check_policy(&url)?;
        let mut session = self.live().await?;
        let page = session.current();
        // A fragment of the current document scrolls within it: Chromium
        // fires no load event, and chromiumoxide's navigation (which waits
        // for one) would hang. The frame's URL comes from the handler, not
        // the renderer, so a page busy in a script cannot stall this.
        let current = page.url().await.ok().flatten().unwrap_or_default();
        if url.contains('#') && strip_fragment(&url) == strip_fragment(&current) {
            let expression = format!("location.href = {}", serde_json::Value::from(url.as_str()));
            session
                .evaluate(&page, &expression, "scrolling to the fragment")
                .await?;
            return page_info(&mut session, &page).await;
        }
        // A page stuck in a script cannot run its unload handlers, and
        // Chromium waits for them before leaving the page: a navigation in
        // that tab would never finish. Such a tab (one that does not answer
        // a trivial call within a moment) is replaced by a new tab at `url`.
        // A crashed tab is replaced the same way.
        if session.crashed(&page) || !session.responds(&page, HUNG_PROBE).await {
            // The new tab may land in a renderer that is dying too (a spare
            // one the browser had started before the crash, whose death it
            // has not noticed yet on a busy machine): then again, after a
            // pause, in a renderer started later, until the navigation
            // time limit.
            let deadline = Instant::now() + session.config().navigation_timeout;
            let (mut hung, mut pause) = (page, Duration::from_millis(50));
            loop {
                match replace_hung_tab(&mut session, &hung, &url).await {
                    Err(BrowserError::Crashed) if Instant::now() + pause < deadline => {
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_millis(800));
                        hung = session.current();
                    }
                    replaced => return replaced,
                }
            }
        }
        let left = session
            .config()
            .navigation_timeout
            .saturating_sub(started.elapsed());
        if let Some(detail) = session.navigate_to(&page, &url, left).await? {
            return Err(BrowserError::Navigation { url, detail });
        }
        let info = page_info(&mut session, &page).await?;
        // Chromium refuses some URLs itself (its own pages under `about:`)
        // and shows this instead: the tab did not get there.
        if info.url.starts_with("about:blank#blocked") && !url.starts_with("about:blank#blocked") {
            return Err(BrowserError::Navigation {
                url,
                detail: format!("the browser refused to open it; the tab shows {}", info.url),
            });
        }
        Ok(info)
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
        let page = session.current();
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
        let deadline = Instant::now() + session.config().navigation_timeout;
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
        page_info(&mut session, &page).await
    }

    /// The current tab's URL and title.
    ///
    /// # Errors
    ///
    /// A dead or closed session.
    pub async fn page_info(&self) -> Result<PageInfo, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        page_info(&mut session, &page).await
    }

    /// The current tab's address as the browser holds it, unredacted, or
    /// `None` with no live session. Asked of the browser, not the page, so
    /// a page busy in a script cannot stall it.
    pub(crate) async fn current_url(&self) -> Option<String> {
        let session = self.live().await.ok()?;
        let page = session.current();
        page.url().await.ok().flatten()
    }
}

/// The URL without its `#fragment`.
fn strip_fragment(url: &str) -> &str {
    url.split_once('#').map_or(url, |(base, _)| base)
}

/// Whether `url` starts with a scheme (`mailto:`, `javascript:`) rather
/// than a host and port (`localhost:8080`, `example.com:443`): a word
/// without dots before the colon, not followed by a port number. Such a
/// URL is left as it is, so the policy judges the scheme it names.
fn names_a_scheme(url: &str) -> bool {
    let Some((scheme, rest)) = url.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-')
        && !rest.starts_with(|c: char| c.is_ascii_digit())
}

/// Completes a URL the way an address bar would.
pub(crate) fn normalize_url(url: &str) -> Result<String, BrowserError> {
    let url = url.trim();
    if url.is_empty() {
        return Err(BrowserError::invalid("the URL is empty"));
    }
    let lower = url.to_ascii_lowercase();
    if lower.contains("://") || names_a_scheme(&lower) {
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
        assert_eq!(normalize_url("mailto:a@b.c").unwrap(), "mailto:a@b.c");
        assert_eq!(
            normalize_url("chrome-error://chromewebdata/").unwrap(),
            "chrome-error://chromewebdata/"
        );
        assert_eq!(
            normalize_url("example.com:8443/x").unwrap(),
            "https://example.com:8443/x"
        );
        assert!(normalize_url("  ").is_err());
    }
}
