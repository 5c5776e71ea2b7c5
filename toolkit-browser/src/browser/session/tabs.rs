//! Tabs: listing, switching, opening, closing, and the short ids the model
//! names them by.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::GetFrameTreeParams;
use chromiumoxide::cdp::browser_protocol::target::{CloseTargetParams, TargetId, TargetInfo};
use serde::Serialize;

use super::Session;
use crate::browser::Browser;
use crate::error::BrowserError;

/// One open tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TabInfo {
    /// The short id the model names the tab by: the last four characters of
    /// Chromium's target id, lower-cased (longer only if two open tabs would
    /// share them). Stable for as long as the tab is open.
    pub id: String,
    /// The tab's URL.
    pub url: String,
    /// The tab's title.
    pub title: String,
    /// Whether actions currently act on this tab.
    pub current: bool,
}

impl std::fmt::Display for TabInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let title = if self.title.is_empty() {
            "(untitled)"
        } else {
            &self.title
        };
        write!(f, "Tab {}: {} \u{2014} {}", self.id, title, self.url)?;
        if self.current {
            f.write_str(" (current)")?;
        }
        Ok(())
    }
}

/// What the session remembers about tabs: their short ids, the order in
/// which they were first seen (the listing order), and which ones it opened
/// itself.
#[derive(Debug, Default)]
pub(crate) struct TabBook {
    short: HashMap<TargetId, String>,
    order: HashMap<TargetId, u64>,
    seq: u64,
    own: Vec<TargetId>,
}

impl TabBook {
    pub(crate) fn seen(&mut self, id: &TargetId) {
        if !self.order.contains_key(id) {
            self.seq += 1;
            self.order.insert(id.clone(), self.seq);
        }
    }

    pub(crate) fn opened(&mut self, id: &TargetId) {
        self.seen(id);
        self.own.push(id.clone());
    }

    pub(crate) fn own(&self) -> Vec<TargetId> {
        self.own.clone()
    }

    fn forget(&mut self, id: &TargetId) {
        self.short.remove(id);
        self.order.remove(id);
        self.own.retain(|t| t != id);
    }

    /// The tab's short id, given once and kept: the shortest suffix of the
    /// target id (from four characters) that no other open tab holds.
    fn short_id(&mut self, id: &TargetId) -> String {
        if let Some(short) = self.short.get(id) {
            return short.clone();
        }
        let full: Vec<char> = id.as_ref().to_lowercase().chars().collect();
        let mut len = 4.min(full.len());
        let short = loop {
            let candidate: String = full[full.len() - len..].iter().collect();
            if len >= full.len() || !self.short.values().any(|s| *s == candidate) {
                break candidate;
            }
            len = (len + 2).min(full.len());
        };
        self.short.insert(id.clone(), short.clone());
        short
    }

    fn rank(&self, id: &TargetId) -> u64 {
        self.order.get(id).copied().unwrap_or(u64::MAX)
    }
}

impl Session {
    /// The open tabs in the order first seen, the current one marked. If the
    /// current tab has gone (the page closed itself), the most recently seen
    /// remaining tab becomes current, or a blank tab is opened.
    pub(crate) async fn tab_list(&mut self) -> Result<Vec<TabInfo>, BrowserError> {
        let mut targets = self.page_targets().await?;
        let current = self.current.target_id().clone();
        if !targets.iter().any(|t| t.target_id == current) {
            self.tabs.forget(&current);
            self.replace_current(&targets).await?;
            targets = self.page_targets().await?;
        }
        Ok(self.describe_tabs(targets))
    }

    /// [`tab_list`](Self::tab_list) from a list of the browser's targets
    /// fetched meanwhile (see `Browser::page_map`, which fetches it while
    /// the page is walked); `None` when the current tab is not among them,
    /// and `tab_list` must pick another.
    pub(crate) fn tabs_from(&mut self, targets: Vec<TargetInfo>) -> Option<Vec<TabInfo>> {
        let targets: Vec<TargetInfo> = targets.into_iter().filter(|t| t.r#type == "page").collect();
        let current = self.current.target_id();
        if !targets.iter().any(|t| &t.target_id == current) {
            return None;
        }
        Some(self.describe_tabs(targets))
    }

    fn describe_tabs(&mut self, mut targets: Vec<TargetInfo>) -> Vec<TabInfo> {
        for t in &targets {
            self.tabs.seen(&t.target_id);
        }
        // Closed tabs' ids are released so the set of taken ids is the open
        // tabs' only.
        let open: Vec<TargetId> = targets.iter().map(|t| t.target_id.clone()).collect();
        let gone: Vec<TargetId> = self
            .tabs
            .order
            .keys()
            .filter(|id| !open.contains(id))
            .cloned()
            .collect();
        for id in &gone {
            self.tabs.forget(id);
        }
        targets.sort_by_key(|t| self.tabs.rank(&t.target_id));
        let current = self.current.target_id().clone();
        targets
            .into_iter()
            .map(|t| TabInfo {
                id: self.tabs.short_id(&t.target_id),
                current: t.target_id == current,
                url: self.redactor.redact(&t.url).into_owned(),
                title: self.redactor.redact(&t.title).into_owned(),
            })
            .collect()
    }

    /// Makes another tab current after the current one went away.
    async fn replace_current(&mut self, targets: &[TargetInfo]) -> Result<(), BrowserError> {
        let next = targets
            .iter()
            .max_by_key(|t| {
                let rank = self.tabs.rank(&t.target_id);
                // Unknown tabs rank last.
                if rank == u64::MAX { 0 } else { rank }
            })
            .map(|t| t.target_id.clone());
        let page = match next {
            Some(id) => self.page_for(&id).await?,
            None => self.new_tab("about:blank").await?,
        };
        self.adopt(page).await
    }

    /// The `Page` of a target, waiting for chromiumoxide to attach to it
    /// (a popup is announced before it is attached).
    pub(crate) async fn page_for(&mut self, id: &TargetId) -> Result<Page, BrowserError> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.cdp.get_page(id.clone()).await {
                Ok(page) => return Ok(page),
                Err(_) if Instant::now() < deadline => {
                    if let Some(dead) = self.death() {
                        return Err(dead);
                    }
                    tokio::time::sleep(Duration::from_millis(15)).await;
                }
                Err(e) => {
                    return Err(self.classify(e.into(), "attaching to the tab"));
                }
            }
        }
    }

    /// Closes tabs and waits (up to two seconds) until the browser no longer
    /// lists them: closing is asynchronous, and a listing that still showed
    /// them would be wrong.
    pub(crate) async fn close_targets(&mut self, targets: &[TargetId]) -> Result<(), BrowserError> {
        for target in targets {
            self.browser_exec(CloseTargetParams::new(target.clone()), "closing a tab")
                .await?;
        }
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline
            && self
                .page_targets()
                .await?
                .iter()
                .any(|t| targets.contains(&t.target_id))
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        Ok(())
    }

    /// Opens a tab at `url` and waits for it to load.
    pub(crate) async fn new_tab(&mut self, url: &str) -> Result<Page, BrowserError> {
        let limit = self.config.navigation_timeout;
        let opened = tokio::time::timeout(limit, self.cdp.new_page(url)).await;
        let page = match opened {
            Ok(Ok(page)) => page,
            Ok(Err(e)) => return Err(self.classify(e.into(), "opening a tab")),
            Err(_) => {
                return Err(BrowserError::Timeout {
                    action: format!("opening a tab at {url}"),
                    after: limit,
                });
            }
        };
        self.tabs.opened(page.target_id());
        Ok(page)
    }

    /// The target id of the open tab named `id`: its short id, its full
    /// target id, or (case-insensitively) a unique suffix of it.
    async fn find_tab(&mut self, id: &str) -> Result<(TargetId, Vec<TabInfo>), BrowserError> {
        // Listing assigns every open tab its short id (and drops closed
        // ones), so the book then holds exactly the open tabs.
        let tabs = self.tab_list().await?;
        let wanted = id.trim().trim_start_matches('#').to_ascii_lowercase();
        // An exact short id wins: when two ids share their last four
        // characters, the newer tab's short id is longer, and the shorter
        // one must still name the older tab.
        let exact = self
            .tabs
            .short
            .iter()
            .find(|(_, short)| **short == wanted)
            .map(|(target, _)| target);
        let matches: Vec<&TargetId> = match exact {
            Some(target) => vec![target],
            None => self
                .tabs
                .short
                .keys()
                .filter(|target| {
                    !wanted.is_empty() && target.as_ref().to_ascii_lowercase().ends_with(&wanted)
                })
                .collect(),
        };
        match matches.as_slice() {
            [one] => Ok(((*one).clone(), tabs)),
            _ => Err(BrowserError::NoSuchTab {
                id: id.to_owned(),
                open: tabs.into_iter().map(|t| t.id).collect(),
            }),
        }
    }
}

impl Browser {
    /// The open tabs, in the order they were first seen, the current one
    /// marked.
    ///
    /// # Errors
    ///
    /// A dead or closed session.
    pub async fn tabs(&self) -> Result<Vec<TabInfo>, BrowserError> {
        self.live().await?.tab_list().await
    }

    /// The DevTools target ids of the open tabs (a tab's main frame has its
    /// target's id), prerendered pages left out.
    pub(crate) async fn tab_target_ids(&self) -> Result<Vec<String>, BrowserError> {
        let mut session = self.live().await?;
        let targets = session.page_targets().await?;
        Ok(targets
            .into_iter()
            .filter(|t| t.subtype.is_none())
            .map(|t| t.target_id.as_ref().to_owned())
            .collect())
    }

    /// The tab actions act on.
    ///
    /// # Errors
    ///
    /// A dead or closed session.
    pub async fn current_tab(&self) -> Result<TabInfo, BrowserError> {
        let tabs = self.tabs().await?;
        tabs.into_iter()
            .find(|t| t.current)
            .ok_or_else(|| BrowserError::protocol("the current tab is not among the open tabs"))
    }

    /// Makes the tab `id` current and brings it to the front.
    ///
    /// # Errors
    ///
    /// [`BrowserError::NoSuchTab`] (listing the open tabs) for an unknown id.
    pub async fn switch_tab(&self, id: &str) -> Result<TabInfo, BrowserError> {
        let mut session = self.live().await?;
        let (target, _) = session.find_tab(id).await?;
        let page = session.page_for(&target).await?;
        session.adopt(page).await?;
        current_of(session.tab_list().await?)
    }

    /// Closes the tab `id`. When it was the current tab, the most recently
    /// seen remaining tab becomes current (a blank tab is opened if none
    /// remains). Returns the tab that is current afterwards.
    ///
    /// # Errors
    ///
    /// [`BrowserError::NoSuchTab`] for an unknown id.
    pub async fn close_tab(&self, id: &str) -> Result<TabInfo, BrowserError> {
        let mut session = self.live().await?;
        let (target, tabs) = session.find_tab(id).await?;
        if tabs.len() == 1 {
            // A browser without tabs may quit; keep one open.
            let blank = session.new_tab("about:blank").await?;
            session.adopt(blank).await?;
        }
        session.close_targets(std::slice::from_ref(&target)).await?;
        current_of(session.tab_list().await?)
    }

    /// Opens a new tab at `url`, waits for it to load, and makes it current.
    ///
    /// # Errors
    ///
    /// [`BrowserError::Blocked`] when the [policy](Self::set_policy) does
    /// not allow the URL or its scheme (as [`navigate`](Self::navigate)
    /// judges it), [`BrowserError::Navigation`] when the URL cannot
    /// be loaded, [`BrowserError::Timeout`] past the navigation time limit.
    pub async fn open_tab(&self, url: &str) -> Result<TabInfo, BrowserError> {
        self.check_policy(url)?;
        let mut session = self.live().await?;
        let page = session.new_tab(url).await.map_err(|e| match e {
            BrowserError::Protocol { detail } => BrowserError::Navigation {
                url: url.to_owned(),
                detail,
            },
            other => other,
        })?;
        session.adopt(page).await?;
        current_of(session.tab_list().await?)
    }
}

impl Browser {
    /// The browser's error page the current tab shows, if it shows one:
    /// `Some` with the URL that failed to load when the browser names it.
    /// A tab whose page failed to load (or whose renderer refused it)
    /// holds a `chrome-error:` document from which no link, form or
    /// script navigates any more. Read from the browser's frame tree, not
    /// from the page, so no script can hide it or stall the check.
    pub(crate) async fn error_page(&self) -> Result<Option<Option<String>>, BrowserError> {
        let mut session = self.live().await?;
        let page = session.current();
        // The main frame's URL as the browser's frame events gave it: no
        // round trip to the renderer, which may be busy.
        let url = page.url().await.ok().flatten().unwrap_or_default();
        if !url.to_ascii_lowercase().starts_with("chrome-error:") {
            return Ok(None);
        }
        let tree = session
            .exec(
                &page,
                GetFrameTreeParams::default(),
                "reading the tab's frames",
            )
            .await;
        let failed = tree
            .ok()
            .and_then(|t| t.frame_tree.frame.unreachable_url)
            .filter(|u| !u.is_empty());
        Ok(Some(failed))
    }

    /// Closes the current tab when it is a popup that never loaded a page
    /// of its own (the browser holds it at `about:blank`, whatever its
    /// opener wrote into it) and another tab is open; the tab that opened
    /// it becomes current again, if it is still open. Returns the tab
    /// current afterwards, or `None` when the current tab is no such popup.
    pub(crate) async fn close_blank_popup(&self) -> Result<Option<TabInfo>, BrowserError> {
        let mut session = self.live().await?;
        let current = session.current().target_id().clone();
        let targets = session.page_targets().await?;
        let Some(popup) = targets.iter().find(|t| t.target_id == current) else {
            return Ok(None);
        };
        let blank_popup = popup.url == "about:blank" && popup.opener_id.is_some();
        if !blank_popup || targets.len() < 2 {
            return Ok(None);
        }
        let opener = popup
            .opener_id
            .clone()
            .filter(|o| targets.iter().any(|t| t.target_id == *o));
        session.close_targets(&[current]).await?;
        if let Some(opener) = opener {
            let page = session.page_for(&opener).await?;
            session.adopt(page).await?;
        }
        current_of(session.tab_list().await?).map(Some)
    }

    /// Replaces the current tab with a new one at `about:blank`, which
    /// becomes current, and closes the old one. Returns the new tab.
    pub(crate) async fn replace_current_tab(&self) -> Result<TabInfo, BrowserError> {
        let mut session = self.live().await?;
        let old = session.current();
        let fresh = session.new_tab("about:blank").await?;
        session.adopt(fresh).await?;
        // The old tab is no longer current either way; a failure to close
        // it must not hide that the new one is there.
        let _ = session.close_targets(&[old.target_id().clone()]).await;
        current_of(session.tab_list().await?)
    }
}

fn current_of(tabs: Vec<TabInfo>) -> Result<TabInfo, BrowserError> {
    tabs.into_iter()
        .find(|t| t.current)
        .ok_or_else(|| BrowserError::protocol("the current tab is not among the open tabs"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_ids_are_the_last_four_characters_and_never_collide() {
        let mut book = TabBook::default();
        let a = TargetId::from("8E1F00AA11DD2B3C4D5E6F7A8B9CAB12".to_owned());
        let b = TargetId::from("0000000000000000000000000077AB12".to_owned());
        let c = TargetId::from("x".to_owned());
        assert_eq!(book.short_id(&a), "ab12");
        assert_eq!(
            book.short_id(&b),
            "77ab12",
            "the newer tab gets a longer id"
        );
        assert_eq!(book.short_id(&a), "ab12", "ids are stable");
        assert_eq!(book.short_id(&c), "x");
        book.forget(&a);
        let d = TargetId::from("FFFFFFFFFFFFFFFFFFFFFFFFFFFFAB12".to_owned());
        assert_eq!(book.short_id(&d), "ab12", "a closed tab's id is free again");
    }
}
