//! Going places: `navigate`, `go_back`, `wait`.

use std::time::{Duration, Instant};

use toolkit_core::{ToolResult, tool};

use super::{MAX_WAIT_SECONDS, Reply, act, check_navigation, here, page_line, stop_if_fatal};
use crate::browser::Browser;
use crate::error::BrowserError;
use crate::page::navigation::normalize_url;
use crate::safety::SafetyPolicy;

/// How often `wait` looks whether the browser still runs.
const LIFE_CHECK: Duration = Duration::from_millis(100);

/// Open a URL in the current tab, or in a new tab, and wait for it to load.
///
/// A URL without a scheme gets https:// (http:// for localhost). Only web
/// pages (http, https) on allowed sites and about:blank can be opened;
/// anything else is refused with the reason, before loading.
#[tool(catalogue = false)]
pub async fn navigate(
    /// The URL to open.
    url: String,
    /// Open it in a new tab (which becomes the current tab) instead of the
    /// current one. Default false.
    new_tab: Option<bool>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        open(&browser, &policy, &url, new_tab.unwrap_or(false)).await
    })
    .await
}

async fn open(
    browser: &Browser,
    policy: &SafetyPolicy,
    url: &str,
    new_tab: bool,
) -> Result<Reply, BrowserError> {
    // A refused URL loads nothing and opens no tab.
    browser.check_policy(&normalize_url(url)?)?;
    let previous = if new_tab {
        let before = browser.current_tab().await?;
        browser.open_tab("about:blank").await?;
        Some(before.id)
    } else {
        None
    };
    let loaded = browser.navigate(url).await;
    stop_if_fatal(&loaded)?;
    let note = check_navigation(browser, policy, previous.as_deref()).await?;
    if let (Err(_), Some(previous)) = (&loaded, &previous) {
        // The page did not load: the tab opened for it goes again.
        let tab = browser.current_tab().await?;
        if tab.id != *previous {
            browser.close_tab(&tab.id).await?;
            browser.switch_tab(previous).await?;
        }
    }
    let info = loaded?;
    let page = page_line(&info.title, &info.url);
    if new_tab {
        let tab = browser.current_tab().await?;
        Ok(Reply::text(format!(
            "Opened {page} in a new tab, Tab {}, now current.",
            tab.id
        ))
        .say(note)
        .memory(format!("Opened {} in new tab {}", info.url, tab.id)))
    } else {
        Ok(Reply::text(format!("Opened {page}."))
            .say(note)
            .memory(format!("Opened {}", info.url)))
    }
}

/// Go back to the previous page of the current tab.
#[tool(catalogue = false)]
pub async fn go_back(#[tool(state)] browser: Browser) -> ToolResult {
    act(&browser, async |policy| {
        let went = browser.go_back().await;
        stop_if_fatal(&went)?;
        let note = check_navigation(&browser, &policy, None).await?;
        let info = went?;
        let page = page_line(&info.title, &info.url);
        Ok(Reply::text(format!("Went back to {page}."))
            .say(note)
            .memory(format!("Went back to {}", info.url)))
    })
    .await
}

/// Wait for the page to change (content still loading, an animation, a
/// search running), then look at the page again.
///
/// At most 10 seconds per call; a longer wait is cut to 10 seconds.
#[tool(catalogue = false)]
pub async fn wait(
    /// How many seconds to wait (fractions allowed; default 3, at most 10).
    seconds: Option<f64>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        let asked = seconds.unwrap_or(3.0);
        if !asked.is_finite() || asked < 0.0 {
            return Err(BrowserError::invalid(format!(
                "cannot wait {asked} seconds: give a number from 0 to {MAX_WAIT_SECONDS}"
            )));
        }
        let waited = asked.min(MAX_WAIT_SECONDS);
        // A dead browser is said at once rather than after the wait.
        browser.page_info().await?;
        // A browser that dies meanwhile ends the wait at once, with the
        // error every action gives then.
        let until = Instant::now() + Duration::from_secs_f64(waited);
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            tokio::time::sleep(left.min(LIFE_CHECK)).await;
            if !browser.is_alive().await {
                browser.page_info().await?;
            }
        }
        let note = check_navigation(&browser, &policy, None).await?;
        let mut reply =
            Reply::text(format!("Waited {waited} s.")).memory(format!("Waited {waited} s"));
        if asked > MAX_WAIT_SECONDS {
            reply = reply.say(format!(
                "(That is the longest one wait can take; {asked} s were asked.)"
            ));
        }
        Ok(reply
            .say(format!("The page is {}.", here(&browser).await?))
            .say(note))
    })
    .await
}
