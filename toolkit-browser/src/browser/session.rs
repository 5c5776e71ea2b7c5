//! One running browser and what this crate tracks about it: its tabs
//! (`tabs`), the DevTools commands run on it (`devtools`), the bridge to
//! the page-side script (`script`), its dialogs, and its navigation guard.

mod devtools;
mod downloads;
mod frames;
mod link;
mod script;
mod shadow;
mod storage;
mod tabs;
mod traffic;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::page::{
    EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::cdp::browser_protocol::target::{EventTargetCrashed, TargetId};
use chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId;
use chromiumoxide::error::CdpError;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::listeners::EventStream;
use chromiumoxide::{Handler, Page};
use futures_util::StreamExt;
use tokio::task::JoinHandle;

use super::{Origin, lock_ignoring_poison};
use crate::config::{BrowserConfig, launch_args};
use crate::error::BrowserError;
use crate::profile::{ProfileDir, processes_mentioning};
use crate::safety::{BlockedLog, Guard, Redactor, SafetyPolicy};

pub(crate) use devtools::Fail;
pub(crate) use downloads::{Cancel, DownloadLog, remove_written, sniff_bytes};
pub use downloads::{Download, DownloadState};
pub(crate) use frames::{Ahead, Doc, KnownFrame};
pub(crate) use storage::{OriginItems, web_origin};
use tabs::TabBook;
pub use tabs::TabInfo;

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
    cdp: chromiumoxide::Browser,
    handler: JoinHandle<()>,
    /// Cleared by the handler task when the DevTools connection ends.
    alive: Arc<AtomicBool>,
    launched: bool,
    pid: Option<u32>,
    ws_url: String,
    current: Page,
    tabs: TabBook,
    dialogs: Arc<StdMutex<Vec<String>>>,
    /// The tabs whose renderer crashed.
    crashes: Arc<Crashes>,
    /// The requests each watched tab has in flight.
    traffic: Arc<traffic::Traffic>,
    watched: HashSet<TargetId>,
    /// Per tab, the context of the isolated world in its current document.
    worlds: HashMap<TargetId, ExecutionContextId>,
    config: BrowserConfig,
    /// Frames from other sites: how to reach them and their elements.
    frames: frames::Frames,
    /// The navigation guard, when the policy restricts domains.
    guard: Option<Guard>,
    /// The policy generation the guard was set up for (0: none yet).
    guard_generation: u64,
    /// The policy's redactor (for the policy of `guard_generation`): what
    /// the session reads from pages (URLs, titles, tabs, fields) is
    /// redacted as it is read, and the page script cuts texts late enough
    /// (`Redactor::slack`) for that to see whole secrets.
    redactor: Redactor,
    /// What the guard stopped (the browser's log, shared once a guard
    /// runs): a tab whose first load was stopped is not waited for.
    blocked: Option<BlockedLog>,
    /// Where a launched browser saves downloads, and what it saved.
    downloads: Option<downloads::Downloads>,
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
                    let _ = ProfileDir::release(
                        profile.path(),
                        profile.keeps(),
                        Duration::from_secs(2),
                    );
                });
        }
    }
}

impl Session {
    pub(super) async fn start(
        origin: &Origin,
        config: &BrowserConfig,
    ) -> Result<Self, BrowserError> {
        match origin {
            Origin::Launch => Self::launch(config).await,
            Origin::Connect(url) => Self::connect(url, config).await,
        }
    }

    async fn launch(config: &BrowserConfig) -> Result<Self, BrowserError> {
        let executable = config.resolve_executable()?;
        let profile = match &config.persistent_profile {
            Some(dir) => ProfileDir::persistent(dir)?,
            None => ProfileDir::create(config.profile_parent.as_deref())?,
        };
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
        // An `http://host:port` address is turned into the browser's
        // WebSocket address here: chromiumoxide would ask with reqwest,
        // whose client panics in a program that also builds reqwest for
        // rustls without a crypto provider (toolkit-agent does).
        let url = if url.starts_with("http://") {
            devtools_address(url, config.launch_timeout).await?
        } else {
            url.to_owned()
        };
        let connecting = chromiumoxide::Browser::connect_with_config(&url, handler_config);
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
        let crashes = Crashes::watch(&cdp).await;
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
            crashes,
            traffic: Arc::default(),
            watched: HashSet::new(),
            worlds: HashMap::new(),
            frames: frames::Frames::default(),
            config: config.clone(),
            guard: None,
            guard_generation: 0,
            redactor: Redactor::default(),
            blocked: None,
            downloads: None,
            profile,
        };
        session.tabs.opened(first.target_id());
        session.adopt(first).await?;
        if launched {
            session.start_downloads().await?;
        }
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
    /// the page until the command time limit. Also follows the tab's
    /// requests, for the page map to wait for.
    async fn watch_dialogs(&mut self, page: &Page) {
        if !self.watched.insert(page.target_id().clone()) {
            return;
        }
        self.traffic.follow(page).await;
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

    /// How many requests that can change the page (documents, scripts,
    /// the page's own `fetch` and XHR calls) `page` has in flight, of
    /// those that started shortly before `since` or later.
    pub(crate) fn requests_in_flight(&self, page: &Page, since: Instant) -> usize {
        self.traffic.in_flight(page.target_id(), since)
    }

    /// The tab actions act on.
    pub(crate) fn current(&self) -> Page {
        self.current.clone()
    }

    /// The session's configuration.
    pub(crate) fn config(&self) -> &BrowserConfig {
        &self.config
    }

    /// The redactor of the policy the session enforces.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The main browser process id, for a launched browser.
    pub(super) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The profile folder, for a launched browser.
    pub(super) fn profile_dir(&self) -> Option<PathBuf> {
        self.profile.as_ref().map(|p| p.path().to_path_buf())
    }

    /// The browser's DevTools WebSocket address.
    pub(super) fn ws_url(&self) -> &str {
        &self.ws_url
    }

    /// The dialogs shown since the last call (see `Browser::take_dialogs`).
    pub(super) fn take_dialogs(&self) -> Vec<String> {
        std::mem::take(&mut *lock_ignoring_poison(&self.dialogs))
    }

    /// A subscription to a browser-level event (a tab created...), taken
    /// before the action that may cause it.
    pub(crate) async fn browser_events<T: chromiumoxide::cdp::IntoEventKind>(
        &self,
    ) -> Result<EventStream<T>, CdpError> {
        self.cdp.event_listener::<T>().await
    }

    /// Brings the navigation guard in line with the policy of `generation`
    /// (`policy` reads it): started when the policy restricts domains,
    /// dropped when it no longer does, and started again when its
    /// connection failed, since a live browser must never go unguarded.
    pub(super) async fn sync_guard(
        &mut self,
        generation: u64,
        policy: impl FnOnce() -> SafetyPolicy,
        log: &BlockedLog,
    ) -> Result<(), BrowserError> {
        let guard_died = self.guard.as_ref().is_some_and(Guard::is_finished);
        if self.guard_generation == generation && !guard_died {
            return Ok(());
        }
        let policy = policy();
        self.redactor = policy.redactor().clone();
        self.blocked = Some(Arc::clone(log));
        if self.guard_generation != generation {
            self.forget_routes();
        }
        if policy.restricts_domains() {
            let limit = self.config.launch_timeout;
            let started = Guard::start(&self.ws_url, policy, Arc::clone(log), limit).await;
            // Fail closed: without a guard no operation runs. The new guard
            // replaces the old one only once it is intercepting, so no page
            // load slips between the two.
            let guard = started.map_err(|e| self.death().unwrap_or(e))?;
            self.guard = Some(guard);
        } else {
            self.guard = None;
        }
        self.guard_generation = generation;
        Ok(())
    }

    /// Whether the guard stopped a page load of the tab `target` that no
    /// action has reported yet.
    pub(crate) fn load_stopped(&self, target: &TargetId) -> bool {
        self.blocked.as_ref().is_some_and(|log| {
            lock_ignoring_poison(log)
                .iter()
                .any(|b| b.frame_id == target.as_ref())
        })
    }

    /// Whether the renderer of `page` crashed.
    pub(crate) fn crashed(&self, page: &Page) -> bool {
        self.crashes.has(page.target_id())
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

    /// Shuts the session down (see [`Browser::close`](crate::Browser::close)).
    pub(super) async fn shutdown(&mut self, config: &BrowserConfig) -> Result<(), BrowserError> {
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
        // folder they may still write to. One still there after a while (a
        // loaded machine, a renderer stuck in a script) is killed: closing
        // leaves no process behind.
        if !wait_for_exit(profile.path(), Duration::from_secs(5)).await {
            for pid in processes_mentioning(profile.path()) {
                kill_process(pid).await;
            }
            wait_for_exit(profile.path(), Duration::from_secs(2)).await;
        }
        let (path, keep) = (profile.path().to_path_buf(), profile.keeps());
        let removal = tokio::task::spawn_blocking(move || {
            ProfileDir::release(&path, keep, Duration::from_secs(2))
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

/// The browser's DevTools WebSocket address, as `http://host:port` gives
/// it at `/json/version` (one plain HTTP/1.1 request).
async fn devtools_address(http: &str, limit: Duration) -> Result<String, BrowserError> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let failed = |detail: String| BrowserError::Launch {
        detail: format!("cannot connect to {http}: {detail}"),
    };
    let parsed = url::Url::parse(http).map_err(|e| failed(e.to_string()))?;
    let host = parsed
        .host_str()
        .ok_or_else(|| failed("the address names no host".into()))?;
    let port = parsed.port_or_known_default().unwrap_or(80);
    let ask = async {
        let mut stream = tokio::net::TcpStream::connect((host, port)).await?;
        let request = format!(
            "GET /json/version HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(request.as_bytes()).await?;
        // Read until the body is whole: the browser may keep the
        // connection open. A version answer is a few hundred bytes.
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        while answer.len() < 1 << 20 {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..n]);
            if http_body_complete(&answer) {
                break;
            }
        }
        Ok::<_, std::io::Error>(answer)
    };
    let answer = tokio::time::timeout(limit, ask)
        .await
        .map_err(|_| failed("nothing answered".into()))?
        .map_err(|e| failed(e.to_string()))?;
    let text = String::from_utf8_lossy(&answer);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    let version: serde_json::Value =
        serde_json::from_str(body.trim()).map_err(|_| failed("no DevTools answer there".into()))?;
    version["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| failed("the answer names no WebSocket address".into()))
}

/// Whether `answer` holds an HTTP response's headers and all the body its
/// `Content-Length` announces.
fn http_body_complete(answer: &[u8]) -> bool {
    let text = String::from_utf8_lossy(answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    length.is_some_and(|length| body.len() >= length)
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

/// Waits until no live process mentions `profile` any more (true), or
/// `patience` runs out (false).
async fn wait_for_exit(profile: &Path, patience: Duration) -> bool {
    let deadline = Instant::now() + patience;
    loop {
        if processes_mentioning(profile).is_empty() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Sends `SIGKILL` to `pid` through `kill(1)` (the crate has no unsafe
/// code, so no libc call), at best effort: a process gone meanwhile, or no
/// `kill` on the system, leaves nothing more to do.
async fn kill_process(pid: u32) {
    let kill = move || {
        std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
    };
    let _ = tokio::task::spawn_blocking(kill).await;
}

/// The tabs whose renderer crashed, as the browser reports them
/// (`Target.targetCrashed`), and a signal for those waiting on one.
#[derive(Default)]
pub(crate) struct Crashes {
    crashed: StdMutex<HashSet<TargetId>>,
    signal: tokio::sync::Notify,
}

impl Crashes {
    /// Starts recording the crashes of the browser's tabs.
    async fn watch(cdp: &chromiumoxide::Browser) -> Arc<Self> {
        let crashes = Arc::new(Self::default());
        if let Ok(mut events) = cdp.event_listener::<EventTargetCrashed>().await {
            let record = Arc::clone(&crashes);
            // Ends with the connection (the listener's channel closes).
            tokio::spawn(async move {
                while let Some(event) = events.next().await {
                    lock_ignoring_poison(&record.crashed).insert(event.target_id.clone());
                    record.signal.notify_waiters();
                }
            });
        }
        crashes
    }

    pub(crate) fn has(&self, target: &TargetId) -> bool {
        lock_ignoring_poison(&self.crashed).contains(target)
    }

    /// Returns once `target` has crashed (at once if it already has).
    pub(crate) async fn wait(&self, target: &TargetId) {
        loop {
            let signalled = self.signal.notified();
            tokio::pin!(signalled);
            // Registered before the check, so a crash in between still
            // wakes this waiter.
            signalled.as_mut().enable();
            if self.has(target) {
                return;
            }
            signalled.await;
        }
    }
}
