//! Running code in a page: the small vocabulary the rest of the crate
//! uses, and the bridge to the page-side script (`js/`) behind it.
//!
//! - [`Session::evaluate`]: a raw expression in the page's own main world
//!   (where the page's scripts run), as [`Browser::evaluate`](crate::Browser::evaluate)
//!   offers it.
//! - [`Session::evaluate_isolated`]: a raw expression in this crate's
//!   isolated world, out of the page's reach (the numbered overlay of a
//!   screenshot).
//! - [`Session::responds`]: whether the page responds at all (a page stuck
//!   in a script does not).
//! - [`Session::call`]: a method of the page script, its answer decoded,
//!   in the tab's document or, for an element number handed out inside a
//!   frame from another site, in that frame's document.
//! - [`Session::call_in`], [`Session::call_all`], [`Session::call_ahead`]
//!   (in `frames/calls.rs`): the same in a given [`Doc`](super::Doc), in several
//!   at once, and in the tab's document while the frames of its last map
//!   are walked, for the page map's walk through frames.
//! - [`Session::decode`]: the one step from an [`Answer`]
//!   to a typed result.
//!
//! DevTools commands that are not code in the page go through
//! [`Session::exec`] (`devtools.rs`).

use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::CreateIsolatedWorldParams;
use chromiumoxide::cdp::js_protocol::runtime::{
    EvaluateParams, ExecutionContextId, RemoteObjectId,
};
use chromiumoxide::error::CdpError;
use serde::de::DeserializeOwned;

use super::{Fail, Session};
use crate::error::BrowserError;

/// The page-side script (see `js/install.js`): the function that installs
/// it, given the modules it is made of (`MODULES`).
const SCRIPT: &str = include_str!("../../js/install.js");

/// The modules of the page script as an object literal, one file of `js/`
/// each (a function expression that parses alone), by the name
/// `install.js` calls it by.
const MODULES: &str = concat!(
    "{\ncore: ",
    include_str!("../../js/core.js"),
    ",\nmap: ",
    include_str!("../../js/map.js"),
    ",\ninput: ",
    include_str!("../../js/input.js"),
    ",\nforms: ",
    include_str!("../../js/forms.js"),
    ",\ntext: ",
    include_str!("../../js/text.js"),
    ",\nmask: ",
    include_str!("../../js/mask.js"),
    ",\napi: ",
    include_str!("../../js/api.js"),
    "\n}",
);

/// The markdown converter behind `extract` (see `js/markdown.js`), handed
/// to the page script when it is installed.
const MARKDOWN: &str = include_str!("../../js/markdown.js");

/// The version the script installs under, derived from its text, its
/// modules' and the converter's: a document that still holds a copy from
/// another build (a browser kept across a host's upgrade) gets the new
/// one, and no change can forget to say so.
const SCRIPT_VERSION: u32 = fnv1a(
    MARKDOWN.as_bytes(),
    fnv1a(MODULES.as_bytes(), fnv1a(SCRIPT.as_bytes(), 0x811c_9dc5)),
);

/// 32-bit FNV-1a of `bytes`, continuing from `hash`: small enough for a
/// constant, and exact as a JavaScript number.
const fn fnv1a(bytes: &[u8], mut hash: u32) -> u32 {
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u32;
        hash = hash.wrapping_mul(0x0100_0193);
        i += 1;
    }
    hash
}

/// The name of the isolated world the page script runs in.
pub(super) const WORLD_NAME: &str = "toolkit-browser";

/// How long a call into the page keeps retrying while the page is between
/// two documents ("execution context was destroyed").
const CONTEXT_RETRY: Duration = Duration::from_secs(5);

impl Session {
    /// Evaluates `expression` in the main world of the page's main frame
    /// (where the page's own scripts run) and returns its value, promises
    /// awaited; a failure becomes the error of `action`. No execution
    /// context id is passed, so the call always runs in the frame's current
    /// document; while the page is between two documents it is retried for
    /// a short while.
    pub(crate) async fn evaluate(
        &mut self,
        page: &Page,
        expression: &str,
        action: &str,
    ) -> Result<serde_json::Value, BrowserError> {
        self.evaluate_retried(page, expression, action, false).await
    }

    /// Whether the page's main world answers a trivial expression within
    /// `within`: one attempt, no retry, so that a page stuck in a script is
    /// told from one between two documents only by the time it takes.
    pub(crate) async fn responds(&self, page: &Page, within: Duration) -> bool {
        let probe = self.evaluate_in_context(page, None, "1");
        tokio::time::timeout(within, probe).await.is_ok()
    }

    /// Waits, at most `within`, until the page's main world has run one
    /// task (a zero-delay timer), so that the tasks the page posted before
    /// it have run: the submission an Enter key or a click posts starts
    /// its navigation only then. One attempt: a document going away, or a
    /// page whose timers never run, ends it all the same.
    pub(crate) async fn turn(&self, page: &Page, within: Duration) {
        let turn = self.evaluate_in_context(page, None, "new Promise(r => setTimeout(r, 0))");
        let _ = tokio::time::timeout(within, turn).await;
    }

    /// [`evaluate`](Self::evaluate) in this crate's isolated world of the
    /// current document (see [`world`](Self::world)), where the page's
    /// scripts can neither see nor patch what it uses; retried while the
    /// page is between two documents, as [`call`](Self::call) is.
    pub(crate) async fn evaluate_isolated(
        &mut self,
        page: &Page,
        expression: &str,
        action: &str,
    ) -> Result<serde_json::Value, BrowserError> {
        self.evaluate_retried(page, expression, action, true).await
    }

    /// [`evaluate`](Self::evaluate) in the main world, or in the isolated
    /// one: retried while the page is between two documents.
    async fn evaluate_retried(
        &mut self,
        page: &Page,
        expression: &str,
        action: &str,
        isolated: bool,
    ) -> Result<serde_json::Value, BrowserError> {
        let deadline = Instant::now() + CONTEXT_RETRY;
        let outcome = loop {
            let outcome = if isolated {
                match self.world(page).await {
                    Ok(world) => {
                        self.evaluate_in_context(page, Some(world), expression)
                            .await
                    }
                    Err(fail) => Err(fail),
                }
            } else {
                self.evaluate_in_context(page, None, expression).await
            };
            match outcome {
                Err(fail) if is_context_gone(&fail) && Instant::now() < deadline => {
                    // The isolated world went with its document: the next
                    // attempt makes one in the new document.
                    let pause = if isolated {
                        self.worlds.remove(page.target_id());
                        10
                    } else {
                        25
                    };
                    tokio::time::sleep(Duration::from_millis(pause)).await;
                }
                outcome => break outcome,
            }
        };
        outcome.map_err(|f| self.classify(f, action))
    }

    /// Calls `method` of the page script with `args` and decodes its
    /// result. The call runs in the tab's document, or, when `args` names
    /// an element (`index`) handed out inside a frame from another site,
    /// in that frame's document. The script is sent only when the document
    /// does not have it yet, so most calls are a few dozen bytes.
    pub(crate) async fn call<T: DeserializeOwned>(
        &mut self,
        page: &Page,
        method: &str,
        mut args: serde_json::Value,
    ) -> Result<T, BrowserError> {
        // Texts the script cuts are cut this much later, so that redaction
        // (on the Rust side) sees whole secrets before the final cut.
        self.add_slack(&mut args);
        let index = args["index"].as_u64().and_then(|i| u32::try_from(i).ok());
        let route = index.and_then(|i| self.route_of(i));
        let text = match &route {
            // An element of a frame from another site: the call runs there.
            Some(route) => self.call_routed(page, route, method, &args).await,
            None => self.call_top(page, method, &args).await,
        };
        if let (Some(route), Ok(text)) = (&route, &text) {
            // Numbers the call handed out there (an ARIA option to click)
            // live there too.
            let base = args["base"].as_u64().and_then(|b| u32::try_from(b).ok());
            let next = serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v["ok"]["next"].as_u64().and_then(|n| u32::try_from(n).ok()));
            if let (Some(base), Some(next)) = (base, next) {
                self.remember_route(base..next, route);
            }
        }
        self.decode(Answer::new(method, text))
    }

    /// Decodes an answer of the page script: a failed call classified (a
    /// dead browser first), then the script's `{"ok": ...}` / `{"err":
    /// ...}` envelope opened.
    pub(crate) fn decode<T: DeserializeOwned>(
        &mut self,
        answer: Answer,
    ) -> Result<T, BrowserError> {
        let Answer { method, text } = answer;
        let text = text.map_err(|f| self.classify(f, &format!("the page script `{method}`")))?;
        open_envelope(&method, &text)
    }

    /// Adds the redactor's slack to a call's arguments (see `cut` in
    /// `js/core.js`).
    pub(super) fn add_slack(&self, args: &mut serde_json::Value) {
        if let serde_json::Value::Object(map) = args {
            map.insert("slack".into(), self.redactor.slack().into());
        }
    }

    /// A remote handle on the element the page script's `getter` returns
    /// for `index` (`fileNode`...), for protocol commands that take a node
    /// (`DOM.setFileInputFiles`). `None` when the getter finds nothing.
    pub(crate) async fn element_object(
        &mut self,
        page: &Page,
        getter: &str,
        index: u32,
    ) -> Result<Option<RemoteObjectId>, BrowserError> {
        if self.in_other_site_frame(index) {
            return Err(BrowserError::script(format!(
                "element [{index}] is inside a frame from another site, where files cannot be \
                 chosen; open the frame's address in a tab of its own (navigate) and try there"
            )));
        }
        // Installs the script in the current document if it is not there.
        let _: serde_json::Value = self.call(page, "pageInfo", serde_json::Value::Null).await?;
        let world = self.world(page).await;
        let world = world.map_err(|f| self.classify(f, "finding the element"))?;
        let mut params = EvaluateParams::new(format!("window.__toolkitBrowser.{getter}({index})"));
        params.context_id = Some(world);
        params.return_by_value = Some(false);
        let returned = self.exec(page, params, "finding the element").await?;
        if let Some(details) = returned.exception_details {
            return Err(BrowserError::script(details.text));
        }
        Ok(returned.result.object_id)
    }

    /// One evaluation in `context` (the main world when `None`), with no
    /// retry: the step every evaluation in the tab's own session is made
    /// of.
    pub(super) async fn evaluate_in_context(
        &self,
        page: &Page,
        context: Option<ExecutionContextId>,
        expression: &str,
    ) -> Result<serde_json::Value, Fail> {
        let mut params = EvaluateParams::new(expression);
        params.context_id = context;
        params.return_by_value = Some(true);
        params.await_promise = Some(true);
        let returns = self.exec_raw(page, params).await?;
        if let Some(details) = returns.exception_details {
            return Err(Fail::Cdp(CdpError::JavascriptException(Box::new(details))));
        }
        Ok(returns.result.value.unwrap_or(serde_json::Value::Null))
    }

    /// The execution context of this crate's isolated world in the current
    /// document of `page`'s main frame, created when missing.
    ///
    /// The page script runs there rather than in the page's own world: the
    /// page cannot see, replace or spoof it (a page defining its own
    /// `__toolkitBrowser` would otherwise feed the model a fake map), and
    /// page scripts that patch built-ins (`Array.prototype`, `JSON`)
    /// cannot break it. The DOM is shared between worlds.
    pub(super) async fn world(&mut self, page: &Page) -> Result<ExecutionContextId, Fail> {
        if let Some(id) = self.worlds.get(page.target_id()) {
            return Ok(*id);
        }
        let frame = page
            .mainframe()
            .await?
            .ok_or_else(|| Fail::Cdp(CdpError::msg("the page has no main frame yet")))?;
        let mut params = CreateIsolatedWorldParams::new(frame);
        params.world_name = Some(WORLD_NAME.to_owned());
        let created = self.exec_raw(page, params).await?;
        self.worlds
            .insert(page.target_id().clone(), created.execution_context_id);
        Ok(created.execution_context_id)
    }

    /// The undecoded answer of `method` of the page script in the tab's
    /// document (the tab's part of [`call`](Self::call) and of the calls in
    /// `frames/`). A document replaced since the world was created (a
    /// navigation) takes the world with it; a new one is created in the
    /// new document, for a short while.
    pub(super) async fn call_top(
        &mut self,
        page: &Page,
        method: &str,
        args: &serde_json::Value,
    ) -> Result<String, Fail> {
        let quick = quick_call(method, args);
        let deadline = Instant::now() + CONTEXT_RETRY;
        loop {
            let attempt = async {
                let world = self.world(page).await?;
                match self.evaluate_in_context(page, Some(world), &quick).await? {
                    serde_json::Value::String(text) => Ok(text),
                    _ => {
                        let full = installing_call(method, args);
                        match self.evaluate_in_context(page, Some(world), &full).await? {
                            serde_json::Value::String(text) => Ok(text),
                            other => Err(Fail::Cdp(CdpError::msg(format!(
                                "the page script answered {other} instead of text"
                            )))),
                        }
                    }
                }
            };
            match attempt.await {
                Err(fail) if is_context_gone(&fail) && Instant::now() < deadline => {
                    self.worlds.remove(page.target_id());
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                outcome => return outcome,
            }
        }
    }
}

/// The page script's answer from one document, not yet classified nor
/// decoded: what the calls that run in several documents at once hand
/// back, each answer decoded by its caller with [`Session::decode`].
pub(crate) struct Answer {
    method: String,
    text: Result<String, Fail>,
}

impl Answer {
    pub(super) fn new(method: &str, text: Result<String, Fail>) -> Self {
        Self {
            method: method.to_owned(),
            text,
        }
    }
}

/// The expression that calls `method` of the page script in a document
/// that has it: `null` where it does not.
pub(super) fn quick_call(method: &str, args: &serde_json::Value) -> String {
    format!(
        "(() => {{ const tk = window.__toolkitBrowser; \
         return tk && tk.version === {SCRIPT_VERSION} ? tk.run({method:?}, {args}) : null; }})()"
    )
}

/// The expression that installs the page script, then calls `method`.
pub(super) fn installing_call(method: &str, args: &serde_json::Value) -> String {
    format!("({SCRIPT})({SCRIPT_VERSION}, {MARKDOWN}, {MODULES}).run({method:?}, {args})")
}

/// Whether a call failed because the document it ran in went away (a
/// navigation): worth repeating in the new document.
pub(super) fn is_context_gone(fail: &Fail) -> bool {
    let message = match fail {
        Fail::Cdp(CdpError::Chrome(e)) => e.message.as_str(),
        Fail::Cdp(CdpError::JavascriptException(details)) => details.text.as_str(),
        Fail::Cdp(CdpError::ChromeMessage(m)) => m.as_str(),
        _ => return false,
    };
    message.contains("Execution context was destroyed")
        || message.contains("Cannot find default execution context")
        || message.contains("Cannot find context with specified id")
        || message.contains("Inspected target navigated or closed")
        || message.contains("No frame for given id found")
        || message.contains("has no main frame")
        // A frame between two documents (going back) for a moment.
        || message.contains("Not attached to an active page")
}

/// Opens the `{"ok": ...}` / `{"err": ...}` envelope of the page script.
fn open_envelope<T: DeserializeOwned>(method: &str, text: &str) -> Result<T, BrowserError> {
    #[derive(serde::Deserialize)]
    struct Envelope<T> {
        ok: Option<T>,
        err: Option<String>,
    }
    let envelope: Envelope<T> = serde_json::from_str(text).map_err(|e| {
        BrowserError::script(format!(
            "the page script `{method}` answered in an unexpected shape: {e}"
        ))
    })?;
    match (envelope.ok, envelope.err) {
        (Some(value), _) => Ok(value),
        (None, Some(message)) => Err(BrowserError::script(message)),
        (None, None) => Err(BrowserError::script(format!(
            "the page script `{method}` answered nothing"
        ))),
    }
}
