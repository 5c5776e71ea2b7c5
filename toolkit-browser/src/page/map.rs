//! The page map: the visible interactive elements of the current tab, each
//! with a number, and the compact text the model reads.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::target::GetTargetsParams;

use super::{live, live_element};
use crate::browser::{Ahead, Browser, Doc, Hop, KnownFrame, Route, Session, TabInfo};
use crate::error::BrowserError;
use crate::safety::Redactor;

/// How far beyond the viewport, above and below, elements are still mapped
/// (browser-use's `viewport_threshold`): the model sees what one scroll
/// would reveal, and elements further away do not crowd the map.
pub const VIEWPORT_EXPANSION_PX: u32 = 1000;

/// Longest text (names, placeholders, link text) kept per element, in
/// characters.
pub const MAX_TEXT_CHARS: u32 = 80;

/// At most this many elements are mapped; a page with more is cut and says
/// so ([`PageMap::truncated`]).
pub const MAX_ELEMENTS: u32 = 5000;

/// The most characters of short orientation texts (headings, labels,
/// prices) a map shows between its elements ([`PageMap::texts`]); the
/// rest of a page's text is for `extract`. Chosen by measurement
/// (docs/performance.md): it holds every heading and short text within
/// reach on the realistic pages of the comparison with browser-use.
pub const MAX_ORIENTATION_CHARS: u32 = 1500;

/// At most this many frames from other sites are mapped, at most this deep
/// (browser-use's limits are 100 and 5).
const MAX_FOREIGN_FRAMES: usize = 20;
const MAX_FRAME_DEPTH: usize = 5;

/// How long [`Browser::page_map`] waits for a document that is still being
/// parsed.
const LOADING_GRACE: Duration = Duration::from_secs(3);

/// How long the DOM must have been left alone for the page to count as
/// settled: a page that renders in a few steps (a request's answer, then
/// a list built from it) usually takes them within this.
const QUIET_SPELL: Duration = Duration::from_millis(100);

/// How many levels of closed shadow roots (a closed root inside one) a map
/// opens.
const MAX_CLOSED_LEVELS: usize = 3;

/// How often a map that waits for requests alone looks again.
const REQUEST_POLL: Duration = Duration::from_millis(40);

/// The shortest pause between two looks at a page that is still changing.
const MIN_PAUSE: Duration = Duration::from_millis(10);

/// One interactive element of the page map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Element {
    /// The element's number: it keeps it for as long as it exists, and no
    /// other element of the session ever gets it.
    #[serde(rename = "i")]
    pub index: u32,
    /// The tag name, lower case (`input`, `button`, `my-widget`).
    pub tag: String,
    /// The explicit ARIA role, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The accessible name: `aria-labelledby`, `aria-label`, the `<label>`,
    /// the text of a link or button, `alt`, or `title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The `type` of an `<input>`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    /// The form field's `name` attribute.
    #[serde(default, rename = "field", skip_serializing_if = "Option::is_none")]
    pub field_name: Option<String>,
    /// A link's `href`, as written in the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
    /// A link's `target` (`_blank` opens a new tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The placeholder of a text field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// The current value of a field (selected options of a `<select>`,
    /// bullets for a password).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The start of the element's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// For a `<select>` or an ARIA combobox or listbox: the texts of its
    /// first options (at most eight), so the model can choose without
    /// asking for them.
    #[serde(default, rename = "opts", skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// How many options there are in all (with [`options`](Self::options)).
    #[serde(default, rename = "nopts", skip_serializing_if = "Option::is_none")]
    pub option_count: Option<u32>,
    /// Whether a checkbox, radio or `aria-checked` element is checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    /// `aria-selected`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<bool>,
    /// `aria-expanded`, or whether a `<details>` is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expanded: Option<bool>,
    /// Disabled (`disabled` or `aria-disabled="true"`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub disabled: bool,
    /// First mapped in this map, on a page that was mapped before (so the
    /// model can see what its last action revealed).
    #[serde(default, rename = "new", skip_serializing_if = "is_false")]
    pub is_new: bool,
    /// Inside a (same-origin) iframe.
    #[serde(default, rename = "frame", skip_serializing_if = "is_false")]
    pub in_iframe: bool,
    /// Inside a shadow root (an open one, or a closed one found through
    /// DevTools).
    #[serde(default, rename = "shadow", skip_serializing_if = "is_false")]
    pub in_shadow_root: bool,
    /// For a scroll container: pixels of its content above its visible part.
    #[serde(default, rename = "sa", skip_serializing_if = "Option::is_none")]
    pub scroll_above: Option<i64>,
    /// For a scroll container: pixels of its content below its visible part.
    #[serde(default, rename = "sb", skip_serializing_if = "Option::is_none")]
    pub scroll_below: Option<i64>,
    /// For a scroll container: how many interactive elements inside it are
    /// above its visible part, so not listed (scrolling it reveals them).
    #[serde(default, rename = "ha", skip_serializing_if = "Option::is_none")]
    pub hidden_above: Option<u32>,
    /// For a scroll container: how many interactive elements inside it are
    /// below its visible part, so not listed.
    #[serde(default, rename = "hb", skip_serializing_if = "Option::is_none")]
    pub hidden_below: Option<u32>,
    /// Left edge in the top-level viewport, CSS pixels.
    #[serde(default)]
    pub x: i64,
    /// Top edge in the top-level viewport, CSS pixels.
    #[serde(default)]
    pub y: i64,
    /// Width, CSS pixels.
    #[serde(default)]
    pub w: i64,
    /// Height, CSS pixels.
    #[serde(default)]
    pub h: i64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if signature
fn is_false(b: &bool) -> bool {
    !*b
}

impl Element {
    /// The element as one line for the model:
    /// `[12]<input type=text name=q placeholder="Search"> value="rust"`,
    /// `[13]<button> Search`, `*[14]<a href=/docs> Docs` (new),
    /// `[15]<div scroll="0 px above, 800 px below"> News…` (a scroll
    /// container), `[16]<div scroll="0 px above, 600 px below"
    /// hidden_elements="12 below (scroll it to see them)"> Reviews` (a
    /// scroll container whose interactive elements beyond its visible part
    /// are not listed).
    pub fn render(&self) -> String {
        let mut line = String::with_capacity(64);
        if self.is_new {
            line.push('*');
        }
        let _ = write!(line, "[{}]<{}", self.index, self.tag);
        let mut token = |key: &str, value: &Option<String>| {
            if let Some(v) = value {
                let _ = write!(line, " {key}={}", token_value(v));
            }
        };
        token("role", &self.role);
        token("type", &self.input_type);
        token("name", &self.field_name);
        token("href", &self.href);
        token("target", &self.target);
        let shown_text = self.text.as_deref().unwrap_or_default();
        if let Some(name) = self.name.as_deref().filter(|n| *n != shown_text) {
            let _ = write!(line, " label={}", quoted(name));
        }
        if let Some(p) = &self.placeholder {
            let _ = write!(line, " placeholder={}", quoted(p));
        }
        if !self.options.is_empty() {
            let mut list = self.options.join(" | ");
            let total = self.option_count.unwrap_or(0) as usize;
            if total > self.options.len() {
                let _ = write!(list, " | \u{2026} {total} in all");
            }
            let _ = write!(line, " options={}", quoted(&list));
        }
        for (flag, value) in [
            ("checked", self.checked),
            ("selected", self.selected),
            ("expanded", self.expanded),
        ] {
            match value {
                Some(true) => {
                    let _ = write!(line, " {flag}");
                }
                Some(false) => {
                    let _ = write!(line, " {flag}=false");
                }
                None => {}
            }
        }
        if self.disabled {
            line.push_str(" disabled");
        }
        if let (Some(above), Some(below)) = (self.scroll_above, self.scroll_below) {
            let _ = write!(line, " scroll=\"{above} px above, {below} px below\"");
        }
        let hidden: Vec<String> = [(self.hidden_below, "below"), (self.hidden_above, "above")]
            .into_iter()
            .filter_map(|(n, side)| n.filter(|n| *n > 0).map(|n| format!("{n} {side}")))
            .collect();
        if !hidden.is_empty() {
            let _ = write!(
                line,
                " hidden_elements=\"{} (scroll it to see them)\"",
                hidden.join(", ")
            );
        }
        line.push('>');
        if let Some(v) = &self.value {
            let _ = write!(line, " value={}", quoted(v));
        }
        if !shown_text.is_empty() {
            line.push(' ');
            line.push_str(shown_text);
        }
        line
    }
}

impl Element {
    /// Replaces secret values in every text of the element.
    ///
    /// The page script cuts texts late when the policy has secrets (see
    /// `Redactor::slack`); they are cut to their limits here, once
    /// redacted, so that no cut leaves a piece of a secret.
    pub(crate) fn redact(&mut self, r: &Redactor) {
        if r.is_empty() {
            return;
        }
        let max = MAX_TEXT_CHARS as usize;
        for (field, limit) in [
            (&mut self.role, max),
            (&mut self.name, max),
            (&mut self.input_type, max),
            (&mut self.field_name, 40),
            (&mut self.href, max),
            (&mut self.target, max),
            (&mut self.placeholder, max),
            (&mut self.value, max * 2),
            (&mut self.text, max),
        ] {
            if let Some(text) = field {
                *text = r.redact_cut(text, limit);
            }
        }
        for option in &mut self.options {
            *option = r.redact_cut(option, 40);
        }
        r.redact_in_place(&mut self.tag);
    }
}

/// An attribute value written bare when it is one plain token, quoted
/// otherwise.
fn token_value(v: &str) -> String {
    if !v.is_empty()
        && !v
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '='))
    {
        v.to_owned()
    } else {
        quoted(v)
    }
}

fn quoted(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Where the viewport is on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScrollPosition {
    /// Horizontal scroll offset, CSS pixels.
    pub x: i64,
    /// Vertical scroll offset, CSS pixels.
    pub y: i64,
    /// The page's full width.
    pub width: i64,
    /// The page's full height.
    pub height: i64,
    /// The viewport's width.
    #[serde(rename = "vw")]
    pub viewport_width: i64,
    /// The viewport's height.
    #[serde(rename = "vh")]
    pub viewport_height: i64,
}

impl ScrollPosition {
    /// Pixels of the page above the viewport.
    pub fn pixels_above(&self) -> i64 {
        self.y.max(0)
    }

    /// Pixels of the page below the viewport.
    pub fn pixels_below(&self) -> i64 {
        (self.height - self.y - self.viewport_height).max(0)
    }

    /// [`pixels_above`](Self::pixels_above) in viewport heights.
    pub fn pages_above(&self) -> f64 {
        pages(self.pixels_above(), self.viewport_height)
    }

    /// [`pixels_below`](Self::pixels_below) in viewport heights.
    pub fn pages_below(&self) -> f64 {
        pages(self.pixels_below(), self.viewport_height)
    }
}

#[allow(clippy::cast_precision_loss)] // page sizes are far below 2^52 px
fn pages(px: i64, viewport: i64) -> f64 {
    if viewport <= 0 {
        0.0
    } else {
        px as f64 / viewport as f64
    }
}

/// The current tab as the model sees it: its URL and title,
/// the open tabs, the scroll position, and the visible interactive elements
/// (within [`VIEWPORT_EXPANSION_PX`] of the viewport), each numbered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageMap {
    /// The current tab's URL.
    pub url: String,
    /// The current tab's title.
    pub title: String,
    /// The open tabs, the current one marked.
    pub tabs: Vec<TabInfo>,
    /// Where the viewport is on the page.
    pub scroll: ScrollPosition,
    /// The interactive elements, in document order.
    pub elements: Vec<Element>,
    /// Short texts between the elements, for orientation: headings, labels,
    /// prices (at most [`MAX_ORIENTATION_CHARS`] characters in all).
    pub texts: Vec<MapText>,
    /// The page had more than [`MAX_ELEMENTS`] elements to map.
    pub truncated: bool,
    /// Frames from other sites whose content is not mapped: beyond the
    /// limits (20 frames, 5 deep), or not reachable (still loading).
    pub cross_origin_frames: u32,
    /// The page shows nothing at all (no visible text or media): its
    /// content is hidden, or it has none.
    pub nothing_visible: bool,
    /// How long the walk took inside the page, milliseconds (for the
    /// host's timings; not rendered).
    pub walk_ms: f64,
    /// What was still changing when the map stopped waiting for the page
    /// to settle (`requests`, `animations`, `changes` of the DOM), after
    /// the session's settle limit
    /// ([`BrowserConfigBuilder::settle_limit`](crate::BrowserConfigBuilder::settle_limit)):
    /// the map may miss what is still arriving. Empty when the page had
    /// settled.
    pub still_changing: Vec<String>,
    /// How long the map waited for the page to settle, milliseconds (0 for
    /// a page that was quiet; for the host's timings, not rendered).
    pub settle_ms: f64,
}

impl PageMap {
    /// Replaces secret values in every text of the map.
    pub(crate) fn redact(&mut self, r: &Redactor) {
        r.redact_in_place(&mut self.url);
        r.redact_in_place(&mut self.title);
        for tab in &mut self.tabs {
            r.redact_in_place(&mut tab.url);
            r.redact_in_place(&mut tab.title);
        }
        for element in &mut self.elements {
            element.redact(r);
        }
        for text in &mut self.texts {
            text.text = r.redact_cut(&text.text, MAX_TEXT_CHARS as usize);
        }
    }

    /// The element with this number, if the map has it.
    pub fn get(&self, index: u32) -> Option<&Element> {
        self.elements.iter().find(|e| e.index == index)
    }

    /// The map as compact text for the model:
    ///
    /// ```text
    /// URL: http://127.0.0.1:8080/search
    /// Title: Search
    /// Tabs:
    ///   Tab 1a2b: Search — http://127.0.0.1:8080/search (current)
    /// Scroll: 0 px above (0.0 pages), 1200 px below (1.5 pages)
    /// Interactive elements ([number]<tag ...> text; * = new since the last map):
    /// [12]<input type=text name=q placeholder="Search"> value="rust"
    /// [13]<button> Search
    /// [14]<a href=/docs> Docs
    /// ```
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(128 + self.elements.len() * 48);
        let _ = writeln!(out, "URL: {}", self.url);
        let _ = writeln!(out, "Title: {}", self.title);
        if !self.tabs.is_empty() {
            out.push_str("Tabs:\n");
            for tab in &self.tabs {
                let _ = writeln!(out, "  {tab}");
            }
        }
        let s = &self.scroll;
        let _ = writeln!(
            out,
            "Scroll: {} px above ({:.1} pages), {} px below ({:.1} pages)",
            s.pixels_above(),
            s.pages_above(),
            s.pixels_below(),
            s.pages_below()
        );
        if self.elements.is_empty() && self.nothing_visible {
            out.push_str(
                "Interactive elements: none (nothing on the page is visible: its content is \
                 hidden, or it has none)\n",
            );
        } else if self.elements.is_empty() {
            // The map covers VIEWPORT_EXPANSION_PX beyond the viewport:
            // scrolling helps only when the page reaches further.
            let beyond = i64::from(VIEWPORT_EXPANSION_PX);
            out.push_str("Interactive elements: none visible");
            match (s.pixels_above() > beyond, s.pixels_below() > beyond) {
                (_, true) => out.push_str(" (scroll down to see more of the page)"),
                (true, false) => out.push_str(" (scroll up to see more of the page)"),
                (false, false) => out.push_str(" (the page has none within reach)"),
            }
            out.push('\n');
        } else if self.texts.is_empty() {
            out.push_str(
                "Interactive elements ([number]<tag ...> text; * = new since the last map):\n",
            );
        } else {
            out.push_str(
                "Interactive elements ([number]<tag ...> text; * = new since the last map), \
                 between headings (#) and short texts of the page:\n",
            );
        }
        let mut texts = self.texts.iter().peekable();
        for (position, element) in self.elements.iter().enumerate() {
            while let Some(text) = texts.next_if(|t| t.before <= position) {
                out.push_str(&text.render());
                out.push('\n');
            }
            out.push_str(&element.render());
            out.push('\n');
        }
        for text in texts {
            out.push_str(&text.render());
            out.push('\n');
        }
        if self.truncated {
            let _ = writeln!(
                out,
                "(the page has more interactive elements than the {MAX_ELEMENTS} shown)"
            );
        }
        if self.cross_origin_frames > 0 {
            let _ = writeln!(
                out,
                "({} frame(s) from other sites are not mapped)",
                self.cross_origin_frames
            );
        }
        if !self.still_changing.is_empty() {
            let _ = writeln!(
                out,
                "(the page was still changing when this map was taken ({}): what is arriving may \
                 be missing)",
                self.still_changing.join(", ")
            );
        }
        out
    }
}

/// A short text of the page shown between the elements of the map, for
/// orientation: a heading, a label, a price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapText {
    /// The text (at most [`MAX_TEXT_CHARS`] characters).
    #[serde(rename = "t")]
    pub text: String,
    /// The heading level (1 to 6), for a heading.
    #[serde(default, rename = "h", skip_serializing_if = "Option::is_none")]
    pub heading: Option<u8>,
    /// How many of the map's elements come before it.
    #[serde(default, rename = "at")]
    pub before: usize,
    /// Where it stands in its document among texts and frames before the
    /// same element.
    #[serde(default, rename = "s", skip_serializing)]
    order: u32,
}

impl MapText {
    /// The text as one line of the map: `## Heading` for a heading, the
    /// text indented by two spaces otherwise.
    pub fn render(&self) -> String {
        match self.heading {
            Some(level) => format!(
                "{} {}",
                "#".repeat(usize::from(level.clamp(1, 6))),
                self.text
            ),
            None => format!("  {}", self.text),
        }
    }
}

/// What the page-side walk returns.
#[derive(Deserialize)]
struct Walk {
    url: String,
    title: String,
    ready: String,
    #[serde(default)]
    first: bool,
    /// The walk stopped numbering at its `limit`.
    #[serde(default)]
    overflow: bool,
    elements: Vec<Element>,
    #[serde(default)]
    texts: Vec<MapText>,
    /// Texts were left out for the text budget.
    #[serde(default, rename = "textsCut")]
    texts_cut: bool,
    #[serde(default)]
    frames: Vec<serde_json::Value>,
    truncated: bool,
    #[serde(rename = "crossOriginFrames")]
    cross_origin_frames: u32,
    #[serde(default, rename = "nothingVisible")]
    nothing_visible: bool,
    scroll: ScrollPosition,
    next: u32,
    ms: f64,
    /// What is still changing (the tab's own walk only).
    #[serde(default)]
    busy: Option<Busy>,
    /// Custom elements not yet looked at for a closed shadow root.
    #[serde(default, rename = "closedHosts")]
    closed_hosts: u32,
}

/// What the page script says is still changing on the page.
#[derive(Deserialize, Default)]
struct Busy {
    /// In how many milliseconds it may have settled (0: it has).
    #[serde(default)]
    wait: u64,
    /// What is changing: `changes` (the DOM), `animations`.
    #[serde(default)]
    why: Vec<String>,
}

/// One line of a map being assembled from the documents of a tab.
enum Line {
    Element(Box<Element>),
    Text(MapText),
}

/// The lines of the frames inside one document, each with where it
/// stands: `(before, order, lines)`, like a text's `before` and `order`.
type FrameLines = Vec<(usize, u32, Vec<Line>)>;

/// The lines of one document: its texts, its elements, and the lines of
/// the frames from other sites inside it, each where it stands (frames as
/// `(before, order, lines)`, like a text's `before` and `order`).
fn assemble(elements: Vec<Element>, texts: Vec<MapText>, frames: FrameLines) -> Vec<Line> {
    // Texts and frames, in the order they stand in.
    let mut between: Vec<(usize, u32, Vec<Line>)> = texts
        .into_iter()
        .map(|t| (t.before, t.order, vec![Line::Text(t)]))
        .chain(frames)
        .collect();
    between.sort_by_key(|(before, order, _)| (*before, *order));
    let mut between = between.into_iter().peekable();
    let mut out = Vec::with_capacity(elements.len() + between.len());
    for (position, element) in elements.into_iter().enumerate() {
        while let Some((_, _, pieces)) = between.next_if(|(before, _, _)| *before <= position) {
            out.extend(pieces);
        }
        out.push(Line::Element(Box::new(element)));
    }
    out.extend(between.flat_map(|(_, _, pieces)| pieces));
    out
}

/// What is left of the map's limits while frames are mapped.
struct Allowance {
    elements: u32,
    text_chars: u32,
    frames: usize,
    /// Frames from other sites within reach of the viewport.
    seen_frames: u32,
    mapped_frames: u32,
    truncated: bool,
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

/// The map's elements and texts, each text saying how many elements come
/// before it.
fn split(pieces: Vec<Line>) -> (Vec<Element>, Vec<MapText>) {
    let mut elements = Vec::with_capacity(pieces.len());
    let mut texts = Vec::new();
    for piece in pieces {
        match piece {
            Line::Element(element) => elements.push(*element),
            Line::Text(mut text) => {
                text.before = elements.len();
                texts.push(text);
            }
        }
    }
    (elements, texts)
}

/// How many numbers each frame may hand out when several frames are
/// walked at once (each within a range of its own, so their numbers never
/// meet); a frame that needs more is walked again alone.
const FRAME_NUMBERS: u32 = 200;

/// The frames of a map walked ahead, while the tab's document was walked,
/// and what the map learns for the next one.
#[derive(Default)]
struct FramePlan {
    /// The frames the previous map walked, each walked again ahead (with
    /// the place it had then), and how that went.
    ahead: Vec<(KnownFrame, AheadWalk)>,
    /// Numbers that walks ahead handed out for the first time: elements
    /// new to the model even when a frame is walked again (it moved).
    fresh: HashSet<u32>,
    /// The frames this map walked.
    walked: Vec<KnownFrame>,
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
fn advance_past(browser: &Browser, base: u32, next: u32) {
    if next > base {
        browser.advance_index(next);
    }
}

/// The page script's `walk` arguments: numbers from `base` on (and below
/// `limit`), at most `room`'s elements and characters of orientation
/// text. For a frame's document, `frame` gives where the frame sits in its
/// parent and whether what the walk numbers is new to the model; the tab's
/// own walk decides that itself, so the key is left out, not null.
fn walk_args(
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

/// The page script's `busy` arguments (and the `settle` part of the
/// tab's walk): the quiet spell the DOM needs, how long the map can still
/// wait (animations ending later are not waited for) and how far beyond
/// the viewport an animation still matters.
fn settle_args(left: Duration) -> serde_json::Value {
    serde_json::json!({
        "quiet": u64::try_from(QUIET_SPELL.as_millis()).unwrap_or(u64::MAX),
        "within": u64::try_from(left.as_millis()).unwrap_or(u64::MAX),
        "expand": VIEWPORT_EXPANSION_PX,
    })
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

/// A frame from another site about to be walked.
struct Found {
    frame: serde_json::Value,
    owner: u32,
    at: usize,
    order: u32,
    doc: Doc,
    hop: Hop,
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
    route: Vec<Hop>,
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
            if route.len() >= MAX_FRAME_DEPTH || found.len() >= allowance.frames {
                continue;
            }
            if let Ok((doc, hop)) = session.child_doc(page, &parent, owner).await {
                found.push(Found {
                    frame,
                    owner,
                    at,
                    order,
                    doc,
                    hop,
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
            let answers = session.doc_calls(page, &calls).await;
            for ((k, &n), answer) in (0u32..).zip(&pending).zip(answers) {
                let walk = session.decode_call::<Walk>("walk", answer).ok();
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
            let mut hops = route.clone();
            hops.push(f.hop);
            let reach: Route = Arc::new(hops.clone());
            session.remember_route(walk.elements.iter().map(|e| e.index), &reach);
            let Walk {
                mut elements,
                texts,
                frames: inner,
                ..
            } = walk;
            let nested = map_frames(
                browser, session, page, f.doc, hops, inner, mark_new, allowance, plan,
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
        let block = |k: u32| base.saturating_add(k.saturating_mul(FRAME_NUMBERS));
        let ahead: Vec<(Doc, serde_json::Value)> = (0u32..)
            .zip(&known)
            .map(|(k, frame)| {
                let whole = (MAX_ELEMENTS, MAX_ORIENTATION_CHARS);
                let args = walk_args(
                    block(k),
                    Some(block(k + 1)),
                    whole,
                    Some((&frame.place, true)),
                );
                (frame.doc.clone(), args)
            })
            .collect();
        let tab_base = block(u32::try_from(known.len()).unwrap_or(u32::MAX));
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
        let ((tab_answer, frame_answers), targets) = tokio::join!(
            session.call_with_frames(&page, "walk", &args, &ahead),
            targets
        );
        let mut plan = FramePlan::default();
        for ((k, frame), answer) in (0u32..).zip(known).zip(frame_answers) {
            let walk = match answer {
                Ahead::Answered(text) => session
                    .decode_call::<Walk>("walk", Ok(text))
                    .map_or(AheadWalk::Missing, |walk| AheadWalk::Walked(Box::new(walk))),
                Ahead::TimedOut => AheadWalk::Hung,
                Ahead::Failed => AheadWalk::Missing,
            };
            match &walk {
                AheadWalk::Walked(walk) => {
                    advance_past(self, block(k), walk.next);
                    plan.fresh
                        .extend(walk.elements.iter().filter(|e| e.is_new).map(|e| e.index));
                }
                // The frame may have handed out numbers of its range all
                // the same (a walk that ran past the time limit).
                AheadWalk::Hung | AheadWalk::Missing => self.advance_index(block(k + 1)),
            }
            plan.ahead.push((frame, walk));
        }
        let tab = page.target_id().clone();
        let map = async {
            let walk = session.decode_call::<Walk>("walk", tab_answer);
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
                    plan.ahead.clear();
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
        let (still_changing, waited) = self.settle(session, page, &mut walk, args, started).await?;
        let settle_ms = waited.map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        let mut again = args.clone();
        again["repeat"] = true.into();
        if let serde_json::Value::Object(fields) = &mut again {
            fields.remove("settle");
        }
        // Closed shadow roots found through DevTools are walked as open
        // ones (and the roots inside them, a few levels deep).
        let mut opened = false;
        for _ in 0..MAX_CLOSED_LEVELS {
            if walk.closed_hosts == 0 || session.open_closed_roots(page).await? == 0 {
                break;
            }
            opened = true;
            let fresh = fresh_in(&walk);
            walk = session.call(page, "walk", again.clone()).await?;
            self.advance_index(walk.next);
            keep_fresh(&mut walk, &fresh);
        }
        // A new document has new frames, one still being parsed is walked
        // again below, and a page walked again above has its frames walked
        // after it.
        if walk.first || walk.ready == "loading" || waited.is_some() || opened {
            plan.ahead.clear();
        }
        let deadline = Instant::now() + LOADING_GRACE;
        while walk.ready == "loading" && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let fresh = fresh_in(&walk);
            walk = session.call(page, "walk", again.clone()).await?;
            self.advance_index(walk.next);
            keep_fresh(&mut walk, &fresh);
        }
        let mut allowance = Allowance {
            elements: MAX_ELEMENTS,
            text_chars: MAX_ORIENTATION_CHARS,
            frames: MAX_FOREIGN_FRAMES,
            seen_frames: 0,
            mapped_frames: 0,
            truncated: walk.truncated,
        };
        allowance.spend(&walk);
        // Frames from other sites inside the page, mapped through DevTools
        // sessions of their own; their elements are new to the model when
        // the tab's document is not (a frame that just appeared).
        let frames = if walk.frames.is_empty() {
            Vec::new()
        } else {
            let found = std::mem::take(&mut walk.frames);
            map_frames(
                self,
                session,
                page,
                Doc::tab(),
                Vec::new(),
                found,
                !walk.first,
                &mut allowance,
                plan,
            )
            .await
        };
        let (elements, texts) = if frames.is_empty() {
            (walk.elements, walk.texts)
        } else {
            // Frames walked at once each had the whole allowance left.
            let (mut elements, mut texts) = split(assemble(walk.elements, walk.texts, frames));
            let mut spent = 0;
            texts.retain(|t| {
                spent += t.text.chars().count();
                spent <= MAX_ORIENTATION_CHARS as usize
            });
            if elements.len() > MAX_ELEMENTS as usize {
                elements.truncate(MAX_ELEMENTS as usize);
                allowance.truncated = true;
            }
            (elements, texts)
        };
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
            walk_ms: walk.ms,
            still_changing,
            settle_ms,
        };
        // The map is what the model reads at every step: a secret typed
        // into a field (or echoed by the page) must not show in it.
        map.redact(self.policy().redactor());
        Ok(map)
    }

    /// Waits until the page `walk` mapped has settled, within the
    /// session's settle limit counted from `started`, and walks it again
    /// if it had not: no request in flight that can change it, no
    /// animation about to end near the viewport, the DOM quiet for
    /// [`QUIET_SPELL`]. The first walk already said whether the page was
    /// busy, so a quiet page costs no round trip more. Returns what was
    /// still changing when the limit ran out, and how long it waited, if
    /// it did.
    async fn settle(
        &self,
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
        let fresh = fresh_in(walk);
        let mut again = args.clone();
        again["repeat"] = true.into();
        if let serde_json::Value::Object(fields) = &mut again {
            fields.remove("settle");
        }
        *walk = session.call(page, "walk", again).await?;
        self.advance_index(walk.next);
        keep_fresh(walk, &fresh);
        let mut still = Vec::new();
        if requests > 0 {
            still.push("requests".to_owned());
        }
        if busy.wait > 0 {
            still.extend(busy.why);
        }
        Ok((still, Some(waiting.elapsed())))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn element(json: &str) -> Element {
        serde_json::from_str(json).expect("a walk element")
    }

    #[test]
    fn elements_render_as_compact_lines() {
        let input = element(
            r#"{"i":12,"tag":"input","type":"text","field":"q","placeholder":"Search",
                "value":"rust","name":"Query","x":1,"y":2,"w":3,"h":4}"#,
        );
        assert_eq!(
            input.render(),
            r#"[12]<input type=text name=q label="Query" placeholder="Search"> value="rust""#
        );
        let button = element(r#"{"i":13,"tag":"button","name":"Search","text":"Search"}"#);
        assert_eq!(button.render(), "[13]<button> Search");
        let link = element(r#"{"i":14,"tag":"a","href":"/a b","text":"Docs","new":true}"#);
        assert_eq!(link.render(), r#"*[14]<a href="/a b"> Docs"#);
        let check = element(
            r#"{"i":15,"tag":"div","role":"checkbox","checked":false,"disabled":true,
                "name":"Say \"hi\"\nnow"}"#,
        );
        assert_eq!(
            check.render(),
            r#"[15]<div role=checkbox label="Say \"hi\"\nnow" checked=false disabled>"#
        );
        let scroller = element(r#"{"i":16,"tag":"div","sa":0,"sb":800,"text":"News"}"#);
        assert_eq!(
            scroller.render(),
            r#"[16]<div scroll="0 px above, 800 px below"> News"#
        );
        let hiding = element(r#"{"i":17,"tag":"ul","sa":40,"sb":800,"ha":1,"hb":12}"#);
        assert_eq!(
            hiding.render(),
            r#"[17]<ul scroll="40 px above, 800 px below" hidden_elements="12 below, 1 above (scroll it to see them)">"#
        );
    }

    #[test]
    fn dropdowns_list_their_first_options() {
        let select = element(
            r#"{"i":2,"tag":"select","field":"size","value":"M","opts":["S","M","L"],"nopts":3}"#,
        );
        assert_eq!(
            select.render(),
            r#"[2]<select name=size options="S | M | L"> value="M""#
        );
        let long = element(r#"{"i":3,"tag":"select","opts":["1","2"],"nopts":14}"#);
        assert_eq!(
            long.render(),
            "[3]<select options=\"1 | 2 | \u{2026} 14 in all\">"
        );
    }

    fn text(json: &str) -> MapText {
        serde_json::from_str(json).expect("a walk text")
    }

    #[test]
    fn texts_and_frames_stand_where_they_were_found() {
        let elements = vec![
            element(r#"{"i":1,"tag":"button","text":"A"}"#),
            element(r#"{"i":2,"tag":"button","text":"B"}"#),
        ];
        let texts = vec![
            text(r#"{"t":"Title","h":1,"at":0,"s":0}"#),
            text(r#"{"t":"after the frame","at":1,"s":9}"#),
            text(r#"{"t":"the end","at":2,"s":20}"#),
        ];
        let frame = vec![
            Line::Text(text(r#"{"t":"In the frame","h":2,"at":0}"#)),
            Line::Element(Box::new(element(r#"{"i":7,"tag":"a","text":"F"}"#))),
        ];
        let (elements, texts) = split(assemble(elements, texts, vec![(1, 5, frame)]));
        let order: Vec<u32> = elements.iter().map(|e| e.index).collect();
        assert_eq!(order, [1, 7, 2]);
        let at: Vec<(&str, usize)> = texts.iter().map(|t| (t.text.as_str(), t.before)).collect();
        assert_eq!(
            at,
            [
                ("Title", 0),
                ("In the frame", 1),
                ("after the frame", 2),
                ("the end", 3)
            ]
        );
        let map = PageMap {
            url: "u".into(),
            title: "t".into(),
            tabs: Vec::new(),
            scroll: ScrollPosition {
                x: 0,
                y: 0,
                width: 0,
                height: 0,
                viewport_width: 0,
                viewport_height: 0,
            },
            elements,
            texts,
            truncated: false,
            cross_origin_frames: 0,
            nothing_visible: false,
            walk_ms: 0.0,
            still_changing: Vec::new(),
            settle_ms: 0.0,
        };
        let rendered = map.render();
        let body = rendered.split_once("page:\n").expect("the header").1;
        assert_eq!(
            body,
            "# Title\n[1]<button> A\n## In the frame\n[7]<a> F\n  after the frame\n\
             [2]<button> B\n  the end\n"
        );
    }

    #[test]
    fn an_empty_map_suggests_scrolling_only_beyond_its_band() {
        let map = |y: i64, height: i64, still: &[&str]| PageMap {
            url: "u".into(),
            title: "t".into(),
            tabs: Vec::new(),
            scroll: ScrollPosition {
                x: 0,
                y,
                width: 1280,
                height,
                viewport_width: 1280,
                viewport_height: 800,
            },
            elements: Vec::new(),
            texts: Vec::new(),
            truncated: false,
            cross_origin_frames: 0,
            nothing_visible: false,
            walk_ms: 0.0,
            still_changing: still.iter().map(|s| (*s).to_owned()).collect(),
            settle_ms: 0.0,
        };
        let none = |m: PageMap| {
            m.render()
                .lines()
                .find(|l| l.starts_with("Interactive elements"))
                .map(str::to_owned)
                .expect("the elements line")
        };
        let within = "Interactive elements: none visible (the page has none within reach)";
        assert_eq!(none(map(0, 800, &[])), within);
        assert_eq!(none(map(0, 1800, &[])), within);
        assert_eq!(
            none(map(0, 1801, &[])),
            "Interactive elements: none visible (scroll down to see more of the page)"
        );
        assert_eq!(
            none(map(1500, 2300, &[])),
            "Interactive elements: none visible (scroll up to see more of the page)"
        );
        assert!(map(0, 800, &["requests", "animations"]).render().ends_with(
            "(the page was still changing when this map was taken (requests, animations): \
             what is arriving may be missing)\n"
        ));
    }

    #[test]
    fn the_map_has_header_lines() {
        let map = PageMap {
            url: "http://127.0.0.1/".into(),
            title: "Home".into(),
            tabs: vec![TabInfo {
                id: "1a2b".into(),
                url: "http://127.0.0.1/".into(),
                title: "Home".into(),
                current: true,
            }],
            scroll: ScrollPosition {
                x: 0,
                y: 400,
                width: 1280,
                height: 2400,
                viewport_width: 1280,
                viewport_height: 800,
            },
            elements: vec![element(r#"{"i":1,"tag":"button","text":"Go"}"#)],
            texts: Vec::new(),
            truncated: false,
            cross_origin_frames: 1,
            nothing_visible: false,
            walk_ms: 1.0,
            still_changing: Vec::new(),
            settle_ms: 0.0,
        };
        assert_eq!(
            map.render(),
            "URL: http://127.0.0.1/\nTitle: Home\nTabs:\n  \
             Tab 1a2b: Home \u{2014} http://127.0.0.1/ (current)\n\
             Scroll: 400 px above (0.5 pages), 1200 px below (1.5 pages)\n\
             Interactive elements ([number]<tag ...> text; * = new since the last map):\n\
             [1]<button> Go\n\
             (1 frame(s) from other sites are not mapped)\n"
        );
    }
}
