//! The session: its lifecycle (launch, close, a killed browser, two side
//! by side, connecting to a running browser), each scenario of which
//! launches browsers of its own, and the primitives in the shared browser
//! (page map, numbering, clicks, typing, keys, tabs, navigation, scrolling,
//! screenshots, dialogs, speed and memory).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use toolkit_browser::{Browser, BrowserConfig, BrowserError, PageMap, processes_mentioning};
use toolkit_tests::http::TestServer;

use crate::support::chromium::{self, kill_9, profiles};
use crate::support::runner::scenarios;
use crate::support::{click_on, find};

scenarios![
    // Browsers of their own.
    launch_and_close_leave_no_process_and_no_profile_behind,
    close_kills_helpers_that_outlive_the_browser,
    feature_lists_from_every_source_merge_into_one_switch,
    dropping_a_session_kills_its_browser,
    two_sessions_run_side_by_side,
    a_killed_browser_gives_a_clear_error_and_restart_recovers,
    a_session_can_connect_to_a_running_browser,
    // The shared browser.
    page_map_of_the_fixture,
    numbers_are_stable_across_maps_and_changes,
    stale_and_unknown_numbers_are_errors,
    click_sends_trusted_clicks,
    click_refuses_a_covered_element,
    click_reaches_iframes_and_shadow_roots,
    typing_round_trips_unicode,
    typing_refuses_what_takes_no_text,
    keys_submit_a_form_and_select_text,
    click_that_opens_a_tab_switches_to_it,
    tabs_can_be_listed_switched_and_closed,
    navigate_follows_redirects_and_goes_back,
    navigation_errors_are_reported,
    scroll_moves_the_page_and_containers,
    screenshot_is_a_png,
    dialogs_are_accepted_and_reported,
    the_page_can_neither_see_nor_spoof_the_map,
    a_tab_stuck_in_a_script_is_replaced_on_navigation,
    clicks_that_stay_on_the_page_return_promptly,
    two_tabs_stay_within_the_memory_budget,
    odd_unicode_never_breaks_the_map,
    a_page_still_loading_is_waited_for,
    thousand_elements_are_mapped_quickly,
];

/// Waits for a condition that settles asynchronously (the deadline only
/// bounds a failing run: a loaded machine may take seconds).
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn launch_and_close_leave_no_process_and_no_profile_behind(
    _shared: Browser,
    _server: TestServer,
) {
    let started = Instant::now();
    let browser = chromium::launch().await;
    let launched = started.elapsed();
    let profile = browser
        .profile_dir()
        .await
        .expect("a launched session has a profile");
    assert!(profile.is_dir());
    assert!(profile.starts_with(profiles()));
    let running = processes_mentioning(&profile);
    let pid = browser.pid().await.expect("a launched session has a pid");
    assert!(
        running.contains(&pid),
        "{running:?} lacks the main process {pid}"
    );
    assert!(
        running.len() > 1,
        "helpers also carry the profile: {running:?}"
    );

    let closing = Instant::now();
    browser.close().await.expect("close");
    let closed = closing.elapsed();
    assert!(
        processes_mentioning(&profile).is_empty(),
        "processes left behind: {:?}",
        processes_mentioning(&profile)
    );
    assert!(!profile.exists(), "{} was not removed", profile.display());
    eprintln!("timing: launch {launched:?}, close {closed:?}");

    // A closed session says so, and closing again is fine.
    let error = browser.page_map().await.unwrap_err();
    assert_eq!(error, BrowserError::Closed);
    assert!(error.to_string().contains("restart"), "{error}");
    browser.close().await.expect("closing twice is fine");
}

/// A helper that does not exit with the browser (here a renderer stopped
/// with `SIGSTOP`, which cannot notice anything) is killed by `close`.
async fn close_kills_helpers_that_outlive_the_browser(_shared: Browser, _server: TestServer) {
    let browser = chromium::launch().await;
    let profile = browser.profile_dir().await.expect("a profile");
    let renderer = processes_mentioning(&profile)
        .into_iter()
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("--type=renderer"))
        })
        .expect("a renderer for the first tab");
    let stopped = std::process::Command::new("kill")
        .args(["-STOP", &renderer.to_string()])
        .status()
        .expect("run kill");
    assert!(stopped.success());
    browser.close().await.expect("close");
    assert!(
        processes_mentioning(&profile).is_empty(),
        "processes left behind: {:?}",
        processes_mentioning(&profile)
    );
    assert!(!profile.exists(), "{} was not removed", profile.display());
}

/// Chromium reads one `--disable-features` only (the last); the session's
/// features and the host's must all reach it, and a host flag replaces the
/// session's flag of the same name.
async fn feature_lists_from_every_source_merge_into_one_switch(
    _shared: Browser,
    _server: TestServer,
) {
    let config = BrowserConfig::builder()
        .executable(chromium::executable())
        .profile_parent(profiles())
        .arg("--disable-features=ToolkitProbeA,ToolkitProbeB")
        .arg("enable-features=ToolkitProbeC")
        .arg("--lang=de")
        .build();
    let browser = Browser::launch(config).await.expect("launch Chromium");
    let pid = browser.pid().await.expect("a launched session has a pid");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).expect("the main process runs");
    let flags: Vec<String> = cmdline
        .split(|&byte| byte == 0)
        .map(|flag| String::from_utf8_lossy(flag).into_owned())
        .collect();
    browser.close().await.expect("close");

    let switch = |name: &str| -> Vec<&String> {
        flags
            .iter()
            .filter(|flag| flag.starts_with(&format!("--{name}=")))
            .collect()
    };
    let has_all = |name: &str, features: &[&str]| {
        let found = switch(name);
        assert_eq!(found.len(), 1, "one --{name} in {flags:?}");
        for feature in features {
            assert!(
                found[0].split(['=', ',']).any(|part| part == *feature),
                "{feature} missing from {}",
                found[0]
            );
        }
    };
    // The session's, then the host's.
    has_all(
        "disable-features",
        &[
            "TranslateUI",
            "WebUIOmniboxPopup",
            "WebUIOmniboxAimPopup",
            "ToolkitProbeA",
            "ToolkitProbeB",
        ],
    );
    has_all("enable-features", &["NetworkService", "ToolkitProbeC"]);
    assert_eq!(switch("lang"), ["--lang=de"]);
}

async fn dropping_a_session_kills_its_browser(_shared: Browser, _server: TestServer) {
    let browser = chromium::launch().await;
    let profile = browser.profile_dir().await.expect("profile");
    let clone = browser.clone();
    drop(browser);
    assert!(clone.is_alive().await, "a clone keeps the session alive");
    drop(clone);
    eventually("the dropped session's processes are gone", || {
        processes_mentioning(&profile).is_empty()
    })
    .await;
    eventually("the dropped session's profile is gone", || {
        !profile.exists()
    })
    .await;
}

async fn two_sessions_run_side_by_side(_shared: Browser, server: TestServer) {
    let (a, b) = tokio::join!(chromium::launch(), chromium::launch());
    let (pa, pb) = (
        a.profile_dir().await.unwrap(),
        b.profile_dir().await.unwrap(),
    );
    assert_ne!(pa, pb, "each session has its own profile");
    let (docs, about) = (server.url("/docs"), server.url("/about"));
    let (ra, rb) = tokio::join!(a.navigate(&docs), b.navigate(&about));
    assert_eq!(ra.unwrap().title, "Docs");
    assert_eq!(rb.unwrap().title, "About");
    let (ma, mb) = tokio::join!(a.page_map(), b.page_map());
    assert_eq!(ma.unwrap().title, "Docs");
    assert_eq!(mb.unwrap().title, "About");
    let (ca, cb) = tokio::join!(a.close(), b.close());
    ca.unwrap();
    cb.unwrap();
    assert!(processes_mentioning(&pa).is_empty() && processes_mentioning(&pb).is_empty());
    assert!(!pa.exists() && !pb.exists());
}

async fn a_killed_browser_gives_a_clear_error_and_restart_recovers(
    _shared: Browser,
    server: TestServer,
) {
    let browser = chromium::launch().await;
    browser.navigate(&server.url("/counter")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let button = map.elements[0].index;
    let old_profile = browser.profile_dir().await.unwrap();
    // Chromium keeps its singleton socket in a folder of its own beside the
    // profile, and removes it only when it exits gracefully (Debian's
    // Chromium does; a build without the singleton has nothing to leave).
    let singleton = std::fs::read_link(old_profile.join("SingletonSocket"))
        .ok()
        .and_then(|socket| socket.parent().map(PathBuf::from));
    assert!(singleton.as_ref().is_none_or(|folder| folder.is_dir()));

    kill_9(browser.pid().await.unwrap());
    let deadline = Instant::now() + Duration::from_secs(15);
    while browser.is_alive().await {
        assert!(Instant::now() < deadline, "the session never noticed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    for error in [
        browser.page_map().await.unwrap_err(),
        browser.click(button).await.map(drop).unwrap_err(),
        browser
            .navigate(&server.url("/docs"))
            .await
            .map(drop)
            .unwrap_err(),
    ] {
        assert!(error.is_fatal(), "{error:?}");
        let text = error.to_string();
        assert!(text.contains("no longer running"), "{text}");
        assert!(text.contains("restart the browser"), "{text}");
    }

    browser.restart().await.expect("restart");
    assert!(browser.is_alive().await);
    let new_profile = browser.profile_dir().await.unwrap();
    assert_ne!(old_profile, new_profile);
    eventually("the killed session's folders are removed", || {
        !old_profile.exists() && singleton.as_ref().is_none_or(|folder| !folder.exists())
    })
    .await;
    browser.navigate(&server.url("/counter")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    // Numbers keep counting across a restart: the old number names nothing.
    assert!(map.elements[0].index > button, "{}", map.render());
    assert_eq!(
        browser.click(button).await.unwrap_err(),
        BrowserError::StaleElement { index: button }
    );
    browser.click(map.elements[0].index).await.unwrap();
    browser.close().await.unwrap();
    assert!(processes_mentioning(&new_profile).is_empty());
}

async fn a_session_can_connect_to_a_running_browser(_shared: Browser, server: TestServer) {
    let host = chromium::launch().await;
    host.navigate(&server.url("/about")).await.unwrap();
    let ws = host.devtools_url().await.unwrap();
    assert!(
        ws.starts_with("ws://127.0.0.1:") && ws.contains("/devtools/browser/"),
        "{ws}"
    );

    let guest = Browser::connect(ws.clone())
        .await
        .expect("connect by WebSocket URL");
    assert_eq!(guest.pid().await, None);
    assert_eq!(guest.profile_dir().await, None);
    guest.navigate(&server.url("/counter")).await.unwrap();
    let map = guest.page_map().await.unwrap();
    assert_eq!(map.title, "Counter");
    assert_eq!(
        map.tabs.len(),
        2,
        "the browser's tabs: the host's and the guest's"
    );
    click_on(&guest, &map, "Increment").await;
    guest.close().await.unwrap();
    assert_eq!(guest.page_map().await.unwrap_err(), BrowserError::Closed);

    // The host and its tab are untouched; the guest's own tab is gone.
    let tabs = host.tabs().await.unwrap();
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert_eq!(tabs[0].title, "About");
    assert_eq!(host.page_map().await.unwrap().title, "About");

    // The http://host:port form works too.
    let http = ws.replacen("ws://", "http://", 1);
    let http = &http[..http.find("/devtools").unwrap()];
    let again = Browser::connect(http)
        .await
        .expect("connect by http://host:port");
    assert_eq!(again.page_info().await.unwrap().url, "about:blank");
    again.close().await.unwrap();

    let nothing = Browser::connect("ws://127.0.0.1:9/devtools/browser/x")
        .await
        .unwrap_err();
    assert!(
        matches!(nothing, BrowserError::Launch { .. }),
        "{nothing:?}"
    );
    host.close().await.unwrap();
}

// ---------------------------------------------------------------------
// In the shared browser.

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn page_map_of_the_fixture(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/form")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let text = map.render();
    eprintln!("{text}");
    assert_eq!(map.title, "Fixture form");
    // One tab: the URL and title once, no list of tabs.
    assert!(text.starts_with(&format!(
        "URL: {}\nTitle: Fixture form\nScroll: ",
        server.url("/form")
    )));
    assert!(!text.contains("Tabs:"), "{text}");
    assert!(text.contains("Scroll: 0 px above (0.0 pages), "), "{text}");

    // The form, with labels, placeholders and values.
    let q = find(&map, "name=q");
    assert_eq!(
        q.render(),
        format!(
            "[{}]<input type=text name=q label=\"Query\" placeholder=\"Search\"> value=\"rust\"",
            q.index
        )
    );
    find(
        &map,
        "<select name=lang options=\"Rust | Go\"> value=\"Go\"",
    );
    find(&map, "<textarea name=notes placeholder=\"Notes\">");
    find(
        &map,
        "<input type=checkbox name=agree label=\"I agree\" checked=false>",
    );
    find(&map, "<button> Search");
    // Links, ARIA, handlers, focusable, editable.
    // A link with a text shows no address; `find` shows it.
    let docs = find(&map, "<a> Docs");
    assert_eq!(docs.render(), format!("[{}]<a> Docs", docs.index));
    assert_eq!(docs.href.as_deref(), Some("/docs"));
    assert_eq!(
        docs.render_with_href(),
        format!("[{}]<a href=/docs> Docs", docs.index)
    );
    // The accessible name of a link is its text; `title` names only
    // links without text.
    assert_eq!(find(&map, "<a> About").href.as_deref(), Some("/about"));
    find(&map, "<div role=button label=\"Close dialog\"> x");
    find(&map, "<div> Clickable div");
    find(&map, "<span> Focusable span");
    find(&map, "<div> value=\"Editable text\"");
    find(&map, "<summary expanded=false> More");
    // Inside the open shadow root and the same-origin iframe.
    assert!(find(&map, "Shadow button").in_shadow_root);
    find(&map, "placeholder=\"Shadow input\"");
    assert!(find(&map, "Frame button").in_iframe);
    find(&map, "<a> Frame link");
    // Not mapped: hidden, transparent, zero-sized, covered, closed details,
    // far below, type=hidden, closed shadow roots.
    for absent in [
        "Display none",
        "Visibility hidden",
        "Opacity zero",
        "Zero size",
        "Covered button",
        "Inner link",
        "Far below",
        "secret",
        "Closed shadow button",
    ] {
        assert!(
            !text.contains(absent),
            "`{absent}` should not be mapped:\n{text}"
        );
    }
    // The overlay is no control: its text is shown for orientation only.
    assert!(
        !map.elements
            .iter()
            .any(|e| e.render().contains("An overlay"))
    );
    assert!(text.contains("\n  An overlay\n"), "{text}");
    // Numbers are unique.
    let mut numbers: Vec<u32> = map.elements.iter().map(|e| e.index).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), map.elements.len());
}

async fn numbers_are_stable_across_maps_and_changes(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/form")).await.unwrap();
    let first = browser.page_map().await.unwrap();
    let second = browser.page_map().await.unwrap();
    let numbers = |m: &PageMap| {
        m.elements
            .iter()
            .map(|e| (e.index, e.render().replace('*', "")))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        numbers(&first),
        numbers(&second),
        "a second map changes nothing"
    );
    assert!(second.elements.iter().all(|e| !e.is_new));

    let docs = find(&first, "Docs").index;
    let about = find(&first, "About").index;
    let search = find(&first, "<button> Search").index;
    browser
        .evaluate(
            "document.querySelector('a[href=\"/docs\"]').remove();
             const b = document.createElement('button');
             b.textContent = 'Added later';
             document.querySelector('form').appendChild(b);
             document.querySelector('#q').value = 'changed';",
        )
        .await
        .unwrap();
    let third = browser.page_map().await.unwrap();
    assert!(
        third.get(docs).is_none(),
        "the removed link's number is gone"
    );
    assert_eq!(find(&third, "About").index, about);
    assert_eq!(find(&third, "<button> Search").index, search);
    assert_eq!(find(&third, "name=q").index, find(&first, "name=q").index);
    assert!(
        find(&third, "name=q")
            .render()
            .contains("value=\"changed\"")
    );
    let added = find(&third, "Added later");
    let highest = first.elements.iter().map(|e| e.index).max().unwrap();
    assert!(added.index > highest, "new elements get new numbers");
    assert!(added.is_new && added.render().starts_with('*'));
    assert_eq!(
        browser.click(docs).await.unwrap_err(),
        BrowserError::StaleElement { index: docs }
    );

    // A new document never reuses numbers: after navigating, the old
    // numbers name nothing.
    browser.navigate(&server.url("/form")).await.unwrap();
    let fresh = browser.page_map().await.unwrap();
    let lowest = fresh.elements.iter().map(|e| e.index).min().unwrap();
    assert!(lowest > added.index, "{}", fresh.render());
    assert_eq!(
        browser.element(about).await.unwrap_err(),
        BrowserError::StaleElement { index: about }
    );
}

async fn stale_and_unknown_numbers_are_errors(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/inputs")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let field = find(&map, "placeholder=\"Text\"").index;
    assert_eq!(browser.element(field).await.unwrap().tag, "input");
    browser
        .evaluate("document.getElementById('t').remove()")
        .await
        .unwrap();
    for error in [
        browser.element(field).await.unwrap_err(),
        browser.click(field).await.map(drop).unwrap_err(),
        browser
            .type_text(field, "x", true)
            .await
            .map(drop)
            .unwrap_err(),
        browser
            .scroll(1.0, true, Some(field))
            .await
            .map(drop)
            .unwrap_err(),
    ] {
        assert_eq!(error, BrowserError::StaleElement { index: field });
        let text = error.to_string();
        assert!(
            text.contains(&format!("element [{field}] no longer exists")),
            "{text}"
        );
        assert!(text.contains("look at the new page map"), "{text}");
    }
    let unknown = 4_000_000;
    assert_eq!(
        browser.click(unknown).await.unwrap_err(),
        BrowserError::StaleElement { index: unknown }
    );
}

async fn click_sends_trusted_clicks(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/counter")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let button = find(&map, "Increment").index;
    let mut times = Vec::new();
    for _ in 0..15 {
        let started = Instant::now();
        let outcome = browser.click(button).await.unwrap();
        times.push(started.elapsed());
        assert_eq!(outcome.element.index, button);
        assert!(outcome.effects.new_tab.is_none() && !outcome.effects.navigated);
    }
    let count = browser
        .evaluate("document.getElementById('out').textContent")
        .await
        .unwrap();
    assert_eq!(count, "15");
    eprintln!(
        "timing: click median {:?} (min {:?}, max {:?})",
        median(times.clone()),
        times.iter().min().unwrap(),
        times.iter().max().unwrap()
    );
}

async fn click_refuses_a_covered_element(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/counter")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let button = find(&map, "Increment").index;
    browser
        .evaluate(
            "const o = document.createElement('div');
             o.className = 'cookie-banner';
             o.textContent = 'We use cookies';
             o.style.cssText = 'position:fixed;inset:0;background:rgba(0,0,0,.5)';
             document.body.appendChild(o);",
        )
        .await
        .unwrap();
    let error = browser.click(button).await.unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(error, BrowserError::NotClickable { .. }),
        "{error:?}"
    );
    assert!(
        text.contains("covered by <div class=\"cookie-banner\"> We use cookies"),
        "{text}"
    );
    let map = browser.page_map().await.unwrap();
    assert!(
        map.get(button).is_none(),
        "a covered element is not mapped:\n{}",
        map.render()
    );
    assert_eq!(
        browser
            .evaluate("document.getElementById('out').textContent")
            .await
            .unwrap(),
        "0"
    );
}

async fn click_reaches_iframes_and_shadow_roots(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/form")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    click_on(&browser, &map, "Frame button").await;
    let clicked = browser
        .evaluate("document.getElementById('frame').contentDocument.body.dataset.clicked")
        .await
        .unwrap();
    assert_eq!(clicked, "yes");
    browser
        .evaluate(
            "window.shadowClicks = 0;
             document.getElementById('widget').shadowRoot.getElementById('sb')
               .addEventListener('click', (e) => { if (e.isTrusted) window.shadowClicks += 1; });",
        )
        .await
        .unwrap();
    click_on(&browser, &map, "Shadow button").await;
    assert_eq!(browser.evaluate("window.shadowClicks").await.unwrap(), 1);
    let typed = browser
        .type_text(find(&map, "Frame input").index, "in the frame", true)
        .await
        .unwrap();
    assert_eq!(typed.value, "in the frame");
    let typed = browser
        .type_text(find(&map, "Shadow input").index, "in the shadow", true)
        .await
        .unwrap();
    assert!(typed.matches, "{typed:?}");
}

async fn typing_round_trips_unicode(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/inputs")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let field = find(&map, "placeholder=\"Text\"").index;
    let text = "héllo wörld 日本 🚀";
    let mut times = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let typed = browser.type_text(field, text, true).await.unwrap();
        times.push(started.elapsed());
        assert_eq!(typed.value, text);
        assert!(typed.matches);
    }
    eprintln!(
        "timing: input (clear + insert + read back) median {:?}",
        median(times)
    );
    let trusted = browser.evaluate("window.trusted").await.unwrap();
    assert!(
        trusted.as_u64().unwrap() >= 10,
        "input events are trusted: {trusted}"
    );

    let appended = browser.type_text(field, " ✓", false).await.unwrap();
    assert_eq!(appended.value, format!("{text} ✓"));
    assert!(appended.matches);
    let cleared = browser.type_text(field, "", true).await.unwrap();
    assert_eq!(cleared.value, "");
    let again = browser.page_map().await.unwrap();
    assert!(
        find(&again, "placeholder=\"Text\"")
            .render()
            .ends_with("value=\"\"")
    );

    let textarea = find(&map, "<textarea name=ta>").index;
    let lines = "line one\nligne deux — ü";
    assert_eq!(
        browser
            .type_text(textarea, lines, true)
            .await
            .unwrap()
            .value,
        lines
    );
    let editable = map
        .elements
        .iter()
        .find(|e| e.tag == "div")
        .expect("the contenteditable is mapped")
        .index;
    let typed = browser
        .type_text(editable, "rich ✍ text", true)
        .await
        .unwrap();
    assert_eq!(typed.value, "rich ✍ text");
    let number = find(&map, "type=number").index;
    assert_eq!(
        browser.type_text(number, "42", true).await.unwrap().value,
        "42"
    );
    let date = find(&map, "type=date").index;
    let typed = browser.type_text(date, "2024-02-29", true).await.unwrap();
    assert_eq!(typed.value, "2024-02-29");
}

async fn typing_refuses_what_takes_no_text(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/inputs")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let button = find(&map, "Not a field").index;
    let error = browser.type_text(button, "x", true).await.unwrap_err();
    assert_eq!(
        error,
        BrowserError::NotEditable {
            index: button,
            element: "<button>".into()
        }
    );
    assert!(
        error.to_string().contains("does not take typed text"),
        "{error}"
    );
    let readonly = find(&map, "value=\"fixed\"").index;
    let error = browser.type_text(readonly, "x", true).await.unwrap_err();
    assert!(error.to_string().contains("read-only"), "{error}");
}

async fn keys_submit_a_form_and_select_text(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/inputs")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let field = find(&map, "placeholder=\"Text\"").index;
    browser.type_text(field, "select me", true).await.unwrap();
    let effects = browser.press_keys("Control+a Delete").await.unwrap();
    assert!(
        !effects.navigated && effects.new_tab.is_none(),
        "{effects:?}"
    );
    assert_eq!(
        browser
            .evaluate("document.getElementById('t').value")
            .await
            .unwrap(),
        ""
    );
    let error = browser.press_keys("Hyperdrive").await.unwrap_err();
    assert!(matches!(error, BrowserError::InvalidInput { .. }));

    // Enter in a form with a submit button submits it: the navigation is
    // noticed and waited for.
    browser.navigate(&server.url("/form")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    browser
        .type_text(find(&map, "name=q").index, "query", true)
        .await
        .unwrap();
    let mut times = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        browser.press_keys("Shift").await.unwrap();
        times.push(started.elapsed());
    }
    eprintln!("timing: press a key (no effect) median {:?}", median(times));
    let started = Instant::now();
    let effects = browser.press_keys("Enter").await.unwrap();
    eprintln!(
        "timing: Enter + form submission + load {:?}",
        started.elapsed()
    );
    assert!(effects.navigated, "{effects:?}");
    assert!(
        effects.url.starts_with(&server.url("/submitted?q=query")),
        "{effects:?}"
    );
    assert_eq!(browser.page_info().await.unwrap().title, "Submitted");
}

async fn click_that_opens_a_tab_switches_to_it(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/popup")).await.unwrap();
    let opener = browser.current_tab().await.unwrap();
    let map = browser.page_map().await.unwrap();

    let started = Instant::now();
    let outcome = click_on(&browser, &map, "Open docs in a new tab").await;
    eprintln!(
        "timing: target=_blank click until the new tab is ready {:?}",
        started.elapsed()
    );
    let new_tab = outcome.effects.new_tab.expect("the click opened a tab");
    assert!(new_tab.current);
    assert_eq!(new_tab.title, "Docs");
    assert_eq!(outcome.effects.url, server.url("/docs"));
    let tabs = browser.tabs().await.unwrap();
    assert_eq!(tabs.len(), 2);
    assert_eq!(browser.page_map().await.unwrap().title, "Docs");

    // Back to the opener, then a script's window.open.
    browser.switch_tab(&opener.id).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let outcome = click_on(&browser, &map, "window.open").await;
    let tab = outcome.effects.new_tab.expect("window.open opened a tab");
    assert_eq!(tab.title, "About");
    assert_eq!(browser.tabs().await.unwrap().len(), 3);

    // A same-tab link navigates and waits for the new page.
    browser.switch_tab(&opener.id).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let outcome = click_on(&browser, &map, "Same tab").await;
    assert!(
        outcome.effects.navigated && outcome.effects.new_tab.is_none(),
        "{outcome:?}"
    );
    assert_eq!(outcome.effects.url, server.url("/docs"));
    assert_eq!(browser.page_map().await.unwrap().title, "Docs");
}

async fn tabs_can_be_listed_switched_and_closed(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/docs")).await.unwrap();
    let first = browser.current_tab().await.unwrap();
    let second = browser.open_tab(&server.url("/about")).await.unwrap();
    assert!(second.current && second.title == "About");
    let tabs = browser.tabs().await.unwrap();
    assert_eq!(tabs.iter().filter(|t| t.current).count(), 1);
    assert_eq!(
        tabs.last().unwrap().id,
        second.id,
        "tabs are listed in opening order"
    );
    let map = browser.page_map().await.unwrap().render();
    assert!(
        // The current tab by its id alone: its URL and title head the map.
        map.starts_with(&format!(
            "URL: {}\nTitle: About\nTabs:\n",
            server.url("/about")
        )) && map.contains(&format!("  Tab {} (current)\n", second.id)),
        "{map}"
    );
    assert!(
        map.contains(&format!(
            "Tab {}: Docs \u{2014} {}\n",
            first.id,
            server.url("/docs")
        )),
        "{map}"
    );

    let switched = browser.switch_tab(&first.id.to_uppercase()).await.unwrap();
    assert_eq!(switched.id, first.id);
    assert_eq!(browser.page_info().await.unwrap().title, "Docs");
    let error = browser.switch_tab("zzzz").await.unwrap_err();
    assert!(
        error.to_string().contains(&first.id) && error.to_string().contains(&second.id),
        "{error}"
    );

    let now = browser.close_tab(&first.id).await.unwrap();
    assert_eq!(
        now.id, second.id,
        "closing the current tab makes another current"
    );
    assert_eq!(browser.tabs().await.unwrap().len(), 1);
    // The page closes its own (current) tab: the next map picks another.
    browser.open_tab(&server.url("/docs")).await.unwrap();
    browser.evaluate("window.close()").await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while browser.tabs().await.unwrap().len() != 1 {
        assert!(Instant::now() < deadline, "the tab did not close itself");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let map = browser.page_map().await.unwrap();
    assert_eq!(map.title, "About");
}

async fn navigate_follows_redirects_and_goes_back(browser: Browser, server: TestServer) {
    assert_eq!(
        browser.go_back().await.unwrap_err(),
        BrowserError::NoHistory
    );
    let mut times = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        browser.navigate(&server.url("/about")).await.unwrap();
        times.push(started.elapsed());
    }
    eprintln!("timing: navigate (same tab) median {:?}", median(times));
    let info = browser.navigate(&server.url("/redirect")).await.unwrap();
    assert_eq!(info.url, server.url("/docs"));
    assert_eq!(info.title, "Docs");
    let back = browser.go_back().await.unwrap();
    assert_eq!(back.url, server.url("/about"));
    // A fragment of the current page is a navigation within the document:
    // no load event comes, and none is waited for.
    let started = Instant::now();
    let part = browser.navigate(&server.url("/about#part")).await.unwrap();
    assert_eq!(part.url, server.url("/about#part"));
    // Waiting for a load would end only at the 30 s navigation limit.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(browser.go_back().await.unwrap().url, server.url("/about"));
    let slow = browser.navigate(&server.url("/slow")).await.unwrap();
    assert_eq!(slow.title, "Slow");
    // Without a scheme, loopback addresses get http://.
    let bare = server.url("/docs").trim_start_matches("http://").to_owned();
    assert_eq!(browser.navigate(&bare).await.unwrap().title, "Docs");
}

async fn navigation_errors_are_reported(browser: Browser, _server: TestServer) {
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let error = browser.navigate(&url).await.unwrap_err();
    assert!(
        matches!(&error, BrowserError::Navigation { detail, .. } if detail.contains("ERR_CONNECTION_REFUSED")),
        "{error:?}"
    );
    assert!(error.to_string().contains(&url), "{error}");
    assert!(browser.is_alive().await);
}

async fn scroll_moves_the_page_and_containers(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/long")).await.unwrap();
    let before = browser.page_map().await.unwrap();
    assert_eq!(before.scroll.pixels_above(), 0);
    assert!(before.scroll.pages_below() > 3.0, "{:?}", before.scroll);
    assert!(!before.render().contains("Bottom"));
    let down = browser.scroll(2.0, true, None).await.unwrap();
    assert_eq!(down.moved, 1600);
    assert_eq!(down.container, None);
    let up = browser.scroll(0.5, false, None).await.unwrap();
    assert_eq!(up.moved, -400);
    let map = browser.page_map().await.unwrap();
    assert!(
        map.render().contains("Scroll: 1200 px above (1.5 pages)"),
        "{}",
        map.render()
    );
    assert_eq!(browser.scroll(50.0, true, None).await.unwrap().below, 0);
    // The scroll container holds no visible control (its button is
    // clipped away), so it is mapped itself, with its scroll state and
    // the control it hides.
    let map = browser.page_map().await.unwrap();
    assert!(!map.render().contains("<button> Inner"), "{}", map.render());
    let scroller = map
        .elements
        .iter()
        .find(|e| e.scroll_below.is_some())
        .expect("the container is mapped");
    assert!(
        scroller.render().contains(
            "<div scroll=\"0 px above, 821 px below\" \
                 hidden_elements=\"1 below (scroll it to see them)\"> inner Inner"
        ),
        "{}",
        scroller.render()
    );
    let scrolled = browser
        .scroll(4.0, true, Some(scroller.index))
        .await
        .unwrap();
    assert!(
        scrolled.container.as_deref().unwrap().contains("id=box"),
        "{scrolled:?}"
    );
    assert_eq!(
        (scrolled.moved, scrolled.above, scrolled.below),
        (800, 800, 21)
    );
    let scrolled = browser
        .scroll(1.0, true, Some(scroller.index))
        .await
        .unwrap();
    assert_eq!(
        (scrolled.moved, scrolled.below),
        (21, 0),
        "stops at the end"
    );
    let map = browser.page_map().await.unwrap();
    assert_eq!(map.get(scroller.index).unwrap().scroll_above, Some(821));
    let inner = find(&map, "<button> Inner").index;
    assert_eq!(
        browser.scroll(1.0, false, Some(inner)).await.unwrap().moved,
        -200
    );
    assert!(browser.scroll(-1.0, true, None).await.is_err());
    assert!(browser.scroll(f64::NAN, true, None).await.is_err());
}

async fn screenshot_is_a_png(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/form")).await.unwrap();
    let started = Instant::now();
    let png = browser.screenshot().await.unwrap();
    eprintln!(
        "timing: screenshot {:?}, {} bytes",
        started.elapsed(),
        png.len()
    );
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    // Width and height from the IHDR chunk: the 1280x800 viewport.
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (1280, 800));
}

async fn dialogs_are_accepted_and_reported(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/dialog")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    click_on(&browser, &map, "Alert").await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while browser.page_info().await.unwrap().title != "after alert" {
        assert!(Instant::now() < deadline, "the alert was not accepted");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        browser.take_dialogs().await,
        vec!["alert dialog: hello from the page".to_owned()]
    );
    assert!(browser.take_dialogs().await.is_empty());
}

async fn thousand_elements_are_mapped_quickly(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/many")).await.unwrap();
    let mut times = Vec::new();
    let mut walks = Vec::new();
    let mut count = 0;
    for _ in 0..7 {
        let started = Instant::now();
        let map = browser.page_map().await.unwrap();
        times.push(started.elapsed());
        walks.push(Duration::from_secs_f64(map.walk_ms / 1000.0));
        count = map.elements.len();
        let _ = map.render();
    }
    eprintln!(
        "timing: page map of {count} elements: median {:?} (walk in the page {:?}, first {:?})",
        median(times.clone()),
        median(walks),
        times[0]
    );
    assert_eq!(count, 1000);
}

async fn the_page_can_neither_see_nor_spoof_the_map(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/counter")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    let button = find(&map, "Increment").index;
    // The page script lives in an isolated world: invisible to the page...
    let seen = browser
        .evaluate("typeof window.__toolkitBrowser")
        .await
        .unwrap();
    assert_eq!(seen, "undefined");
    // ...and a page that plants a lookalike cannot feed the model a fake map.
    browser
        .evaluate(
            "window.__toolkitBrowser = { version: 1, run: () => JSON.stringify({ ok: {
               url: 'https://bank.example', title: 'Fake', ready: 'complete', elements: [],
               truncated: false, crossOriginFrames: 0, next: 1, ms: 0,
               scroll: { x: 0, y: 0, width: 0, height: 0, vw: 0, vh: 0 } } }) };",
        )
        .await
        .unwrap();
    let map = browser.page_map().await.unwrap();
    assert_eq!(map.title, "Counter");
    assert_eq!(find(&map, "Increment").index, button);
    browser.click(button).await.unwrap();
}

async fn a_page_still_loading_is_waited_for(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/docs")).await.unwrap();
    // Start a navigation to a slow page without waiting for it.
    let slow = server.url("/slow");
    browser
        .evaluate(&format!("setTimeout(() => location.href = '{slow}', 0)"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let map = browser.page_map().await.unwrap();
    // Either the old page (the request is still in flight) or the new one,
    // complete: never an error, never a half-parsed document.
    assert!(
        map.title == "Docs" || map.title == "Slow",
        "{}",
        map.render()
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while browser.page_map().await.unwrap().title != "Slow" {
        assert!(Instant::now() < deadline, "the slow page never showed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn a_tab_stuck_in_a_script_is_replaced_on_navigation(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/counter")).await.unwrap();
    let stuck = browser.current_tab().await.unwrap();
    browser
        .evaluate("setTimeout(() => { while (true) {} }, 10); 1")
        .await
        .unwrap();
    // Stuck once a trivial script gets no answer.
    let deadline = Instant::now() + Duration::from_secs(15);
    while tokio::time::timeout(Duration::from_millis(500), browser.evaluate("1"))
        .await
        .is_ok()
    {
        assert!(Instant::now() < deadline, "the page never got stuck");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    let info = browser.navigate(&server.url("/docs")).await.unwrap();
    eprintln!(
        "timing: navigating away from a stuck page {:?}",
        started.elapsed()
    );
    assert_eq!(info.title, "Docs");
    let tabs = browser.tabs().await.unwrap();
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert_ne!(tabs[0].id, stuck.id);
    assert_eq!(browser.page_map().await.unwrap().title, "Docs");
}

async fn clicks_that_stay_on_the_page_return_promptly(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/links")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    for (label, url) in [
        ("Fragment", server.url("/links#section")),
        ("Push state", server.url("/spa/next")),
        ("No content", server.url("/spa/next")),
    ] {
        let started = Instant::now();
        let outcome = click_on(&browser, &map, label).await;
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(5),
            "{label}: {took:?} {outcome:?}"
        );
        assert!(!outcome.effects.still_loading, "{label}: {outcome:?}");
        assert!(
            !outcome.effects.navigated,
            "{label}: no new document: {outcome:?}"
        );
        assert_eq!(outcome.effects.url, url, "{label}");
        if label == "Fragment" {
            // Back to the top so that the next links are visible.
            browser.scroll(10.0, false, None).await.unwrap();
        }
    }
}

/// Proportional set size (shared pages divided among their users) of a
/// process, in KiB: summed over a session's processes it is what the
/// session costs, where summed RSS would count shared memory many times.
fn pss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Pss:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

async fn two_tabs_stay_within_the_memory_budget(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/form")).await.unwrap();
    browser.open_tab(&server.url("/many")).await.unwrap();
    browser.page_map().await.unwrap();
    assert_eq!(browser.tabs().await.unwrap().len(), 2);
    let profile = browser.profile_dir().await.unwrap();
    let pids = processes_mentioning(&profile);
    let total_mib = pids.iter().map(|p| pss_kib(*p)).sum::<u64>() / 1024;
    eprintln!(
        "timing: memory with two tabs: {total_mib} MiB PSS over {} processes",
        pids.len()
    );
    assert!(total_mib < 500, "{total_mib} MiB");
}

async fn odd_unicode_never_breaks_the_map(browser: Browser, server: TestServer) {
    browser.navigate(&server.url("/unicode")).await.unwrap();
    let map = browser.page_map().await.unwrap();
    // A lone surrogate (possible in DOM strings, invalid in JSON text)
    // becomes U+FFFD; a long text is cut between characters, never inside
    // an emoji.
    assert_eq!(map.title, "Ünïcødé \u{fffd}");
    find(&map, "half \u{fffd} pair");
    let long = find(&map, "ABCDEFGHIJKLMNOP").render();
    assert!(long.ends_with('\u{2026}'), "{long}");
    // The cut would fall inside the first rocket: it falls before it.
    let text = find(&map, "ABCDEFGHIJKLMNOP").text.clone().unwrap();
    assert!(text.ends_with("MNOP\u{2026}"), "{text}");
}
