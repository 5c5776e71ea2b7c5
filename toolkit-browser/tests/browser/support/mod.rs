//! What the browser scenarios share: finding Chromium, the fixture site
//! (files under `tests/pages/` and a few generated pages), and the runner
//! that runs every scenario as a named test in one browser.

pub mod chromium;
pub mod pages;
pub mod runner;
pub mod site;

use std::path::PathBuf;

use toolkit_browser::{Browser, Clicked, Element, PageMap};

/// The scenarios' scratch folder (the files folders their policies allow,
/// and files beside them), under cargo's temporary folder for tests.
pub fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// The element whose line in `map` holds `line_contains`; without one, the
/// scenario fails showing the map.
pub fn find<'a>(map: &'a PageMap, line_contains: &str) -> &'a Element {
    map.elements
        .iter()
        .find(|e| e.render().contains(line_contains))
        .unwrap_or_else(|| {
            panic!(
                "no element renders with `{line_contains}` in:\n{}",
                map.render()
            )
        })
}

/// Clicks the element whose line in `map` holds `line_contains`.
pub async fn click_on(browser: &Browser, map: &PageMap, line_contains: &str) -> Clicked {
    browser.click(find(map, line_contains).index).await.unwrap()
}
