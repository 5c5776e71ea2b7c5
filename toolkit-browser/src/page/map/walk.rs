//! The walk: the call into the page script that numbers a document's
//! elements, and the walk through the frames from other sites inside it,
//! each in a document of its own.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;

use chromiumoxide::Page;
use serde::Deserialize;

use super::model::{
    Element, MAX_ELEMENTS, MAX_ORIENTATION_CHARS, MAX_TEXT_CHARS, MapText, ScrollPosition,
    VIEWPORT_EXPANSION_PX,
};
use super::render::{FrameLines, assemble, split};
use crate::browser::{Ahead, Browser, Doc, KnownFrame, Session};
use crate::error::BrowserError;

/// At most this many frames from other sites are mapped, at most this deep
/// (browser-use's limits are 100 and 5).
const MAX_FOREIGN_FRAMES: usize = 20;
const MAX_FRAME_DEPTH: usize = 5;

/// What the page-side walk returns.
#[derive(Deserialize)]
pub(super) struct Walk {
    pub(super) url: String,
    pub(super) title: String,
    pub(super) ready: String,
    #[serde(default)]
    pub(super) first: bool,
    /// The walk stopped numbering at its `limit`.
    #[serde(default)]
    pub(super) overflow: bool,
    pub(super) elements: Vec<Element>,
    #[serde(default)]
    pub(super) texts: Vec<MapText>,
    /// Texts were left out for the text budget.
    #[serde(default, rename = "textsCut")]
    pub(super) texts_cut: bool,
    #[serde(default)]
    pub(super) frames: Vec<serde_json::Value>,
    pub(super) truncated: bool,
    #[serde(rename = "crossOriginFrames")]
    pub(super) cross_origin_frames: u32,
    #[serde(default, rename = "nothingVisible")]
    pub(super) nothing_visible: bool,
    #[serde(default)]
    pub(super) pdf: bool,
    pub(super) scroll: ScrollPosition,
    pub(super) next: u32,
    pub(super) ms: f64,
    /// What is still changing (the tab's own walk only).
    #[serde(default)]
    pub(super) busy: Option<Busy>,
    /// Custom elements not yet looked at for a closed shadow root.
    #[serde(default, rename = "closedHosts")]
    pub(super) closed_hosts: u32,
}

/// What the page script says is still changing on the page.
#[derive(Deserialize, Default)]
pub(super) struct Busy {
    /// In how many milliseconds it may have settled (0: it has).
    #[serde(default)]
    pub(super) wait: u64,
    /// What is changing: `changes` (the DOM), `animations`.
    #[serde(default)]
    pub(super) why: Vec<String>,
}

/// What is left of the map's limits while frames are mapped.
pub(super) struct Allowance {
    pub(super) elements: u32,
    pub(super) text_chars: u32,
    pub(super) frames: usize,
    /// Frames from other sites within reach of the viewport.
    pub(super) seen_frames: u32,
    pub(super) mapped_frames: u32,
    pub(super) truncated: bool,
}

impl Allowance {
    /// Counts what one document's walk used.
    fn spend(&mut self, walk: &Walk) {
        let count = u32::try_from(walk.elements.len()).unwrap_or(u32::MAX);
        self.elements = self.elements.saturating_sub(count);
        let chars: usize = walk.texts.iter().map(|t| t.text.chars().count()).sum();
        self.text_chars = self
            .text_chars
            .saturating_sub(u32::try_from(chars).unwrap_or(u32::MAX));
        self.truncated |= walk.truncated;
        self.seen_frames += u32::try_from(walk.frames.len()).unwrap_or(u32::MAX);
    }
}

/// How many numbers each frame may hand out when several frames are
/// walked at once (each within a range of its own, so their numbers never
/// meet); a frame that needs more is walked again alone.
const FRAME_NUMBERS: u32 = 200;

/// The frames of a map walked ahead, while the tab's document was walked,
/// and what the map learns for the next one.
#[derive(Default)]
pub(super) struct FramePlan {
    /// The frames the previous map walked, each walked again ahead (with
    /// the place it had then), and how that went.
    ahead: Vec<(KnownFrame, AheadWalk)>,
    /// Numbers that walks ahead handed out for the first time: elements
    /// new to the model even when a frame is walked again (it moved).
    fresh: HashSet<u32>,
    /// The frames this map walked.
    pub(super) walked: Vec<KnownFrame>,
}

/// How the walk ahead of one frame went.
enum AheadWalk {
    Walked(Box<Walk>),
    /// No answer within the time limit: the frame is stuck.
    Hung,
    /// Failed otherwise (its document went, no world for it yet).
    Missing,
}

/// What a map does with a frame its parent's walk found, given the walk
/// ahead.
enum Taken {
    /// Keeps the walk ahead.
    Walk(Box<Walk>),
    /// Leaves the frame out: its walk ahead found it stuck, and walking it
    /// again would wait as long.
    Hung,
    /// Walks it now.
    Now,
}

impl FramePlan {
    /// What to do with the frame `f` of the document `parent`: keep its
    /// walk ahead if the frame is where that walk assumed and the walk
    /// fits in what is left of the map's limits (`room`, as a walk told
    /// those limits would have come out the same).
    fn take(&mut self, parent: &Doc, f: &Found, room: &Allowance) -> Taken {
        let Some(at) = self.ahead.iter().position(|(known, _)| {
            known.parent.as_deref() == parent.frame_id()
                && known.owner == f.owner
                && known.doc == f.doc
        }) else {
            return Taken::Now;
        };
        let (known, walk) = self.ahead.swap_remove(at);
        match walk {
            AheadWalk::Hung => Taken::Hung,
            AheadWalk::Walked(walk) if same_place(&known.place, &f.frame) && fits(&walk, room) => {
                Taken::Walk(walk)
            }
            _ => Taken::Now,
        }
    }
}

/// Whether a frame's walk told the map's whole limits came out as it would
/// have with only `room` left.
fn fits(walk: &Walk, room: &Allowance) -> bool {
    let chars: usize = walk.texts.iter().map(|t| t.text.chars().count()).sum();
    let elements_fit = walk.elements.len() <= room.elements as usize
        && (!walk.truncated || room.elements >= MAX_ELEMENTS);
    let texts_fit = chars <= room.text_chars as usize
        && (!walk.texts_cut || room.text_chars >= MAX_ORIENTATION_CHARS);
    elements_fit && texts_fit
}

/// Whether a frame sits where it sat, as two walks of its parent report
/// it: what the frame's own walk depends on (its offset, the parts in
/// reach and on screen, what covers it), not where its lines stand.
fn same_place(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    ["ox", "oy", "clip", "view", "covers"]
        .iter()
        .all(|key| a.get(key) == b.get(key))
}

/// Records that the walks numbered from `base` handed out numbers below
/// `next`; a walk that handed out none moves nothing, so walks within
/// ranges of their own do not use up numbers for nothing.
pub(super) fn advance_past(browser: &Browser, base: u32, next: u32) {
    if next > base {
        browser.advance_index(next);
    }
}

/// The page script's `walk` arguments: numbers from `base` on (and below
/// `limit`), at most `room`'s elements and characters of orientation
/// text. For a frame's document, `frame` gives where the frame sits in its
/// parent and whether what the walk numbers is new to the model; the tab's
/// own walk decides that itself, so the key is left out, not null.
pub(super) fn walk_args(
    base: u32,
    limit: Option<u32>,
    (elements, text_chars): (u32, u32),
    frame: Option<(&serde_json::Value, bool)>,
) -> serde_json::Value {
    let mut args = serde_json::json!({
        "base": base,
        "limit": limit,
        "expand": VIEWPORT_EXPANSION_PX,
        "maxText": MAX_TEXT_CHARS,
        "maxElements": elements,
        "textBudget": text_chars,
    });
    if let Some((place, mark_new)) = frame {
        args["frame"] = place.clone();
        args["markNew"] = mark_new.into();
    }
    args
}

/// The numbers a walk marked new: a walk repeated for the same map finds
/// those elements already numbered, and they are still new to the model.
fn fresh_in(walk: &Walk) -> HashSet<u32> {
    walk.elements
        .iter()
        .filter(|e| e.is_new)
        .map(|e| e.index)
        .collect()
}

/// Marks new again what the walk a repeated one replaces marked new.
fn keep_fresh(walk: &mut Walk, fresh: &HashSet<u32>) {
    for element in &mut walk.elements {
        element.is_new |= fresh.contains(&element.index);
    }
}

/// Walks the tab's document again for the same map (after it settled,
/// once closed shadow roots were opened, while it is still being parsed),
/// with the first walk's `args`: it finds the elements that walk numbered
/// already numbered, and those it marked new stay new to the model.
pub(super) async fn walk_again(
    browser: &Browser,
    session: &mut Session,
    page: &Page,
    walk: &mut Walk,
    args: &serde_json::Value,
) -> Result<(), BrowserError> {
    let fresh = fresh_in(walk);
    let mut again = args.clone();
    again["repeat"] = true.into();
    if let serde_json::Value::Object(fields) = &mut again {
        fields.remove("settle");
    }
    *walk = session.call(page, "walk", again).await?;
    browser.advance_index(walk.next);
    keep_fresh(walk, &fresh);
    Ok(())
}

/// The number a frame walked ahead starts from: the `k`th range of
/// [`FRAME_NUMBERS`] from `base`.
fn block(base: u32, k: u32) -> u32 {
    base.saturating_add(k.saturating_mul(FRAME_NUMBERS))
}

/// The walks ahead of the frames the last map of a tab walked
/// ([`Session::call_ahead`]): each frame's document and `walk` arguments,
/// at the place it had, numbering within a range of its own from `base`;
/// and the first number of the tab's own walk, past those ranges.
pub(super) fn ahead_calls(base: u32, known: &[KnownFrame]) -> (Vec<(Doc, serde_json::Value)>, u32) {
    let ahead = (0u32..)
        .zip(known)
        .map(|(k, frame)| {
            let whole = (MAX_ELEMENTS, MAX_ORIENTATION_CHARS);
            let place = Some((&frame.place, true));
            let args = walk_args(block(base, k), Some(block(base, k + 1)), whole, place);
            (frame.doc.clone(), args)
        })
        .collect();
    let tab_base = block(base, u32::try_from(known.len()).unwrap_or(u32::MAX));
    (ahead, tab_base)
}

impl FramePlan {
    /// Drops the walks ahead: every frame is walked anew.
    pub(super) fn forget_ahead(&mut self) {
        self.ahead.clear();
    }

    /// The plan from the answers of the walks ahead of `known` (made with
    /// [`ahead_calls`] from `base`), each walk's numbers recorded as
    /// handed out.
    pub(super) fn from_ahead(
        browser: &Browser,
        session: &mut Session,
        base: u32,
        known: Vec<KnownFrame>,
        answers: Vec<Ahead>,
    ) -> Self {
        let mut plan = Self::default();
        for ((k, frame), answer) in (0u32..).zip(known).zip(answers) {
            let walk = match answer {
                Ahead::Answered(answer) => session
                    .decode::<Walk>(answer)
                    .map_or(AheadWalk::Missing, |walk| AheadWalk::Walked(Box::new(walk))),
                Ahead::TimedOut => AheadWalk::Hung,
                Ahead::Failed => AheadWalk::Missing,
            };
            match &walk {
                AheadWalk::Walked(walk) => {
                    advance_past(browser, block(base, k), walk.next);
                    plan.fresh
                        .extend(walk.elements.iter().filter(|e| e.is_new).map(|e| e.index));
                }
                // The frame may have handed out numbers of its range all
                // the same (a walk that ran past the time limit).
                AheadWalk::Hung | AheadWalk::Missing => {
                    browser.advance_index(block(base, k + 1));
                }
            }
            plan.ahead.push((frame, walk));
        }
        plan
    }
}

/// The tab's elements and texts with those of the frames from other sites
/// inside its document (`walk`), mapped through DevTools sessions of
/// their own, and what the map's limits say after them.
pub(super) async fn walk_frames(
    browser: &Browser,
    session: &mut Session,
    page: &Page,
    walk: &mut Walk,
    plan: &mut FramePlan,
) -> (Vec<Element>, Vec<MapText>, Allowance) {
    let mut allowance = Allowance {
        elements: MAX_ELEMENTS,
        text_chars: MAX_ORIENTATION_CHARS,
        frames: MAX_FOREIGN_FRAMES,
        seen_frames: 0,
        mapped_frames: 0,
        truncated: walk.truncated,
    };
    allowance.spend(walk);
    // Their elements are new to the model when the tab's document is not
    // (a frame that just appeared).
    let frames = if walk.frames.is_empty() {
        Vec::new()
    } else {
        let found = std::mem::take(&mut walk.frames);
        map_frames(
            browser,
            session,
            page,
            Doc::tab(),
            found,
            !walk.first,
            &mut allowance,
            plan,
        )
        .await
    };
    let elements = std::mem::take(&mut walk.elements);
    let texts = std::mem::take(&mut walk.texts);
    if frames.is_empty() {
        return (elements, texts, allowance);
    }
    // Frames walked at once each had the whole allowance left.
    let (mut elements, mut texts) = split(assemble(elements, texts, frames));
    let mut spent = 0;
    texts.retain(|t| {
        spent += t.text.chars().count();
        spent <= MAX_ORIENTATION_CHARS as usize
    });
    if elements.len() > MAX_ELEMENTS as usize {
        elements.truncate(MAX_ELEMENTS as usize);
        allowance.truncated = true;
    }
    (elements, texts, allowance)
}

/// A frame from another site about to be walked.
struct Found {
    frame: serde_json::Value,
    owner: u32,
    at: usize,
    order: u32,
    doc: Doc,
}

/// Maps the frames from other sites that `parent`'s walk found (and the
/// ones inside them), each through a session of its own and all of one
/// document's at once (each runs in a process of its own): the lines of
/// each, with where they stand in `parent`'s lines. A frame walked ahead
/// (`plan`) and still where that walk assumed is not walked again. A frame
/// that cannot be reached (still loading, gone meanwhile) is left out and
/// counted as not mapped.
#[allow(clippy::too_many_arguments)] // one recursion's state
fn map_frames<'a>(
    browser: &'a Browser,
    session: &'a mut Session,
    page: &'a Page,
    parent: Doc,
    frames: Vec<serde_json::Value>,
    mark_new: bool,
    allowance: &'a mut Allowance,
    plan: &'a mut FramePlan,
) -> Pin<Box<dyn Future<Output = FrameLines> + Send + 'a>> {
    Box::pin(async move {
        let mut found = Vec::new();
        for frame in frames {
            let owner = frame["i"].as_u64().and_then(|i| u32::try_from(i).ok());
            let at = frame["at"].as_u64().and_then(|a| usize::try_from(a).ok());
            let order = frame["s"]
                .as_u64()
                .and_then(|s| u32::try_from(s).ok())
                .unwrap_or(0);
            let (Some(owner), Some(at)) = (owner, at) else {
                continue;
            };
            if parent.depth() >= MAX_FRAME_DEPTH || found.len() >= allowance.frames {
                continue;
            }
            if let Some(doc) = session.frame_doc(page, &parent, owner).await {
                found.push(Found {
                    frame,
                    owner,
                    at,
                    order,
                    doc,
                });
            }
        }
        let frame_args = |f: &Found, base: u32, limit: Option<u32>, allowance: &Allowance| {
            let room = (allowance.elements, allowance.text_chars);
            walk_args(base, limit, room, Some((&f.frame, mark_new)))
        };
        // Frames walked ahead where they still are need no call; the
        // others are walked now, all at once.
        let mut walks: Vec<Option<Walk>> = Vec::with_capacity(found.len());
        let mut pending = Vec::new();
        for (n, f) in found.iter().enumerate() {
            walks.push(match plan.take(&parent, f, allowance) {
                Taken::Walk(walk) => Some(*walk),
                Taken::Hung => None,
                Taken::Now => {
                    pending.push(n);
                    None
                }
            });
        }
        if !pending.is_empty() {
            let base = browser.next_index();
            let block = |k: u32| base.saturating_add(k.saturating_mul(FRAME_NUMBERS));
            let bounded = pending.len() > 1;
            let calls: Vec<(Doc, &str, serde_json::Value)> = (0u32..)
                .zip(&pending)
                .map(|(k, &n)| {
                    let f = &found[n];
                    let limit = bounded.then(|| block(k + 1));
                    (
                        f.doc.clone(),
                        "walk",
                        frame_args(f, block(k), limit, allowance),
                    )
                })
                .collect();
            let answers = session.call_all(page, &calls).await;
            for ((k, &n), answer) in (0u32..).zip(&pending).zip(answers) {
                let walk = session.decode::<Walk>(answer).ok();
                match &walk {
                    Some(walk) => advance_past(browser, block(k), walk.next),
                    // The page may have handed out numbers all the same.
                    None if bounded => browser.advance_index(block(k + 1)),
                    None => browser.advance_index(block(k).saturating_add(allowance.elements)),
                }
                walks[n] = walk;
            }
        }
        let mut out = Vec::new();
        for (f, walk) in found.into_iter().zip(walks) {
            let walk = match walk {
                // Its numbers ran out: walked again alone, numbering on
                // from the session's next number.
                Some(walk) if walk.overflow => {
                    let base = browser.next_index();
                    let args = frame_args(&f, base, None, allowance);
                    let Ok(walk) = session.call_in::<Walk>(page, &f.doc, "walk", &args).await
                    else {
                        browser.advance_index(base.saturating_add(allowance.elements));
                        continue;
                    };
                    advance_past(browser, base, walk.next);
                    walk
                }
                Some(walk) => walk,
                None => continue,
            };
            if allowance.elements == 0 {
                allowance.truncated = true;
            }
            if allowance.frames == 0 || allowance.elements == 0 {
                continue;
            }
            // A frame on a site the policy does not allow (one loaded
            // before the policy changed) is neither shown nor reachable:
            // its numbers get no route, so acting on them is refused as
            // stale. It is counted as not mapped.
            if browser.policy().check_url(&walk.url).is_err() {
                continue;
            }
            allowance.frames -= 1;
            allowance.mapped_frames += 1;
            allowance.spend(&walk);
            plan.walked.push(KnownFrame {
                parent: parent.frame_id().map(str::to_owned),
                owner: f.owner,
                doc: f.doc.clone(),
                place: f.frame.clone(),
            });
            session.remember_numbers(walk.elements.iter().map(|e| e.index), &f.doc);
            let Walk {
                mut elements,
                texts,
                frames: inner,
                ..
            } = walk;
            let nested = map_frames(
                browser, session, page, f.doc, inner, mark_new, allowance, plan,
            )
            .await;
            for element in &mut elements {
                element.in_iframe = true;
                // Numbered by a walk ahead that was not kept (the frame
                // had moved): still new to the model.
                element.is_new |= mark_new && plan.fresh.contains(&element.index);
            }
            out.push((f.at, f.order, assemble(elements, texts, nested)));
        }
        out
    })
}
