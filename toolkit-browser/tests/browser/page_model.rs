//! The page model, on pages served from 127.0.0.1 (and `localhost`,
//! another site, for frames from other sites): frames from other sites
//! mapped and acted in, elements covered by others (the page's own or a
//! parent page's) left out, elements new since the last map marked,
//! dropdown options summarised, and short orientation texts within their
//! budget.

use std::time::{Duration, Instant};

use toolkit_browser::{
    Browser, DEFAULT_MAP_TOKEN_BUDGET, MAX_ORIENTATION_CHARS, MAX_TEXT_CHARS, PageMap,
    SafetyPolicy, estimate_tokens,
};
use toolkit_tests::http::TestServer;

use crate::support::runner::scenarios;
use crate::support::{click_on, find};

scenarios![
    frames_from_other_sites_are_mapped_in_place,
    actions_reach_into_frames_from_other_sites,
    a_parent_page_covering_a_frame_hides_what_it_covers,
    a_frame_that_appears_brings_new_elements,
    a_frame_that_moved_is_mapped_where_it_is_now,
    a_frame_walked_ahead_keeps_within_the_text_budget,
    elements_painted_over_are_not_offered,
    a_cover_hides_only_what_it_really_covers,
    dropdown_options_are_summarised,
    orientation_texts_stay_short_and_within_budget,
    orientation_texts_never_show_a_secret,
    a_map_over_its_budget_keeps_the_view_and_find_reaches_the_rest,
];

fn position(map: &PageMap, line_contains: &str) -> usize {
    let index = find(map, line_contains).index;
    map.elements
        .iter()
        .position(|e| e.index == index)
        .expect("found above")
}

/// Maps the page until `done` holds (frames load after their parent).
async fn map_until(browser: &Browser, what: &str, done: impl Fn(&PageMap) -> bool) -> PageMap {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let map = browser.page_map().await.expect("page map");
        if done(&map) {
            return map;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting until {what}:\n{}",
            map.render()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn has(map: &PageMap, text: &str) -> bool {
    map.elements.iter().any(|e| e.render().contains(text))
}

async fn frames_from_other_sites_are_mapped_in_place(browser: Browser, server: TestServer) {
    // The checkout (127.0.0.1) holds the payment form from localhost,
    // which holds a check from 127.0.0.1 again and a help frame from
    // localhost; a chat button from localhost is fixed in a corner.
    browser.navigate(&server.url("/checkout")).await.unwrap();
    let map = map_until(&browser, "every frame is mapped", |m| {
        has(m, "Confirm") && has(m, "Open chat") && has(m, "Call me back")
    })
    .await;
    let text = map.render();
    eprintln!("{text}");
    assert_eq!(map.cross_origin_frames, 0, "{text}");
    assert!(!text.contains("not mapped"), "{text}");
    let card = find(&map, "label=\"Card number\"");
    assert!(
        card.in_iframe && card.render().contains("name=cc"),
        "{text}"
    );
    assert!(!find(&map, "name=coupon").in_iframe);
    // In document order: the page's own form, the payment form, the check
    // inside it, the help frame after the check, the chat last.
    let order = [
        "name=coupon",
        "name=cc",
        "Pay $278",
        "I am not a robot",
        "Confirm",
        "Payment FAQ",
        "Open chat",
    ];
    for pair in order.windows(2) {
        assert!(
            position(&map, pair[0]) < position(&map, pair[1]),
            "{} before {}:\n{text}",
            pair[0],
            pair[1]
        );
    }
    // Boxes in the tab's coordinates: the payment form sits inside its
    // frame, right of the order summary.
    let coupon = find(&map, "name=coupon");
    assert!(card.x > coupon.x + 200, "{card:?} vs {coupon:?}");
    // Numbers are unique across the documents.
    let mut numbers: Vec<u32> = map.elements.iter().map(|e| e.index).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), map.elements.len());
    // A second map keeps every number.
    let again = browser.page_map().await.unwrap();
    assert_eq!(
        map.elements.iter().map(|e| e.index).collect::<Vec<_>>(),
        again.elements.iter().map(|e| e.index).collect::<Vec<_>>()
    );
}

async fn actions_reach_into_frames_from_other_sites(browser: Browser, server: TestServer) {
    let registry = toolkit_browser::registry(browser.clone(), SafetyPolicy::default())
        .build()
        .unwrap();
    browser.navigate(&server.url("/checkout")).await.unwrap();
    let map = map_until(&browser, "the frames are mapped", |m| has(m, "Confirm")).await;
    let call = |name: &'static str, args: String| {
        let registry = &registry;
        async move {
            let result = registry.dispatch((name, args.as_str())).await.result;
            assert!(!result.is_error(), "{name} {args}: {}", result.to_text());
            result.to_text()
        }
    };
    // Typing, clicking and choosing inside the payment frame (another
    // process), and clicking inside the check nested in it.
    let card = find(&map, "name=cc").index;
    call(
        "input",
        format!(r#"{{"index": {card}, "text": "4242 4242"}}"#),
    )
    .await;
    let pay = find(&map, "Pay $278").index;
    call("click", format!(r#"{{"index": {pay}}}"#)).await;
    let country = find(&map, "label=\"Country\"").index;
    call(
        "select_option",
        format!(r#"{{"index": {country}, "option": "Canada"}}"#),
    )
    .await;
    let robot = find(&map, "I am not a robot").index;
    call("click", format!(r#"{{"index": {robot}}}"#)).await;
    let after = browser.page_map().await.unwrap();
    let text = after.render();
    assert!(
        find(&after, "name=cc")
            .render()
            .contains("value=\"4242 4242\""),
        "{text}"
    );
    assert_eq!(find(&after, "Paid").index, pay, "{text}");
    assert!(
        find(&after, "label=\"Country\"")
            .render()
            .contains("value=\"Canada\""),
        "{text}"
    );
    assert!(
        find(&after, "I am not a robot")
            .render()
            .contains(" checked"),
        "{text}"
    );
    assert_eq!(
        browser.element(pay).await.unwrap().text.as_deref(),
        Some("Paid")
    );

    // A frame that goes takes its numbers with it.
    browser
        .evaluate("document.getElementById('pay').remove()")
        .await
        .unwrap();
    let result = registry
        .dispatch(("click", format!(r#"{{"index": {pay}}}"#).as_str()))
        .await
        .result;
    let message = result.to_text();
    assert!(result.is_error(), "{message}");
    assert!(
        message.contains(&format!("element [{pay}] no longer exists")),
        "{message}"
    );
}

async fn a_parent_page_covering_a_frame_hides_what_it_covers(browser: Browser, server: TestServer) {
    browser
        .navigate(&server.url("/covered-frame"))
        .await
        .unwrap();
    let map = map_until(&browser, "the frame is mapped", |m| has(m, "Bottom button")).await;
    let text = map.render();
    assert!(find(&map, "Bottom button").in_iframe, "{text}");
    // The banner of the page covers the frame's top half.
    assert!(!text.contains("Top button"), "{text}");
    assert!(!text.contains("label=\"Size\""), "{text}");
    // Without the banner, they are offered.
    browser
        .evaluate("document.getElementById('banner').remove()")
        .await
        .unwrap();
    let map = browser.page_map().await.unwrap();
    assert!(
        has(&map, "Top button") && has(&map, "label=\"Size\""),
        "{}",
        map.render()
    );
}

async fn a_frame_that_appears_brings_new_elements(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/late-frame")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let add = find(&map, "Add the frame");
    assert!(!add.is_new, "nothing is new on a page's first map");
    browser.click(add.index).await.unwrap();
    let map = map_until(&browser, "the frame is mapped", |m| has(m, "Bottom button")).await;
    for label in ["Top button", "Bottom button", "label=\"Size\""] {
        let element = find(&map, label);
        assert!(
            element.is_new && element.render().starts_with('*') && element.in_iframe,
            "{}",
            map.render()
        );
    }
    assert!(!find(&map, "Add the frame").is_new);
    let again = browser.page_map().await.unwrap();
    assert!(
        again.elements.iter().all(|e| !e.is_new),
        "{}",
        again.render()
    );
}

async fn a_frame_that_moved_is_mapped_where_it_is_now(browser: Browser, server: TestServer) {
    // A map walks the frames the previous map found while it walks the
    // tab's document, at the place they had; a frame that has moved since
    // must be walked again where it is, and what that first walk numbered
    // is still new to the model.
    browser.navigate(&server.url("/late-frame")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    click_on(&browser, &map, "Add the frame").await;
    let before = map_until(&browser, "the frame is mapped", |m| has(m, "Bottom button")).await;
    let again = browser.page_map().await.unwrap();
    let boxes = |m: &PageMap| {
        m.elements
            .iter()
            .map(|e| (e.index, e.x, e.y, e.w, e.h))
            .collect::<Vec<_>>()
    };
    assert_eq!(boxes(&before), boxes(&again), "{}", again.render());
    let top = find(&before, "Top button").clone();

    // A button appears inside the frame (another site), then the frame
    // moves down 80 px.
    browser
        .evaluate("document.querySelector('iframe').contentWindow.postMessage('add', '*')")
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while browser.evaluate("window.added === true").await.unwrap() != true {
        assert!(
            Instant::now() < deadline,
            "the frame never added its button"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    browser
        .evaluate("document.querySelector('iframe').style.marginTop = '80px'")
        .await
        .unwrap();
    let moved = browser.page_map().await.unwrap();
    let text = moved.render();
    let moved_top = find(&moved, "Top button");
    assert_eq!(moved_top.index, top.index, "{text}");
    assert_eq!((moved_top.x, moved_top.y), (top.x, top.y + 80), "{text}");
    let added = find(&moved, "Added button");
    assert!(added.is_new && added.in_iframe, "{text}");
    assert_eq!(added.y, moved_top.y + 70, "{text}");
    assert!(!moved_top.is_new, "{text}");
    let mut numbers: Vec<u32> = moved.elements.iter().map(|e| e.index).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), moved.elements.len(), "{text}");
    // Mapped again in place: the same, and nothing new any more.
    let settled = browser.page_map().await.unwrap();
    assert!(
        settled.elements.iter().all(|e| !e.is_new),
        "{}",
        settled.render()
    );
    assert_eq!(boxes(&settled), boxes(&moved));
}

async fn a_frame_walked_ahead_keeps_within_the_text_budget(browser: Browser, server: TestServer) {
    // The page's own headings use most of the orientation budget, and a
    // frame from another site above them has more: the frame gets what
    // the page leaves, in every map, including those that walk it ahead
    // with the whole budget.
    browser
        .navigate(&server.url("/budget-frame"))
        .await
        .unwrap();
    let first = map_until(&browser, "the frame is mapped", |m| {
        m.texts.iter().any(|t| t.text.contains("of the frame"))
    })
    .await;
    let own: usize = first
        .texts
        .iter()
        .filter(|t| t.text.contains("page itself"))
        .count();
    assert_eq!(
        own,
        30,
        "every heading of the page is shown:\n{}",
        first.render()
    );
    let spent: usize = first.texts.iter().map(|t| t.text.chars().count()).sum();
    assert!(spent <= MAX_ORIENTATION_CHARS as usize, "{spent}");
    for _ in 0..3 {
        let again = browser.page_map().await.unwrap();
        assert_eq!(
            again.texts.iter().map(|t| &t.text).collect::<Vec<_>>(),
            first.texts.iter().map(|t| &t.text).collect::<Vec<_>>(),
            "{}",
            again.render()
        );
    }
}

async fn elements_painted_over_are_not_offered(browser: Browser, server: TestServer) {
    browser
        .navigate(&server.url("/painted-over"))
        .await
        .unwrap();
    let map = browser.page_map().await.unwrap();
    let text = map.render();
    // The card is neither positioned nor later in a stacking order a
    // browser sees without painting: its transform lifts it over the
    // button.
    assert!(!has(&map, "Painted over"), "{text}");
    assert!(has(&map, "Free button"), "{text}");
    let covered = browser
        .evaluate("document.elementFromPoint(30, 30).textContent")
        .await
        .unwrap();
    assert_eq!(
        covered, "A transformed card",
        "the fixture covers the button"
    );
}

async fn a_cover_hides_only_what_it_really_covers(browser: Browser, server: TestServer) {
    // A button wholly under a backdrop is left out; a button whose centre
    // is under a badge with rounded corners is still reached at its top
    // left quarter point (outside the badge's rounded corner, though
    // inside its box), so it is offered.
    browser.navigate(&server.url("/modal-over")).await.unwrap();
    let reached = browser
        .evaluate(
            "[document.elementFromPoint(120, 350).id, document.elementFromPoint(70, 325).id, \
             document.elementFromPoint(120, 70).id]",
        )
        .await
        .unwrap();
    assert_eq!(
        reached,
        serde_json::json!(["badge", "badged", "backdrop"]),
        "the fixture covers what it should"
    );
    let map = browser.page_map().await.unwrap();
    let text = map.render();
    assert!(has(&map, "Modal button"), "{text}");
    assert!(!has(&map, "Under the backdrop"), "{text}");
    assert!(has(&map, "Behind a rounded badge"), "{text}");
}

async fn dropdown_options_are_summarised(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/order")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let size = find(&map, "name=size");
    assert_eq!(size.options, ["Small", "Medium", "Large", "XL (sold out)"]);
    assert_eq!(size.option_count, Some(4));
    assert!(
        size.render()
            .contains(r#" options="Small | Medium | Large | XL (sold out)"> value="Medium""#),
        "{}",
        size.render()
    );
    // The ARIA combobox's listbox is closed (hidden); its options are
    // listed all the same.
    let colour = find(&map, "role=combobox");
    assert!(
        colour.render().contains(r#"options="Red | Green | Blue""#),
        "{}",
        colour.render()
    );
    // A long list: its first eight options, and how many there are.
    browser.navigate(&server.url("/booking")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let nights = find(&map, "name=nights");
    assert!(
        nights
            .render()
            .contains(r#"options="1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | … 14 in all""#),
        "{}",
        nights.render()
    );
}

async fn orientation_texts_stay_short_and_within_budget(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/article")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let text = map.render();
    let headings: Vec<(&str, u8)> = map
        .texts
        .iter()
        .filter_map(|t| t.heading.map(|h| (t.text.as_str(), h)))
        .collect();
    assert_eq!(headings.first(), Some(&("The long article", 1)), "{text}");
    assert!(headings.contains(&("Section 1", 2)), "{text}");
    assert!(text.contains("\n# The long article\n"), "{text}");
    assert!(text.contains("\n## Section 1\n"), "{text}");
    // Short texts only: no paragraph of the article, each text cut to the
    // element text length, all within the budget.
    assert!(!text.contains("Lorem ipsum"), "{text}");
    let max = usize::try_from(MAX_TEXT_CHARS).unwrap();
    assert!(map.texts.iter().all(|t| t.text.chars().count() <= max));
    let total: usize = map.texts.iter().map(|t| t.text.chars().count()).sum();
    assert!(total <= usize::try_from(MAX_ORIENTATION_CHARS).unwrap());
    // Each text stands before the element that follows it on the page.
    let link = position(&map, "a link to the docs");
    let title = map
        .texts
        .iter()
        .find(|t| t.text == "The long article")
        .unwrap();
    assert!(title.before <= link, "{text}");

    // A form: labels that name a control are not repeated as texts.
    browser.navigate(&server.url("/order")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    assert!(
        map.texts
            .iter()
            .all(|t| t.text != "Name" && t.text != "Size"),
        "{}",
        map.render()
    );
    assert!(
        map.texts.iter().any(|t| t.text == "Colour"),
        "{}",
        map.render()
    );
}

async fn orientation_texts_never_show_a_secret(browser: Browser, server: TestServer) {
    let policy = SafetyPolicy::builder()
        .secret("password", "hunter2-orient")
        .build()
        .unwrap();
    let registry = toolkit_browser::registry(browser.clone(), policy)
        .build()
        .unwrap();
    browser.navigate(&server.url("/login")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let pw = find(&map, "name=pw").index;
    let typed = registry
        .dispatch((
            "input",
            format!(r#"{{"index": {pw}, "text": "<secret>password</secret>"}}"#).as_str(),
        ))
        .await
        .result;
    assert!(!typed.is_error(), "{}", typed.to_text());
    // The page echoes what was typed in a banner, which the map shows as a
    // short text: with the placeholder, never the value.
    let map = browser.page_map().await.unwrap();
    let text = map.render();
    assert!(
        map.texts
            .iter()
            .any(|t| t.text.contains("You typed <secret>password</secret>")),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
    browser.set_policy(SafetyPolicy::default());
}

async fn a_map_over_its_budget_keeps_the_view_and_find_reaches_the_rest(
    browser: Browser,
    server: TestServer,
) {
    // A thousand controls, about 5,000 tokens of map.
    browser.navigate(&server.url("/many")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    assert_eq!(map.elements.len(), 1000);
    assert_eq!(map.token_budget, DEFAULT_MAP_TOKEN_BUDGET);
    let whole = map.render_within(0);
    let text = map.render();
    assert!(estimate_tokens(&whole) > 2 * estimate_tokens(&text));
    assert!(
        estimate_tokens(&text) <= DEFAULT_MAP_TOKEN_BUDGET as usize,
        "{} tokens",
        estimate_tokens(&text)
    );
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with(&format!(
            "(the map was cut to its budget of about {DEFAULT_MAP_TOKEN_BUDGET} tokens: 0 \
             element(s) above and "
        )) && last.contains("the find action searches every element"),
        "{last}"
    );
    // The first controls of the page are shown; every one left out is
    // found by its words, with the number the map gave it.
    assert!(
        text.contains(&format!("[{}]<button> B0\n", map.elements[0].index)),
        "{text}"
    );
    let left_out: Vec<_> = map
        .elements
        .iter()
        .filter(|e| !text.contains(&format!("[{}]<", e.index)))
        .collect();
    assert!(left_out.len() > 500, "{}", left_out.len());
    for e in [
        left_out[0],
        left_out[left_out.len() / 2],
        left_out[left_out.len() - 1],
    ] {
        let words = e
            .text
            .clone()
            .or_else(|| e.placeholder.clone())
            .or_else(|| e.field_name.clone())
            .expect("words to find it by");
        let found = browser.find_elements(&words, 30).await.unwrap();
        assert!(
            found.elements.iter().any(|f| f.index == e.index),
            "{words}: {:?}",
            found.elements
        );
    }
    // Searching by role or tag: every checkbox, the first 30 listed.
    let boxes = browser.find_elements("checkbox", 30).await.unwrap();
    assert_eq!(boxes.total, 250);
    assert_eq!(boxes.elements.len(), 30);
}
