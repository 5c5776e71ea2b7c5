//! DevTools commands on the running browser: time limits, and turning a
//! failure into the error the caller sees.
//!
//! [`Session::exec`] is the verb for a protocol command on a tab (input
//! events, history, files); code run in the page goes through the verbs of
//! `script.rs` instead. [`Session::navigate_to`] and
//! [`Session::screenshot`] are the two commands with limits of their own.

use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, EventLifecycleEvent, StopLoadingParams,
};
use chromiumoxide::cdp::browser_protocol::target::{GetTargetsParams, TargetInfo};
use chromiumoxide::error::CdpError;
use chromiumoxide::types::MethodId;
use chromiumoxide::{Command, Method, Page};
use futures_util::StreamExt;
use serde::Serialize;

use super::Session;
use crate::error::BrowserError;

/// How long stopping a load may take before the tab is left as it is.
const STOP_LIMIT: Duration = Duration::from_millis(500);

/// A failed protocol call before it is classified ([`Session::classify`]):
/// kept apart from [`BrowserError`] so that retries can tell a document
/// that went away from other failures.
pub(crate) enum Fail {
    Cdp(CdpError),
    Elapsed(Duration),
    /// The page's renderer crashed before the command was answered.
    Crashed,
}

impl From<CdpError> for Fail {
    fn from(error: CdpError) -> Self {
        Self::Cdp(error)
    }
}

/// A command chromiumoxide has no type for, or whose parameters are built
/// as JSON (the same commands go to frame sessions over the frame link).
pub(crate) struct RawCommand {
    pub(crate) method: &'static str,
    pub(crate) params: serde_json::Value,
}

impl Serialize for RawCommand {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(serializer)
    }
}

impl Method for RawCommand {
    fn identifier(&self) -> MethodId {
        self.method.into()
    }
}

impl Command for RawCommand {
    type Response = serde_json::Value;
}

impl Session {
    /// Turns a failed call into the error the caller sees: a dead browser
    /// first (a dropped channel or a timeout usually means that), then the
    /// protocol's own message.
    pub(crate) fn classify(&mut self, fail: Fail, action: &str) -> BrowserError {
        if let Some(dead) = self.death() {
            return dead;
        }
        match fail {
            Fail::Crashed => BrowserError::Crashed,
            Fail::Elapsed(after) => BrowserError::Timeout {
                action: action.to_owned(),
                after,
            },
            Fail::Cdp(CdpError::Timeout) => BrowserError::Timeout {
                action: action.to_owned(),
                after: self.config.navigation_timeout,
            },
            Fail::Cdp(CdpError::ChannelSendError(_) | CdpError::Ws(_) | CdpError::NoResponse) => {
                BrowserError::Disconnected {
                    detail: "the DevTools connection to the browser was lost".into(),
                }
            }
            Fail::Cdp(CdpError::Chrome(e)) => BrowserError::protocol(e.message),
            Fail::Cdp(CdpError::JavascriptException(e)) => BrowserError::script(
                e.exception
                    .as_ref()
                    .and_then(|x| x.description.clone())
                    .unwrap_or(e.text),
            ),
            Fail::Cdp(other) => BrowserError::protocol(other),
        }
    }

    /// Runs one command on `page` under the command time limit, the
    /// failure left unclassified for the retries of this module's
    /// neighbours.
    pub(super) async fn exec_raw<C: Command>(
        &self,
        page: &Page,
        cmd: C,
    ) -> Result<C::Response, Fail> {
        let limit = self.config.command_timeout;
        // A crashed renderer never answers: the crash ends the wait.
        tokio::select! {
            biased;
            () = self.crashes.wait(page.target_id()) => Err(Fail::Crashed),
            answer = tokio::time::timeout(limit, page.execute(cmd)) => match answer {
                Ok(Ok(response)) => Ok(response.result),
                Ok(Err(e)) => Err(Fail::Cdp(e)),
                Err(_) => Err(Fail::Elapsed(limit)),
            },
        }
    }

    /// Runs one DevTools command on `page` under the command time limit; a
    /// failure becomes the error of `action`.
    pub(crate) async fn exec<C: Command>(
        &mut self,
        page: &Page,
        cmd: C,
        action: &str,
    ) -> Result<C::Response, BrowserError> {
        let result = self.exec_raw(page, cmd).await;
        result.map_err(|f| self.classify(f, action))
    }

    /// Loads `url` in `page` and waits for its load event, within
    /// `within`; answers the browser's reason when the load failed
    /// (`net::ERR_CONNECTION_REFUSED`), which leaves the tab on the
    /// browser's error page.
    ///
    /// Past `within` the load is stopped, as the browser's Stop button
    /// would: a server that has not answered leaves the tab on the page it
    /// showed ([`BrowserError::Navigation`] naming the server), and a page
    /// that answered but is still loading stays as far as it got
    /// ([`BrowserError::Timeout`]). Either way the tab is usable at once:
    /// a tab left waiting on a silent server answers no script until the
    /// browser gives up on it.
    pub(crate) async fn navigate_to(
        &mut self,
        page: &Page,
        url: &str,
        within: Duration,
    ) -> Result<Option<String>, BrowserError> {
        let started = Instant::now();
        let action = format!("loading {url}");
        // Subscribed before the navigation starts: none of its events can
        // be missed.
        let mut lifecycle = match page.event_listener::<EventLifecycleEvent>().await {
            Ok(events) => events,
            Err(e) => return Err(self.classify(e.into(), &action)),
        };
        let params = serde_json::json!({ "url": url });
        let answer = match self
            .tab_request(page, "Page.navigate", params, within)
            .await
        {
            Ok(answer) => answer,
            Err(Fail::Elapsed(_)) => {
                self.stop_loading(page).await;
                return Err(no_answer(url, within));
            }
            Err(fail) => return Err(self.classify(fail, &action)),
        };
        let error_text = answer["errorText"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        // No new document comes: a navigation within the document (no
        // loader), a download, or a load that was cancelled (a `204 No
        // Content`, the navigation guard's answer to a load it stops).
        // Any other failure commits the browser's error page, waited for
        // like a page.
        let aborted = error_text.as_deref() == Some("net::ERR_ABORTED");
        let loader = answer["loaderId"].as_str().map(str::to_owned);
        let Some(loader) = loader.filter(|_| !aborted && answer["isDownload"] != true) else {
            return Ok(error_text);
        };
        // The new document's lifecycle: `init` once the server answered and
        // the document was committed, then its `load`.
        let mut committed = false;
        let left = within.saturating_sub(started.elapsed());
        let loaded = tokio::time::timeout(left, async {
            while let Some(event) = lifecycle.next().await {
                if event.loader_id.as_ref() == loader {
                    committed = true;
                    if event.name == "load" {
                        return true;
                    }
                }
            }
            false
        })
        .await;
        match loaded {
            Ok(true) => Ok(error_text),
            // The tab went away (its events ended with it).
            Ok(false) => Err(self.classify(Fail::Crashed, &action)),
            Err(_) => {
                self.stop_loading(page).await;
                match (error_text, committed) {
                    (Some(text), _) => Ok(Some(text)),
                    (None, false) => Err(no_answer(url, within)),
                    (None, true) => Err(BrowserError::Timeout {
                        action,
                        after: self.config.navigation_timeout,
                    }),
                }
            }
        }
    }

    /// Stops whatever `page` is loading, as the browser's Stop button
    /// does, within a moment: a page too busy to take it is left as it is.
    async fn stop_loading(&self, page: &Page) {
        let stop = self.exec_raw(page, StopLoadingParams::default());
        let _ = tokio::time::timeout(STOP_LIMIT, stop).await;
    }

    /// A PNG of what `page` shows, within the command time limit; the
    /// failure, unclassified, is handed back for the caller to classify
    /// once it has cleaned up the page ([`classify`](Self::classify)).
    pub(crate) async fn screenshot(&self, page: &Page) -> Result<Vec<u8>, Fail> {
        let params = chromiumoxide::page::ScreenshotParams::builder()
            .format(CaptureScreenshotFormat::Png)
            .build();
        let limit = self.config.command_timeout;
        match tokio::time::timeout(limit, page.screenshot(params)).await {
            Ok(Ok(bytes)) => Ok(bytes),
            Ok(Err(e)) => Err(Fail::Cdp(e)),
            Err(_) => Err(Fail::Elapsed(limit)),
        }
    }

    /// Runs one browser-level command under the command time limit.
    pub(crate) async fn browser_exec<C: Command>(
        &mut self,
        cmd: C,
        action: &str,
    ) -> Result<C::Response, BrowserError> {
        let limit = self.config.command_timeout;
        let result = match tokio::time::timeout(limit, self.cdp.execute(cmd)).await {
            Ok(Ok(response)) => Ok(response.result),
            Ok(Err(e)) => Err(Fail::Cdp(e)),
            Err(_) => Err(Fail::Elapsed(limit)),
        };
        result.map_err(|f| self.classify(f, action))
    }

    /// The browser's page targets (its tabs), fresh from the browser: the
    /// handler's own list lags behind closes and popups.
    pub(crate) async fn page_targets(&mut self) -> Result<Vec<TargetInfo>, BrowserError> {
        let targets = self
            .browser_exec(GetTargetsParams::default(), "listing the tabs")
            .await?;
        Ok(targets
            .target_infos
            .into_iter()
            .filter(|t| t.r#type == "page")
            .collect())
    }
}

/// The error of a load whose server sent nothing back within `within`
/// (the load was stopped): it names the server, the one thing the model
/// can change.
fn no_answer(url: &str, within: Duration) -> BrowserError {
    let server = url::Url::parse(url)
        .ok()
        .and_then(|u| {
            let host = u.host_str()?.to_owned();
            Some(match u.port() {
                Some(port) => format!("{host}:{port}"),
                None => host,
            })
        })
        .unwrap_or_else(|| url.to_owned());
    BrowserError::Navigation {
        url: url.to_owned(),
        detail: format!(
            "the server {server} did not answer within {:.1}s, so the load was stopped and \
             the tab still shows the page it showed before",
            within.as_secs_f64()
        ),
    }
}
