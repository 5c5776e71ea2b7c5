//! The requests each tab has in flight, followed from the browser's
//! network events as they happen, so that a page map can tell at no cost
//! whether the page is still loading something that may change it (see
//! `page/map/settle.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, RequestId, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::target::TargetId;
use futures_util::StreamExt;

use super::super::lock_ignoring_poison;

/// A request in flight longer than this when a map starts is not waited
/// for: a long poll, a stalled download or a request whose end the browser
/// never reported; waiting a second more rarely changes the page.
const YOUNG: Duration = Duration::from_secs(2);

/// Per tab, the requests in flight that can change what the page shows:
/// the main frame's documents (a navigation), scripts, and the page's own
/// `fetch` and `XMLHttpRequest` calls. Images, fonts, media, event streams
/// and beacons are left out: they do not add or remove controls. So are
/// the documents of frames: the browser reports the start of a frame
/// from another site on the tab and its end on the frame's own target,
/// and a map counts frames still loading by itself.
#[derive(Default)]
pub(crate) struct Traffic {
    tabs: StdMutex<HashMap<TargetId, HashMap<RequestId, Instant>>>,
}

impl Traffic {
    /// Follows `page`'s requests until its target goes away. Network
    /// events are on already (chromiumoxide enables the domain on every
    /// page), so this costs no command.
    pub(crate) async fn follow(self: &Arc<Self>, page: &Page) {
        let (Ok(mut sent), Ok(mut finished), Ok(mut failed)) = (
            page.event_listener::<EventRequestWillBeSent>().await,
            page.event_listener::<EventLoadingFinished>().await,
            page.event_listener::<EventLoadingFailed>().await,
        ) else {
            return;
        };
        let tab = page.target_id().clone();
        let main = page.mainframe().await.ok().flatten();
        let traffic = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(ev) = sent.next() => {
                        let frame_document = ev.r#type == Some(ResourceType::Document)
                            && main.is_some()
                            && ev.frame_id != main;
                        if counts(ev.r#type.as_ref()) && !frame_document {
                            traffic.started(&tab, ev.request_id.clone());
                        }
                    }
                    Some(ev) = finished.next() => traffic.ended(&tab, &ev.request_id),
                    Some(ev) = failed.next() => traffic.ended(&tab, &ev.request_id),
                    else => break,
                }
            }
            lock_ignoring_poison(&traffic.tabs).remove(&tab);
        });
    }

    fn started(&self, tab: &TargetId, id: RequestId) {
        let mut tabs = lock_ignoring_poison(&self.tabs);
        let pending = tabs.entry(tab.clone()).or_default();
        // Requests the browser never reported the end of must not pile up.
        let now = Instant::now();
        pending.retain(|_, at| now.duration_since(*at) < YOUNG * 8);
        // A redirect is the same request again: it keeps its first start.
        pending.entry(id).or_insert(now);
    }

    fn ended(&self, tab: &TargetId, id: &RequestId) {
        if let Some(pending) = lock_ignoring_poison(&self.tabs).get_mut(tab) {
            pending.remove(id);
        }
    }

    /// How many of the tab's requests are in flight that started at most
    /// [`YOUNG`] before `since`.
    pub(crate) fn in_flight(&self, tab: &TargetId, since: Instant) -> usize {
        let tabs = lock_ignoring_poison(&self.tabs);
        tabs.get(tab).map_or(0, |pending| {
            pending
                .values()
                .filter(|at| since.saturating_duration_since(**at) <= YOUNG)
                .count()
        })
    }
}

/// Whether a request of this type can change the page's controls.
fn counts(kind: Option<&ResourceType>) -> bool {
    matches!(
        kind,
        Some(
            ResourceType::Document | ResourceType::Script | ResourceType::Xhr | ResourceType::Fetch
        )
    )
}
