//! What pages ask of the mouse beyond a click, and of file choosers,
//! called through a registry as a model would: a file chosen through a
//! transparent input laid over a styled box, a hidden input a 📎 button
//! opens from a script, and a label; a press held for two seconds; a menu
//! that opens on hover; a drag and drop between columns, a pointer-driven
//! slider and a list sorted with the mouse. Each checks the page's state
//! afterwards, read from the page itself.

use serde_json::{Value, json};
use toolkit_browser::Browser;
use toolkit_tests::http::TestServer;

use crate::actions::{Agent, local_policy};
use crate::support::runner::scenarios;

scenarios![
    files_are_chosen_through_any_control_that_opens_a_chooser,
    choosers_are_seen_wherever_their_input_lives,
    a_hold_presses_for_its_duration,
    hover_opens_a_menu_without_clicking,
    drags_move_cards_sliders_and_list_items,
];

/// The page's own value of `expression`.
async fn read(browser: &Browser, expression: &str) -> Value {
    browser
        .evaluate(expression)
        .await
        .unwrap_or_else(|e| panic!("{expression}: {e}"))
}

async fn text_of(browser: &Browser, id: &str) -> String {
    let value = read(
        browser,
        &format!("document.getElementById('{id}').textContent"),
    )
    .await;
    value.as_str().unwrap_or_default().to_owned()
}

/// The text of `id` once the page has read the file it was given (it
/// reads it in a task of its own), or as it is after five seconds.
async fn file_read(browser: &Browser, id: &str) -> String {
    let mut text = text_of(browser, id).await;
    for _ in 0..100 {
        if text.starts_with("Got ") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        text = text_of(browser, id).await;
    }
    text
}

async fn files_are_chosen_through_any_control_that_opens_a_chooser(
    browser: Browser,
    server: TestServer,
) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/upload-controls").await;
    let map = agent.map().await.render();
    // The transparent input is the control, named by the box it covers;
    // the box under it, which no click reaches, is not listed.
    assert!(
        map.contains("<input type=file label=\"Click to select a file\">"),
        "{map}"
    );
    assert!(!map.contains("<div> Click to select a file"), "{map}");

    // The overlay.
    let overlay = agent.index("Click to select a file").await;
    let (chose, _) = agent
        .ok(
            "upload_file",
            json!({ "index": overlay, "path": "report.txt" }),
        )
        .await;
    assert!(
        chose.starts_with("Chose the file \"report.txt\""),
        "{chose}"
    );
    assert_eq!(
        file_read(&browser, "out-overlay").await,
        "Got report.txt: quarterly numbers"
    );

    // A box the model numbered before the page laid an input over it:
    // the input a click on the box reaches takes the file.
    let cv = agent.index("Drop your CV here").await;
    read(&browser, "addCvInput()").await;
    let (chose, _) = agent
        .ok("upload_file", json!({ "index": cv, "path": "report.txt" }))
        .await;
    assert!(!chose.contains("clicked"), "{chose}");
    assert_eq!(
        file_read(&browser, "out-cv").await,
        "Got report.txt: quarterly numbers"
    );

    // The 📎 button whose script clicks a hidden input: a click says
    // what it opened, and leaves the chooser for upload_file.
    let attach = agent.index("Attach a file").await;
    let (clicked, _) = agent.ok("click", json!({ "index": attach })).await;
    assert!(
        clicked.contains("It opened a file dialog")
            && clicked.contains(&format!("upload_file and the number {attach}")),
        "{clicked}"
    );
    assert_eq!(text_of(&browser, "out-chat").await, "no attachment");
    let send = agent.index("Send").await;
    let (plain, _) = agent.ok("click", json!({ "index": send })).await;
    assert!(!plain.contains("file dialog"), "{plain}");
    let (chose, result) = agent
        .ok(
            "upload_file",
            json!({ "index": attach, "path": "report.txt" }),
        )
        .await;
    assert!(
        chose.contains("the file went to the file dialog it opened"),
        "{chose}"
    );
    assert!(result.memory().unwrap().starts_with("Chose the file"));
    assert_eq!(
        file_read(&browser, "out-chat").await,
        "Got report.txt: quarterly numbers"
    );

    // The label of a hidden input.
    let photo = agent.index("Choose a photo").await;
    agent
        .ok(
            "upload_file",
            json!({ "index": photo, "path": "report.txt" }),
        )
        .await;
    assert_eq!(
        file_read(&browser, "out-photo").await,
        "Got report.txt: quarterly numbers"
    );

    // The folder's rule holds on every way: the chooser's too.
    let (refused, _) = agent
        .err(
            "upload_file",
            json!({ "index": attach, "path": "../outside.txt" }),
        )
        .await;
    assert!(refused.contains("outside the files folder"), "{refused}");
    // A button that opens no chooser, and a text field, are no upload
    // controls.
    let (none, _) = agent
        .err(
            "upload_file",
            json!({ "index": send, "path": "report.txt" }),
        )
        .await;
    assert!(
        none.contains("not a file input") && none.contains("opened no file chooser"),
        "{none}"
    );
    let message = agent.index("placeholder=\"Message\"").await;
    let (field, _) = agent
        .err(
            "upload_file",
            json!({ "index": message, "path": "report.txt" }),
        )
        .await;
    assert!(
        field.contains("not a file input") && !field.contains("clicking"),
        "{field}"
    );
    // The chooser is no longer intercepted: the page's own chooser use
    // is as before (the button still works through upload_file).
    agent
        .ok(
            "upload_file",
            json!({ "index": attach, "path": "report.txt" }),
        )
        .await;
}

async fn a_hold_presses_for_its_duration(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/hold").await;
    let button = agent.index("Hold to delete").await;
    // A click is too short.
    agent.ok("click", json!({ "index": button })).await;
    assert_eq!(
        text_of(&browser, "status").await,
        "Too short: hold for two seconds"
    );
    let (held, result) = agent
        .ok("hold", json!({ "index": button, "seconds": 2.5 }))
        .await;
    assert!(
        held.starts_with("Held the mouse button down on [")
            && held.contains("for 2.5 s, then released it."),
        "{held}"
    );
    assert!(result.memory().unwrap().starts_with("Held"));
    assert_eq!(text_of(&browser, "status").await, "Deleted");
    // One press for the click, one for the hold, which the page timed at
    // two and a half seconds or more.
    let presses = read(&browser, "window.presses").await;
    let presses = presses.as_array().expect("the presses");
    assert_eq!(presses.len(), 2, "{presses:?}");
    assert!(presses[1].as_f64().unwrap() >= 2500.0, "{presses:?}");
    for seconds in [0.0, -1.0, 10.5, 60.0] {
        let (refused, _) = agent
            .err("hold", json!({ "index": button, "seconds": seconds }))
            .await;
        assert!(refused.contains("at most 10"), "{seconds}: {refused}");
    }
    assert_eq!(read(&browser, "window.presses.length").await, json!(2));
}

async fn hover_opens_a_menu_without_clicking(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/hover").await;
    let map = agent.map().await.render();
    assert!(!map.contains("Tents"), "{map}");
    let products = agent.index("Products").await;
    let (hovered, result) = agent.ok("hover", json!({ "index": products })).await;
    assert!(
        hovered.starts_with("Moved the mouse onto [")
            && hovered.contains("without clicking")
            && hovered.contains("more element(s) are shown now"),
        "{hovered}"
    );
    assert!(result.memory().unwrap().starts_with("Hovered over"));
    let map = agent.map().await.render();
    assert!(map.contains("Tents") && map.contains("Boots"), "{map}");
    assert_eq!(read(&browser, "window.clicks").await, json!(0));
    // Hovering something that changes nothing says so.
    let heading = agent.index("Home").await;
    let (still, _) = agent.ok("hover", json!({ "index": heading })).await;
    assert!(
        still.contains("element(s) fewer are shown now") || still.contains("did not change"),
        "{still}"
    );
    assert_eq!(read(&browser, "window.clicks").await, json!(0));
}

async fn drags_move_cards_sliders_and_list_items(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/drag").await;

    // Native drag and drop: a card onto a card of the other column.
    let card = agent.index("Write report").await;
    let other = agent.index("Book venue").await;
    let (dragged, _) = agent
        .ok("drag", json!({ "index": card, "to": other }))
        .await;
    assert!(
        dragged.contains("onto [") && dragged.contains("took it as a drag and drop"),
        "{dragged}"
    );
    assert_eq!(read(&browser, "window.drops").await, json!(["done"]));
    assert_eq!(
        read(
            &browser,
            "[...document.querySelectorAll('#done .card')].map((c) => c.id)"
        )
        .await,
        json!(["card-c", "card-a"])
    );

    // A slider following pointer events: half of its 300 px track.
    let thumb = agent.index("role=slider").await;
    let (slid, _) = agent.ok("drag", json!({ "index": thumb, "dx": 150 })).await;
    assert!(slid.contains("by 150 px right, 0 px down"), "{slid}");
    assert!(!slid.contains("drag and drop"), "{slid}");
    let value = read(&browser, "Number(thumb.getAttribute('aria-valuenow'))").await;
    let value = value.as_f64().expect("a number");
    assert!((48.0..=52.0).contains(&value), "{value}");

    // A list sorted with the mouse: the first item past the third.
    let first = agent.index("First").await;
    let third = agent.index("Third").await;
    agent
        .ok("drag", json!({ "index": first, "to": third }))
        .await;
    assert_eq!(
        read(
            &browser,
            "[...document.querySelectorAll('#sortable li')].map((li) => li.textContent)"
        )
        .await,
        json!(["Second", "Third", "First"])
    );

    // Where to is required, and only one way.
    let (nowhere, _) = agent.err("drag", json!({ "index": first })).await;
    assert!(nowhere.contains("say where to drag to"), "{nowhere}");
    let (both, _) = agent
        .err("drag", json!({ "index": first, "to": third, "dx": 5 }))
        .await;
    assert!(both.contains("not both"), "{both}");
    let (far, _) = agent
        .err("drag", json!({ "index": first, "dx": 1e9 }))
        .await;
    assert!(far.contains("at most 10000 pixels"), "{far}");
}

/// Choosers whose inputs the document does not hold (a shadow root's, a
/// script's input in no document), a page that empties its input once it
/// has the file, and controls that open a tab besides.
async fn choosers_are_seen_wherever_their_input_lives(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/hidden-choosers").await;
    let first = browser.current_tab().await.expect("the tab").id;

    for (label, out) in [
        ("Attach inside", "out-shadow"),
        ("Pick from script", "out-detached"),
    ] {
        let control = agent.index(label).await;
        let (clicked, _) = agent.ok("click", json!({ "index": control })).await;
        assert!(
            clicked.contains("It opened a file dialog"),
            "{label}: {clicked}"
        );
        let (chose, _) = agent
            .ok(
                "upload_file",
                json!({ "index": control, "path": "report.txt" }),
            )
            .await;
        assert!(
            chose.contains("the file went to the file dialog it opened"),
            "{label}: {chose}"
        );
        assert_eq!(text_of(&browser, out).await, "Got report.txt", "{label}");
    }

    // The page takes the file in its change event and empties the input.
    let clearing = agent.index("Upload at once").await;
    let (chose, _) = agent
        .ok(
            "upload_file",
            json!({ "index": clearing, "path": "report.txt" }),
        )
        .await;
    assert!(
        chose.starts_with("Chose the file \"report.txt\"")
            && chose.contains("took the file and then emptied the input"),
        "{chose}"
    );
    assert_eq!(text_of(&browser, "out-clearing").await, "Got report.txt");

    // A control that opens a tab besides its chooser: the chooser is the
    // first tab's, and the reply tells of the new tab.
    let window = agent.index("Attach in a new window").await;
    let (chose, _) = agent
        .ok(
            "upload_file",
            json!({ "index": window, "path": "report.txt" }),
        )
        .await;
    assert!(
        chose.contains("the file went to the file dialog it opened")
            && chose.contains("It opened a new tab"),
        "{chose}"
    );
    let popup = browser.current_tab().await.expect("the tab").id;
    assert_ne!(popup, first);
    browser.close_tab(&popup).await.expect("close the new tab");
    browser
        .switch_tab(&first)
        .await
        .expect("back to the first tab");
    assert_eq!(text_of(&browser, "out-window").await, "Got report.txt");

    // A control that opens only a tab: the error says so too.
    let help = agent.index("Open help").await;
    let (refused, _) = agent
        .err(
            "upload_file",
            json!({ "index": help, "path": "report.txt" }),
        )
        .await;
    assert!(
        refused.contains("opened no file chooser") && refused.contains("opened a new tab"),
        "{refused}"
    );
    let popup = browser.current_tab().await.expect("the tab").id;
    if popup != first {
        browser.close_tab(&popup).await.expect("close the new tab");
        browser
            .switch_tab(&first)
            .await
            .expect("back to the first tab");
    }
}
