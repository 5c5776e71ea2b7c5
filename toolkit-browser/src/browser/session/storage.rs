//! Reading and writing the browser's storage over DevTools: every cookie
//! (`Storage.getCookies`, httpOnly ones included), and each open tab's
//! localStorage and sessionStorage (`DOMStorage`, read by the browser, so
//! no page script can hide or fake them).

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::Session;
use super::devtools::RawCommand;
use crate::error::BrowserError;

/// What an origin's page holds, as `(key, value)` pairs.
pub(crate) struct OriginItems {
    pub(crate) origin: String,
    pub(crate) local: Vec<(String, String)>,
    pub(crate) session: Vec<(String, String)>,
}

/// The page a seeding navigation gets: nothing to run, nothing to load.
const BLANK_PAGE: &str = "<!doctype html><title></title>";

impl Session {
    /// Every cookie of the browser, as the protocol gives them.
    pub(crate) async fn all_cookies(&mut self) -> Result<Vec<Value>, BrowserError> {
        let answer = self
            .browser_exec(raw("Storage.getCookies", json!({})), "reading the cookies")
            .await?;
        Ok(answer["cookies"].as_array().cloned().unwrap_or_default())
    }

    /// Sets cookies (`Network.CookieParam` objects) in the browser.
    pub(crate) async fn set_cookies(&mut self, cookies: Vec<Value>) -> Result<(), BrowserError> {
        if cookies.is_empty() {
            return Ok(());
        }
        self.browser_exec(
            raw("Storage.setCookies", json!({ "cookies": cookies })),
            "setting the cookies",
        )
        .await?;
        Ok(())
    }

    /// The localStorage and sessionStorage of the origin of each open tab's
    /// page (web pages only), the first tab of an origin giving its
    /// sessionStorage.
    pub(crate) async fn tab_storage(&mut self) -> Result<Vec<OriginItems>, BrowserError> {
        let mut found: Vec<OriginItems> = Vec::new();
        for target in self.page_targets().await? {
            let Some(origin) = web_origin(&target.url) else {
                continue;
            };
            if found.iter().any(|o| o.origin == origin) {
                continue;
            }
            let page = self.page_for(&target.target_id).await?;
            let local = self.storage_items(&page, &origin, true).await?;
            let session = self.storage_items(&page, &origin, false).await?;
            found.push(OriginItems {
                origin,
                local,
                session,
            });
        }
        Ok(found)
    }

    async fn storage_items(
        &mut self,
        page: &Page,
        origin: &str,
        local: bool,
    ) -> Result<Vec<(String, String)>, BrowserError> {
        let params = json!({
            "storageId": { "securityOrigin": origin, "isLocalStorage": local }
        });
        let answer = self
            .exec(
                page,
                raw("DOMStorage.getDOMStorageItems", params),
                "reading the page's storage",
            )
            .await?;
        let entries = answer["entries"].as_array().cloned().unwrap_or_default();
        Ok(entries
            .iter()
            .filter_map(|pair| {
                let key = pair.get(0)?.as_str()?;
                let value = pair.get(1)?.as_str()?;
                Some((key.to_owned(), value.to_owned()))
            })
            .collect())
    }

    /// Puts each origin's items into its localStorage (kept by the profile
    /// for every tab) and the current tab's sessionStorage. Storage is
    /// only reachable from a document of its origin, so the current tab
    /// visits each origin, with every request of the tab answered by the
    /// browser itself with an empty page: nothing reaches the site and no
    /// page script runs. The tab ends on `about:blank`, with no history.
    pub(crate) async fn seed_storage(
        &mut self,
        origins: &[OriginItems],
    ) -> Result<(), BrowserError> {
        if origins.is_empty() {
            return Ok(());
        }
        let page = self.current();
        let mut paused = page
            .event_listener::<EventRequestPaused>()
            .await
            .map_err(|e| self.classify(e.into(), "watching the tab's requests"))?;
        self.exec(
            &page,
            raw(
                "Fetch.enable",
                json!({ "patterns": [{ "urlPattern": "*" }] }),
            ),
            "intercepting the tab's requests",
        )
        .await?;
        let answering = page.clone();
        let answer = tokio::spawn(async move {
            let body = base64::engine::general_purpose::STANDARD.encode(BLANK_PAGE);
            while let Some(request) = paused.next().await {
                let reply = raw(
                    "Fetch.fulfillRequest",
                    json!({
                        "requestId": request.request_id,
                        "responseCode": 200,
                        "responseHeaders": [{ "name": "Content-Type", "value": "text/html" }],
                        "body": body,
                    }),
                );
                let _ = answering.execute(reply).await;
            }
        });
        let seeded = self.seed_each(&page, origins).await;
        answer.abort();
        let _ = self
            .exec(
                &page,
                raw("Fetch.disable", json!({})),
                "ending the interception",
            )
            .await;
        self.blank(&page).await?;
        seeded
    }

    async fn seed_each(
        &mut self,
        page: &Page,
        origins: &[OriginItems],
    ) -> Result<(), BrowserError> {
        for origin in origins {
            let url = format!("{}/", origin.origin);
            self.visit(page, &url).await?;
            for (local, items) in [(true, &origin.local), (false, &origin.session)] {
                for (key, value) in items {
                    let params = json!({
                        "storageId": { "securityOrigin": origin.origin, "isLocalStorage": local },
                        "key": key,
                        "value": value,
                    });
                    self.exec(
                        page,
                        raw("DOMStorage.setDOMStorageItem", params),
                        "writing the page's storage",
                    )
                    .await?;
                }
            }
        }
        Ok(())
    }

    /// Loads `url` in `page` and waits for it, within the navigation limit.
    async fn visit(&mut self, page: &Page, url: &str) -> Result<(), BrowserError> {
        let limit = self.config.navigation_timeout;
        match tokio::time::timeout(limit, page.goto(url)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(self.classify(e.into(), &format!("opening {url}"))),
            Err(_) => Err(BrowserError::Timeout {
                action: format!("opening {url}"),
                after: limit,
            }),
        }
    }

    /// Leaves `page` on `about:blank` with no history to go back to.
    async fn blank(&mut self, page: &Page) -> Result<(), BrowserError> {
        self.visit(page, "about:blank").await?;
        self.exec(
            page,
            raw("Page.resetNavigationHistory", json!({})),
            "clearing the tab's history",
        )
        .await?;
        Ok(())
    }
}

fn raw(method: &'static str, params: Value) -> RawCommand {
    RawCommand { method, params }
}

/// `scheme://host[:port]` of a web page's URL; `None` for other schemes.
pub(crate) fn web_origin(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    Some(parsed.origin().ascii_serialization())
}
