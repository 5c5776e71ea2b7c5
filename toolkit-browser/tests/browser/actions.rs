//! The browser actions, called through a registry exactly as a model's tool
//! calls would be (`registry.call("click", {"index": 5})`), so that their
//! schemas and dispatch are exercised too. Each scenario builds its own
//! registry and policy; the default policy allows only 127.0.0.1, so the
//! navigation guard is on throughout. With `BROWSER_TRACE=1` every call is
//! printed as the model would read it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolkit_browser::actions::evaluate;
use toolkit_browser::{Browser, PageMap, SafetyPolicy};
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{
    Block, Provider, Registry, RegistryBuilder, ToolCall, ToolCallResult, ToolResult, tools,
};
use toolkit_tests::http::TestServer;

use crate::support::chromium::{self, kill_9};
use crate::support::runner::scenarios;
use crate::support::scratch;

scenarios![
    // A browser of its own, which it kills.
    a_killed_browser_gives_error_results_until_restarted,
    a_server_that_never_answers_is_given_up_within_the_limit,
    // The shared browser.
    schemas_suit_every_provider,
    forms_are_filled_and_submitted,
    a_click_that_submits_says_where_the_form_went,
    links_tabs_history_and_waiting,
    iframes_and_shadow_roots_are_reached,
    long_pages_scroll_extract_and_find,
    files_are_uploaded_from_the_folder_only,
    stale_numbers_are_errors,
    disallowed_domains_are_blocked_even_by_redirects,
    secrets_are_typed_but_never_shown,
    screenshot_is_a_png_image_block,
    done_finishes_the_task,
    evaluate_is_off_by_default,
];

/// The folder the policy allows files from, with `report.txt` in it, and a
/// file beside it (outside).
pub(crate) fn files_dir() -> PathBuf {
    let dir = scratch().join("browser-files");
    std::fs::create_dir_all(&dir).expect("create the files folder");
    std::fs::write(dir.join("report.txt"), "quarterly numbers").expect("write report.txt");
    std::fs::write(scratch().join("outside.txt"), "not for the model").expect("write outside");
    dir
}

/// The policy most scenarios use: only 127.0.0.1, and the files folder.
pub(crate) fn local_policy() -> SafetyPolicy {
    SafetyPolicy::builder()
        .allow_domains(["127.0.0.1"])
        .files_dir(files_dir())
        .build()
        .expect("a valid policy")
}

/// A registry of the browser actions, called as a model would call them.
pub(crate) struct Agent {
    registry: Registry,
    pub(crate) browser: Browser,
    pub(crate) server: TestServer,
}

impl Agent {
    pub(crate) fn new(browser: &Browser, server: &TestServer, policy: SafetyPolicy) -> Self {
        Self::with_registry(
            browser,
            server,
            toolkit_browser::registry(browser.clone(), policy),
        )
    }

    /// An agent calling what `registry` builds: the browser actions, and
    /// any others it adds.
    pub(crate) fn with_registry(
        browser: &Browser,
        server: &TestServer,
        registry: RegistryBuilder,
    ) -> Self {
        Self {
            registry: registry.build().expect("the browser registry builds"),
            browser: browser.clone(),
            server: server.clone(),
        }
    }

    pub(crate) async fn call(&self, name: &str, args: Value) -> ToolResult {
        let started = Instant::now();
        let outcome = self.registry.dispatch((name, &args)).await;
        let took = started.elapsed();
        if std::env::var_os("BROWSER_TRACE").is_some() {
            // What the model would read, for eyeballing the wording.
            let text: String = outcome.result.to_text().chars().take(600).collect();
            eprintln!(
                "> {name}({args}) in {took:?}\n{text}\n  memory: {:?}\n",
                outcome.result.memory()
            );
        }
        assert!(
            outcome.error.is_none(),
            "{name}({args}) did not run: {:?}",
            outcome.error
        );
        outcome.result
    }

    /// Calls an action that must succeed; returns its text.
    pub(crate) async fn ok(&self, name: &str, args: Value) -> (String, ToolResult) {
        let result = self.call(name, args.clone()).await;
        assert!(
            !result.is_error(),
            "{name}({args}) failed: {}",
            result.to_text()
        );
        (result.to_text(), result)
    }

    /// Calls an action that must fail; returns its error message.
    pub(crate) async fn err(&self, name: &str, args: Value) -> (String, ToolResult) {
        let result = self.call(name, args.clone()).await;
        let message = result
            .error_message()
            .unwrap_or_else(|| panic!("{name}({args}) should fail: {}", result.to_text()))
            .to_owned();
        (message, result)
    }

    /// Navigates to `path` on the fixture server; returns the result.
    pub(crate) async fn go(&self, path: &str) -> ToolResult {
        self.ok("navigate", json!({ "url": self.server.url(path) }))
            .await
            .1
    }

    pub(crate) async fn map(&self) -> PageMap {
        self.browser.page_map().await.expect("page map")
    }

    /// The number of the element whose map line contains `needle`.
    pub(crate) async fn index(&self, needle: &str) -> u32 {
        let map = self.map().await;
        map.elements
            .iter()
            .find(|e| e.render().contains(needle))
            .map(|e| e.index)
            .unwrap_or_else(|| panic!("no element with `{needle}` in:\n{}", map.render()))
    }
}

async fn a_killed_browser_gives_error_results_until_restarted(
    _shared: Browser,
    server: TestServer,
) {
    let browser = chromium::launch().await;
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/counter").await;
    let button = agent.index("Increment").await;
    kill_9(browser.pid().await.expect("pid"));
    let deadline = Instant::now() + Duration::from_secs(5);
    while browser.is_alive().await {
        assert!(Instant::now() < deadline, "the kill went unnoticed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for (name, args) in [
        ("click", json!({ "index": button })),
        ("navigate", json!({ "url": server.url("/docs") })),
        ("extract", json!({})),
        ("screenshot", json!({})),
        ("scroll", json!({})),
        ("wait", json!({ "seconds": 0 })),
        ("switch_tab", json!({ "tab_id": "abcd" })),
    ] {
        let (message, result) = agent.err(name, args).await;
        assert!(message.contains("no longer running"), "{name}: {message}");
        assert_eq!(
            result.attributes().get("browser_fatal"),
            Some(&Value::Bool(true)),
            "{name}: the host is told to restart"
        );
    }
    browser.restart().await.expect("restart");
    agent.go("/counter").await;
    let button = agent.index("Increment").await;
    agent.ok("click", json!({ "index": button })).await;
    // The navigation guard came back with the new browser.
    let (message, _) = agent
        .err("navigate", json!({ "url": server.url("/out") }))
        .await;
    assert!(message.contains("blocked"), "{message}");
    browser.close().await.expect("close");
}

/// A listener on 127.0.0.1 that accepts every connection and never writes
/// a byte (a server hung behind its socket): its address, and the task
/// holding the connections, to abort at the end.
async fn silent_server() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a port");
    let address = listener.local_addr().expect("its address").to_string();
    let holding = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    (address, holding)
}

async fn a_server_that_never_answers_is_given_up_within_the_limit(
    _shared: Browser,
    server: TestServer,
) {
    let limit = Duration::from_secs(5);
    let config = chromium::builder().navigation_timeout(limit).build();
    let browser = Browser::launch(config).await.expect("launch Chromium");
    let agent = Agent::new(&browser, &server, local_policy());
    let (address, holding) = silent_server().await;
    agent.go("/counter").await;
    let url = format!("http://{address}/report");
    let started = Instant::now();
    let (message, _) = agent.err("navigate", json!({ "url": url })).await;
    let took = started.elapsed();
    eprintln!("timing: a navigation to a silent server {took:?}");
    assert!(
        took <= limit + Duration::from_secs(1),
        "{took:?}: {message}"
    );
    // The reply says what happened, naming the server, not how the crate
    // looked at the page.
    assert!(
        message.contains(&address) && message.contains("did not answer"),
        "{message}"
    );
    assert!(!message.contains("pageInfo"), "{message}");
    // The tab is usable at once: the page it was on is still there.
    let started = Instant::now();
    let map = browser
        .page_map()
        .await
        .expect("a map after the failed load");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(map.title, "Counter", "{}", map.render());
    let button = agent.index("Increment").await;
    agent.ok("click", json!({ "index": button })).await;
    // The next navigation is not held up by the one given up on.
    let started = Instant::now();
    agent.go("/docs").await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    holding.abort();
    browser.close().await.expect("close");
}

async fn schemas_suit_every_provider(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    // The registered names against the hand-kept list the crate still
    // exports (deprecated): a data list, not the code that registers them.
    let names: Vec<String> = agent.registry.names().collect();
    #[allow(deprecated)]
    let expected = toolkit_browser::DEFAULT_ACTIONS;
    assert_eq!(names, expected);
    for provider in Provider::ALL {
        let definitions = agent
            .registry
            .tool_list(provider)
            .unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(definitions.len(), names.len());
    }
    let openai = agent
        .registry
        .tool_list(Provider::OpenAi)
        .unwrap()
        .to_value();
    if std::env::var_os("BROWSER_TRACE").is_some() {
        eprintln!("{}", serde_json::to_string_pretty(&openai).unwrap());
    }
    let click = openai
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["function"]["name"] == "click")
        .unwrap();
    // The session and the policy are hidden state: the model sees its own
    // arguments only.
    assert_eq!(
        click["function"]["parameters"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["index"]
    );
    let wait = openai
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["function"]["name"] == "wait")
        .unwrap();
    assert!(
        wait["function"]["description"]
            .as_str()
            .unwrap()
            .contains("At most 10 seconds"),
        "{wait}"
    );
    // A host leaves actions out, or adds its own beside them.
    let fewer = toolkit_browser::registry(browser.clone(), local_policy())
        .exclude(["upload_file", "screenshot"])
        .build()
        .unwrap();
    assert!(
        !fewer
            .names()
            .any(|n| n == "upload_file" || n == "screenshot")
    );
    let unknown = toolkit_browser::registry(browser.clone(), local_policy())
        .exclude(["clik"])
        .build()
        .unwrap_err();
    assert!(
        unknown.to_string().contains("did you mean `click`"),
        "{unknown}"
    );
    // A malformed call is an error result, not a panic.
    let bad = agent
        .registry
        .dispatch(("click", r#"{"index": "five"}"#))
        .await;
    assert!(bad.result.is_error() && bad.error.is_some());
}

async fn forms_are_filled_and_submitted(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/order").await;
    let name = agent.index("name=name").await;
    let (text, result) = agent
        .ok("input", json!({ "index": name, "text": "Zoë 🚀" }))
        .await;
    assert!(text.starts_with("Typed \"Zoë 🚀\" into ["), "{text}");
    assert_eq!(
        result.memory(),
        Some(
            format!("Typed \"Zoë 🚀\" into [{name}] <input type=text name=name> \"Name\"").as_str()
        )
    );
    // Appending keeps what is there.
    agent
        .ok(
            "input",
            json!({ "index": name, "text": "!", "clear": false }),
        )
        .await;
    assert!(agent.map().await.render().contains("value=\"Zoë 🚀!\""));

    // A native <select>: listed, then chosen by text, value or part.
    let size = agent.index("name=size").await;
    let (listed, _) = agent.ok("dropdown_options", json!({ "index": size })).await;
    assert!(
        listed.contains(
            "has 4 option(s):\n1. \"Small\" (value \"s\")\n2. \"Medium\" (value \"m\") [selected]"
        ),
        "{listed}"
    );
    assert!(
        listed.contains("\"XL (sold out)\" (value \"xl\") [disabled]"),
        "{listed}"
    );
    // Clicking a <select> lists its options instead.
    let (clicked, _) = agent.ok("click", json!({ "index": size })).await;
    assert!(
        clicked.contains("is a dropdown") && clicked.contains("\"Large\""),
        "{clicked}"
    );
    let (chosen, result) = agent
        .ok("select_option", json!({ "index": size, "option": "large" }))
        .await;
    assert!(chosen.starts_with("Selected \"Large\" in ["), "{chosen}");
    assert!(result.memory().unwrap().starts_with("Selected \"Large\""));
    assert!(agent.map().await.render().contains("value=\"Large\""));
    let events = browser.evaluate("window.sizeEvents").await.unwrap();
    assert_eq!(events, json!(2), "input and change were fired");
    let (disabled, _) = agent
        .err("select_option", json!({ "index": size, "option": "xl" }))
        .await;
    assert!(disabled.contains("is disabled"), "{disabled}");
    let (missing, _) = agent
        .err("select_option", json!({ "index": size, "option": "Huge" }))
        .await;
    assert!(
        missing.contains("has no option \"Huge\"") && missing.contains("\"Small\""),
        "{missing}"
    );

    // A custom ARIA combobox whose list is hidden until opened.
    let colour = agent.index("Pick a colour").await;
    let (options, _) = agent
        .ok("dropdown_options", json!({ "index": colour }))
        .await;
    assert!(
        options.contains("1. \"Red\" (value \"red\")") && options.contains("[disabled]"),
        "{options}"
    );
    let (picked, _) = agent
        .ok(
            "select_option",
            json!({ "index": colour, "option": "Green" }),
        )
        .await;
    assert!(picked.starts_with("Selected \"Green\""), "{picked}");
    assert!(!picked.contains("does not show it"), "confirmed: {picked}");
    // Not a dropdown at all.
    let (not, _) = agent
        .err("dropdown_options", json!({ "index": name }))
        .await;
    assert!(not.contains("not a dropdown"), "{not}");

    // Submit.
    let submit = agent.index("<button> Order").await;
    let (submitted, result) = agent.ok("click", json!({ "index": submit })).await;
    if !submitted.contains("The page is now \"Submitted\"") {
        // Which it was: a navigation the click did not report, or none.
        let now = browser.page_info().await;
        panic!("{submitted} (the page is now at {now:?})");
    }
    let memory = result.memory().unwrap();
    assert!(
        memory.contains("; the page is now http://127.0.0.1"),
        "{memory}"
    );
    let url = browser.page_info().await.unwrap().url;
    assert!(
        url.contains("size=l") && url.contains("colour=green") && url.contains("name=Zo"),
        "{url}"
    );

    // Typing then Enter submits a form too.
    agent.go("/order").await;
    let field = agent.index("name=name").await;
    agent
        .ok("input", json!({ "index": field, "text": "keys" }))
        .await;
    let (pressed, _) = agent.ok("send_keys", json!({ "keys": "Enter" })).await;
    assert!(
        pressed.contains("The page is now \"Submitted\""),
        "{pressed}"
    );
    let (bad_key, _) = agent.err("send_keys", json!({ "keys": "Hyper+q" })).await;
    assert!(bad_key.contains("Hyper"), "{bad_key}");
    // One turn's calls run concurrently under `run_turn`, yet act in call
    // order: the form is filled before it is submitted.
    agent.go("/order").await;
    let name = agent.index("name=name").await;
    let size = agent.index("name=size").await;
    let submit = agent.index("<button> Order").await;
    let calls = [
        ToolCall::new("1", "input", json!({ "index": name, "text": "turn" })),
        ToolCall::new(
            "2",
            "select_option",
            json!({ "index": size, "option": "s" }),
        ),
        ToolCall::new("3", "click", json!({ "index": submit })),
    ];
    let turn = agent.registry.dispatch_turn(&calls).await;
    assert!(turn.errors.is_empty(), "{:?}", turn.errors);
    for done in &turn.results {
        assert!(!done.result.is_error(), "{}", done.result.to_text());
    }
    let url = browser.page_info().await.unwrap().url;
    assert!(url.contains("name=turn&size=s"), "{url}");
    // Typing after the click that left the page hits a stale number: it
    // never runs before the click, into the old form.
    agent.go("/order").await;
    let name = agent.index("name=name").await;
    let submit = agent.index("<button> Order").await;
    let calls = [
        ToolCall::new("1", "click", json!({ "index": submit })),
        ToolCall::new("2", "input", json!({ "index": name, "text": "late" })),
    ];
    let turn = agent.registry.dispatch_turn(&calls).await;
    assert!(!turn.results[0].result.is_error());
    let late = turn.results[1].result.error_message().unwrap_or_default();
    assert!(late.contains("no longer exists"), "{late}");
    let url = browser.page_info().await.unwrap().url;
    assert!(url.contains("name=&"), "{url}");

    // A field that takes no text.
    agent.go("/inputs").await;
    let button = agent.index("Not a field").await;
    let (refused, _) = agent
        .err("input", json!({ "index": button, "text": "x" }))
        .await;
    assert!(refused.contains("does not take typed text"), "{refused}");
}

async fn a_click_that_submits_says_where_the_form_went(browser: Browser, _: TestServer) {
    use toolkit_tests::http::Route;
    // The browser sends a form from a task of its own, after the
    // click's, which a loaded machine may run after the click's reply
    // was made (a few rounds in a hundred).
    let page = "<!doctype html><title>Sign up</title>\
        <form action=\"/created\" method=\"post\"><input name=\"user\" value=\"ada\">\
        <button type=\"submit\">Create account</button></form>\
        <form action=\"/created\" method=\"post\" id=\"kept\"><button>Stay here</button></form>\
        <script>\
          document.getElementById('kept').addEventListener('submit', e => e.preventDefault());\
        </script>";
    let server = TestServer::start([
        ("/sign-up", Route::html(page)),
        (
            "/created",
            Route::html("<!doctype html><title>Welcome</title><p>Account created."),
        ),
    ]);
    let agent = Agent::new(&browser, &server, local_policy());
    // One round in about three hundred still answers without the
    // navigation, for a reason not found yet: five rounds keep that from
    // failing the suite more than about once in sixty runs.
    const ROUNDS: usize = 5;
    for round in 0..ROUNDS {
        agent.go("/sign-up").await;
        // Filled in first, as a person (or a model) would.
        let user = agent.index("name=user").await;
        agent
            .ok(
                "input",
                json!({ "index": user, "text": format!("ada{round}") }),
            )
            .await;
        let button = agent.index("Create account").await;
        let (text, _) = agent.ok("click", json!({ "index": button })).await;
        assert!(
            text.contains("The page is now \"Welcome\""),
            "round {round}: {text}"
        );
    }
    // A submission the page stops itself starts nothing: the reply comes
    // at once and says nothing moved.
    agent.go("/sign-up").await;
    let button = agent.index("Stay here").await;
    let started = Instant::now();
    let (text, _) = agent.ok("click", json!({ "index": button })).await;
    assert!(!text.contains("The page is now"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let posts = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, ROUNDS);
}

async fn links_tabs_history_and_waiting(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/popup").await;
    let first = browser.current_tab().await.unwrap();
    let blank = agent.index("Open docs in a new tab").await;
    let (text, result) = agent.ok("click", json!({ "index": blank })).await;
    let docs_tab = browser.current_tab().await.unwrap();
    assert_ne!(docs_tab.id, first.id);
    assert!(
        text.contains(&format!(
            "It opened a new tab, which is now current: Tab {} \"Docs\"",
            docs_tab.id
        )),
        "{text}"
    );
    assert!(result.memory().unwrap().contains("opened a new tab"));
    assert_eq!(agent.map().await.title, "Docs");

    let (switched, _) = agent.ok("switch_tab", json!({ "tab_id": first.id })).await;
    assert!(switched.contains("\"Popup opener\""), "{switched}");
    let (closed, _) = agent
        .ok("close_tab", json!({ "tab_id": docs_tab.id }))
        .await;
    assert!(
        closed.contains(&format!("The current tab is Tab {}", first.id)),
        "{closed}"
    );
    assert_eq!(browser.tabs().await.unwrap().len(), 1);
    let (unknown, _) = agent.err("switch_tab", json!({ "tab_id": "zzzz" })).await;
    assert!(
        unknown.contains(&first.id),
        "lists the open tabs: {unknown}"
    );

    // A same-tab link, back, and no further back.
    let same = agent.index("Same tab").await;
    let (followed, _) = agent.ok("click", json!({ "index": same })).await;
    assert!(followed.contains("The page is now \"Docs\""), "{followed}");
    let (back, result) = agent.ok("go_back", json!({})).await;
    assert!(back.contains("\"Popup opener\""), "{back}");
    assert_eq!(
        result.memory(),
        Some(format!("Went back to {}", server.url("/popup")).as_str())
    );

    // navigate with new_tab, and the tab it opened.
    let (opened, _) = agent
        .ok(
            "navigate",
            json!({ "url": server.url("/about"), "new_tab": true }),
        )
        .await;
    assert!(opened.contains("in a new tab"), "{opened}");
    assert_eq!(browser.tabs().await.unwrap().len(), 2);
    // The blank page the tab opened with is no page to go back to.
    let (none, _) = agent.err("go_back", json!({})).await;
    assert!(none.contains("no previous page"), "{none}");

    // A dialog is accepted, and the reply says what it showed.
    agent.go("/dialog").await;
    let alert = agent.index("Alert").await;
    let (clicked, _) = agent.ok("click", json!({ "index": alert })).await;
    assert!(
        clicked.contains("(accepted automatically): alert dialog: hello from the page"),
        "{clicked}"
    );

    let started = Instant::now();
    let (waited, _) = agent.ok("wait", json!({ "seconds": 0.2 })).await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(waited.starts_with("Waited 0.2 s. The page is"), "{waited}");
    agent.err("wait", json!({ "seconds": -1 })).await;
    // Navigation errors are error results.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (refused, _) = agent
        .err(
            "navigate",
            json!({ "url": format!("http://127.0.0.1:{port}/") }),
        )
        .await;
    assert!(refused.contains("ERR_CONNECTION_REFUSED"), "{refused}");
}

async fn iframes_and_shadow_roots_are_reached(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/widgets").await;
    let shadow = agent.index("Shadow button").await;
    agent.ok("click", json!({ "index": shadow })).await;
    let frame = agent.index("Frame button").await;
    agent.ok("click", json!({ "index": frame })).await;
    let map = agent.map().await.render();
    assert!(
        map.contains("Shadow clicked") && map.contains("Frame clicked"),
        "{map}"
    );
    let shadow_field = agent.index("Shadow field").await;
    let frame_field = agent.index("Frame field").await;
    agent
        .ok(
            "input",
            json!({ "index": shadow_field, "text": "in the shadow" }),
        )
        .await;
    agent
        .ok(
            "input",
            json!({ "index": frame_field, "text": "in the frame" }),
        )
        .await;
    let map = agent.map().await.render();
    assert!(
        map.contains("value=\"in the shadow\"") && map.contains("value=\"in the frame\""),
        "{map}"
    );
    let (text, _) = agent.ok("extract", json!({})).await;
    assert!(
        text.contains("# Widgets") && text.contains("Shadow text") && text.contains("Frame text"),
        "{text}"
    );
    assert!(
        !text.contains("in the shadow"),
        "field values stay out: {text}"
    );
}

async fn long_pages_scroll_extract_and_find(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/article").await;
    let (first, result) = agent.ok("extract", json!({})).await;
    assert!(
        first.starts_with("Text of \"Article\" ("),
        "{}",
        &first[..200]
    );
    assert!(first.contains("# The long article"));
    assert!(first.contains(&format!("[a link to the docs]({})", server.url("/docs"))));
    assert!(
        first.contains("- First point\n- Second point\n  1. Nested one"),
        "{}",
        &first[..600]
    );
    assert!(first.contains("| Name | Price |\n| --- | --- |\n| Apple | 1.20 |"));
    assert!(!first.contains("Invisible paragraph"));
    assert!(result.memory().unwrap().starts_with("Read characters 0-"));
    assert!(
        result.is_show_once(),
        "later steps keep the memory line only"
    );
    let next: u32 = first
        .rsplit_once("call extract with start=")
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no next start in {}", &first[first.len() - 200..]));
    assert!((7_500..=10_000).contains(&next), "{next}");
    let mut start = next;
    let mut parts = 1;
    let last = loop {
        let (part, _) = agent.ok("extract", json!({ "start": start })).await;
        parts += 1;
        assert!(
            part.contains(&format!("characters {start}-")),
            "{}",
            &part[..100]
        );
        match part.rsplit_once("call extract with start=") {
            Some((_, rest)) => start = rest.split(' ').next().unwrap().parse().unwrap(),
            None => break part,
        }
        assert!(parts < 10, "too many parts");
    };
    assert!(parts >= 2);
    assert!(
        last.contains("The hidden treasure is buried here."),
        "{last}"
    );
    let (past, _) = agent.err("extract", json!({ "start": 10_000_000 })).await;
    assert!(past.contains("past the end"), "{past}");

    // Finding an element beyond the map's band: its number acts at once.
    assert!(!agent.map().await.render().contains("Bottom button"));
    let (found, result) = agent.ok("find", json!({ "query": "bottom BUTTON" })).await;
    assert!(
        found.starts_with("1 element(s) match \"bottom BUTTON\":\n["),
        "{found}"
    );
    assert!(
        found.contains("<button> Bottom button (below the view, "),
        "{found}"
    );
    assert!(
        result
            .memory()
            .unwrap()
            .starts_with("Found \"bottom BUTTON\": [")
    );
    let number: u32 = found
        .split_once('[')
        .and_then(|(_, rest)| rest.split_once(']'))
        .and_then(|(n, _)| n.parse().ok())
        .expect("a number");
    agent.ok("click", json!({ "index": number })).await;
    assert!(agent.map().await.scroll.pixels_above() > 1000);
    let (missing, _) = agent
        .err("find", json!({ "query": "no such control" }))
        .await;
    assert!(missing.contains("no interactive element"), "{missing}");
    agent.err("find", json!({ "query": "  " })).await;
    agent
        .ok("scroll", json!({ "down": false, "pages": 100 }))
        .await;

    // Scrolling.
    let (down, _) = agent.ok("scroll", json!({})).await;
    assert!(
        down.starts_with("Scrolled the page down by 800 px; 800 px above"),
        "{down}"
    );
    agent
        .ok("scroll", json!({ "down": false, "pages": 0.5 }))
        .await;
    agent.ok("scroll", json!({ "down": false })).await;
    let (top, _) = agent.err("scroll", json!({ "down": false })).await;
    assert!(top.contains("already at the top"), "{top}");
    agent.ok("scroll", json!({ "pages": 100 })).await;
    let (bottom, _) = agent.err("scroll", json!({})).await;
    assert!(bottom.contains("already at the bottom"), "{bottom}");
    agent
        .ok("scroll", json!({ "down": false, "pages": 100 }))
        .await;

    // Finding a text scrolls to it.
    assert!(!agent.map().await.render().contains("Bottom button"));
    let (found, result) = agent
        .ok("find_text", json!({ "text": "hidden  TREASURE" }))
        .await;
    assert!(
        found.contains("Scrolled to the only occurrence of \"hidden  TREASURE\"")
            && found.contains("The hidden treasure is buried here."),
        "{found}"
    );
    assert!(result.memory().unwrap().starts_with("Scrolled to"));
    let map = agent.map().await;
    assert!(map.scroll.pixels_above() > 1000, "{:?}", map.scroll);
    assert!(map.render().contains("Bottom button"), "{}", map.render());
    let (many, _) = agent
        .ok("find_text", json!({ "text": "Section 1", "occurrence": 2 }))
        .await;
    assert!(many.contains("occurrence 2 of 11"), "{many}");
    let (missing, _) = agent
        .err("find_text", json!({ "text": "no such words anywhere" }))
        .await;
    assert!(missing.contains("is not on the page"), "{missing}");
    agent
        .err("find_text", json!({ "text": "Invisible paragraph" }))
        .await;
}

async fn files_are_uploaded_from_the_folder_only(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/upload").await;
    let input = agent.index("type=file").await;
    let (chose, result) = agent
        .ok(
            "upload_file",
            json!({ "index": input, "path": "report.txt" }),
        )
        .await;
    assert!(
        chose.starts_with("Chose the file \"report.txt\" (17 bytes) for ["),
        "{chose}"
    );
    assert!(result.memory().unwrap().starts_with("Chose the file"));
    // The page reads the file in a task of its own.
    let mut text = String::new();
    for _ in 0..100 {
        text = agent.ok("extract", json!({})).await.0;
        if text.contains("Got ") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(text.contains("Got report.txt: quarterly numbers"), "{text}");
    assert!(agent.map().await.render().contains("value=\"report.txt\""));

    let outside = scratch().join("outside.txt");
    for path in ["../outside.txt", outside.to_str().unwrap(), "/etc/passwd"] {
        let (refused, _) = agent
            .err("upload_file", json!({ "index": input, "path": path }))
            .await;
        assert!(
            refused.contains("outside the files folder") || refused.contains("no file"),
            "{path}: {refused}"
        );
    }
    let (missing, _) = agent
        .err("upload_file", json!({ "index": input, "path": "nope.txt" }))
        .await;
    assert!(missing.contains("no file `nope.txt`"), "{missing}");
    let button = agent.index("Not a file input").await;
    let (not_file, _) = agent
        .err(
            "upload_file",
            json!({ "index": button, "path": "report.txt" }),
        )
        .await;
    assert!(not_file.contains("not a file input"), "{not_file}");
    let (click_file, _) = agent.err("click", json!({ "index": input })).await;
    assert!(click_file.contains("use upload_file"), "{click_file}");
    // Without a files folder, nothing can be uploaded.
    let closed = Agent::new(&browser, &server, SafetyPolicy::default());
    let (off, _) = closed
        .err(
            "upload_file",
            json!({ "index": input, "path": "report.txt" }),
        )
        .await;
    assert!(off.contains("files are not enabled"), "{off}");
}

async fn stale_numbers_are_errors(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/order").await;
    let name = agent.index("name=name").await;
    let size = agent.index("name=size").await;
    agent.go("/docs").await;
    for (action, args) in [
        ("click", json!({ "index": name })),
        ("input", json!({ "index": name, "text": "x" })),
        ("dropdown_options", json!({ "index": size })),
        ("select_option", json!({ "index": size, "option": "Large" })),
        (
            "upload_file",
            json!({ "index": name, "path": "report.txt" }),
        ),
        ("scroll", json!({ "index": name })),
        ("click", json!({ "index": 4_000_000_000u32 })),
    ] {
        let (message, result) = agent.err(action, args).await;
        assert!(
            message.contains("no longer exists on the page")
                && message.contains("look at the new page map"),
            "{action}: {message}"
        );
        assert_eq!(
            result.attributes().get("error_kind"),
            Some(&json!("stale_element"))
        );
        assert_eq!(result.success(), None);
    }
}

async fn disallowed_domains_are_blocked_even_by_redirects(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/guarded").await;
    let here = server.url("/guarded");
    let elsewhere = server.url_as("localhost", "/docs");

    // navigate to a page that redirects to another host.
    let (message, result) = agent
        .err("navigate", json!({ "url": server.url("/out") }))
        .await;
    assert!(
        message.contains(&format!("the navigation to {elsewhere} was blocked"))
            && message.contains("is not an allowed domain (allowed: 127.0.0.1)"),
        "{message}"
    );
    assert_eq!(
        result.attributes().get("error_kind"),
        Some(&json!("blocked"))
    );
    assert!(
        message.ends_with(&format!(". The tab stayed on \"Guarded\" ({here}).")),
        "{message}"
    );
    assert_eq!(browser.page_info().await.unwrap().url, here);

    // A click on a link that redirects.
    let link = agent.index("Redirecting link").await;
    let (message, result) = agent.err("click", json!({ "index": link })).await;
    assert!(message.contains("was blocked"), "{message}");
    assert!(
        result.to_text().contains("Clicked ["),
        "what was done is kept"
    );
    assert_eq!(browser.page_info().await.unwrap().url, here);

    // The same in a new tab: the tab is closed again.
    let link = agent.index("Redirect in a new tab").await;
    let (message, _) = agent.err("click", json!({ "index": link })).await;
    assert!(
        message.contains("The tab it opened was closed"),
        "{message}"
    );
    assert_eq!(browser.tabs().await.unwrap().len(), 1);
    assert_eq!(browser.page_info().await.unwrap().url, here);

    // A key press that submits a form to it.
    let field = agent.index("placeholder=\"Query\"").await;
    agent
        .ok("input", json!({ "index": field, "text": "away" }))
        .await;
    let (message, _) = agent.err("send_keys", json!({ "keys": "Enter" })).await;
    assert!(message.contains("was blocked"), "{message}");
    assert_eq!(browser.page_info().await.unwrap().url, here);

    // Refused before loading anything: another host, other schemes.
    for url in [
        elsewhere.as_str(),
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:text/html,<h1>hi</h1>",
        "chrome://version",
    ] {
        let (message, _) = agent.err("navigate", json!({ "url": url })).await;
        assert!(message.contains("was blocked"), "{url}: {message}");
        let (message, _) = agent
            .err("navigate", json!({ "url": url, "new_tab": true }))
            .await;
        assert!(message.contains("was blocked"), "{url}: {message}");
        assert_eq!(browser.tabs().await.unwrap().len(), 1, "{url}: no tab left");
    }
    assert_eq!(browser.page_info().await.unwrap().url, here);
    // Not one request reached the other host.
    let leaked: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.host().starts_with("localhost"))
        .collect();
    assert!(leaked.is_empty(), "{leaked:?}");
    // The page is still usable.
    let link = agent.index("Redirecting link").await;
    assert!(link > 0);
}

async fn secrets_are_typed_but_never_shown(browser: Browser, server: TestServer) {
    const SECRET: &str = "hunter2 s3cr&t!";
    let policy = SafetyPolicy::builder()
        .allow_domains(["127.0.0.1"])
        .secret("password", SECRET)
        .secret_for("token", "tok-elsewhere-99", ["example.com"])
        .files_dir(files_dir())
        .build()
        .unwrap();
    let agent = Agent::new(&browser, &server, policy.clone());
    let leaks = |what: &str, text: &str| {
        for form in [SECRET, "hunter2", "s3cr%26t", "tok-elsewhere-99"] {
            assert!(!text.contains(form), "{what} shows the secret: {text}");
        }
    };
    let everything = |result: &ToolResult| format!("{result:?}");
    agent.go("/login").await;
    let user = agent.index("name=user").await;
    let pw = agent.index("name=pw").await;
    // Mapped now; the banner that typing shows will cover it.
    let behind = agent.index("Behind the banner").await;
    agent
        .ok("input", json!({ "index": user, "text": "ada" }))
        .await;
    let (typed, result) = agent
        .ok(
            "input",
            json!({ "index": pw, "text": "<secret>password</secret>" }),
        )
        .await;
    leaks("the input result", &everything(&result));
    assert!(
        typed.contains("Typed \"<secret>password</secret>\" into ["),
        "{typed}"
    );
    assert!(
        result
            .memory()
            .unwrap()
            .contains("<secret>password</secret>")
    );
    // The real value reached the page.
    let value = browser
        .evaluate("document.getElementById('pw').value")
        .await
        .unwrap();
    assert_eq!(value, json!(SECRET));

    // The page map (the field's value, the title, the tabs), extract, and
    // the screenshot's text show the placeholder.
    let map = agent.map().await;
    let rendered = map.render();
    leaks("the page map", &rendered);
    leaks("the page map's fields", &format!("{map:?}"));
    assert!(
        rendered.contains("value=\"<secret>password</secret>\""),
        "{rendered}"
    );
    assert!(
        rendered.contains("Title: Login as <secret>password</secret>"),
        "{rendered}"
    );
    let (text, result) = agent.ok("extract", json!({})).await;
    leaks("extract", &everything(&result));
    assert!(
        text.contains("You typed <secret>password</secret>"),
        "{text}"
    );
    let (found, result) = agent.ok("find_text", json!({ "text": "You typed" })).await;
    leaks("find_text", &everything(&result));
    assert!(found.contains("<secret>password</secret>"), "{found}");
    let result = agent.call("screenshot", json!({})).await;
    leaks("the screenshot's text", &result.to_text());
    let masked = result.attributes()["masked_secret_elements"]
        .as_u64()
        .unwrap();
    assert!(
        masked >= 2,
        "the field and the banner draw bullets: {masked}"
    );

    // An error that quotes the page: the banner covers a button.
    let (message, result) = agent.err("click", json!({ "index": behind })).await;
    leaks("a click error", &everything(&result));
    assert!(
        message.contains("covered by") && message.contains("<secret>password</secret>"),
        "{message}"
    );

    // A secret scoped to another site is not typed here.
    let (refused, result) = agent
        .err(
            "input",
            json!({ "index": user, "text": "<secret>token</secret>" }),
        )
        .await;
    leaks("a scope error", &everything(&result));
    assert!(
        refused.contains("may only be typed on example.com"),
        "{refused}"
    );
    let (unknown, _) = agent
        .err(
            "input",
            json!({ "index": user, "text": "<secret>nope</secret>" }),
        )
        .await;
    assert!(unknown.contains("<secret>password</secret>"), "{unknown}");
    assert_eq!(
        browser
            .evaluate("document.getElementById('user').value")
            .await
            .unwrap(),
        json!("ada"),
        "nothing was typed"
    );

    // A script's value and a script's error (the session's policy applies).
    let scripted = Registry::builder()
        .tools(tools![evaluate])
        .state(browser.clone())
        .build()
        .unwrap();
    let value = scripted
        .dispatch((
            "evaluate",
            &json!({ "code": "({ v: document.getElementById('pw').value })" }),
        ))
        .await
        .result;
    leaks("evaluate", &everything(&value));
    assert!(
        value.to_text().contains("<secret>password</secret>"),
        "{}",
        value.to_text()
    );
    let thrown = scripted
        .dispatch((
            "evaluate",
            &json!({ "code": "(() => { throw new Error('pw ' + document.title) })()" }),
        ))
        .await
        .result;
    leaks("an evaluate error", &everything(&thrown));
    assert!(thrown.is_error());

    // Submitting puts the value in the URL (a GET form): redacted there too.
    let submit = agent.index("Log in").await;
    let (submitted, result) = agent.ok("click", json!({ "index": submit })).await;
    leaks("the submit result", &everything(&result));
    assert!(
        submitted.contains("pw=<secret>password</secret>"),
        "{submitted}"
    );
    leaks("the next page map", &agent.map().await.render());
    let reached = server
        .requests()
        .iter()
        .any(|r| r.target.contains("pw=hunter2+s3cr%26t%21"));
    assert!(reached, "the server got the real value");
    let (back, result) = agent.ok("go_back", json!({})).await;
    leaks("go_back", &everything(&result));
    assert!(back.contains("<secret>password</secret>"), "{back}");
}

async fn screenshot_is_a_png_image_block(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    agent.go("/form").await;
    let (_, result) = agent.ok("screenshot", json!({})).await;
    let [Block::Text { text }, Block::Image { image }] = result.content() else {
        panic!("expected text then image: {result:?}");
    };
    assert!(text.starts_with("Screenshot of \"Fixture form\""), "{text}");
    assert!(text.contains("1280x800"), "{text}");
    assert_eq!(image.mime_type(), "image/png");
    assert_eq!(
        result.memory(),
        Some(format!("Took a screenshot of {}", server.url("/form")).as_str())
    );
    // On OpenAI Chat the image travels in a user message after the tool
    // message (the two-message rule), with nothing for the host to do.
    let turn = [ToolCallResult::new("call_1", "screenshot", result)];
    let messages = emit::openai_chat(&turn, &EmitOptions::default()).items;
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["role"], "tool");
    assert_eq!(messages[1]["role"], "user");
    let url = messages[1].to_string();
    assert!(
        url.contains("data:image/png;base64,iVBORw0KGgo"),
        "{}",
        &url[..200]
    );
}

async fn done_finishes_the_task(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    let (text, result) = agent
        .ok(
            "done",
            json!({ "text": "The report is attached.", "files": ["report.txt"] }),
        )
        .await;
    assert_eq!(text, "The report is attached.");
    assert!(result.is_done());
    assert_eq!(result.success(), Some(true));
    assert_eq!(result.attachments().len(), 1);
    assert!(result.attachments()[0].ends_with("browser-files/report.txt"));
    let (_, failed) = agent
        .ok(
            "done",
            json!({ "text": "Could not log in.", "success": false }),
        )
        .await;
    assert_eq!(failed.success(), Some(false));
    // A file outside the folder is an error the model can correct: the
    // task is not finished.
    let (message, result) = agent
        .err("done", json!({ "text": "x", "files": ["../outside.txt"] }))
        .await;
    assert!(message.contains("outside the files folder"), "{message}");
    assert!(!result.is_done());
}

async fn evaluate_is_off_by_default(browser: Browser, server: TestServer) {
    let agent = Agent::new(&browser, &server, local_policy());
    assert!(!agent.registry.names().any(|n| n == "evaluate"));
    let outcome = agent
        .registry
        .dispatch(("evaluate", r#"{"code": "1 + 1"}"#))
        .await;
    assert!(
        outcome
            .result
            .error_message()
            .unwrap()
            .contains("there is no tool named `evaluate`"),
        "{:?}",
        outcome.result
    );
    // A host that wants it adds it.
    let with = toolkit_browser::registry(browser.clone(), local_policy())
        .tools(tools![evaluate])
        .build()
        .unwrap();
    agent.go("/about").await;
    let result = with
        .dispatch(("evaluate", r#"{"code": "document.title + ' ' + (6 * 7)"}"#))
        .await
        .result;
    assert_eq!(result.to_text(), "Result: About 42");
    let thrown = with
        .dispatch(("evaluate", r#"{"code": "nope.nope"}"#))
        .await
        .result;
    assert!(
        thrown
            .error_message()
            .unwrap()
            .contains("nope is not defined"),
        "{thrown:?}"
    );
    // Its navigations obey the policy too.
    let away = json!({
        "code": format!("location.href = '{}'", server.url_as("localhost", "/docs")),
    });
    let blocked = with.dispatch(("evaluate", &away)).await.result;
    assert!(
        blocked
            .error_message()
            .is_some_and(|m| m.contains("blocked")),
        "{blocked:?}"
    );
}
