//! Details of the page map: a control and its `<label>` on one line, a
//! scroll box that says how many of its controls it hides, and controls
//! inside a closed shadow root mapped and operable, links whose content
//! floats out of them.

use toolkit_browser::{Browser, Element, PageMap};
use toolkit_tests::http::TestServer;

use crate::support::runner::scenarios;

scenarios![
    a_label_folds_into_its_control,
    a_scroll_box_says_what_it_hides,
    a_closed_shadow_root_is_mapped_and_operable,
    a_link_around_a_floated_logo_is_mapped_and_clickable,
];

fn lines_with<'a>(map: &'a PageMap, text: &str) -> Vec<&'a Element> {
    map.elements
        .iter()
        .filter(|e| e.render().contains(text))
        .collect()
}

fn one<'a>(map: &'a PageMap, text: &str) -> &'a Element {
    let found = lines_with(map, text);
    assert_eq!(
        found.len(),
        1,
        "one line with `{text}` in:\n{}",
        map.render()
    );
    found[0]
}

async fn a_label_folds_into_its_control(browser: Browser, server: TestServer) {
    // Labels with a pointer cursor (or a click handler) around or beside
    // their checkboxes and radio button: each pair is one control.
    browser.navigate(&server.url("/labels")).await.unwrap();
    let map = browser.page_map().await.expect("page map");
    let text = map.render();
    assert!(!text.contains("<label"), "{text}");
    for (label, field) in [
        ("Rent a tent", "name=tent"),
        ("Rent a stove", "name=stove"),
        ("Late arrival", "name=late"),
        ("Field pitch", "name=pitch"),
    ] {
        let control = one(&map, label);
        assert!(control.render().contains(field), "{text}");
        assert_eq!(control.name.as_deref(), Some(label), "{text}");
    }
    // The control is what the model acts on.
    let late = one(&map, "Late arrival").index;
    browser.click(late).await.expect("click");
    let out = browser
        .evaluate("document.getElementById('out').textContent")
        .await
        .unwrap();
    assert_eq!(out, "late: yes");
}

/// The box's `hidden_elements` counts: (below, above).
fn hidden(map: &PageMap) -> (Element, u32, u32) {
    let line = one(map, "scroll=").clone();
    let counts = (
        line.hidden_below.unwrap_or(0),
        line.hidden_above.unwrap_or(0),
    );
    (line, counts.0, counts.1)
}

async fn a_scroll_box_says_what_it_hides(browser: Browser, server: TestServer) {
    // Ten seats in a box that shows about four of them.
    browser.navigate(&server.url("/scrollbox")).await.unwrap();
    let map = browser.page_map().await.expect("page map");
    let text = map.render();
    let seats = seats_listed(&map);
    let (boxed, below, above) = hidden(&map);
    assert!(seats >= 4 && below >= 4, "{text}");
    assert_eq!((seats + below, above), (10, 0), "{text}");
    assert!(
        boxed.render().contains(&format!(
            "hidden_elements=\"{below} below (scroll it to see them)\""
        )),
        "{text}"
    );
    // Scrolled to its end, the box hides the first seats instead.
    browser
        .scroll(10.0, true, Some(boxed.index))
        .await
        .expect("scroll the box");
    let map = browser.page_map().await.expect("page map");
    let text = map.render();
    let seats = seats_listed(&map);
    let (_, below, above) = hidden(&map);
    assert!(above >= 4, "{text}");
    assert_eq!((seats + above, below), (10, 0), "{text}");
    assert!(find_seat(&map, "Seat 10"), "{text}");
}

/// The seats the map lists (the box's own line holds their text too).
fn seats_listed(map: &PageMap) -> u32 {
    let seats = map.elements.iter().filter(|e| e.tag == "button").count();
    u32::try_from(seats).expect("a few seats")
}

fn find_seat(map: &PageMap, seat: &str) -> bool {
    map.elements.iter().any(|e| e.text.as_deref() == Some(seat))
}

async fn a_closed_shadow_root_is_mapped_and_operable(browser: Browser, server: TestServer) {
    browser
        .navigate(&server.url("/closed-shadow"))
        .await
        .unwrap();
    let map = browser.page_map().await.expect("page map");
    let button = one(&map, "Add one").clone();
    assert!(button.in_shadow_root, "{}", map.render());
    let count = || async {
        browser
            .evaluate("document.getElementById('count').textContent")
            .await
            .unwrap()
    };
    browser.click(button.index).await.expect("click");
    assert_eq!(count().await, "1");
    // Known now: the next map keeps the number and costs no look inside.
    let again = browser.page_map().await.expect("page map");
    assert_eq!(one(&again, "Add one").index, button.index);
    browser.click(button.index).await.expect("click");
    assert_eq!(count().await, "2");
}

async fn a_link_around_a_floated_logo_is_mapped_and_clickable(
    browser: Browser,
    server: TestServer,
) {
    // The links' own boxes are empty: their content floats out of them.
    browser.navigate(&server.url("/floated")).await.unwrap();
    let map = browser.page_map().await.expect("page map");
    let text = map.render();
    let home = one(&map, "Home");
    assert_eq!(home.tag, "a", "{text}");
    assert_eq!((home.w, home.h), (120, 40), "the logo's box:\n{text}");
    let docs = one(&map, "Docs");
    assert_eq!((docs.w, docs.h), (120, 40), "{text}");
    // A link that clips its content shows nothing, nor do links whose
    // text is cut away for screen readers only.
    for hidden in ["Hidden away", "Skip to content", "Back to top"] {
        assert!(lines_with(&map, hidden).is_empty(), "{hidden}:\n{text}");
    }
    browser.click(home.index).await.expect("click the logo");
    assert!(
        browser.current_tab().await.unwrap().url.ends_with("/form"),
        "the logo's link was followed"
    );
}
