//! DevTools commands on the running browser: time limits, and turning a
//! failure into the error the caller sees.
//!
//! [`Session::exec`] is the verb for a protocol command on a tab (input
//! events, history, files); code run in the page goes through the verbs of
//! `script.rs` instead. [`Session::navigate_to`] and
//! [`Session::screenshot`] are the two commands with limits of their own.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::NavigateReturns;
use chromiumoxide::cdp::browser_protocol::page::{CaptureScreenshotFormat, NavigateParams};
use chromiumoxide::cdp::browser_protocol::target::{GetTargetsParams, TargetInfo};
use chromiumoxide::error::CdpError;
use chromiumoxide::types::MethodId;
use chromiumoxide::{Command, Method, Page};
use serde::Serialize;

use super::Session;
use crate::error::BrowserError;

/// chromiumoxide abandons a navigation after its own limit (the navigation
/// time limit, see `Session::launch`); this crate waits a little longer so
/// that chromiumoxide has given up first, and the next navigation is not
/// queued behind a dead one.
const NAVIGATION_MARGIN: Duration = Duration::from_secs(1);

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

    /// Loads `url` in `page` and waits for its load event, within the
    /// navigation time limit.
    pub(crate) async fn navigate_to(
        &mut self,
        page: &Page,
        url: &str,
    ) -> Result<NavigateReturns, BrowserError> {
        // chromiumoxide waits for the new document's load event itself.
        let limit = self.config.navigation_timeout;
        let navigation = page.execute(NavigateParams::new(url.to_owned()));
        let outcome = match tokio::time::timeout(limit + NAVIGATION_MARGIN, navigation).await {
            Ok(Ok(response)) => Ok(response.result),
            Ok(Err(CdpError::Timeout)) | Err(_) => Err(Fail::Elapsed(limit)),
            Ok(Err(e)) => Err(Fail::Cdp(e)),
        };
        outcome.map_err(|f| self.classify(f, &format!("loading {url}")))
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
