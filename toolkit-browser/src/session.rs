//! The browser session: launching, connecting, closing, restarting, and the
//! plumbing every action goes through (time limits, error classification,
//! calls into the page-side script).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::page::{
    CreateIsolatedWorldParams, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::cdp::browser_protocol::target::{GetTargetsParams, TargetId, TargetInfo};
use chromiumoxide::cdp::js_protocol::runtime::{
    EvaluateParams, ExecutionContextId, RemoteObjectId,
};
use chromiumoxide::error::CdpError;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::{Command, Handler, Page};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};
use tokio::task::JoinHandle;

use crate::config::{BrowserConfig, launch_args};
use crate::error::BrowserError;
use crate::guard::{BlockedLog, BlockedNavigation, Guard};
use crate::profile::{ProfileDir, processes_mentioning};
use crate::safety::SafetyPolicy;
use crate::tabs::TabBook;

/// The page-side script (see `page_map.js`), and the version it installs
/// under: bump it whenever the script changes, so a document that still
/// holds an older copy gets the new one.
const SCRIPT: &str = include_str!("page_map.js");
const SCRIPT_VERSION: u32 = 2;

/// The markdown converter behind `extract` (see `markdown.js`), handed to
/// the page script when it is installed.
const MARKDOWN: &str = include_str!("markdown.js");

/// The name of the isolated world the page script runs in.
const WORLD_NAME: &str = "toolkit-browser";

/// How long a call into the page keeps retrying while the page is between
/// two documents ("execution context was destroyed").
const CONTEXT_RETRY: Duration = Duration::from_secs(5);

/// A browser session: one Chromium (launched or connected to), its tabs, and
/// the current tab that actions act on.
///
/// Cheap to clone: clones share the session, so a `Browser` can be a
/// registry's state (`#[tool(state)] browser: Browser`). Operations on one
/// session run one at a time: an agent acts on one page at a time, and
/// interleaving two actions (a click during a navigation) would make both
/// results meaningless.
///
/// Dropping the last clone without [`close`](Self::close) kills the browser
/// (best effort: helper processes exit on their own within milliseconds, and
/// the profile folder is removed once they have).
#[derive(Clone)]
pub struct Browser {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser")
            .field("origin", &self.inner.origin)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
enum Origin {
    Launch,
    Connect(String),
}

struct Inner {
    config: BrowserConfig,
    origin: Origin,
    state: Mutex<State>,
    /// The next element number of the whole session. It lives outside the
    /// session so a restart never hands out a number again.
    next_index: AtomicU32,
    /// The safety policy, if the host set one.
    policy: StdMutex<Option<SafetyPolicy>>,
    /// Bumped by every `set_policy`; a session whose guard was started for
    /// an older policy starts a new one.
    policy_generation: AtomicU64,
    /// What the navigation guard blocked since it was last read. Outside
    /// the session so that it survives a restart.
    blocked: BlockedLog,
    /// Held by each action for its whole run (see `Browser::action_turn`).
    turn: Mutex<()>,
}

struct State {
    session: Option<Session>,
    closed: bool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // `Session`'s own drop does the killing; taking it here makes the
        // order explicit.
        drop(self.state.get_mut().session.take());
    }
}

impl Browser {
    /// Launches a new Chromium with its own fresh temporary profile, opens
    /// one blank tab and makes it current.
    ///
    /// # Errors
    ///
    /// [`BrowserError::NoBrowser`] (with how to install one) when no browser
    /// is found, [`BrowserError::Launch`] when it does not start.
    pub async fn launch(config: BrowserConfig) -> Result<Self, BrowserError> {
        Self::start(config, Origin::Launch).await
    }

    /// Connects to a running Chromium by its DevTools address: either the
    /// `ws://.../devtools/browser/...` URL or `http://host:port`. The
    /// session opens its own tab; [`close`](Self::close) closes the tabs the
    /// session opened and disconnects, leaving the browser running.
    ///
    /// # Errors
    ///
    /// [`BrowserError::Launch`] when nothing answers at that address.
    pub async fn connect(url: impl Into<String>) -> Result<Self, BrowserError> {
        Self::connect_with(url, BrowserConfig::default()).await
    }

    /// [`connect`](Self::connect) with a configuration (only its time limits
    /// and viewport are used).
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    pub async fn connect_with(
        url: impl Into<String>,
        config: BrowserConfig,
    ) -> Result<Self, BrowserError> {
        Self::start(config, Origin::Connect(url.into())).await
    }

    async fn start(config: BrowserConfig, origin: Origin) -> Result<Self, BrowserError> {
        let session = Session::start(&origin, &config).await?;
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                origin,
                state: Mutex::new(State {
                    session: Some(session),
                    closed: false,
                }),
                next_index: AtomicU32::new(1),
                policy: StdMutex::new(None),
                policy_generation: AtomicU64::new(0),
                blocked: BlockedLog::default(),
                turn: Mutex::new(()),
            }),
        })
    }

    /// Closes the session: asks the browser to quit and waits for it (up to
    /// the configured close time limit, then kills it), waits for its helper
    /// processes to exit, and removes its profile folder. A connected
    /// session closes the tabs it opened and disconnects instead. Closing
    /// twice is fine.
    ///
    /// # Errors
    ///
    /// [`BrowserError::Io`] when the profile folder cannot be removed.
    pub async fn close(&self) -> Result<(), BrowserError> {
        let mut state = self.inner.state.lock().await;
        state.closed = true;
        match state.session.take() {
            Some(mut session) => session.shutdown(&self.inner.config).await,
            None => Ok(()),
        }
    }

    /// Replaces the session with a fresh one: the old browser (crashed,
    /// killed or healthy) is shut down and a new one launched (or connected
    /// to again). Tabs and pages are lost; element numbers keep counting up,
    /// so no old number can name a new element.
    ///
    /// # Errors
    ///
    /// As [`launch`](Self::launch) or [`connect`](Self::connect).
    pub async fn restart(&self) -> Result<(), BrowserError> {
        let mut state = self.inner.state.lock().await;
        if let Some(mut old) = state.session.take() {
            // The old session is being replaced: failing to remove its
            // folder must not prevent the new one.
            let _ = old.shutdown(&self.inner.config).await;
        }
        let session = Session::start(&self.inner.origin, &self.inner.config).await?;
        state.session = Some(session);
        state.closed = false;
        Ok(())
    }

    /// Whether the browser is running and connected (false after
    /// [`close`](Self::close), a crash or a kill).
    pub async fn is_alive(&self) -> bool {
        self.session().await.is_ok()
    }

    /// The main browser process id, for a launched session that is running.
    pub async fn pid(&self) -> Option<u32> {
        let state = self.inner.state.lock().await;
        state.session.as_ref().and_then(|s| s.pid)
    }

    /// The session's profile folder, for a launched session that is
    /// running.
    pub async fn profile_dir(&self) -> Option<PathBuf> {
        let state = self.inner.state.lock().await;
        state
            .session
            .as_ref()
            .and_then(|s| s.profile.as_ref())
            .map(|p| p.path().to_path_buf())
    }

    /// The DevTools WebSocket address of the running browser.
    pub async fn devtools_url(&self) -> Option<String> {
        let state = self.inner.state.lock().await;
        state.session.as_ref().map(|s| s.ws_url.clone())
    }

    /// The session's configuration.
    pub fn config(&self) -> &BrowserConfig {
        &self.inner.config
    }

    /// The messages of JavaScript dialogs (`alert`, `confirm`, `prompt`,
    /// `beforeunload`) shown since the last call, oldest first. Dialogs are
    /// accepted automatically as they open, because an open dialog blocks
    /// every script on its page; this is how an action learns that one was
    /// shown.
    pub async fn take_dialogs(&self) -> Vec<String> {
        let state = self.inner.state.lock().await;
        state
            .session
            .as_ref()
            .map(|s| std::mem::take(&mut *lock_ignoring_poison(&s.dialogs)))
            .unwrap_or_default()
    }

    /// Sets the safety policy this session enforces (replacing any earlier
    /// one): from the next operation on, [`navigate`](Self::navigate) and
    /// [`open_tab`](Self::open_tab) refuse what it does not allow, the page
    /// map shows secrets as placeholders, and, when it allows only some
    /// domains, a navigation guard checks every top-level page load of every
    /// tab (links, forms, scripts, redirects, popups) before it starts, and
    /// stops the disallowed ones ([`take_blocked`](Self::take_blocked) lists
    /// them). The guard survives [`restart`](Self::restart).
    ///
    /// A connected session's guard watches the whole browser, the user's own
    /// tabs included.
    pub fn set_policy(&self, policy: SafetyPolicy) {
        *lock_ignoring_poison(&self.inner.policy) = Some(policy);
        self.inner.policy_generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The safety policy set with [`set_policy`](Self::set_policy).
    pub fn policy(&self) -> Option<SafetyPolicy> {
        lock_ignoring_poison(&self.inner.policy).clone()
    }

    /// The top-level navigations the guard stopped since the last call,
    /// oldest first.
    pub fn take_blocked(&self) -> Vec<BlockedNavigation> {
        std::mem::take(&mut *lock_ignoring_poison(&self.inner.blocked))
    }

    /// Waits for the actions before this one to finish, and keeps the next
    /// ones waiting until the returned guard is dropped. A host may run one
    /// turn's tool calls concurrently (`Registry::run_turn`); an action is
    /// several operations on the session, and two actions interleaved would
    /// act on each other's pages. The lock is fair and an uncontended lock
    /// is taken without waiting, so actions run in the order they were
    /// called.
    pub(crate) async fn action_turn(&self) -> MutexGuard<'_, ()> {
        self.inner.turn.lock().await
    }

    /// Refuses `url` when the policy does not allow it.
    pub(crate) fn check_policy(&self, url: &str) -> Result<(), BrowserError> {
        match self.policy() {
            Some(policy) => policy
                .check_url(url)
                .map_err(|reason| BrowserError::Blocked {
                    url: url.to_owned(),
                    reason,
                    then: None,
                }),
            None => Ok(()),
        }
    }

    /// The running session, or why there is none. Its navigation guard is
    /// brought in line with the current policy first.
    pub(crate) async fn live(&self) -> Result<MappedMutexGuard<'_, Session>, BrowserError> {
        let mut session = self.session().await?;
        let generation = self.inner.policy_generation.load(Ordering::SeqCst);
        // A guard whose connection failed is started again: a live browser
        // must never go unguarded.
        let guard_died = session.guard.as_ref().is_some_and(Guard::is_finished);
        if session.guard_generation != generation || guard_died {
            match self.policy().filter(SafetyPolicy::restricts_domains) {
                Some(policy) => {
                    let limit = session.config.launch_timeout;
                    let log = Arc::clone(&self.inner.blocked);
                    let started = crate::guard::start(&session.ws_url, policy, log, limit).await;
                    // Fail closed: without a guard no operation runs. The
                    // new guard replaces the old one only once it is
                    // intercepting, so no page load slips between the two.
                    let guard = started.map_err(|e| session.death().unwrap_or(e))?;
                    session.guard = Some(guard);
                }
                None => session.guard = None,
            }
            session.guard_generation = generation;
        }
        Ok(session)
    }

    /// The running session, or why there is none.
    async fn session(&self) -> Result<MappedMutexGuard<'_, Session>, BrowserError> {
        let guard = self.inner.state.lock().await;
        let closed = guard.closed;
        let mut session =
            MutexGuard::try_map(guard, |state| state.session.as_mut()).map_err(|_| {
                if closed {
                    BrowserError::Closed
                } else {
                    BrowserError::Disconnected {
                        detail: "no browser is running".into(),
                    }
                }
            })?;
        match session.death() {
            Some(error) => Err(error),
            None => Ok(session),
        }
    }

    /// The next unused element number of the session.
    pub(crate) fn next_index(&self) -> u32 {
        self.inner.next_index.load(Ordering::SeqCst)
    }

    /// Records that the page handed out numbers below `next`.
    pub(crate) fn advance_index(&self, next: u32) {
        self.inner.next_index.fetch_max(next, Ordering::SeqCst);
    }
}

fn lock_ignoring_poison<T>(mutex: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A failed protocol call before it is classified.
pub(crate) enum Fail {
    Cdp(CdpError),
    Elapsed(Duration),
}

impl From<CdpError> for Fail {
    fn from(error: CdpError) -> Self {
        Self::Cdp(error)
    }
}

/// A browser just launched or connected to, before its first tab.
struct Started {
    cdp: chromiumoxide::Browser,
    handler: Handler,
    launched: bool,
    pid: Option<u32>,
    profile: Option<ProfileDir>,
}

/// One running browser and what this crate tracks about it.
pub(crate) struct Session {
    pub(crate) cdp: chromiumoxide::Browser,
    handler: JoinHandle<()>,
    /// Cleared by the handler task when the DevTools connection ends.
    alive: Arc<AtomicBool>,
    launched: bool,
    pid: Option<u32>,
    ws_url: String,
    pub(crate) current: Page,
    pub(crate) tabs: TabBook,
    dialogs: Arc<StdMutex<Vec<String>>>,
    watched: HashSet<TargetId>,
    /// Per tab, the context of the isolated world in its current document.
    worlds: HashMap<TargetId, ExecutionContextId>,
    pub(crate) config: BrowserConfig,
    /// The navigation guard, when the policy restricts domains.
    guard: Option<Guard>,
    /// The policy generation the guard was set up for (0: none yet).
    guard_generation: u64,
    // Last: dropped after `cdp`, whose drop kills the browser, so the
    // folder is removed once nothing uses it any more.
    profile: Option<ProfileDir>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.handler.abort();
        // SIGKILL now (chromiumoxide's `kill_on_drop` would send it when
        // `cdp` is dropped, after this body); tokio reaps the process in the
        // background.
        if let Some(child) = self.cdp.get_mut_child() {
            let _ = child.as_mut_inner().start_kill();
        }
        // The helpers exit within moments of the main process; the folder
        // is removed once they have, on a thread of its own so that a drop
        // never blocks the caller.
        if let Some(profile) = self.profile.take()
            && profile.path().exists()
        {
            let _ = std::thread::Builder::new()
                .name("toolkit-browser-cleanup".into())
                .spawn(move || {
                    let deadline = Instant::now() + Duration::from_secs(10);
                    while !processes_mentioning(profile.path()).is_empty()
                        && Instant::now() < deadline
                    {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    let _ = ProfileDir::remove_path(profile.path(), Duration::from_secs(2));
                });
        }
    }
}

impl Session {
    async fn start(origin: &Origin, config: &BrowserConfig) -> Result<Self, BrowserError> {
        match origin {
            Origin::Launch => Self::launch(config).await,
            Origin::Connect(url) => Self::connect(url, config).await,
        }
    }

    async fn launch(config: &BrowserConfig) -> Result<Self, BrowserError> {
        let executable = config.resolve_executable()?;
        let profile = ProfileDir::create(config.profile_parent.as_deref())?;
        let (width, height) = config.viewport;
        let mut builder = chromiumoxide::BrowserConfig::builder()
            .chrome_executable(&executable)
            .user_data_dir(profile.path())
            .window_size(width, height)
            // chromiumoxide applies this to every tab it attaches to,
            // popups included (its default is 800×600).
            .viewport(Viewport {
                width,
                height,
                ..Viewport::default()
            })
            .launch_timeout(config.launch_timeout)
            // chromiumoxide also abandons navigations after this limit; a
            // navigation it still waits for would hold up the next one.
            .request_timeout(config.navigation_timeout)
            // The whole list is ours (see `BASE_ARGS`), so that each flag
            // appears once.
            .disable_default_args()
            .args(launch_args(config)?);
        if !config.sandbox {
            builder = builder.no_sandbox();
        }
        if !config.headless {
            builder = builder.with_head();
        }
        let cdp_config = builder
            .build()
            .map_err(|detail| BrowserError::Launch { detail })?;
        let (mut cdp, handler) = chromiumoxide::Browser::launch(cdp_config)
            .await
            .map_err(|e| BrowserError::Launch {
                detail: format!("{} ({})", e, executable.display()),
            })?;
        let pid = cdp.get_mut_child().and_then(|c| c.as_mut_inner().id());
        let started = Started {
            cdp,
            handler,
            launched: true,
            pid,
            profile: Some(profile),
        };
        Self::init(started, config).await
    }

    async fn connect(url: &str, config: &BrowserConfig) -> Result<Self, BrowserError> {
        let (width, height) = config.viewport;
        let handler_config = chromiumoxide::handler::HandlerConfig {
            viewport: Some(Viewport {
                width,
                height,
                ..Viewport::default()
            }),
            request_timeout: config.navigation_timeout,
            ..Default::default()
        };
        let connecting = chromiumoxide::Browser::connect_with_config(url, handler_config);
        let (cdp, handler) = tokio::time::timeout(config.launch_timeout, connecting)
            .await
            .map_err(|_| BrowserError::Launch {
                detail: format!("nothing answered at {url}"),
            })?
            .map_err(|e| BrowserError::Launch {
                detail: format!("cannot connect to {url}: {e}"),
            })?;
        let started = Started {
            cdp,
            handler,
            launched: false,
            pid: None,
            profile: None,
        };
        Self::init(started, config).await
    }

    /// Starts polling the connection and opens the session's first tab.
    async fn init(started: Started, config: &BrowserConfig) -> Result<Self, BrowserError> {
        let Started {
            mut cdp,
            handler,
            launched,
            pid,
            profile,
        } = started;
        let ws_url = cdp.websocket_address().clone();
        let (handler, alive) = spawn_handler(handler);
        let first = match first_tab(&cdp, config).await {
            Ok(page) => page,
            Err(error) => {
                // Do not leave a browser behind that nobody can close.
                handler.abort();
                let _ = cdp.kill().await;
                return Err(error);
            }
        };
        let mut session = Self {
            cdp,
            handler,
            alive,
            launched,
            pid,
            ws_url,
            current: first.clone(),
            tabs: TabBook::default(),
            dialogs: Arc::default(),
            watched: HashSet::new(),
            worlds: HashMap::new(),
            config: config.clone(),
            guard: None,
            guard_generation: 0,
            profile,
        };
        session.tabs.opened(first.target_id());
        session.adopt(first).await?;
        Ok(session)
    }

    /// Makes `page` the current tab: brought to the front (input sent to a
    /// background tab stalls for seconds, see the crate docs) and watched
    /// for dialogs.
    pub(crate) async fn adopt(&mut self, page: Page) -> Result<(), BrowserError> {
        self.exec(
            &page,
            chromiumoxide::cdp::browser_protocol::page::BringToFrontParams::default(),
            "bringing the tab to the front",
        )
        .await?;
        self.watch_dialogs(&page).await;
        self.tabs.seen(page.target_id());
        self.current = page;
        Ok(())
    }

    /// Accepts every JavaScript dialog of `page` as it opens and records its
    /// message. Without this, an `alert()` would block every later call on
    /// the page until the command time limit.
    async fn watch_dialogs(&mut self, page: &Page) {
        if !self.watched.insert(page.target_id().clone()) {
            return;
        }
        let Ok(mut opening) = page.event_listener::<EventJavascriptDialogOpening>().await else {
            return;
        };
        let page = page.clone();
        let log = Arc::clone(&self.dialogs);
        // Ends when the page's target goes away (its listener channel
        // closes) or the handler stops.
        tokio::spawn(async move {
            while let Some(dialog) = opening.next().await {
                // Noted before it is accepted: the page is blocked until
                // then, so an action that waits for the page afterwards
                // finds the note.
                lock_ignoring_poison(&log).push(format!(
                    "{} dialog: {}",
                    dialog.r#type.as_ref(),
                    dialog.message
                ));
                let mut params = HandleJavaScriptDialogParams::new(true);
                params.prompt_text = dialog.default_prompt.clone();
                let _ = page.execute(params).await;
            }
        });
    }

    /// Why the session cannot be used any more, if it cannot.
    pub(crate) fn death(&mut self) -> Option<BrowserError> {
        if let Ok(Some(status)) = self.cdp.try_wait() {
            return Some(BrowserError::Disconnected {
                detail: format!("the browser process exited: {status}"),
            });
        }
        if !self.alive.load(Ordering::SeqCst) {
            return Some(BrowserError::Disconnected {
                detail: "the DevTools connection to the browser closed".into(),
            });
        }
        None
    }

    /// Turns a failed call into the error the caller sees: a dead browser
    /// first (a dropped channel or a timeout usually means that), then the
    /// protocol's own message.
    pub(crate) fn classify(&mut self, fail: Fail, action: &str) -> BrowserError {
        if let Some(dead) = self.death() {
            return dead;
        }
        match fail {
            Fail::Elapsed(after) => BrowserError::Timeout {
                action: action.to_owned(),
                after,
            },
            Fail::Cdp(CdpError::Timeout) => BrowserError::Timeout {
                action: action.to_owned(),
                after: self.config.navigation_timeout,
            },
            Fail::Cdp(CdpError::ChannelSendError(_) | CdpError::Ws(_) | CdpError::NoResponse) => {
                BrowserError::Disconnected {
                    detail: "the DevTools connection to the browser was lost".into(),
                }
            }
            Fail::Cdp(CdpError::Chrome(e)) => BrowserError::protocol(e.message),
            Fail::Cdp(CdpError::JavascriptException(e)) => BrowserError::script(
                e.exception
                    .as_ref()
                    .and_then(|x| x.description.clone())
                    .unwrap_or(e.text),
            ),
            Fail::Cdp(other) => BrowserError::protocol(other),
        }
    }

    /// Runs one command on `page` under the command time limit.
    pub(crate) async fn exec_raw<C: Command>(
        &self,
        page: &Page,
        cmd: C,
    ) -> Result<C::Response, Fail> {
        let limit = self.config.command_timeout;
        match tokio::time::timeout(limit, page.execute(cmd)).await {
            Ok(Ok(response)) => Ok(response.result),
            Ok(Err(e)) => Err(Fail::Cdp(e)),
            Err(_) => Err(Fail::Elapsed(limit)),
        }
    }

    /// [`exec_raw`](Self::exec_raw), classified.
    pub(crate) async fn exec<C: Command>(
        &mut self,
        page: &Page,
        cmd: C,
        action: &str,
    ) -> Result<C::Response, BrowserError> {
        let result = self.exec_raw(page, cmd).await;
        result.map_err(|f| self.classify(f, action))
    }

    /// Runs one browser-level command under the command time limit.
    pub(crate) async fn browser_exec<C: Command>(
        &mut self,
        cmd: C,
        action: &str,
    ) -> Result<C::Response, BrowserError> {
        let limit = self.config.command_timeout;
        let result = match tokio::time::timeout(limit, self.cdp.execute(cmd)).await {
            Ok(Ok(response)) => Ok(response.result),
            Ok(Err(e)) => Err(Fail::Cdp(e)),
            Err(_) => Err(Fail::Elapsed(limit)),
        };
        result.map_err(|f| self.classify(f, action))
    }

    /// The browser's page targets (its tabs), fresh from the browser: the
    /// handler's own list lags behind closes and popups.
    pub(crate) async fn page_targets(&mut self) -> Result<Vec<TargetInfo>, BrowserError> {
        let targets = self
            .browser_exec(GetTargetsParams::default(), "listing the tabs")
            .await?;
        Ok(targets
            .target_infos
            .into_iter()
            .filter(|t| t.r#type == "page")
            .collect())
    }

    /// Evaluates `expression` in the main world of the page's main frame
    /// (where the page's own scripts run) and returns its value. No
    /// execution context id is passed, so the call always runs in the
    /// frame's current document; while the page is between two documents it
    /// is retried for a short while.
    pub(crate) async fn eval_raw(
        &self,
        page: &Page,
        expression: &str,
    ) -> Result<serde_json::Value, Fail> {
        let deadline = Instant::now() + CONTEXT_RETRY;
        loop {
            match self.eval_in(page, None, expression).await {
                Err(fail) if is_context_gone(&fail) && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                outcome => return outcome,
            }
        }
    }

    /// One evaluation in `context` (the main world when `None`).
    pub(crate) async fn eval_in(
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
    async fn world(&mut self, page: &Page) -> Result<ExecutionContextId, Fail> {
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

    /// Calls `method` of the page-side script with `args` and decodes its
    /// result. The script is sent only when the document does not have it
    /// yet, so most calls are a few dozen bytes.
    pub(crate) async fn call<T: DeserializeOwned>(
        &mut self,
        page: &Page,
        method: &str,
        args: serde_json::Value,
    ) -> Result<T, BrowserError> {
        let result = self.call_raw(page, method, &args).await;
        let text = result.map_err(|f| self.classify(f, &format!("the page script `{method}`")))?;
        decode(method, &text)
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

    /// [`call`](Self::call) without decoding. A document replaced since the
    /// world was created (a navigation) takes the world with it; a new one
    /// is created in the new document, for a short while.
    pub(crate) async fn call_raw(
        &mut self,
        page: &Page,
        method: &str,
        args: &serde_json::Value,
    ) -> Result<String, Fail> {
        let quick = format!(
            "(() => {{ const tk = window.__toolkitBrowser; \
             return tk && tk.version === {SCRIPT_VERSION} ? tk.run({method:?}, {args}) : null; }})()"
        );
        let deadline = Instant::now() + CONTEXT_RETRY;
        loop {
            let attempt = async {
                let world = self.world(page).await?;
                match self.eval_in(page, Some(world), &quick).await? {
                    serde_json::Value::String(text) => Ok(text),
                    _ => {
                        let full = format!(
                            "({SCRIPT})({SCRIPT_VERSION}, {MARKDOWN}).run({method:?}, {args})"
                        );
                        match self.eval_in(page, Some(world), &full).await? {
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

    /// Shuts the session down (see [`Browser::close`]).
    async fn shutdown(&mut self, config: &BrowserConfig) -> Result<(), BrowserError> {
        if !self.launched {
            // The browser outlives the session: close only what it opened.
            let own = self.tabs.own();
            let _ = self.close_targets(&own).await;
            self.handler.abort();
            return Ok(());
        }
        let cdp = &mut self.cdp;
        let graceful = tokio::time::timeout(config.close_timeout, async {
            cdp.close().await.ok()?;
            cdp.wait().await.ok()
        })
        .await;
        if !matches!(graceful, Ok(Some(_))) {
            // tokio's kill also waits for the process, so it is reaped.
            let _ = self.cdp.kill().await;
        }
        self.handler.abort();
        let Some(profile) = &self.profile else {
            return Ok(());
        };
        // The helpers (zygotes, renderers, the network service) exit once
        // the main process is gone; wait for them before removing the
        // folder they may still write to.
        wait_for_exit(profile.path(), Duration::from_secs(3)).await;
        let path = profile.path().to_path_buf();
        let removal = tokio::task::spawn_blocking(move || {
            ProfileDir::remove_path(&path, Duration::from_secs(2))
        })
        .await;
        match removal {
            Ok(result) => result,
            Err(e) => Err(BrowserError::Io {
                detail: format!("removing the profile folder failed: {e}"),
            }),
        }
    }
}

/// The session's first tab: opened by the session, so that a connected
/// session leaves the user's tabs alone. A launched browser starts with no
/// window at all (`--no-startup-window`): headless Chromium would otherwise
/// open its new-tab page, which takes longer to load and to replace than a
/// blank tab takes to open.
async fn first_tab(
    cdp: &chromiumoxide::Browser,
    config: &BrowserConfig,
) -> Result<Page, BrowserError> {
    let limit = config.launch_timeout;
    match tokio::time::timeout(limit, cdp.new_page("about:blank")).await {
        Ok(Ok(page)) => Ok(page),
        Ok(Err(e)) => Err(BrowserError::Launch {
            detail: format!("cannot open the first tab: {e}"),
        }),
        Err(_) => Err(BrowserError::Launch {
            detail: format!(
                "the first tab did not open within {:.0}s",
                limit.as_secs_f64()
            ),
        }),
    }
}

/// Whether a call failed because the document it ran in went away (a
/// navigation): worth repeating in the new document.
fn is_context_gone(fail: &Fail) -> bool {
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

/// Decodes the `{"ok": ...}` / `{"err": ...}` envelope of the page script.
fn decode<T: DeserializeOwned>(method: &str, text: &str) -> Result<T, BrowserError> {
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

/// Polls the handler until the connection ends. After the browser exits the
/// connection ends with an error ("connection reset without closing
/// handshake"): that is the normal end of a session, not a failure.
fn spawn_handler(mut handler: Handler) -> (JoinHandle<()>, Arc<AtomicBool>) {
    let alive = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&alive);
    let task = tokio::spawn(async move {
        while let Some(event) = handler.next().await {
            // A WebSocket error means the connection is gone for good; any
            // other error concerns one message and the handler goes on.
            if let Err(CdpError::Ws(_)) = event {
                break;
            }
        }
        // Set before the handler (and with it every pending request) is
        // dropped, so a caller whose request fails already sees the flag.
        flag.store(false, Ordering::SeqCst);
        drop(handler);
    });
    (task, alive)
}

/// Waits until no live process mentions `profile` any more, or `patience`
/// runs out.
async fn wait_for_exit(profile: &Path, patience: Duration) {
    let deadline = Instant::now() + patience;
    while !processes_mentioning(profile).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
