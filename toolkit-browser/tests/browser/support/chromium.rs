//! Chromium for the tests: where it is (or how to install it), where the
//! tests' profiles go, and killing a browser the hard way.

use std::path::PathBuf;

use toolkit_browser::{Browser, BrowserConfig, BrowserConfigBuilder, find_executable};

/// The variable that skips the browser tests on a machine without
/// Chromium (`1` only; see [`toolkit_tests::skip::skipped`]).
pub const SKIP_VAR: &str = "TOOLKIT_SKIP_BROWSER_TESTS";

/// The folder the tests' browsers keep their profiles in (each launch
/// makes its own profile there and removes it on close).
pub fn profiles() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-profiles")
}

/// Chromium's executable. Without one the test fails with how to install
/// it: a machine that cannot have it sets [`SKIP_VAR`] instead.
pub fn executable() -> PathBuf {
    find_executable().unwrap_or_else(|error| {
        panic!("{error}\n\nThe browser tests need Chromium (or set {SKIP_VAR}=1 to skip them).")
    })
}

/// The configuration of a test browser: [`executable`], profiles under
/// [`profiles`], everything else as a host gets it by default.
pub fn config() -> BrowserConfig {
    builder().build()
}

/// [`config`] still to be built, for a scenario that changes a setting.
pub fn builder() -> BrowserConfigBuilder {
    BrowserConfig::builder()
        .executable(executable())
        .profile_parent(profiles())
}

/// A browser of its own, for a scenario about the session's lifecycle.
pub async fn launch() -> Browser {
    Browser::launch(config()).await.expect("launch Chromium")
}

/// Sends `SIGKILL` to `pid` (through `kill(1)`, so the tests need no libc).
pub fn kill_9(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -9 {pid} failed: {status}");
}
