//! Settled maps: a map taken right after an action waits for the page to
//! settle (a panel fading or sliding in, a request behind a button), says
//! so when the page never stops changing, and never suggests scrolling a
//! page that has nothing more within reach.

use toolkit_browser::{Browser, Element, PageMap};
use toolkit_tests::http::TestServer;

use crate::support::runner::scenarios;

scenarios![
    a_panel_fading_in_is_mapped_once_shown,
    a_panel_sliding_in_is_mapped_once_shown,
    a_request_behind_a_button_is_waited_for,
    a_page_that_never_settles_says_so,
    a_quiet_page_is_not_waited_for,
    nothing_to_list_suggests_no_scrolling_without_more_page,
];

fn find<'a>(map: &'a PageMap, line_contains: &str) -> Option<&'a Element> {
    map.elements
        .iter()
        .find(|e| e.render().contains(line_contains))
}

/// Opens the wizard and clicks the button whose line holds `button`.
async fn click_on_wizard(browser: &Browser, server: &TestServer, button: &str) {
    browser.navigate(&server.url("/settle")).await.unwrap();
    let map = browser.page_map().await.expect("page map");
    let next = find(&map, button)
        .unwrap_or_else(|| panic!("no `{button}` in:\n{}", map.render()))
        .index;
    browser.click(next).await.expect("click");
}

async fn a_panel_fading_in_is_mapped_once_shown(browser: Browser, server: TestServer) {
    click_on_wizard(&browser, &server, "> Next").await;
    // Taken at once: the new panel is still at opacity 0 when the click
    // returns, and fades in over 0.3 s.
    let map = browser.page_map().await.expect("page map");
    let text = map.render();
    let finish = find(&map, "Finish").unwrap_or_else(|| panic!("no Finish in:\n{text}"));
    assert!(finish.is_new, "the panel's controls are new:\n{text}");
    assert!(find(&map, "name=email").is_some(), "{text}");
    assert!(map.still_changing.is_empty(), "{text}");
    assert!(map.settle_ms > 0.0, "the map waited for the fade:\n{text}");
    assert!(!text.contains("none visible"), "{text}");
}

async fn a_panel_sliding_in_is_mapped_once_shown(browser: Browser, server: TestServer) {
    click_on_wizard(&browser, &server, "Next (slide)").await;
    let map = browser.page_map().await.expect("page map");
    let text = map.render();
    let confirm = find(&map, "Confirm slide").unwrap_or_else(|| panic!("{text}"));
    assert!(confirm.is_new, "{text}");
    assert!(map.still_changing.is_empty(), "{text}");
}

async fn a_request_behind_a_button_is_waited_for(browser: Browser, server: TestServer) {
    // The button fetches a page that takes 0.3 s to answer, then adds a
    // button of its own.
    click_on_wizard(&browser, &server, "Load offers").await;
    let map = browser.page_map().await.expect("page map");
    let text = map.render();
    assert!(find(&map, "Offer loaded").is_some(), "{text}");
    assert!(map.still_changing.is_empty(), "{text}");
}

async fn a_page_that_never_settles_says_so(browser: Browser, server: TestServer) {
    // The page changes its text every 20 ms, for ever.
    browser.navigate(&server.url("/ticker")).await.unwrap();
    // The first map of a document sees changes only from when the page
    // script came in; a later one has seen them going on. On a loaded
    // machine the page's timer may not have fired between two maps taken
    // back to back, so a few are taken, well apart; a page reported as
    // settled every time fails.
    browser.page_map().await.expect("page map");
    let mut map = browser.page_map().await.expect("page map");
    for _ in 0..5 {
        if !map.still_changing.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(60)).await;
        map = browser.page_map().await.expect("page map");
    }
    let text = map.render();
    assert_eq!(map.still_changing, ["changes"], "{text}");
    assert!(
        text.contains("(the page was still changing when this map was taken (changes)"),
        "{text}"
    );
    // What it shows is mapped all the same.
    assert!(find(&map, "Buy").is_some(), "{text}");
}

async fn a_quiet_page_is_not_waited_for(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/form")).await.unwrap();
    let first = browser.page_map().await.expect("page map");
    let again = browser.page_map().await.expect("page map");
    for map in [&first, &again] {
        assert_eq!(map.settle_ms, 0.0, "{}", map.render());
        assert!(map.still_changing.is_empty());
    }
    assert!(!again.render().contains("still changing"));
}

async fn nothing_to_list_suggests_no_scrolling_without_more_page(
    browser: Browser,
    server: TestServer,
) {
    // Taller than the viewport, but all of it within the band the map
    // covers: scrolling reveals nothing to act on.
    browser.navigate(&server.url("/plain")).await.unwrap();
    let map = browser.page_map().await.expect("page map");
    let text = map.render();
    assert!(map.scroll.pixels_below() > 0, "{text}");
    assert!(
        text.contains("Interactive elements: none visible (the page has none within reach)"),
        "{text}"
    );
    assert!(!text.contains("scroll down"), "{text}");
    // A page that goes on beyond the band is worth scrolling.
    browser.navigate(&server.url("/long-text")).await.unwrap();
    let long = browser.page_map().await.expect("page map");
    let text = long.render();
    assert!(
        text.contains("Interactive elements: none visible (scroll down to see more of the page)"),
        "{text}"
    );
}
