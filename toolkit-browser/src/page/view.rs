//! Looking at the page: scrolling, screenshots, and running a script in it.

use serde::{Deserialize, Serialize};

use super::input::{DRAIN, Effects, await_effects, watch};
use super::live;
use super::pictures::{self, Mark};
use crate::browser::Browser;
use crate::error::BrowserError;

/// The result of [`Browser::scroll`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Scrolled {
    /// What was scrolled: `None` for the page, else a short description of
    /// the scrolled container.
    pub container: Option<String>,
    /// How far it actually moved, CSS pixels (negative: up). Zero at the
    /// end of the page.
    pub moved: i64,
    /// Pixels above the visible part afterwards.
    pub above: i64,
    /// Pixels below the visible part afterwards.
    pub below: i64,
    /// The visible height of what was scrolled.
    pub viewport: i64,
}

#[derive(Deserialize)]
struct ScrollResult {
    #[serde(default)]
    stale: bool,
    #[serde(flatten)]
    outcome: Option<Scrolled>,
}

impl Browser {
    /// Scrolls by `pages` viewport heights, down or up: the page, or (with
    /// `index`) the scrollable container holding that element. When the
    /// document itself does not scroll (an app shell), the largest visible
    /// scrollable element stands in for the page.
    ///
    /// # Errors
    ///
    /// [`BrowserError::InvalidInput`] for a non-positive or absurd number of
    /// pages, [`BrowserError::StaleElement`] for a gone element.
    pub async fn scroll(
        &self,
        pages: f64,
        down: bool,
        index: Option<u32>,
    ) -> Result<Scrolled, BrowserError> {
        if !(pages.is_finite() && pages > 0.0 && pages <= 100.0) {
            return Err(BrowserError::invalid(format!(
                "cannot scroll {pages} pages: give a number of pages between 0 and 100 \
                 (fractions such as 0.5 are fine) and the direction separately"
            )));
        }
        let mut session = self.live().await?;
        let page = session.current();
        let args = serde_json::json!({ "index": index, "pages": pages, "down": down });
        let result: ScrollResult = session.call(&page, "scroll", args).await?;
        live(index.unwrap_or_default(), result.stale, result.outcome)
    }

    /// A PNG screenshot of the current tab's viewport. With secrets in the
    /// [policy](Self::set_policy), text fields and elements holding one
    /// draw bullets while the screenshot is taken.
    ///
    /// # Errors
    ///
    /// A dead session or a time limit.
    pub async fn screenshot(&self) -> Result<Vec<u8>, BrowserError> {
        Ok(self.screenshot_masked().await?.0)
    }

    /// [`screenshot`](Self::screenshot), and how many elements were masked
    /// because they hold a secret.
    pub(crate) async fn screenshot_masked(&self) -> Result<(Vec<u8>, u32), BrowserError> {
        self.screenshot_marked(&[]).await
    }

    /// [`screenshot_masked`](Self::screenshot_masked) with `marks` drawn
    /// over the page (see `pictures.rs`) for the screenshot only: the
    /// layer is removed whether or not the screenshot succeeds.
    pub(crate) async fn screenshot_marked(
        &self,
        marks: &[Mark],
    ) -> Result<(Vec<u8>, u32), BrowserError> {
        let secrets = self.policy().secret_values();
        let mut session = self.live().await?;
        let page = session.current();
        let mut masked = 0;
        if !secrets.is_empty() {
            let args = serde_json::json!({ "values": secrets });
            let reply: serde_json::Value = session.call(&page, "mask", args).await?;
            masked = reply["masked"]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or_default();
        }
        let drawn = match pictures::draw(&mut session, &page, marks).await {
            Ok(drawn) => drawn,
            Err(e) => {
                // A layer drawn by a call that then timed out is removed too.
                pictures::erase(&mut session, &page).await;
                if masked > 0 {
                    let _: Result<serde_json::Value, _> =
                        session.call(&page, "unmask", serde_json::Value::Null).await;
                }
                return Err(e);
            }
        };
        let shot = session.screenshot(&page).await;
        if drawn {
            pictures::erase(&mut session, &page).await;
        }
        if masked > 0 {
            // Best effort: a page that navigated meanwhile has nothing left
            // to unmask.
            let _: Result<serde_json::Value, _> =
                session.call(&page, "unmask", serde_json::Value::Null).await;
        }
        let bytes = shot.map_err(|f| session.classify(f, "taking a screenshot"))?;
        Ok((bytes, masked))
    }

    /// Evaluates a JavaScript expression in the current tab's main frame
    /// (promises are awaited) and returns its JSON value (`null` for values
    /// JSON cannot hold).
    ///
    /// # Errors
    ///
    /// [`BrowserError::Script`] with the exception's message when it throws.
    pub async fn evaluate(&self, expression: &str) -> Result<serde_json::Value, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        session
            .evaluate(&page, expression, "evaluating the script")
            .await
    }

    /// [`evaluate`](Self::evaluate), then waits for what the script started
    /// (a navigation, a new tab) as [`click`](Self::click) does.
    pub(crate) async fn evaluate_settled(
        &self,
        expression: &str,
    ) -> Result<(serde_json::Value, Effects), BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        let watch = watch(&mut session, &page).await?;
        let value = session
            .evaluate(&page, expression, "evaluating the script")
            .await?;
        let effects = await_effects(&mut session, watch, &page, false, DRAIN, false).await?;
        Ok((value, effects))
    }
}
