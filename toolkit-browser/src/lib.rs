//! Browser actions for LLM agents, driving a real headless Chromium over the
//! DevTools protocol (chromiumoxide, on tokio).
//!
//! The ready actions (`navigate`, `click`, `input`, `extract`, `done`...)
//! are `toolkit-core` tools in [`actions`]; [`registry`] returns a registry
//! builder holding them and the session, with its [`SafetyPolicy`]
//! (allowed domains, enforced on every page load of every tab and frame,
//! redirects and form posts of any size included;
//! secrets the model types as `<secret>name</secret>` and never sees; the
//! one folder files may come from). At each step the host shows the model
//! [`Browser::page_map`]`().render()`; the guide's browser chapter
//! (`docs/browser.md`) walks through a whole agent loop.
//!
//! ```no_run
//! use toolkit_browser::{Browser, BrowserConfig, SafetyPolicy};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let browser = Browser::launch(BrowserConfig::default()).await?;
//! let policy = SafetyPolicy::builder().allow_domains(["*.example.com"]).build()?;
//! let registry = toolkit_browser::registry(browser.clone(), policy).build()?;
//! registry.dispatch(("navigate", r#"{"url": "www.example.com"}"#)).await;
//! println!("{}", browser.page_map().await?.render());
//! # Ok(())
//! # }
//! ```
//!
//! Underneath is the session:
//!
//! - [`Browser`]: a session. [`Browser::launch`] starts a local Chromium
//!   (found through [`BrowserConfig`], `CHROME` or the `PATH`) with its own
//!   temporary profile; [`Browser::connect`] attaches to a running one.
//!   [`Browser::close`] leaves no process and no folder behind;
//!   [`Browser::restart`] recovers from a crash. A `Browser` is cheap to
//!   clone, so tools take it as registry state:
//!   `#[tool(state)] browser: Browser`.
//! - The page map ([`Browser::page_map`], [`PageMap::render`]): the visible
//!   interactive elements of the current tab, shadow roots and frames
//!   (from other sites too) included, each with a number it keeps for as
//!   long as it exists, between short texts of the page for orientation. A number that no longer exists is
//!   [`BrowserError::StaleElement`], never a silent success.
//! - Trusted input: [`Browser::click`], [`Browser::type_text`],
//!   [`Browser::press_keys`], [`Browser::hover`], [`Browser::hold`],
//!   [`Browser::drag`] (native drag and drop included), files through any
//!   control that opens a file chooser ([`Browser::upload_file`]), plus [`Browser::navigate`],
//!   [`Browser::go_back`], [`Browser::scroll`], [`Browser::screenshot`] and
//!   the tabs ([`Browser::tabs`], [`Browser::switch_tab`], ...). A tab
//!   opened by the agent's own click becomes current and is reported in
//!   [`Effects::new_tab`].
//!
//! Every error's `Display` text is written for the model: what happened and
//! what to do next.
//!
//! # How the page map works
//!
//! A script (`js/`, embedded) walks the page in an isolated world of
//! its own: the page's scripts share the DOM with it but cannot see it, fake
//! its answers or break it by patching built-ins.
//!
//! - **Interactive** means: links with `href`, buttons, inputs (not
//!   `type=hidden`), selects, textareas, `<summary>`, interactive ARIA roles,
//!   `onclick`-style attributes, `tabindex >= 0`, the outermost
//!   `contenteditable`, the outermost element showing a pointer or grab
//!   cursor (a script-driven control), `draggable="true"` elements, a
//!   `<label>` standing in for an invisible custom checkbox, a file input
//!   made transparent over a styled box (named by the box's text), and
//!   scroll containers (so they can be scrolled). A label whose control is
//!   listed is left out: the control's line names it with the label's
//!   text.
//! - **Visible** means: `checkVisibility` (display, visibility, opacity,
//!   closed `<details>`; a transparent file input of at least 8×8 px
//!   counts, since a click on what it covers reaches it), a non-zero box, within the viewport extended by
//!   [`VIEWPORT_EXPANSION_PX`] above and below, not clipped away by an
//!   ancestor that hides its overflow, and not covered. Covering is tested
//!   with `elementFromPoint` (through shadow roots and frames, at the centre
//!   and then the quarter points of the visible part), but only for elements
//!   that a positioned, transformed or raised element overlaps: a hit test
//!   costs about 0.1 ms, and in normal flow nothing else can cover an
//!   element.
//! - **Frames from other sites** cannot be entered from the page (their
//!   documents are closed to its scripts, and most run in processes of
//!   their own). The session reaches each through DevTools (a target of
//!   its own, attached over a second connection, or an isolated world
//!   created in the frame) and runs the same script there, told where the
//!   frame sits, and what of the parent pages covers it; the frames of one
//!   document are walked at once. Actions on their elements go the same
//!   way, the click point checked against each parent page.
//! - **Orientation texts** ([`PageMap::texts`]): headings and short blocks
//!   of text (labels not tied to a control, prices), visible and not
//!   covered, in document order, within [`MAX_ORIENTATION_CHARS`].
//! - **Numbers** live in the page: a `WeakMap` element → number and a `Map`
//!   number → `WeakRef(element)`. An element keeps its number across maps
//!   and DOM changes for as long as it exists; numbers are never reused,
//!   and the session passes its next number into each document, so a number
//!   is unique across documents, tabs and restarts. A number whose element
//!   is gone, disconnected, or in a frame that is gone is stale.
//!
//! # Waiting
//!
//! - [`Browser::navigate`] waits for the new document's load event
//!   (chromiumoxide's `Page.navigate`, which cannot see the old document's);
//!   a fragment of the current page is scrolled to without waiting.
//! - [`Browser::click`] and [`Browser::press_keys`] subscribe to the
//!   navigation and new-tab events *before* acting (subscribing after races
//!   the action), then make one round trip to the page, which flushes the
//!   events the input caused. A requested navigation is waited for (load,
//!   or the frame stopping, or a same-document change); a requested new tab
//!   is waited for, switched to and brought to the front. A click that
//!   causes neither costs no extra wait.
//! - [`Browser::page_map`] maps a document still being parsed again,
//!   shortly after, and waits for a page that is still changing to settle
//!   (requests in flight, animations ending soon, the DOM changing), at
//!   most [`DEFAULT_SETTLE_LIMIT`] (see
//!   [`BrowserConfigBuilder::settle_limit`]); the map says when it gave
//!   up ([`PageMap::still_changing`]). The walk itself says whether the
//!   page is busy, so a quiet page costs no extra round trip.
//!
//! # Why each action brings its tab to the front
//!
//! Chromium stalls input sent to a background tab until the renderer's
//! input-ack timeout (about 5 s per mouse event), and a popup takes the
//! front. Every click and key press therefore brings the acting tab to the
//! front first (about a millisecond when it already is).

#![deny(missing_docs)]

pub mod actions;
mod browser;
mod config;
mod error;
mod keys;
mod page;
mod profile;
#[cfg(feature = "record")]
mod record;
mod safety;

#[allow(deprecated)]
pub use actions::{DEFAULT_ACTIONS, default_tools};
pub use actions::{default_actions, registry};
pub use browser::{
    Browser, Download, DownloadState, DownloadText, MAX_DOWNLOAD_READ_BYTES, TabInfo,
};
#[cfg(feature = "pdf")]
pub use browser::{MAX_PDF_DECODED_BYTES, MAX_PDF_PAGES};
pub use config::{
    BASE_ARGS, BrowserConfig, BrowserConfigBuilder, DEFAULT_MAP_TOKEN_BUDGET,
    DEFAULT_MAX_DOWNLOAD_BYTES, DEFAULT_MAX_DOWNLOADS, DEFAULT_SETTLE_LIMIT, EXECUTABLE_NAMES,
    find_executable,
};
pub use error::{BrowserError, INSTALL_HINT};
pub use page::content::{MAX_PAGE_TEXT_CHARS, PageText, TextMatch};
pub use page::forms::{CHOOSER_WAIT, Dropdown, DropdownOption, Selected, Uploaded};
pub use page::input::{Clicked, Effects, Typed};
pub use page::map::{
    CHARS_PER_TOKEN, Element, FoundElements, MAX_ELEMENTS, MAX_ORIENTATION_CHARS, MAX_TEXT_CHARS,
    MapText, PageMap, ScrollPosition, VIEWPORT_EXPANSION_PX, estimate_tokens,
};
pub use page::navigation::PageInfo;
pub use page::pictures::OUTLINE_RGB;
pub use page::pointer::{DragEnd, Dragged, Held, Hovered, MAX_DRAG_OFFSET, MAX_HOLD};
pub use page::view::Scrolled;

/// Renamed: "outcome" names what a call, a turn or a run ended with; a
/// page action's report is named for the action done.
#[deprecated(since = "0.2.0", note = "renamed to `Clicked`")]
pub type ClickOutcome = Clicked;
/// Renamed, as [`ClickOutcome`].
#[deprecated(since = "0.2.0", note = "renamed to `Typed`")]
pub type TypeOutcome = Typed;
/// Renamed, as [`ClickOutcome`].
#[deprecated(since = "0.2.0", note = "renamed to `Scrolled`")]
pub type ScrollOutcome = Scrolled;
/// Renamed, as [`ClickOutcome`].
#[deprecated(since = "0.2.0", note = "renamed to `Hovered`")]
pub type Hover = Hovered;
/// Renamed, as [`ClickOutcome`].
#[deprecated(since = "0.2.0", note = "renamed to `Held`")]
pub type Hold = Held;
/// Renamed, as [`ClickOutcome`].
#[deprecated(since = "0.2.0", note = "renamed to `Dragged`")]
pub type Drag = Dragged;
/// Renamed, as [`ClickOutcome`].
#[deprecated(since = "0.2.0", note = "renamed to `Selected`")]
pub type Selection = Selected;
/// Renamed, as [`ClickOutcome`].
#[deprecated(since = "0.2.0", note = "renamed to `Uploaded`")]
pub type Upload = Uploaded;
pub use profile::processes_mentioning;
#[cfg(feature = "record")]
pub use record::{
    MAX_GIF_WIDTH, MAX_HTML_BYTES, MAX_RECORDED_STEPS, MAX_STEP_TEXT_CHARS, RecordError,
    RecordFiles, Recorder,
};
pub use safety::{
    BlockedNavigation, DomainPattern, FRAGMENT_CHARS, PatternError, PolicyError, SECRET_CLOSE,
    SECRET_OPEN, SafetyPolicy, SafetyPolicyBuilder,
};
