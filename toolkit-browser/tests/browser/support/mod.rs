//! What the browser scenarios share: finding Chromium, the fixture site
//! (files under `tests/pages/` and a few generated pages), and the runner
//! that runs every scenario as a named test in one browser.

pub mod chromium;
pub mod pages;
pub mod runner;
pub mod site;
