//! What the browser scenarios share: finding Chromium, the fixture site
//! (files under `tests/pages/` and a few generated pages), and the runner
//! that runs every scenario as a named test in one browser.

pub mod chromium;
pub mod pages;
pub mod runner;
pub mod site;

use std::path::PathBuf;

/// The scenarios' scratch folder (the files folders their policies allow,
/// and files beside them), under cargo's temporary folder for tests.
pub fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}
