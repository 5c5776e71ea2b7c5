//! The page map's model: the numbered elements, the texts between them,
//! the scroll position, and the map itself, as the model's host receives
//! them; and the limits every map keeps to.

use serde::{Deserialize, Serialize};

use crate::browser::TabInfo;
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

/// How many characters of a map make one token, for [`estimate_tokens`]:
/// Gemma 3's tokenizer counts a token for about every 2.8 characters of the maps
/// of the saved pages of `scripts/compare-browser-use --saved-sites`
/// (`scripts/map-tokens`; element numbers, brackets and short words cost
/// more than prose, where four characters a token is the usual rule).
pub const CHARS_PER_TOKEN: usize = 3;

/// The tokens a text costs the model, estimated cheaply: its characters
/// over [`CHARS_PER_TOKEN`], rounded up. On the maps of the saved pages
/// it is 0.75 to 1.15 times Gemma 3's count, 0.93 in the median.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN)
}

/// One interactive element of the page map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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

/// Where the viewport is on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// The tab shows a PDF in the browser's viewer, whose content the map
    /// does not see into: [`Browser::page_text`](crate::Browser::page_text)
    /// (the `extract` action) reads its text.
    pub pdf: bool,
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
    /// How many tokens [`render`](Self::render) may spend, estimated from the characters ([`estimate_tokens`]; the session's
    /// [`map_token_budget`](crate::BrowserConfigBuilder::map_token_budget));
    /// 0 for no budget. Every element stays in
    /// [`elements`](Self::elements) whatever the budget.
    pub token_budget: u32,
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
}

/// A short text of the page shown between the elements of the map, for
/// orientation: a heading, a label, a price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
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
    pub(super) order: u32,
}
