//! Waiting for a settled page: no request in flight that can change it,
//! no animation about to end near the viewport, the DOM quiet for a
//! moment.

use std::time::{Duration, Instant};

use chromiumoxide::Page;

use super::model::VIEWPORT_EXPANSION_PX;
use super::walk::{Walk, walk_again};
use crate::browser::{Browser, Session};
use crate::error::BrowserError;

/// How long the DOM must have been left alone for the page to count as
/// settled: a page that renders in a few steps (a request's answer, then
/// a list built from it) usually takes them within this.
const QUIET_SPELL: Duration = Duration::from_millis(100);

/// How often a map that waits for requests alone looks again.
const REQUEST_POLL: Duration = Duration::from_millis(40);

/// The shortest pause between two looks at a page that is still changing.
const MIN_PAUSE: Duration = Duration::from_millis(10);

/// The page script's `busy` arguments (and the `settle` part of the
/// tab's walk): the quiet spell the DOM needs, how long the map can still
/// wait (animations ending later are not waited for) and how far beyond
/// the viewport an animation still matters.
pub(super) fn settle_args(left: Duration) -> serde_json::Value {
    serde_json::json!({
        "quiet": u64::try_from(QUIET_SPELL.as_millis()).unwrap_or(u64::MAX),
        "within": u64::try_from(left.as_millis()).unwrap_or(u64::MAX),
        "expand": VIEWPORT_EXPANSION_PX,
    })
}

/// Waits until the page `walk` mapped has settled, within the
/// session's settle limit counted from `started`, and walks it again
/// if it had not: no request in flight that can change it, no
/// animation about to end near the viewport, the DOM quiet for
/// [`QUIET_SPELL`]. The first walk already said whether the page was
/// busy, so a quiet page costs no round trip more. Returns what was
/// still changing when the limit ran out, and how long it waited, if
/// it did.
pub(super) async fn settle(
    browser: &Browser,
    session: &mut Session,
    page: &Page,
    walk: &mut Walk,
    args: &serde_json::Value,
    started: Instant,
) -> Result<(Vec<String>, Option<Duration>), BrowserError> {
    let limit = session.config().settle_limit();
    let mut busy = walk.busy.take().unwrap_or_default();
    let mut requests = session.requests_in_flight(page, started);
    if limit.is_zero() || (busy.wait == 0 && requests == 0) {
        return Ok((Vec::new(), None));
    }
    let waiting = Instant::now();
    let deadline = started + limit;
    loop {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let pause = if busy.wait > 0 {
            Duration::from_millis(busy.wait)
        } else {
            REQUEST_POLL
        };
        tokio::time::sleep(pause.max(MIN_PAUSE).min(deadline - now)).await;
        let left = deadline.saturating_duration_since(Instant::now());
        busy = session.call(page, "busy", settle_args(left)).await?;
        requests = session.requests_in_flight(page, started);
        if busy.wait == 0 && requests == 0 {
            break;
        }
    }
    walk_again(browser, session, page, walk, args).await?;
    let mut still = Vec::new();
    if requests > 0 {
        still.push("requests".to_owned());
    }
    if busy.wait > 0 {
        still.extend(busy.why);
    }
    Ok((still, Some(waiting.elapsed())))
}
