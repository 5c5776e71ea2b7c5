//! The page map: the visible interactive elements of the current tab, each
//! with a number, and the compact text the model reads.
//!
//! `model` holds what a map is, `render` how it reads, `walk` how it is
//! taken from the documents of a tab, `settle` how long it waits for the
//! page; this file holds the [`Browser`] operations that make one.

mod find;
mod model;
mod render;
mod settle;
mod walk;

use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::target::GetTargetsParams;
use serde::Deserialize;

pub use find::FoundElements;
pub use model::{
    CHARS_PER_TOKEN, Element, MAX_ELEMENTS, MAX_ORIENTATION_CHARS, MAX_TEXT_CHARS, MapText,
    PageMap, ScrollPosition, VIEWPORT_EXPANSION_PX, estimate_tokens,
};

use self::settle::{settle, settle_args};
use self::walk::{FramePlan, Walk, advance_past, ahead_calls, walk_again, walk_args, walk_frames};
use super::{live, live_element};
use crate::browser::{Browser, Session, TabInfo};
use crate::error::BrowserError;

/// How long [`Browser::page_map`] waits for a document that is still being
/// parsed.
const LOADING_GRACE: Duration = Duration::from_secs(3);

/// How many levels of closed shadow roots (a closed root inside one) a map
/// opens.
const MAX_CLOSED_LEVELS: usize = 3;

/// What the page-side lookup of one element returns.
#[derive(Deserialize)]
struct Lookup {
    #[serde(default)]
    stale: bool,
    el: Option<Element>,
    /// The origin of the element's document (a frame's own).
    #[serde(default)]
    origin: Option<String>,
}

impl Browser {
    /// Maps the current tab: walks the page (shadow roots and
    /// same-origin iframes included) for visible, unobstructed interactive
    /// elements and numbers them, and lists the tabs. A page that is still
    /// changing is waited for first, within the session's settle limit
    /// ([`BrowserConfigBuilder::settle_limit`](crate::BrowserConfigBuilder::settle_limit)).
    ///
    /// # Errors
    ///
    /// A dead or closed session, or a page that breaks the walk.
    pub async fn page_map(&self) -> Result<PageMap, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        // The frames from other sites the last map of this tab walked are
        // walked again while the tab's document is walked, each at the
        // place it had, numbering within a range of its own below the
        // tab's: a page whose frames have not moved is mapped in one
        // round trip, not one per level of frames.
        let base = self.next_index();
        let known = session.known_frames(page.target_id());
        let (ahead, tab_base) = ahead_calls(base, &known);
        let mut args = walk_args(tab_base, None, (MAX_ELEMENTS, MAX_ORIENTATION_CHARS), None);
        let started = Instant::now();
        let settle_limit = session.config().settle_limit();
        if !settle_limit.is_zero() {
            args["settle"] = settle_args(settle_limit);
        }
        // The tab list is fetched while the page is walked, on the tab's
        // own connection.
        let listing = page.clone();
        let targets = async move { listing.execute(GetTargetsParams::default()).await };
        let ((tab_answer, frame_answers), targets) =
            tokio::join!(session.call_ahead(&page, "walk", &args, &ahead), targets);
        let mut plan = FramePlan::from_ahead(self, &mut session, base, known, frame_answers);
        let tab = page.target_id().clone();
        let map = async {
            let walk = session.decode::<Walk>(tab_answer);
            let listed = targets
                .ok()
                .and_then(|t| session.tabs_from(t.result.target_infos));
            let (page, tabs, walk) = match listed {
                Some(tabs) => (page, tabs, walk?),
                // The current tab has gone (the page closed itself):
                // another one becomes current, and is walked instead.
                None => {
                    let tabs = session.tab_list().await?;
                    let page = session.current();
                    let walk = session.call(&page, "walk", args.clone()).await?;
                    plan.forget_ahead();
                    (page, tabs, walk)
                }
            };
            advance_past(self, tab_base, walk.next);
            let map = self
                .finish_map(&mut session, &page, tabs, walk, &args, &mut plan, started)
                .await?;
            session.remember_frames(page.target_id(), std::mem::take(&mut plan.walked));
            Ok(map)
        }
        .await;
        if map.is_err() {
            // A walk that failed (past the time limit, say) may still have
            // handed out numbers from `tab_base` on, which no answer
            // recorded: none of them may be handed out again, and the next
            // map starts afresh.
            self.advance_index(tab_base.max(self.next_index()).saturating_add(MAX_ELEMENTS));
            session.remember_frames(&tab, Vec::new());
        }
        map
    }

    /// The map from the first walk of the tab's document: walked again
    /// while the document is still being parsed (what it shows now is not
    /// what the model will act on), then the frames from other sites in
    /// it.
    #[allow(clippy::too_many_arguments)] // one map's state
    async fn finish_map(
        &self,
        session: &mut Session,
        page: &Page,
        tabs: Vec<TabInfo>,
        mut walk: Walk,
        args: &serde_json::Value,
        plan: &mut FramePlan,
        started: Instant,
    ) -> Result<PageMap, BrowserError> {
        let (still_changing, waited) =
            settle(self, session, page, &mut walk, args, started).await?;
        let settle_ms = waited.map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        // Closed shadow roots found through DevTools are walked as open
        // ones (and the roots inside them, a few levels deep).
        let mut opened = false;
        for _ in 0..MAX_CLOSED_LEVELS {
            if walk.closed_hosts == 0 || session.open_closed_roots(page).await? == 0 {
                break;
            }
            opened = true;
            walk_again(self, session, page, &mut walk, args).await?;
        }
        // A new document has new frames, one still being parsed is walked
        // again below, and a page walked again above has its frames walked
        // after it.
        if walk.first || walk.ready == "loading" || waited.is_some() || opened {
            plan.forget_ahead();
        }
        let deadline = Instant::now() + LOADING_GRACE;
        while walk.ready == "loading" && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
            walk_again(self, session, page, &mut walk, args).await?;
        }
        let (elements, texts, allowance) = walk_frames(self, session, page, &mut walk, plan).await;
        let mut map = PageMap {
            url: walk.url,
            title: walk.title,
            tabs,
            scroll: walk.scroll,
            elements,
            texts,
            truncated: allowance.truncated,
            cross_origin_frames: walk.cross_origin_frames.max(allowance.seen_frames)
                - allowance.mapped_frames,
            nothing_visible: walk.nothing_visible,
            pdf: walk.pdf,
            walk_ms: walk.ms,
            still_changing,
            settle_ms,
            token_budget: session.config().map_token_budget(),
        };
        // The map is what the model reads at every step: a secret typed
        // into a field (or echoed by the page) must not show in it.
        map.redact(self.policy().redactor());
        Ok(map)
    }

    /// The element numbered `index` on the current tab, described as it is
    /// now (its value may have changed since the map was made).
    ///
    /// # Errors
    ///
    /// [`BrowserError::StaleElement`] when no element of the current page
    /// has that number any more (or never had): the model should read the
    /// new page map.
    pub async fn element(&self, index: u32) -> Result<Element, BrowserError> {
        let found = self.lookup(index).await?;
        live_element(index, found.stale, found.el, self.policy().redactor())
    }

    /// The origin of the document element `index` is in
    /// (`http://127.0.0.1:8080`; `null` for an opaque one): a frame's own
    /// when the element is in a frame, which may be another site than the
    /// tab's.
    pub(crate) async fn element_origin(&self, index: u32) -> Result<String, BrowserError> {
        let found = self.lookup(index).await?;
        live(index, found.stale, found.el)?;
        Ok(found.origin.unwrap_or_else(|| "null".to_owned()))
    }

    async fn lookup(&self, index: u32) -> Result<Lookup, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        let args = serde_json::json!({ "index": index, "maxText": MAX_TEXT_CHARS });
        session.call(&page, "elementInfo", args).await
    }
}
