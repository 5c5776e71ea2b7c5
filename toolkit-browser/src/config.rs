//! How a session is launched: which browser, which window, which flags.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::BrowserError;

/// The names looked up on the `PATH`, in order, when neither the
/// configuration nor `CHROME` names a browser.
pub const EXECUTABLE_NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// Every flag a launched session gets, besides those its configuration
/// decides (profile folder, window size, headless mode, sandbox, DevTools
/// port). chromiumoxide's own defaults are turned off: with them, a host's
/// `--lang=de` or `--disable-features=...` sat beside chromiumoxide's
/// `--lang=en_US` or `--disable-features=TranslateUI` in an order that
/// changed from launch to launch, and Chromium honours only the last. The
/// host's flags ([`BrowserConfigBuilder::arg`]) replace a flag of the same
/// name here, or, for a features list, add to it.
pub const BASE_ARGS: &[&str] = &[
    // No GPU process: nothing to accelerate headless, and one process less.
    "disable-gpu",
    // A small /dev/shm (containers) would otherwise crash renderers.
    "disable-dev-shm-usage",
    "no-first-run",
    "no-default-browser-check",
    // Offline machines: no update checks, no component downloads, no sync,
    // none of which an agent's session needs.
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
    "disable-breakpad",
    "disable-client-side-phishing-detection",
    "disable-default-apps",
    "disable-component-extensions-with-background-pages",
    "metrics-recording-only",
    // No OS keyring: no prompt, nothing stored outside the profile.
    "password-store=basic",
    "use-mock-keychain",
    // No new-tab page at start: the session opens its own first tab.
    "no-startup-window",
    // The agent acts on one tab while pages in others keep running: no
    // throttled timers, no frozen background renderers.
    "disable-background-timer-throttling",
    "disable-backgrounding-occluded-windows",
    "disable-renderer-backgrounding",
    // A page that a script opens in a new tab opens; the session follows it.
    "disable-popup-blocking",
    // A reload after a form post must not wait on a dialog nobody sees; a
    // busy page must not be reported hung.
    "disable-prompt-on-repost",
    "disable-hang-monitor",
    "disable-ipc-flooding-protection",
    // The same colours in every screenshot, whatever the machine.
    "force-color-profile=srgb",
    // Pages in one language unless the host says otherwise.
    "lang=en_US",
    // Pages can tell the browser is automated (`navigator.webdriver`), as
    // under any DevTools client; the session does not pretend otherwise.
    "enable-automation",
    "enable-features=NetworkService,NetworkServiceInProcess",
    // No translation bar; and no preloaded address-bar popup, a WebUI page
    // in a renderer of its own (about 50 MiB) that a headless session
    // never shows.
    "disable-features=TranslateUI,WebUIOmniboxPopup,WebUIOmniboxAimPopup",
];

/// Switches the session sets from its configuration, and the builder method
/// to use instead. A host flag of one of these names is refused at launch:
/// chromiumoxide adds the session's own beside it, and Chromium would
/// honour one of the two at random.
const SESSION_SWITCHES: &[(&str, &str)] = &[
    (
        "user-data-dir",
        "each session has its own temporary profile; choose its parent folder with \
         `profile_parent`, or keep one between runs with `persistent_profile`",
    ),
    ("window-size", "use `viewport`"),
    ("headless", "use `headless`"),
    ("no-sandbox", "use `sandbox`"),
    ("disable-setuid-sandbox", "use `sandbox`"),
    (
        "remote-debugging-port",
        "the session picks a free port itself",
    ),
    (
        "remote-debugging-pipe",
        "the session talks to the browser over a port",
    ),
];

/// Switches whose value is a comma-separated list: every value given for
/// one of them is merged into a single switch.
const LIST_SWITCHES: &[&str] = &[
    "enable-features",
    "disable-features",
    "enable-blink-features",
    "disable-blink-features",
];

/// How long a page map waits, at most, for the page to settle: long
/// enough for the transitions and fades of ordinary interfaces (0.2 to
/// 0.5 s) and a quick request behind a button, short enough that a page
/// that never stops changing (a ticker, a video's captions) costs little
/// per step.
pub const DEFAULT_SETTLE_LIMIT: Duration = Duration::from_millis(1200);

/// The page map's token budget by default: what one map may cost the
/// model, estimated from its characters ([`estimate_tokens`](crate::estimate_tokens); see
/// [`PageMap::render`](crate::PageMap::render)). Most maps of real pages are
/// far smaller; a long page above it keeps the elements nearest the
/// viewport and its headings, and a small model's context (8k tokens) still
/// holds a map beside the task and the history.
pub const DEFAULT_MAP_TOKEN_BUDGET: u32 = 2000;

/// The largest file one download may write by default (256 MiB): more
/// than documents, exports and archives an agent fetches, far less than a
/// disk, and a page cannot fill one with a download that never ends.
pub const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 256 << 20;

/// How many downloads one session keeps by default: far more than a task
/// needs, few enough that a page cannot fill the folder with files.
pub const DEFAULT_MAX_DOWNLOADS: u32 = 100;

/// The configuration of a launched session. Build one with
/// [`BrowserConfig::builder`]; [`BrowserConfig::default`] is a headless
/// 1280×800 Chromium found on the system.
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    pub(crate) executable: Option<PathBuf>,
    pub(crate) headless: bool,
    pub(crate) sandbox: bool,
    pub(crate) viewport: (u32, u32),
    pub(crate) args: Vec<String>,
    pub(crate) profile_parent: Option<PathBuf>,
    pub(crate) persistent_profile: Option<PathBuf>,
    pub(crate) launch_timeout: Duration,
    pub(crate) command_timeout: Duration,
    pub(crate) navigation_timeout: Duration,
    pub(crate) close_timeout: Duration,
    pub(crate) settle_limit: Duration,
    pub(crate) map_token_budget: u32,
    pub(crate) max_download_bytes: u64,
    pub(crate) max_downloads: u32,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        BrowserConfigBuilder::default().build()
    }
}

impl BrowserConfig {
    /// A builder starting from the defaults: headless, no sandbox when
    /// running as root, a 1280×800 viewport, the browser found by
    /// [`find_executable`].
    pub fn builder() -> BrowserConfigBuilder {
        BrowserConfigBuilder::default()
    }

    /// The executable this configuration launches: the configured path, else
    /// the one [`find_executable`] finds.
    ///
    /// # Errors
    ///
    /// [`BrowserError::NoBrowser`] when nothing is configured or found.
    pub fn resolve_executable(&self) -> Result<PathBuf, BrowserError> {
        match &self.executable {
            Some(path) if path.is_file() => Ok(path.clone()),
            Some(path) => Err(BrowserError::NoBrowser {
                detail: format!("the configured browser {} does not exist", path.display()),
            }),
            None => find_executable(),
        }
    }

    /// The viewport size, in CSS pixels.
    pub fn viewport(&self) -> (u32, u32) {
        self.viewport
    }

    /// Whether the browser runs headless.
    pub fn headless(&self) -> bool {
        self.headless
    }

    /// The time limit for one DevTools command.
    pub fn command_timeout(&self) -> Duration {
        self.command_timeout
    }

    /// The time limit for a page to load after a navigation.
    pub fn navigation_timeout(&self) -> Duration {
        self.navigation_timeout
    }

    /// The longest a page map waits for the page to settle (see
    /// [`BrowserConfigBuilder::settle_limit`]).
    pub fn settle_limit(&self) -> Duration {
        self.settle_limit
    }

    /// The page map's token budget (see
    /// [`BrowserConfigBuilder::map_token_budget`]); 0 for none.
    pub fn map_token_budget(&self) -> u32 {
        self.map_token_budget
    }

    /// The most bytes one download may write (see
    /// [`BrowserConfigBuilder::max_download_bytes`]).
    pub fn max_download_bytes(&self) -> u64 {
        self.max_download_bytes
    }

    /// How many downloads a session keeps (see
    /// [`BrowserConfigBuilder::max_downloads`]).
    pub fn max_downloads(&self) -> u32 {
        self.max_downloads
    }
}

/// Builds a [`BrowserConfig`].
#[derive(Debug, Clone)]
pub struct BrowserConfigBuilder {
    config: BrowserConfig,
}

impl Default for BrowserConfigBuilder {
    fn default() -> Self {
        Self {
            config: BrowserConfig {
                executable: None,
                headless: true,
                // Chromium refuses to start sandboxed as root; elsewhere the
                // sandbox stays on.
                sandbox: !running_as_root(),
                viewport: (1280, 800),
                args: Vec::new(),
                profile_parent: None,
                persistent_profile: None,
                launch_timeout: Duration::from_secs(20),
                command_timeout: Duration::from_secs(20),
                navigation_timeout: Duration::from_secs(30),
                close_timeout: Duration::from_secs(5),
                settle_limit: DEFAULT_SETTLE_LIMIT,
                map_token_budget: DEFAULT_MAP_TOKEN_BUDGET,
                max_download_bytes: DEFAULT_MAX_DOWNLOAD_BYTES,
                max_downloads: DEFAULT_MAX_DOWNLOADS,
            },
        }
    }
}

impl BrowserConfigBuilder {
    /// The browser to launch. Without it: `CHROME`, then the `PATH` (see
    /// [`find_executable`]).
    pub fn executable(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.executable = Some(path.into());
        self
    }

    /// Run headless (the default) or with a window.
    pub fn headless(mut self, headless: bool) -> Self {
        self.config.headless = headless;
        self
    }

    /// Keep Chromium's sandbox on or off. Off by default only when running
    /// as root, where Chromium cannot start with it.
    pub fn sandbox(mut self, sandbox: bool) -> Self {
        self.config.sandbox = sandbox;
        self
    }

    /// The window and viewport size in CSS pixels (default 1280×800).
    /// Zero is raised to one.
    pub fn viewport(mut self, width: u32, height: u32) -> Self {
        self.config.viewport = (width.max(1), height.max(1));
        self
    }

    /// One more command-line flag, with or without its leading `--`
    /// (`"lang=de"`, `"--mute-audio"`). A flag of [`BASE_ARGS`] with the
    /// same name is replaced; features lists (`--enable-features=...`,
    /// `--disable-features=...` and their Blink forms) add to the session's
    /// own instead. The window size, headless mode, sandbox and profile are
    /// set with this builder's methods, and the DevTools port is the
    /// session's own (a free one, picked at each launch): a flag for one of
    /// them makes the launch fail with `BrowserError::Launch` saying what to
    /// do instead.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.config.args.push(arg.into());
        self
    }

    /// More command-line flags (see [`arg`](Self::arg)).
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The folder in which each session's temporary profile is created
    /// (default: the system's temporary folder).
    pub fn profile_parent(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.profile_parent = Some(dir.into());
        self
    }

    /// A profile folder kept between runs, in place of a fresh temporary
    /// one: cookies, storage, history and caches stay in it after
    /// [`Browser::close`](crate::Browser::close), and the next session
    /// launched with the same folder finds them. It is created (readable
    /// by this user only) when missing; the session's preferences (no
    /// preloading, see the guide) are written into it at each launch.
    /// Chromium locks a profile: two sessions cannot use one folder at the
    /// same time (the second launch fails).
    ///
    /// ```
    /// use toolkit_browser::BrowserConfig;
    ///
    /// let config = BrowserConfig::builder()
    ///     .persistent_profile("/srv/agent/profile")
    ///     .build();
    /// # let _ = config;
    /// ```
    pub fn persistent_profile(mut self, dir: impl Into<PathBuf>) -> Self {
        self.config.persistent_profile = Some(dir.into());
        self
    }

    /// How long the browser may take to start (default 20 s).
    pub fn launch_timeout(mut self, limit: Duration) -> Self {
        self.config.launch_timeout = limit;
        self
    }

    /// How long one DevTools command may take (default 20 s; a longer
    /// limit is capped by the navigation limit, which chromiumoxide applies
    /// to every command).
    pub fn command_timeout(mut self, limit: Duration) -> Self {
        self.config.command_timeout = limit;
        self
    }

    /// How long a navigation may take to load (default 30 s): it bounds
    /// the whole of [`Browser::navigate`](crate::Browser::navigate), and a
    /// load still going at the limit is stopped, so that the tab is
    /// usable at once.
    pub fn navigation_timeout(mut self, limit: Duration) -> Self {
        self.config.navigation_timeout = limit;
        self
    }

    /// How long a graceful close may take before the browser is killed
    /// (default 5 s).
    pub fn close_timeout(mut self, limit: Duration) -> Self {
        self.config.close_timeout = limit;
        self
    }

    /// The longest a page map waits for a page that is still changing
    /// (requests in flight, animations running, the DOM changing) to
    /// settle before it maps it anyway and says so (default 1.2 s, see
    /// [`DEFAULT_SETTLE_LIMIT`]). `Duration::ZERO` maps the page as it is,
    /// without looking.
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = toolkit_browser::BrowserConfig::builder()
    ///     .settle_limit(Duration::from_millis(500))
    ///     .build();
    /// assert_eq!(config.settle_limit(), Duration::from_millis(500));
    /// ```
    pub fn settle_limit(mut self, limit: Duration) -> Self {
        self.config.settle_limit = limit;
        self
    }

    /// How many tokens a page map may cost the model (default 2,000, see
    /// [`DEFAULT_MAP_TOKEN_BUDGET`]), estimated from the rendered map's
    /// characters ([`estimate_tokens`](crate::estimate_tokens)). A map above it keeps the header, the
    /// headings and the elements nearest the viewport, and ends with a line
    /// saying how many elements it left out above and below and that the
    /// `find` action searches them. 0 renders every element.
    ///
    /// ```
    /// let config = toolkit_browser::BrowserConfig::builder()
    ///     .map_token_budget(4000)
    ///     .build();
    /// assert_eq!(config.map_token_budget(), 4000);
    /// ```
    pub fn map_token_budget(mut self, tokens: u32) -> Self {
        self.config.map_token_budget = tokens;
        self
    }

    /// The most bytes one download may write (default 256 MiB, see
    /// [`DEFAULT_MAX_DOWNLOAD_BYTES`]). A download is canceled
    /// (`Browser.cancelDownload`) as soon as the bytes it received pass
    /// the limit, or at once when the server announces a larger size; what
    /// it wrote is removed, and the reply tells the model it was stopped
    /// and why. A file that still completed meanwhile is removed the same.
    ///
    /// ```
    /// let config = toolkit_browser::BrowserConfig::builder()
    ///     .max_download_bytes(10 << 20)
    ///     .max_downloads(20)
    ///     .build();
    /// assert_eq!(config.max_download_bytes(), 10 << 20);
    /// assert_eq!(config.max_downloads(), 20);
    /// ```
    pub fn max_download_bytes(mut self, limit: u64) -> Self {
        self.config.max_download_bytes = limit;
        self
    }

    /// How many downloads one session keeps (default 100, see
    /// [`DEFAULT_MAX_DOWNLOADS`]). Every download begun counts, also one
    /// stopped for its size; one more is canceled as it begins, and the
    /// reply says so. A [restart](crate::Browser::restart) starts a new
    /// session, with a new folder and a new count.
    pub fn max_downloads(mut self, limit: u32) -> Self {
        self.config.max_downloads = limit;
        self
    }

    /// The configuration. Nothing is checked here: a missing browser is
    /// reported by [`Browser::launch`](crate::Browser::launch), where the
    /// error can reach the caller with its remedy.
    pub fn build(self) -> BrowserConfig {
        self.config
    }
}

/// Finds a Chromium or Chrome executable: the `CHROME` environment variable
/// when it names an existing file, then the first of [`EXECUTABLE_NAMES`]
/// on the `PATH`.
///
/// Debian's `/usr/bin/chromium` is a shell script that adds flags (and an
/// extension) before `exec`ing `/usr/lib/chromium/chromium`; when the found
/// file is such a script and that binary exists, the binary is returned
/// instead: launches are about 80 ms faster and the flags are ours alone.
///
/// # Errors
///
/// [`BrowserError::NoBrowser`], whose message says how to install one.
pub fn find_executable() -> Result<PathBuf, BrowserError> {
    if let Some(path) = std::env::var_os("CHROME").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        if path.is_file() {
            return Ok(path);
        }
        return Err(BrowserError::NoBrowser {
            detail: format!("CHROME is set to {}, which does not exist", path.display()),
        });
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for name in EXECUTABLE_NAMES {
        for dir in std::env::split_paths(&path_var) {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Ok(unwrap_debian_wrapper(candidate));
            }
        }
    }
    Err(BrowserError::NoBrowser {
        detail: format!(
            "none of {} is on the PATH and CHROME is not set",
            EXECUTABLE_NAMES.join(", ")
        ),
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

fn unwrap_debian_wrapper(found: PathBuf) -> PathBuf {
    let real = Path::new("/usr/lib/chromium/chromium");
    let is_script = std::fs::read(&found)
        .map(|bytes| bytes.starts_with(b"#!"))
        .unwrap_or(false);
    if is_script && is_executable(real) {
        real.to_path_buf()
    } else {
        found
    }
}

fn running_as_root() -> bool {
    // The effective uid of this process, without a libc dependency: the
    // owner of /proc/self is the process's effective user.
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

/// The full argument list for one launch, without the leading `--`: each
/// flag once, a host's flag replacing a base flag of the same name and
/// features lists merged. A host flag the session sets itself is an error
/// naming the builder method to use.
pub(crate) fn launch_args(config: &BrowserConfig) -> Result<Vec<String>, BrowserError> {
    let mut flags: Vec<(&str, Option<String>)> = Vec::new();
    let host = config.args.iter().map(|a| a.trim_start_matches('-'));
    for flag in host.clone() {
        let name = flag.split_once('=').map_or(flag, |(name, _)| name);
        if let Some((_, instead)) = SESSION_SWITCHES.iter().find(|(n, _)| *n == name) {
            return Err(BrowserError::Launch {
                detail: format!("the flag `--{name}` is set by the session: {instead}"),
            });
        }
    }
    let given = BASE_ARGS
        .iter()
        .copied()
        .chain(host)
        .filter(|a| !a.is_empty());
    for flag in given {
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (flag, None),
        };
        match flags.iter_mut().find(|(seen, _)| *seen == name) {
            Some((_, Some(values))) if LIST_SWITCHES.contains(&name) => {
                match value.filter(|v| !v.is_empty()) {
                    Some(value) if values.is_empty() => values.push_str(value),
                    Some(value) => {
                        values.push(',');
                        values.push_str(value);
                    }
                    None => {}
                }
            }
            Some((_, old)) => *old = value.map(str::to_owned),
            None => flags.push((name, value.map(str::to_owned))),
        }
    }
    let args = flags
        .into_iter()
        .map(|(name, value)| match value {
            Some(value) => format!("{name}={value}"),
            None => name.to_owned(),
        })
        .collect();
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &[&str]) -> Vec<String> {
        let config = extra
            .iter()
            .fold(BrowserConfig::builder(), |builder, arg| builder.arg(*arg))
            .build();
        launch_args(&config).expect("no session switch among the flags")
    }

    fn named<'a>(args: &'a [String], name: &str) -> Vec<&'a str> {
        args.iter()
            .filter(|arg| *arg == name || arg.starts_with(&format!("{name}=")))
            .map(String::as_str)
            .collect()
    }

    #[test]
    fn every_base_flag_once() {
        assert_eq!(args(&[]), BASE_ARGS);
    }

    #[test]
    fn a_host_flag_replaces_the_base_flag_of_its_name() {
        let host = args(&["--lang=de", "--disable-gpu", "mute-audio"]);
        assert_eq!(named(&host, "lang"), ["lang=de"]);
        assert_eq!(named(&host, "disable-gpu"), ["disable-gpu"]);
        assert_eq!(host.last().map(String::as_str), Some("mute-audio"));
        assert_eq!(host.len(), BASE_ARGS.len() + 1);
    }

    #[test]
    fn features_lists_merge_into_one_switch() {
        let host = args(&[
            "--disable-features=A,B",
            "disable-features=C",
            "enable-features=D",
        ]);
        assert_eq!(
            named(&host, "disable-features"),
            ["disable-features=TranslateUI,WebUIOmniboxPopup,WebUIOmniboxAimPopup,A,B,C"]
        );
        assert_eq!(
            named(&host, "enable-features"),
            ["enable-features=NetworkService,NetworkServiceInProcess,D"]
        );
        let first = args(&["enable-blink-features=E"]);
        assert_eq!(
            named(&first, "enable-blink-features"),
            ["enable-blink-features=E"]
        );
    }
}
