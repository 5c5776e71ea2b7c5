//! The ready browser actions an agent calls, as `toolkit-core` tools.
//!
//! Each action is a `#[tool]` whose session ([`Browser`]) is a hidden
//! state parameter, so the model sees only its own arguments; the
//! [`SafetyPolicy`] it obeys is the session's own ([`Browser::policy`]), so
//! the actions, the page map and the navigation guard can never enforce two
//! different policies. [`registry`] returns a registry builder preloaded
//! with [`default_actions`] and the session: the host can leave actions out
//! (`.exclude(["upload_file"])`), add its own tools beside them, and
//! [`evaluate`] (off by default) with `.tools(tools![toolkit_browser::actions::evaluate])`.
//!
//! Every action answers with a short text for the model, a memory line
//! where one helps later steps, and an **error** result whenever it could
//! not do what was asked (a stale element number, a blocked navigation, an
//! option that does not exist...): never a reported success. Every text it
//! returns (result, memory, error) passes through the policy's redaction,
//! so a secret's value never comes back out.
//!
//! Every action on the session runs inside one frame (`act`): it waits for
//! the actions called before it, runs with the session's policy, then reports
//! the dialogs the page showed and the files it downloaded, and redacts
//! every text of its reply.
//!
//! The tools stay out of the global catalogue (`catalogue = false`): they
//! need a session, which only [`registry`] provides.

mod completion;
mod content;
mod downloads;
mod forms;
mod interaction;
mod navigation;
mod pointer;
mod script;
mod search;
mod tabs;
mod telemetry;

use std::fmt::Write as _;
use std::path::PathBuf;

use toolkit_core::{Block, Image, Registry, RegistryBuilder, ToolDef, ToolResult, tools};

use crate::browser::Browser;
use crate::error::BrowserError;
use crate::page::map::Element;
use crate::safety::SafetyPolicy;
use toolkit_core::text::cut;

pub use completion::done;
pub use content::{extract, find_text, screenshot};
pub use downloads::read_download;
pub use forms::{dropdown_options, select_option, upload_file};
pub use interaction::{click, input, scroll, send_keys};
pub use navigation::{go_back, navigate, wait};
pub use pointer::{drag, hold, hover};
pub use script::evaluate;
pub use search::{FIND_LIMIT, find};
pub use tabs::{close_tab, switch_tab};

/// The longest wait the `wait` action allows, in seconds.
pub const MAX_WAIT_SECONDS: f64 = 10.0;

/// How many characters of page text one `extract` call returns.
pub const EXTRACT_PAGE_CHARS: usize = 10_000;

/// The actions [`registry`] registers, in that order. [`evaluate`] is not
/// among them: running the model's JavaScript is for the host to switch on.
pub fn default_actions() -> Vec<&'static ToolDef> {
    tools![
        navigate,
        go_back,
        wait,
        click,
        input,
        hover,
        hold,
        drag,
        dropdown_options,
        select_option,
        scroll,
        send_keys,
        switch_tab,
        close_tab,
        extract,
        find_text,
        find,
        screenshot,
        upload_file,
        read_download,
        done,
    ]
    .to_vec()
}

/// The default actions: the earlier name of [`default_actions`], kept for
/// one release.
#[deprecated(since = "0.2.0", note = "renamed to `default_actions`")]
pub fn default_tools() -> Vec<&'static ToolDef> {
    default_actions()
}

/// The names of the default actions, in registration order. Kept for one
/// release: read the names from [`default_actions`] instead. A browser
/// scenario checks this list against the registered one, so the two cannot
/// drift while it stays.
#[deprecated(
    since = "0.2.0",
    note = "use `default_actions()` and each tool's `name()`"
)]
pub const DEFAULT_ACTIONS: &[&str] = &[
    "navigate",
    "go_back",
    "wait",
    "click",
    "input",
    "hover",
    "hold",
    "drag",
    "dropdown_options",
    "select_option",
    "scroll",
    "send_keys",
    "switch_tab",
    "close_tab",
    "extract",
    "find_text",
    "find",
    "screenshot",
    "upload_file",
    "read_download",
    "done",
];

/// A registry builder holding the default browser actions and their state,
/// the session, with `policy` installed in it ([`Browser::set_policy`]): the
/// actions, the page map and every navigation obey it. A later
/// `set_policy` on the session replaces it for all of them at once. The
/// registry redacts what a call's span captures with the same policy
/// ([`RegistryBuilder::redact_captured`]), and each action records the
/// page's address on its span as `url.full` (docs/observability.md).
///
/// ```no_run
/// use toolkit_browser::{Browser, BrowserConfig, SafetyPolicy};
/// use toolkit_core::tools;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let browser = Browser::launch(BrowserConfig::default()).await?;
/// let policy = SafetyPolicy::builder()
///     .allow_domains(["*.example.com"])
///     .secret("password", "hunter2")
///     .build()?;
/// let registry = toolkit_browser::registry(browser.clone(), policy)
///     .exclude(["upload_file"])
///     .tools(tools![toolkit_browser::actions::evaluate]) // off unless added
///     .build()?;
/// let outcome = registry
///     .dispatch(("navigate", r#"{"url": "https://www.example.com"}"#))
///     .await;
/// println!("{}", outcome.result.to_text());
/// println!("{}", browser.page_map().await?.render());
/// # Ok(())
/// # }
/// ```
pub fn registry(browser: Browser, policy: SafetyPolicy) -> RegistryBuilder {
    browser.set_policy(policy);
    // What a call's span captures (arguments the model wrote, results)
    // goes through the same redaction as what the model reads, with the
    // session's policy as it is at the call.
    let session = browser.clone();
    Registry::builder()
        .tools(default_actions())
        .state(browser)
        .redact_captured(move |text| session.policy().redact(text).into_owned())
}

/// What an action has to say, before redaction turns it into a
/// [`ToolResult`].
#[derive(Default)]
pub(crate) struct Reply {
    text: String,
    memory: Option<String>,
    png: Option<Vec<u8>>,
    show_once: bool,
    error: Option<BrowserError>,
    done: Option<bool>,
    attachments: Vec<PathBuf>,
    attributes: Vec<(&'static str, serde_json::Value)>,
}

impl Reply {
    pub(crate) fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    pub(crate) fn memory(mut self, memory: impl Into<String>) -> Self {
        self.memory = Some(memory.into());
        self
    }

    pub(crate) fn png(mut self, bytes: Vec<u8>) -> Self {
        self.png = Some(bytes);
        self
    }

    /// Long content (page text, a screenshot) is shown at the next step
    /// only; later steps keep the memory line.
    pub(crate) fn with_show_once(mut self) -> Self {
        self.show_once = true;
        self
    }

    /// Marks the action as failed, keeping the text of what it did do.
    pub(crate) fn failed(mut self, error: BrowserError) -> Self {
        self.error = Some(error);
        self
    }

    pub(crate) fn with_done(mut self, success: bool) -> Self {
        self.done = Some(success);
        self
    }

    pub(crate) fn attach(mut self, path: PathBuf) -> Self {
        self.attachments.push(path);
        self
    }

    pub(crate) fn attribute(
        mut self,
        key: &'static str,
        value: impl Into<serde_json::Value>,
    ) -> Self {
        self.attributes.push((key, value.into()));
        self
    }

    /// Adds a sentence to the text.
    pub(crate) fn say(mut self, sentence: impl AsRef<str>) -> Self {
        let sentence = sentence.as_ref();
        if !sentence.is_empty() {
            if !self.text.is_empty() {
                self.text
                    .push(if self.text.ends_with('\n') { '\n' } else { ' ' });
            }
            self.text.push_str(sentence);
        }
        self
    }
}

impl From<BrowserError> for Reply {
    fn from(error: BrowserError) -> Self {
        Self::default().failed(error)
    }
}

/// The frame of every action on the session. It waits for the actions
/// called before it to finish (one action at a time, in call order: see
/// `Browser::action_lock`), runs `run` with the session's policy as it is
/// now, then notes the dialogs the page showed meanwhile, redacts every
/// text and builds the result.
pub(crate) async fn act(
    browser: &Browser,
    run: impl AsyncFnOnce(SafetyPolicy) -> Result<Reply, BrowserError>,
) -> ToolResult {
    let _lock = browser.action_lock().await;
    let policy = browser.policy();
    // What the guard stopped while no action ran (a page leaving on a
    // timer) is not this action's doing: it is said, not made its error.
    let earlier = browser.take_blocked();
    let reply = run(policy.clone()).await.unwrap_or_else(Reply::from);
    let reply = leave_error_page(browser, reply).await;
    let reply = downloads::report(browser, reply).await;
    telemetry::record_page_url(browser, &policy).await;
    respond(browser, &policy, reply.say(on_its_own(&earlier))).await
}

/// After an action: a tab left on the browser's error page goes back to
/// the page it showed before, as it was (its history, its filled fields,
/// from the back/forward cache; a page a form post led to is not posted
/// again), or, with no page before it, is replaced by a new blank tab. The
/// reply becomes an error that says so, whatever the action did (a click
/// on such a page reaches nothing). `done` is left as it is: the task ends
/// there.
async fn leave_error_page(browser: &Browser, reply: Reply) -> Reply {
    if reply.done.is_some() || reply.error.as_ref().is_some_and(BrowserError::is_fatal) {
        return reply;
    }
    let failed = match browser.error_page().await {
        Ok(Some(failed)) => failed,
        Ok(None) => return reply,
        Err(e) if e.is_fatal() => return Reply::from(e),
        // Not knowing is no reason to fail an action that worked.
        Err(_) => return reply,
    };
    let (then, done) = match back_from_error_page(browser).await {
        Ok(Some(WentBack { info, passed })) => {
            let mut then = format!("the tab went back to {}", page_line(&info.title, &info.url));
            if passed.is_empty() {
                then.push_str(", as it was");
            } else {
                let _ = write!(
                    then,
                    " ({} could not be shown again without sending it again, which was not done)",
                    passed.join(", ")
                );
            }
            then.push_str("; nothing else was done");
            (then, "went back")
        }
        Ok(None) => match browser.replace_current_tab().await {
            Ok(tab) => (
                format!(
                    "it was replaced by a new tab, which is now current: {}; nothing else was \
                     done: navigate to a page to go on",
                    tab_line(&tab)
                ),
                "was replaced",
            ),
            Err(e) if e.is_fatal() => return Reply::from(e),
            Err(e) => (
                format!(
                    "replacing it with a new tab failed ({e}); nothing else was done: navigate \
                     to a page to go on"
                ),
                "was left",
            ),
        },
        Err(e) => return Reply::from(e),
    };
    let memory = match &failed {
        Some(url) => format!("The tab showed the browser's error page for {url} and {done}"),
        None => format!("The tab showed the browser's error page and {done}"),
    };
    Reply::from(BrowserError::ErrorPage {
        failed,
        cause: reply.error.map(|e| e.to_string()),
        then,
    })
    .memory(memory)
}

/// How many pages back [`back_from_error_page`] goes at most.
const BACK_FROM_ERROR_PAGE: usize = 3;

/// Where [`back_from_error_page`] took the tab.
struct WentBack {
    info: crate::PageInfo,
    /// The pages passed over on the way, which showed the browser's error
    /// page again when gone back to.
    passed: Vec<String>,
}

/// Takes the tab off the browser's error page to the page before it in
/// its history: the page it showed before the load that failed, as it was
/// (from the back/forward cache, or loaded again with its fields filled
/// in as they were). A page a form post led to, which the browser keeps
/// in no cache, is not posted again: the browser shows its error page
/// there instead, and the tab goes back one more. `None` when no page
/// before it can be shown; only a dead browser is an error.
async fn back_from_error_page(browser: &Browser) -> Result<Option<WentBack>, BrowserError> {
    let mut passed = Vec::new();
    for _ in 0..BACK_FROM_ERROR_PAGE {
        let info = match browser.go_back().await {
            Ok(info) => info,
            Err(e) if e.is_fatal() => return Err(e),
            Err(_) => return Ok(None),
        };
        match browser.error_page().await {
            Ok(None) => return Ok(Some(WentBack { info, passed })),
            Ok(Some(failed)) => passed.push(failed.unwrap_or(info.url)),
            Err(e) if e.is_fatal() => return Err(e),
            Err(_) => return Ok(None),
        }
    }
    Ok(None)
}

/// The sentence about loads the page tried on its own between two actions
/// and the guard stopped (empty when there were none).
fn on_its_own(blocked: &[crate::BlockedNavigation]) -> String {
    blocked
        .iter()
        .map(|b| {
            format!(
                "Before this action, the page tried on its own to {} {} and was stopped: {}.",
                attempt(b, "load"),
                b.url,
                b.reason
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a stopped load was, for the model: a speculative load says so,
/// anything else is `page_load` (`load`, `load in a frame`).
fn attempt(blocked: &crate::BlockedNavigation, page_load: &'static str) -> &'static str {
    match blocked.resource_type.as_str() {
        "Prefetch" => "fetch ahead of time (a prefetch)",
        "Prerender" => "load ahead of time (a prerender)",
        _ => page_load,
    }
}

/// The end of every action: notes the dialogs the page showed meanwhile,
/// redacts every text, and builds the result.
async fn respond(browser: &Browser, policy: &SafetyPolicy, mut reply: Reply) -> ToolResult {
    let dialogs = browser.take_dialogs().await;
    if !dialogs.is_empty() {
        reply = reply.say(format!(
            "Dialogs the page showed (accepted automatically): {}.",
            dialogs.join("; ")
        ));
    }
    build(policy, reply)
}

/// Builds the result from a reply, redacting every text in it. The only
/// place a browser tool's result is made.
pub(crate) fn build(policy: &SafetyPolicy, reply: Reply) -> ToolResult {
    let redact = |text: &str| policy.redact(text).into_owned();
    let text = redact(&reply.text);
    let mut result = match reply.png {
        Some(bytes) => match Image::png(&bytes) {
            Ok(image) => ToolResult::blocks([Block::text(text), Block::image(image)]),
            Err(e) => ToolResult::text(text)
                .with_error(format!("the screenshot is not a valid PNG image: {e}")),
        },
        None if text.is_empty() => ToolResult::blocks([]),
        None => ToolResult::text(text),
    };
    if let Some(error) = &reply.error {
        result = result
            .with_error(redact(&error.to_string()))
            .with_attribute("error_kind", error_kind(error));
        if error.is_fatal() {
            // For the host: the session must be restarted
            // (`Browser::restart`) before any action can work again.
            result = result.with_attribute("browser_fatal", true);
        }
    }
    if let Some(memory) = &reply.memory {
        result = result.with_memory(redact(memory));
    }
    if reply.show_once && reply.error.is_none() {
        result = result.with_show_once();
    }
    if let Some(success) = reply.done {
        result = result.with_done(success);
    }
    for path in reply.attachments {
        result = result.with_attachment(path);
    }
    for (key, value) in reply.attributes {
        let value = match value {
            serde_json::Value::String(s) => serde_json::Value::String(redact(&s)),
            other => other,
        };
        result = result.with_attribute(key, value);
    }
    result
}

/// A short name of the error's kind, for the host (an attribute).
fn error_kind(error: &BrowserError) -> &'static str {
    match error {
        BrowserError::NoBrowser { .. } => "no_browser",
        BrowserError::Launch { .. } => "launch",
        BrowserError::Closed => "closed",
        BrowserError::Disconnected { .. } => "disconnected",
        BrowserError::Crashed => "crashed",
        BrowserError::StaleElement { .. } => "stale_element",
        BrowserError::NotClickable { .. } => "not_clickable",
        BrowserError::NotEditable { .. } => "not_editable",
        BrowserError::NoSuchTab { .. } => "no_such_tab",
        BrowserError::NoHistory => "no_history",
        BrowserError::Navigation { .. } => "navigation",
        BrowserError::Timeout { .. } => "timeout",
        BrowserError::InvalidInput { .. } => "invalid_input",
        BrowserError::Script { .. } => "script",
        BrowserError::Protocol { .. } => "protocol",
        BrowserError::Io { .. } => "io",
        BrowserError::Blocked { .. } => "blocked",
        BrowserError::Refused { .. } => "refused",
        BrowserError::ErrorPage { .. } => "error_page",
    }
}

/// An element as the model's messages name it:
/// `[12] <input type=text name=q> "Query"`.
pub(crate) fn label(element: &Element) -> String {
    let mut out = format!("[{}] <{}", element.index, element.tag);
    if let Some(t) = &element.input_type {
        let _ = write!(out, " type={t}");
    }
    if let Some(r) = &element.role {
        let _ = write!(out, " role={r}");
    }
    if let Some(n) = &element.field_name {
        let _ = write!(out, " name={n}");
    }
    out.push('>');
    let words = element
        .name
        .as_deref()
        .or(element.text.as_deref())
        .or(element.placeholder.as_deref())
        .or(element.href.as_deref())
        .filter(|w| !w.is_empty());
    if let Some(words) = words {
        let _ = write!(out, " {:?}", cut(words, 60));
    }
    out
}

/// `"Title" (url)` of the current tab, or the URL alone when untitled.
pub(crate) async fn here(browser: &Browser) -> Result<String, BrowserError> {
    let info = browser.page_info().await?;
    Ok(page_line(&info.title, &info.url))
}

pub(crate) fn page_line(title: &str, url: &str) -> String {
    if title.trim().is_empty() {
        url.to_owned()
    } else {
        format!("{:?} ({url})", cut(title.trim(), 80))
    }
}

/// Ends an action at once when its step found the browser dead: nothing
/// after it, the navigation check included, can work, and the host must
/// restart the session. Any other error is left for the action to report
/// after that check.
pub(crate) fn stop_if_fatal<T>(step: &Result<T, BrowserError>) -> Result<(), BrowserError> {
    match step {
        Err(error) if error.is_fatal() => Err(error.clone()),
        _ => Ok(()),
    }
}

/// After anything that may have navigated: a page load of a tab that the
/// policy stopped (the guard's log), or a page the policy does not allow,
/// is an error. A stopped load leaves the tab where it was (the guard
/// answers it with `204 No Content`); a tab this action opened for it
/// (`opened`, with the tab that was current before) is closed, and a tab
/// that shows a page it must not (or an error page) goes back one page.
///
/// What the page itself tried and was stopped from (a frame, a prefetch or
/// prerender of another site) is no error of the action: it comes back as
/// a sentence for the reply (empty when there is none).
#[must_use = "the sentence about what the page was stopped from belongs in the reply"]
pub(crate) async fn check_navigation(
    browser: &Browser,
    policy: &SafetyPolicy,
    opened: Option<&str>,
) -> Result<String, BrowserError> {
    let blocked = browser.take_blocked();
    let tabs = if blocked.is_empty() {
        Vec::new()
    } else {
        browser.tab_target_ids().await?
    };
    let (top, other): (Vec<_>, Vec<_>) = blocked.into_iter().partition(|b| {
        b.resource_type == "Document" && (tabs.is_empty() || tabs.contains(&b.frame_id))
    });
    let note = other
        .iter()
        .map(|b| {
            format!(
                "The page tried to {} {} and was stopped: {}.",
                attempt(b, "load in a frame"),
                b.url,
                b.reason
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    let info = browser.page_info().await?;
    let disallowed = policy.check_url(&info.url).err();
    let (url, reason) = match (top.into_iter().next(), disallowed.clone()) {
        (Some(first), _) => (first.url, first.reason),
        (None, Some(reason)) => (info.url.clone(), reason),
        (None, None) => return Ok(note),
    };
    let on_error_page = info.url.starts_with("chrome-error:");
    let left_tab = match opened {
        Some(previous) => browser.current_tab().await?.id != previous,
        None => false,
    };
    let then = if on_error_page || disallowed.is_some() || left_tab {
        match restore(browser, opened).await {
            Ok(line) => Some(line),
            Err(e) if e.is_fatal() => return Err(e),
            Err(_) => None,
        }
    } else if let Some(back) = browser.close_blank_popup().await? {
        // A popup the page wrote itself has no page of its own to stay
        // on: left open, it is a blank tab the model did not ask for.
        Some(format!(
            "The tab it was in, a popup with no page of its own, was closed, and {} is current",
            tab_line(&back)
        ))
    } else {
        Some(format!(
            "The tab stayed on {}",
            page_line(&info.title, &info.url)
        ))
    };
    Err(BrowserError::Blocked { url, reason, then })
}

/// Leaves a blocked or disallowed page; says where the tab is now.
async fn restore(browser: &Browser, opened: Option<&str>) -> Result<String, BrowserError> {
    if let Some(previous) = opened {
        let current = browser.current_tab().await?;
        if current.id != previous {
            browser.close_tab(&current.id).await?;
            // Closing picks the most recent tab; the one the action started
            // from is the one the model knows.
            let back = browser.switch_tab(previous).await?;
            return Ok(format!(
                "The tab it opened was closed, and {} is current again",
                tab_line(&back)
            ));
        }
    }
    match browser.go_back().await {
        Ok(info) => Ok(format!(
            "The tab went back to {}",
            page_line(&info.title, &info.url)
        )),
        Err(BrowserError::NoHistory) => {
            let info = browser.navigate("about:blank").await?;
            Ok(format!("The tab shows {} instead", info.url))
        }
        Err(e) => Err(e),
    }
}

pub(crate) fn tab_line(tab: &crate::TabInfo) -> String {
    format!("Tab {} {}", tab.id, page_line(&tab.title, &tab.url))
}

/// The sentence describing what an input caused (a tab, a navigation).
pub(crate) async fn effects_sentence(
    browser: &Browser,
    effects: &crate::Effects,
) -> Result<String, BrowserError> {
    if let Some(tab) = &effects.new_tab {
        let info = browser.page_info().await?;
        return Ok(format!(
            "It opened a new tab, which is now current: Tab {} {}.",
            tab.id,
            page_line(&info.title, &info.url)
        ));
    }
    if effects.navigated {
        let now = here(browser).await?;
        if effects.still_loading {
            return Ok(format!("The page is now {now}, still loading."));
        }
        return Ok(format!("The page is now {now}."));
    }
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_action_is_listed_once() {
        let names: Vec<&str> = default_actions().iter().map(|d| d.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        assert!(!names.contains(&"evaluate"));
    }

    #[test]
    #[allow(deprecated)]
    fn the_earlier_names_hold_the_same_actions() {
        let names: Vec<&str> = default_actions().iter().map(|d| d.name()).collect();
        assert_eq!(names, DEFAULT_ACTIONS);
        let earlier: Vec<&str> = default_tools().iter().map(|d| d.name()).collect();
        assert_eq!(earlier, names);
    }

    #[test]
    fn results_are_redacted_everywhere() {
        let policy = SafetyPolicy::builder()
            .secret("pw", "hunter2")
            .build()
            .unwrap();
        let reply = Reply::text("typed hunter2")
            .memory("memory hunter2")
            .attribute("raw", "hunter2")
            .failed(BrowserError::Script {
                detail: "threw hunter2".into(),
            });
        let result = build(&policy, reply);
        let all = format!("{result:?}");
        assert!(!all.contains("hunter2"), "{all}");
        assert_eq!(
            result.error_message(),
            Some("a script on the page failed: threw <secret>pw</secret>")
        );
        assert_eq!(result.memory(), Some("memory <secret>pw</secret>"));
    }

    #[test]
    fn labels_name_the_element() {
        let el: Element = serde_json::from_str(
            r#"{"i":12,"tag":"input","type":"text","field":"q","name":"Query"}"#,
        )
        .unwrap();
        assert_eq!(label(&el), r#"[12] <input type=text name=q> "Query""#);
    }
}
