//! The browser session: the [`Browser`] handle (launching, connecting,
//! closing, restarting, the safety policy, the action lock) and the running
//! [`Session`] behind it, with its tabs, its DevTools plumbing and its
//! bridge to the page-side script.

mod downloads;
#[cfg(feature = "pdf")]
mod pdf;
mod session;
mod storage;

use std::any::Any;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};

use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};

use crate::config::BrowserConfig;
use crate::error::BrowserError;
use crate::safety::{BlockedLog, BlockedNavigation, SafetyPolicy};

pub(crate) use downloads::pdf_text;
pub use downloads::{DownloadText, MAX_DOWNLOAD_READ_BYTES};
#[cfg(feature = "pdf")]
pub use pdf::{MAX_PDF_DECODED_BYTES, MAX_PDF_PAGES};
pub(crate) use session::{Ahead, Doc, KnownFrame, Session};
pub use session::{Download, DownloadState, TabInfo};

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
    slot: Mutex<Slot>,
    /// The next element number of the whole session. It lives outside the
    /// session so a restart never hands out a number again.
    next_index: AtomicU32,
    /// The safety policy: the one every action, the page map and the
    /// navigation guard read (the default allows every web page).
    policy: StdMutex<SafetyPolicy>,
    /// Bumped by every `set_policy`; a session whose guard was started for
    /// an older policy starts a new one.
    policy_generation: AtomicU64,
    /// What the navigation guard blocked since it was last read. Outside
    /// the session so that it survives a restart.
    blocked: BlockedLog,
    /// Held by each action for its whole run (see `Browser::action_lock`).
    action_lock: Mutex<()>,
    /// The private folder uploads are staged in (see
    /// `Browser::stage_upload`), made on first use and removed with the
    /// session.
    uploads: StdMutex<Option<crate::profile::ProfileDir>>,
    /// How many uploads were staged, for their folders' names.
    staged: AtomicU32,
    /// The last value worth keeping for a page version (the page's text),
    /// by its key (see `Browser::cached`).
    memo: StdMutex<Option<(String, Box<dyn Any + Send>)>>,
}

/// Where the running session lives: empty after a crash is noticed, a
/// failed restart, or [`Browser::close`].
struct Slot {
    session: Option<Session>,
    closed: bool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // `Session`'s own drop does the killing; taking it here makes the
        // order explicit.
        drop(self.slot.get_mut().session.take());
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
        let mut session = Session::start(&origin, &config).await?;
        let cancels = session.take_download_cancels();
        let browser = Self {
            inner: Arc::new(Inner {
                config,
                origin,
                slot: Mutex::new(Slot {
                    session: Some(session),
                    closed: false,
                }),
                next_index: AtomicU32::new(1),
                policy: StdMutex::new(SafetyPolicy::default()),
                policy_generation: AtomicU64::new(0),
                blocked: BlockedLog::default(),
                action_lock: Mutex::new(()),
                uploads: StdMutex::new(None),
                staged: AtomicU32::new(0),
                memo: StdMutex::new(None),
            }),
        };
        if let Some(cancels) = cancels {
            browser.cancel_over_limit(cancels);
        }
        Ok(browser)
    }

    /// Closes the session: asks the browser to quit and waits for it (up to
    /// the configured close time limit, then kills it), waits for its helper
    /// processes to exit (killing those still there after five seconds),
    /// and removes its profile folder (a
    /// [persistent](crate::BrowserConfigBuilder::persistent_profile) one is
    /// kept) and its downloads folder. A connected
    /// session closes the tabs it opened and disconnects instead. Closing
    /// twice is fine.
    ///
    /// # Errors
    ///
    /// [`BrowserError::Io`] when the profile folder cannot be removed.
    pub async fn close(&self) -> Result<(), BrowserError> {
        let mut slot = self.inner.slot.lock().await;
        slot.closed = true;
        match slot.session.take() {
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
        let mut slot = self.inner.slot.lock().await;
        if let Some(mut old) = slot.session.take() {
            // The old session is being replaced: failing to remove its
            // folder must not prevent the new one.
            let _ = old.shutdown(&self.inner.config).await;
        }
        let mut session = Session::start(&self.inner.origin, &self.inner.config).await?;
        if let Some(cancels) = session.take_download_cancels() {
            self.cancel_over_limit(cancels);
        }
        slot.session = Some(session);
        slot.closed = false;
        Ok(())
    }

    /// Whether the browser is running and connected (false after
    /// [`close`](Self::close), a crash or a kill).
    pub async fn is_alive(&self) -> bool {
        self.session().await.is_ok()
    }

    /// The main browser process id, for a launched session that is running.
    pub async fn pid(&self) -> Option<u32> {
        let slot = self.inner.slot.lock().await;
        slot.session.as_ref().and_then(Session::pid)
    }

    /// The session's profile folder, for a launched session that is
    /// running.
    pub async fn profile_dir(&self) -> Option<PathBuf> {
        let slot = self.inner.slot.lock().await;
        slot.session.as_ref().and_then(Session::profile_dir)
    }

    /// The DevTools WebSocket address of the running browser.
    pub async fn devtools_url(&self) -> Option<String> {
        let slot = self.inner.slot.lock().await;
        slot.session.as_ref().map(|s| s.ws_url().to_owned())
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
        let slot = self.inner.slot.lock().await;
        slot.session
            .as_ref()
            .map(Session::take_dialogs)
            .unwrap_or_default()
    }

    /// Sets the safety policy this session enforces (replacing any earlier
    /// one): from the next operation on, [`navigate`](Self::navigate) and
    /// [`open_tab`](Self::open_tab) refuse what it does not allow, the page
    /// map shows secrets as placeholders, and, when it allows only some
    /// domains, a navigation guard checks every page load of every tab and
    /// frame (links, forms, scripts, redirects, popups) before it starts, and
    /// stops the disallowed ones ([`take_blocked`](Self::take_blocked) lists
    /// them). The guard survives [`restart`](Self::restart).
    ///
    /// A connected session's guard watches the whole browser, the user's own
    /// tabs included.
    pub fn set_policy(&self, policy: SafetyPolicy) {
        *lock_ignoring_poison(&self.inner.policy) = policy;
        self.inner.policy_generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The safety policy set with [`set_policy`](Self::set_policy) (the
    /// default policy, which allows every web page, until one is set). The
    /// browser actions read it at the start of each action, so the session
    /// and the actions can never enforce two different policies.
    pub fn policy(&self) -> SafetyPolicy {
        lock_ignoring_poison(&self.inner.policy).clone()
    }

    /// The top-level navigations the guard stopped since the last call,
    /// oldest first.
    pub fn take_blocked(&self) -> Vec<BlockedNavigation> {
        std::mem::take(&mut *lock_ignoring_poison(&self.inner.blocked))
    }

    /// Waits for the actions before this one to finish, and keeps the next
    /// ones waiting until the returned lock is dropped. A host may run one
    /// turn's tool calls concurrently (`Registry::run_turn`); an action is
    /// several operations on the session, and two actions interleaved would
    /// act on each other's pages. The lock is fair and an uncontended lock
    /// is taken without waiting, so actions run in the order they were
    /// called.
    pub(crate) async fn action_lock(&self) -> MutexGuard<'_, ()> {
        self.inner.action_lock.lock().await
    }

    /// Refuses `url` when the policy does not allow it.
    pub(crate) fn check_policy(&self, url: &str) -> Result<(), BrowserError> {
        self.policy()
            .check_destination(url)
            .map_err(|reason| BrowserError::Blocked {
                url: url.to_owned(),
                reason,
                then: None,
            })
    }

    /// The running session, or why there is none. Its navigation guard is
    /// brought in line with the current policy first.
    pub(crate) async fn live(&self) -> Result<MappedMutexGuard<'_, Session>, BrowserError> {
        let mut session = self.session().await?;
        let generation = self.inner.policy_generation.load(Ordering::SeqCst);
        session
            .sync_guard(generation, || self.policy(), &self.inner.blocked)
            .await?;
        Ok(session)
    }

    /// The running session, or why there is none.
    async fn session(&self) -> Result<MappedMutexGuard<'_, Session>, BrowserError> {
        let slot = self.inner.slot.lock().await;
        let closed = slot.closed;
        let mut session =
            MutexGuard::try_map(slot, |slot| slot.session.as_mut()).map_err(|_| {
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

    /// A private copy of `file` (named `name`), for Chromium to upload: it
    /// reads files when the form is sent, not when they are chosen, so the
    /// checked file is copied now, into a folder of the session that only
    /// this user can read, and the copy is what the input holds.
    pub(crate) fn stage_upload(
        &self,
        mut file: std::fs::File,
        name: &std::ffi::OsStr,
    ) -> Result<PathBuf, BrowserError> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let failed = |e: std::io::Error| BrowserError::Io {
            detail: format!("the file could not be prepared for upload: {e}"),
        };
        let mut uploads = lock_ignoring_poison(&self.inner.uploads);
        if uploads.is_none() {
            let parent = self.inner.config.profile_parent.as_deref();
            *uploads = Some(crate::profile::ProfileDir::private(
                parent,
                "toolkit-browser-uploads",
            )?);
        }
        let root = uploads
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default();
        let n = self.inner.staged.fetch_add(1, Ordering::SeqCst);
        let dir = root.join(n.to_string());
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(failed)?;
        let copy = dir.join(name);
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&copy)
            .map_err(failed)?;
        std::io::copy(&mut file, &mut out).map_err(failed)?;
        Ok(copy)
    }

    /// The value kept under `key` by [`cache`](Self::cache), if that is
    /// the last one kept.
    pub(crate) fn cached<T: Clone + 'static>(&self, key: &str) -> Option<T> {
        let memo = lock_ignoring_poison(&self.inner.memo);
        match memo.as_ref() {
            Some((k, value)) if k == key => value.downcast_ref::<T>().cloned(),
            _ => None,
        }
    }

    /// Keeps `value` under `key`, in place of the last one kept.
    pub(crate) fn cache<T: Send + 'static>(&self, key: String, value: T) {
        *lock_ignoring_poison(&self.inner.memo) = Some((key, Box::new(value)));
    }

    /// Bumped by every `set_policy` (a value redacted under another policy
    /// is not kept).
    pub(crate) fn policy_generation(&self) -> u64 {
        self.inner.policy_generation.load(Ordering::SeqCst)
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

pub(crate) fn lock_ignoring_poison<T>(mutex: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
