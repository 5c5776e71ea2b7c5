//! The safety promises of the browser actions, attacked as a page would:
//! the navigation guard against large form posts, speculation rules,
//! `javascript:` links and frames; secrets in every form a page can echo
//! them in; uploads swapped after the check; truthful replies (refused
//! pages, crashed renderers); and awkward real-page markup. Only 127.0.0.1
//! is allowed (the other site is `localhost`, the same server under
//! another name).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use toolkit_browser::{Browser, SafetyPolicy};
use toolkit_core::ToolResult;
use toolkit_tests::http::TestServer;

use crate::actions::Agent;
use crate::support::chromium::kill_9;
use crate::support::pages::{html_escape, percent_encode_all, simple_upper};
use crate::support::runner::scenarios;
use crate::support::scratch;

scenarios![
    a_post_larger_than_a_devtools_message_is_refused,
    a_large_post_into_a_frame_leaves_the_guard_standing,
    speculation_rules_cannot_reach_another_site,
    javascript_links_and_frames_are_stopped_and_reported,
    pages_the_browser_refuses_are_reported_as_refused,
    a_crashed_renderer_is_reported_at_once,
    uploads_send_the_file_that_was_checked,
    secrets_never_leave_in_any_form,
    awkward_pages_are_read_and_mapped,
    a_page_leaving_between_actions_is_said_by_the_next_action,
    a_secret_is_typed_only_on_its_sites_even_in_a_frame,
    a_frame_of_a_site_no_longer_allowed_is_neither_mapped_nor_reached,
    other_ways_to_another_site_are_stopped,
    a_renderer_killed_during_an_action_ends_it_at_once,
    urls_of_other_schemes_are_refused_before_loading,
    a_tab_left_on_an_error_page_goes_back_or_is_replaced,
    a_failed_load_keeps_the_tab_its_history_and_its_form,
    // A browser of its own, which it kills.
    a_wait_ends_when_the_browser_dies,
];

fn policy() -> SafetyPolicy {
    policy_with(SafetyPolicy::builder())
}

fn policy_with(builder: toolkit_browser::SafetyPolicyBuilder) -> SafetyPolicy {
    builder
        .allow_domains(["127.0.0.1"])
        .files_dir(files_dir())
        .build()
        .expect("a valid policy")
}

/// The files folder (`report.txt` inside), and `outside.txt` beside it.
fn files_dir() -> PathBuf {
    let dir = scratch().join("safety-files");
    std::fs::create_dir_all(&dir).expect("create the files folder");
    dir
}

/// Calls the browser actions, and `evaluate`, through a registry, as a
/// model would.
struct Model {
    agent: Agent,
    browser: Browser,
    server: TestServer,
}

impl Model {
    fn new(browser: &Browser, server: &TestServer, policy: SafetyPolicy) -> Self {
        let registry = toolkit_browser::registry(browser.clone(), policy)
            .tools(toolkit_core::tools![toolkit_browser::actions::evaluate]);
        let agent = Agent::with_registry(browser, server, registry);
        Self {
            browser: agent.browser.clone(),
            server: agent.server.clone(),
            agent,
        }
    }

    async fn call(&self, name: &str, args: Value) -> ToolResult {
        self.agent.call(name, args).await
    }

    async fn ok(&self, name: &str, args: Value) -> ToolResult {
        self.agent.ok(name, args).await.1
    }

    async fn err(&self, name: &str, args: Value) -> (String, ToolResult) {
        self.agent.err(name, args).await
    }

    async fn go(&self, path: &str) -> ToolResult {
        self.agent.go(path).await
    }

    async fn index(&self, needle: &str) -> u32 {
        self.agent.index(needle).await
    }

    async fn url(&self) -> String {
        self.browser.page_info().await.expect("page info").url
    }

    async fn marker(&self) -> Value {
        self.browser
            .evaluate("window.marker || null")
            .await
            .expect("read the marker")
    }

    /// Requests that reached the other site (`localhost`).
    fn leaked(&self) -> Vec<String> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.host().starts_with("localhost"))
            .map(|r| r.target)
            .collect()
    }
}

async fn a_post_larger_than_a_devtools_message_is_refused(browser: Browser, server: TestServer) {
    let model = Model::new(&browser, &server, policy());
    model.go("/bigpost").await;
    let here = model.url().await;
    let send = model.index("Send the big form").await;
    let (message, result) = model.err("click", json!({ "index": send })).await;
    assert!(message.contains("was blocked"), "{message}");
    assert!(message.contains("The tab stayed on"), "{message}");
    assert!(
        result.to_text().contains("Clicked ["),
        "{}",
        result.to_text()
    );
    assert_eq!(model.url().await, here, "the tab stays where it was");
    assert_eq!(
        model.marker().await,
        json!("still here"),
        "the page was not unloaded"
    );
    assert!(model.leaked().is_empty(), "{:?}", model.leaked());
}

async fn a_large_post_into_a_frame_leaves_the_guard_standing(browser: Browser, server: TestServer) {
    let model = Model::new(&browser, &server, policy());
    // 8 MiB into a frame of the allowed site: it goes through, and the
    // guard is still there for what follows, with no action in between.
    model.go("/bigpost-frame").await;
    let posts_before = server
        .requests()
        .iter()
        .filter(|r| r.target == "/sink")
        .count();
    let posted = || {
        server
            .requests()
            .iter()
            .filter(|r| r.target == "/sink")
            .count()
    };
    browser
        .evaluate("document.getElementById('big').submit(); 1")
        .await
        .expect("submit");
    // Slow on a busy machine: 8 MiB through the guard and the server.
    let deadline = Instant::now() + Duration::from_secs(30);
    while posted() == posts_before && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(posted(), posts_before + 1, "the allowed post arrived");
    // Then the page leaves on its own, with no action in between.
    browser
        .evaluate(
            "setTimeout(() => { location.href = document.getElementById('away').href }, 300); 1",
        )
        .await
        .expect("leave");
    // Long enough for a 300 ms timer and the guard on a loaded machine.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(model.leaked().is_empty(), "{:?}", model.leaked());
    assert!(
        model.url().await.ends_with("/bigpost-frame"),
        "{}",
        model.url().await
    );
    // No action caused it: the next one says so, and is no error for it.
    let waited = model.ok("wait", json!({ "seconds": 0 })).await.to_text();
    assert!(
        waited.contains("the page tried on its own") && waited.contains("/landed"),
        "{waited}"
    );

    // 8 MiB out of the allowed site, into a frame: stopped, and said.
    model.go("/bigpost-frame-out").await;
    let send = model.index("Send the big form").await;
    let clicked = model.ok("click", json!({ "index": send })).await;
    assert!(
        clicked.to_text().contains("tried to load in a frame"),
        "{}",
        clicked.to_text()
    );
    assert!(model.leaked().is_empty(), "{:?}", model.leaked());
}

async fn speculation_rules_cannot_reach_another_site(browser: Browser, server: TestServer) {
    let model = Model::new(&browser, &server, policy());
    for path in ["/spec-prefetch", "/spec-prerender"] {
        model.go(path).await;
        // Chromium starts speculative loads shortly after the page loads.
        let waited = model.ok("wait", json!({ "seconds": 1.5 })).await;
        assert!(model.leaked().is_empty(), "{path}: {:?}", model.leaked());
        let _ = waited;
        let link = model.index("link").await;
        let (message, _) = model.err("click", json!({ "index": link })).await;
        assert!(message.contains("was blocked"), "{path}: {message}");
        assert!(
            model.url().await.ends_with(path),
            "{path}: {}",
            model.url().await
        );
        assert!(model.leaked().is_empty(), "{path}: {:?}", model.leaked());
    }
}

async fn javascript_links_and_frames_are_stopped_and_reported(
    browser: Browser,
    server: TestServer,
) {
    let model = Model::new(&browser, &server, policy());
    model.go("/js-link").await;
    let link = model.index("Script link").await;
    // The click that caused the block reports it, not the next action.
    let (message, _) = model.err("click", json!({ "index": link })).await;
    assert!(message.contains("was blocked"), "{message}");
    assert!(model.url().await.ends_with("/js-link"));
    assert_eq!(model.marker().await, json!("still here"));
    let docs = model.go("/docs").await;
    assert!(
        docs.to_text().starts_with("Opened \"Docs\""),
        "{}",
        docs.to_text()
    );

    // A frame whose `javascript:` source sends it to the other site.
    let opened = model.go("/js-frame").await;
    assert!(
        opened.to_text().contains("tried to load in a frame"),
        "{}",
        opened.to_text()
    );
    assert!(model.leaked().is_empty(), "{:?}", model.leaked());
}

async fn pages_the_browser_refuses_are_reported_as_refused(browser: Browser, server: TestServer) {
    let model = Model::new(&browser, &server, policy());
    model.go("/docs").await;
    for url in ["about:version", "about:settings"] {
        let (message, _) = model.err("navigate", json!({ "url": url })).await;
        assert!(message.contains("browser's own pages"), "{url}: {message}");
        assert!(model.url().await.ends_with("/docs"), "{url}");
    }
    let blank = model.ok("navigate", json!({ "url": "about:blank" })).await;
    assert!(
        blank.to_text().contains("about:blank"),
        "{}",
        blank.to_text()
    );
    // With `about:` allowed, the reply says where the tab really is.
    let lax = Model::new(
        &browser,
        &server,
        policy_with(SafetyPolicy::builder().allow_scheme("about")),
    );
    let result = lax
        .call("navigate", json!({ "url": "about:version" }))
        .await;
    let now = lax.url().await;
    assert!(
        result.to_text().contains(&now) || result.error_message().is_some_and(|m| m.contains(&now)),
        "{now}: {}",
        result.to_text()
    );
}

/// The renderer processes of a launched browser.
fn renderers(profile: &std::path::Path) -> Vec<u32> {
    toolkit_browser::processes_mentioning(profile)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains("--type=renderer"))
                .unwrap_or(false)
        })
        .collect()
}

async fn a_crashed_renderer_is_reported_at_once(browser: Browser, server: TestServer) {
    let model = Model::new(&browser, &server, policy());
    model.go("/counter").await;
    let profile = browser.profile_dir().await.expect("a launched browser");
    let pids = renderers(&profile);
    assert!(!pids.is_empty(), "no renderer found");
    for pid in pids {
        kill_9(pid);
    }
    let started = Instant::now();
    let (message, result) = model.err("extract", json!({})).await;
    assert_eq!(
        result.attributes().get("error_kind"),
        Some(&json!("crashed")),
        "{message}"
    );
    assert!(message.contains("crashed"), "{message}");
    // Not the command time limit: the crash itself ends the wait.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // Navigating goes on in a fresh tab.
    model.go("/docs").await;
    model.ok("extract", json!({})).await;
}

async fn uploads_send_the_file_that_was_checked(browser: Browser, server: TestServer) {
    let dir = files_dir();
    let report = dir.join("checked.txt");
    let outside = scratch().join("safety-outside.txt");
    std::fs::write(&outside, "private outside data").unwrap();
    let _ = std::fs::remove_file(&report);
    std::fs::write(&report, "the checked report").unwrap();
    let model = Model::new(&browser, &server, policy());
    model.go("/upload-post").await;
    let input = model.index("type=file").await;
    model
        .ok(
            "upload_file",
            json!({ "index": input, "path": "checked.txt" }),
        )
        .await;
    // Swapped for a link to a file outside the folder after the check.
    std::fs::remove_file(&report).unwrap();
    std::os::unix::fs::symlink(&outside, &report).unwrap();
    let send = model.index("Send the file").await;
    model.ok("click", json!({ "index": send })).await;
    let posted = server
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.target == "/echo" && r.method == "POST")
        .expect("the form was posted");
    assert!(
        posted.body.contains("the checked report"),
        "{}",
        posted.body
    );
    assert!(!posted.body.contains("private outside"), "{}", posted.body);
    let _ = std::fs::remove_file(&report);
}

/// A small deterministic generator (xorshift), so that a failing case can
/// be run again from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }
}

/// A random secret of 12 to 24 characters, at least a third of them
/// special (reserved URL characters, HTML and markdown syntax, quotes,
/// spaces, non-ASCII).
fn random_secret(rng: &mut Rng) -> String {
    const PLAIN: &[char] = &['a', 'b', 'k', 'q', 'x', 'Z', 'M', '0', '3', '7', '9'];
    const SPECIAL: &[char] = &[
        '~', '!', '@', '#', '$', '%', '^', '&', '*', '(', ')', '_', '+', '-', '=', '{', '}', '[',
        ']', '|', '\\', ':', ';', '"', '\'', '<', '>', ',', '.', '?', '/', ' ', '`', 'é', 'ß', '€',
    ];
    let len = 12 + (rng.next() % 13) as usize;
    let mut secret = String::new();
    for k in 0..len {
        // Starts and ends plain: a field trims spaces at its ends.
        let special = k > 0 && k + 1 < len && rng.next().is_multiple_of(3);
        secret.push(if special {
            rng.pick(SPECIAL)
        } else {
            rng.pick(PLAIN)
        });
    }
    secret
}

/// Every form of `secret` that must not appear: itself, in capitals, in
/// base64 and its other encodings (whole), and every piece of 8
/// characters of it and of them.
fn forbidden(secret: &str) -> Vec<String> {
    let json = serde_json::to_string(secret).unwrap();
    let json = json[1..json.len() - 1].to_owned();
    let markdown: String = secret
        .chars()
        .flat_map(|c| {
            if c.is_ascii_punctuation() {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect();
    let form: String = percent_encode_all(secret).replace("%20", "+");
    let base64 = base64::engine::general_purpose::STANDARD.encode(secret);
    let base64_url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret);
    let whole = [
        secret.to_owned(),
        simple_upper(secret),
        base64,
        base64_url,
        percent_encode_all(secret),
        percent_encode_all(secret).to_lowercase(),
        form,
        html_escape(secret),
        json,
        markdown,
    ];
    let mut out = Vec::new();
    for form in &whole {
        let chars: Vec<char> = form.chars().collect();
        out.push(form.clone());
        for window in chars.windows(toolkit_browser::FRAGMENT_CHARS) {
            out.push(window.iter().collect());
        }
    }
    out.sort();
    out.dedup();
    out
}

fn assert_clean(secret: &str, what: &str, text: &str) {
    for piece in forbidden(secret) {
        assert!(
            !text.contains(&piece),
            "{what} holds {piece:?} of the secret {secret:?}:\n{text}"
        );
    }
}

/// Everything a result carries: text, memory line, error, attributes.
fn everything(result: &ToolResult) -> String {
    format!(
        "{}\n{:?}\n{:?}\n{:?}",
        result.to_text(),
        result.memory(),
        result.error_message(),
        result.attributes()
    )
}

async fn secrets_never_leave_in_any_form(browser: Browser, server: TestServer) {
    let seed: u64 = std::env::var("SECRET_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_cafe_f00d);
    let mut rng = Rng(seed);
    // The issue's own examples first, then random ones.
    let mut secrets = vec!["pa|ss[w]rd-77".to_owned(), "s3cr~t-tilde!x".to_owned()];
    for _ in 0..6 {
        secrets.push(random_secret(&mut rng));
    }
    for (case, secret) in secrets.iter().enumerate() {
        let model = Model::new(
            &browser,
            &server,
            policy_with(SafetyPolicy::builder().secret("pw", secret.clone())),
        );
        let method = if case % 2 == 0 { "get" } else { "post" };
        let mut seen: Vec<(String, String)> = Vec::new();
        let label = format!("{method}, seed {seed}, case {case}");
        let keep = |seen: &mut Vec<(String, String)>, what: &str, result: &ToolResult| {
            seen.push((format!("{what} ({label})"), everything(result)));
        };
        let keep_text = |seen: &mut Vec<(String, String)>, what: &str, text: String| {
            seen.push((format!("{what} ({label})"), text));
        };
        model.go(&format!("/secret-form-{method}")).await;
        let field = model.index("label=\"Password\"").await;
        let typed = model
            .ok(
                "input",
                json!({ "index": field, "text": "<secret>pw</secret>" }),
            )
            .await;
        keep(&mut seen, "input", &typed);
        let send = model.index("Send it").await;
        keep(
            &mut seen,
            "click",
            &model.ok("click", json!({ "index": send })).await,
        );
        keep(&mut seen, "extract", &model.ok("extract", json!({})).await);
        for start in [40, 80, 120] {
            let part = model.call("extract", json!({ "start": start })).await;
            keep(&mut seen, "extract part", &part);
        }
        let map = browser.page_map().await.expect("page map");
        keep_text(&mut seen, "page map", map.render());
        keep_text(&mut seen, "page map fields", format!("{map:?}"));
        let tabs = browser.tabs().await.expect("tabs");
        keep_text(&mut seen, "tabs", format!("{tabs:?}"));
        // Windows around the secret, on either side of it.
        for text in ["You sent", "item"] {
            for occurrence in 1..=2 {
                keep(
                    &mut seen,
                    "find_text",
                    &model
                        .call(
                            "find_text",
                            json!({ "text": text, "occurrence": occurrence }),
                        )
                        .await,
                );
            }
        }
        // No oracle: a piece of the secret, or all of it, is not found
        // where the secret is (a count would tell it piece by piece).
        let piece: String = secret.chars().take(7).collect();
        for query in [piece.as_str(), secret.as_str()] {
            let (message, result) = model.err("find_text", json!({ "text": query })).await;
            assert!(message.contains("is not on the page"), "{label}: {message}");
            keep(&mut seen, "find_text of a piece", &result);
        }
        let again = model.index("Again with").await;
        keep(
            &mut seen,
            "element error",
            &model
                .call("input", json!({ "index": again, "text": "x" }))
                .await,
        );
        keep(
            &mut seen,
            "evaluate",
            &model
                .call(
                    "evaluate",
                    json!({ "code": "[document.title, location.href, document.body.innerHTML]" }),
                )
                .await,
        );
        keep(
            &mut seen,
            "evaluate error",
            &model
                .call(
                    "evaluate",
                    json!({ "code": "(() => { throw new Error(document.title) })()" }),
                )
                .await,
        );
        keep(
            &mut seen,
            "go_back",
            &model.call("go_back", json!({})).await,
        );
        for (what, text) in &seen {
            assert_clean(secret, what, text);
        }
    }
}

async fn awkward_pages_are_read_and_mapped(browser: Browser, server: TestServer) {
    let model = Model::new(&browser, &server, policy());
    // Text directly inside a list is kept.
    model.go("/list-text").await;
    let text = model.ok("extract", json!({})).await.to_text();
    for words in [
        "Loose words in the list",
        "More loose words",
        "Numbered intro",
        "An item",
    ] {
        assert!(text.contains(words), "{words}: {text}");
    }
    // A page whose content is all hidden says so.
    model.go("/hidden-body").await;
    let map = browser.page_map().await.expect("page map").render();
    assert!(map.contains("nothing on the page is visible"), "{map}");
    assert!(!map.contains("scroll down"), "{map}");
    // A long page read part by part is the page read whole, and a change
    // to the page is seen by the next part.
    model.go("/long-text").await;
    let whole = browser.page_text().await.expect("page text").markdown;
    assert!(whole.chars().count() > 200_000);
    let mut joined = String::new();
    let mut start = 0usize;
    loop {
        let part = model
            .ok("extract", json!({ "start": start }))
            .await
            .to_text();
        let body = part.split_once(":\n\n").map_or("", |(_, b)| b);
        let body = body.split("\n\n[").next().unwrap_or(body);
        joined.push_str(body);
        match part.split("start=").nth(1) {
            Some(rest) => {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                start = digits.parse().expect("the next start");
            }
            None => break,
        }
    }
    assert_eq!(joined.chars().count(), whole.chars().count());
    browser
        .evaluate("document.body.insertAdjacentHTML('afterbegin', '<p>A fresh first line</p>'); 1")
        .await
        .unwrap();
    let first = model.ok("extract", json!({})).await.to_text();
    assert!(
        first.contains("A fresh first line"),
        "{}",
        &first[..200.min(first.len())]
    );
}

/// The number of the element whose line holds `needle`, waiting (a
/// little) for a frame that is still loading.
async fn index_soon(model: &Model, needle: &str) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let map = model.browser.page_map().await.expect("page map");
        if let Some(e) = map.elements.iter().find(|e| e.render().contains(needle)) {
            return e.index;
        }
        assert!(
            Instant::now() < deadline,
            "no element with `{needle}` in:\n{}",
            map.render()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn a_page_leaving_between_actions_is_said_by_the_next_action(
    browser: Browser,
    server: TestServer,
) {
    let model = Model::new(&browser, &server, policy());
    model.go("/late-leave").await;
    let late = model.index("Leave later").await;
    model.ok("click", json!({ "index": late })).await;
    // The page leaves 300 ms later, while no action runs (the wait is
    // long enough for that timer and the guard on a loaded machine).
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(model.leaked().is_empty(), "{:?}", model.leaked());
    assert!(model.url().await.ends_with("/late-leave"));
    // The next action did not cause it: it succeeds, and says what the
    // page tried meanwhile.
    let docs = model
        .ok("navigate", json!({ "url": server.url("/docs") }))
        .await;
    let text = docs.to_text();
    assert!(text.starts_with("Opened \"Docs\""), "{text}");
    assert!(
        text.contains("the page tried on its own") && text.contains("landed?late"),
        "{text}"
    );
    // Said once.
    let next = model.ok("extract", json!({})).await.to_text();
    assert!(!next.contains("on its own"), "{next}");
}

async fn a_secret_is_typed_only_on_its_sites_even_in_a_frame(browser: Browser, server: TestServer) {
    // Both sites may be visited; the secret belongs to one.
    let model = Model::new(
        &browser,
        &server,
        policy_with(
            SafetyPolicy::builder()
                .allow_domains(["localhost"])
                .secret_for("pw", "frame-secret-42", ["127.0.0.1"]),
        ),
    );
    model.go("/secret-frame").await;
    let own = model.index("Own field").await;
    model
        .ok(
            "input",
            json!({ "index": own, "text": "<secret>pw</secret>" }),
        )
        .await;
    // The field in the frame from the other site is not on the secret's
    // site, whatever the tab's address.
    let field = index_soon(&model, "Frame field").await;
    let (message, result) = model
        .err(
            "input",
            json!({ "index": field, "text": "<secret>pw</secret>" }),
        )
        .await;
    assert!(
        message.contains("may only be typed on 127.0.0.1") && message.contains("localhost"),
        "{message}"
    );
    assert_eq!(
        result.attributes().get("error_kind"),
        Some(&json!("refused"))
    );
    let map = browser.page_map().await.expect("page map");
    let typed = map.get(field).expect("the frame field is still mapped");
    assert_eq!(typed.value.as_deref().unwrap_or_default(), "", "{typed:?}");
    // Plain text still goes into the frame.
    model
        .ok("input", json!({ "index": field, "text": "plain words" }))
        .await;
}

async fn a_frame_of_a_site_no_longer_allowed_is_neither_mapped_nor_reached(
    browser: Browser,
    server: TestServer,
) {
    let lax = Model::new(
        &browser,
        &server,
        policy_with(SafetyPolicy::builder().allow_domains(["localhost"])),
    );
    lax.go("/secret-frame").await;
    let field = index_soon(&lax, "Frame field").await;
    lax.ok("input", json!({ "index": field, "text": "while allowed" }))
        .await;
    // The policy narrows while the frame is on the page.
    let strict = Model::new(&browser, &server, policy());
    let (message, result) = strict
        .err("input", json!({ "index": field, "text": "now" }))
        .await;
    assert_eq!(
        result.attributes().get("error_kind"),
        Some(&json!("stale_element")),
        "{message}"
    );
    let map = browser.page_map().await.expect("page map").render();
    assert!(!map.contains("Frame field"), "{map}");
    assert!(map.contains("not mapped"), "{map}");
    assert!(map.contains("Own field"), "{map}");
}

async fn other_ways_to_another_site_are_stopped(browser: Browser, server: TestServer) {
    let model = Model::new(&browser, &server, policy());
    // Earlier scenarios may have visited the other site while allowed.
    let earlier = model.leaked().len();
    let leaked = || model.leaked()[earlier..].to_vec();
    model.go("/ways-out").await;
    for name in [
        "Open a window",
        "Open a blank window",
        "Write a popup that leaves",
        "Link into a new tab",
        "Post into a new tab",
        "Post through a 307",
    ] {
        let tabs = browser.tabs().await.expect("tabs").len();
        let button = model.index(name).await;
        let (message, _) = model.err("click", json!({ "index": button })).await;
        assert!(message.contains("was blocked"), "{name}: {message}");
        assert!(
            model.url().await.ends_with("/ways-out"),
            "{name}: {}",
            model.url().await
        );
        assert_eq!(
            browser.tabs().await.expect("tabs").len(),
            tabs,
            "{name}: the tab it opened is closed"
        );
        assert!(leaked().is_empty(), "{name}: {:?}", leaked());
    }
    assert_eq!(model.marker().await, json!("still here"));
    // A popup the page wrote itself, whose link the model follows: the
    // link is stopped, and the popup, which has no page of its own to
    // stay on, is closed with the opener current again.
    let tabs = browser.tabs().await.expect("tabs").len();
    let opener = browser.current_tab().await.expect("current tab").id;
    let button = model.index("Write a popup with a link").await;
    model.ok("click", json!({ "index": button })).await;
    assert_eq!(browser.tabs().await.expect("tabs").len(), tabs + 1);
    let link = model.index("Leave the written popup").await;
    let (message, _) = model.err("click", json!({ "index": link })).await;
    assert!(message.contains("was blocked"), "{message}");
    let now = browser.tabs().await.expect("tabs");
    assert_eq!(now.len(), tabs, "the written popup is left open: {now:?}");
    assert_eq!(browser.current_tab().await.expect("current").id, opener);
    assert!(leaked().is_empty(), "{:?}", leaked());

    // What a page loads by itself: a refresh, prefetch and prerender
    // links, an object and an embed.
    let _ = model
        .call("navigate", json!({ "url": server.url("/loads-out") }))
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = model.call("wait", json!({ "seconds": 0 })).await;
    assert!(leaked().is_empty(), "{:?}", leaked());
    assert!(
        model.url().await.ends_with("/loads-out"),
        "{}",
        model.url().await
    );
}

async fn a_renderer_killed_during_an_action_ends_it_at_once(browser: Browser, server: TestServer) {
    let model = Model::new(&browser, &server, policy());
    model.go("/hang").await;
    let button = model.index("Hang the page").await;
    let profile = browser.profile_dir().await.expect("a launched browser");
    // The click hangs the page; its renderer is killed while the next
    // action waits on it.
    model.ok("click", json!({ "index": button })).await;
    // The page hangs a moment after the click: known once a trivial
    // script gets no answer.
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::time::timeout(Duration::from_millis(500), browser.evaluate("1"))
        .await
        .is_ok()
    {
        assert!(Instant::now() < deadline, "the page never hung");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let click = model.call("extract", json!({}));
    let kill = async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        for pid in renderers(&profile) {
            kill_9(pid);
        }
        Instant::now()
    };
    let (result, killed) = tokio::join!(click, kill);
    let message = result.error_message().unwrap_or_default().to_owned();
    assert_eq!(
        result.attributes().get("error_kind"),
        Some(&json!("crashed")),
        "{}",
        result.to_text()
    );
    assert!(message.contains("crashed"), "{message}");
    assert!(
        killed.elapsed() < Duration::from_secs(5),
        "the crash ended the action {:?} after it",
        killed.elapsed()
    );
    model.go("/docs").await;
}

async fn urls_of_other_schemes_are_refused_before_loading(browser: Browser, server: TestServer) {
    let model = Model::new(&browser, &server, policy());
    model.go("/popup").await;
    let tabs = browser.tabs().await.expect("tabs").len();
    for url in [
        "chrome-error://chromewebdata/",
        "CHROME-ERROR://chromewebdata/",
        "file:///etc/passwd",
        "javascript:location='/about'",
        "data:text/html,<a href=/about>x</a>",
        "view-source:http://127.0.0.1/",
        "mailto:someone@example.com",
        "about:srcdoc",
    ] {
        for new_tab in [false, true] {
            let (message, result) = model
                .err("navigate", json!({ "url": url, "new_tab": new_tab }))
                .await;
            assert!(
                message.contains("URLs cannot be opened") && message.contains("was not loaded"),
                "{url}: {message}"
            );
            assert_eq!(
                result.attributes().get("error_kind"),
                Some(&json!("blocked")),
                "{url}: {message}"
            );
            assert!(model.url().await.ends_with("/popup"), "{url}");
            assert_eq!(browser.tabs().await.expect("tabs").len(), tabs, "{url}");
        }
    }
    // The tab still works.
    same_tab_link_works(&model).await;
}

/// The popup page's "Same tab" link, clicked, says so and leads to
/// `/docs`: the tab works.
async fn same_tab_link_works(model: &Model) {
    let link = model.index("Same tab").await;
    let clicked = model.ok("click", json!({ "index": link })).await;
    assert!(
        clicked.to_text().starts_with("Clicked"),
        "{}",
        clicked.to_text()
    );
    assert!(model.url().await.ends_with("/docs"));
}

/// A 127.0.0.1 address where nothing listens.
fn dead_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let port = listener.local_addr().expect("its address").port();
    drop(listener);
    format!("http://127.0.0.1:{port}/gone")
}

/// Checks that an action left the tab on the browser's error page and
/// that it was replaced by a new blank tab, and that the reply says so.
async fn assert_replaced(model: &Model, before: &str, message: &str, result: &ToolResult) {
    assert_eq!(
        result.attributes().get("error_kind"),
        Some(&json!("error_page")),
        "{message}"
    );
    assert!(
        message.contains("error page") && message.contains("replaced by a new tab"),
        "{message}"
    );
    assert!(
        !result.to_text().contains("Clicked"),
        "{}",
        result.to_text()
    );
    let tabs = model.browser.tabs().await.expect("tabs");
    let current = tabs.iter().find(|t| t.current).expect("a current tab");
    assert_ne!(current.id, before, "the broken tab is still current");
    assert!(
        !tabs.iter().any(|t| t.id == before),
        "the broken tab is open"
    );
    assert!(
        message.contains(&format!("Tab {}", current.id)),
        "{message}"
    );
    assert_eq!(current.url, "about:blank");
}

async fn a_tab_left_on_an_error_page_goes_back_or_is_replaced(
    browser: Browser,
    server: TestServer,
) {
    let model = Model::new(&browser, &server, policy());
    let dead = dead_address();
    // A load that fails in a tab with no page before it (the scenario's
    // blank tab): there is nothing to go back to.
    let before = browser.current_tab().await.expect("current tab").id;
    let (message, result) = model.err("navigate", json!({ "url": dead })).await;
    assert!(message.contains("could not be loaded"), "{message}");
    assert!(message.contains(&dead), "{message}");
    assert_replaced(&model, &before, &message, &result).await;
    // The new tab works: a click there navigates and says so.
    model.go("/popup").await;
    same_tab_link_works(&model).await;
    // A link whose load fails: the click is no success, and the tab goes
    // back to the page of the link.
    model.go("/popup").await;
    let before = browser.current_tab().await.expect("current tab").id;
    let script = format!(
        "document.getElementById('same').href = {}; true",
        json!(dead)
    );
    model.ok("evaluate", json!({ "code": script })).await;
    let link = model.index("Same tab").await;
    let (message, result) = model.err("click", json!({ "index": link })).await;
    assert!(message.contains(&dead), "{message}");
    assert_eq!(
        result.attributes().get("error_kind"),
        Some(&json!("error_page")),
        "{message}"
    );
    assert!(
        !result.to_text().contains("Clicked"),
        "{}",
        result.to_text()
    );
    assert_went_back(&model, &before, "Popup opener", &message).await;
    model.go("/popup").await;
    same_tab_link_works(&model).await;
}

/// Checks that a failed load in the current tab took it back to the
/// page it showed (`title`) rather than replacing it, and that the reply
/// says so.
async fn assert_went_back(model: &Model, before: &str, title: &str, message: &str) {
    assert!(
        message.contains("error page") && message.contains(&format!("went back to \"{title}\"")),
        "{message}"
    );
    assert!(!message.contains("navigate to a page"), "{message}");
    assert!(!message.contains("replaced"), "{message}");
    let tabs = model.browser.tabs().await.expect("tabs");
    let current = tabs.iter().find(|t| t.current).expect("a current tab");
    assert_eq!(current.id, before, "the tab was replaced: {tabs:?}");
    assert_eq!(current.title, title, "{tabs:?}");
}

async fn a_failed_load_keeps_the_tab_its_history_and_its_form(
    browser: Browser,
    server: TestServer,
) {
    let model = Model::new(&browser, &server, policy());
    let dead = dead_address();
    model.go("/docs").await;
    model.go("/order").await;
    let before = browser.current_tab().await.expect("current tab").id;
    let name = model.index("name=name").await;
    model
        .ok("input", json!({ "index": name, "text": "Half done" }))
        .await;
    let (message, _) = model.err("navigate", json!({ "url": dead })).await;
    assert!(message.contains(&dead), "{message}");
    assert_went_back(&model, &before, "Order", &message).await;
    // The form as it was left, under the same numbers.
    let map = model.agent.map().await;
    assert!(
        map.render().contains("value=\"Half done\""),
        "{}",
        map.render()
    );
    assert_eq!(model.index("name=name").await, name);
    // The history too.
    let back = model.ok("go_back", json!({})).await;
    assert!(back.to_text().contains("Docs"), "{}", back.to_text());
    // A page a form post led to: kept without posting the form again.
    model.go("/secret-form-post").await;
    let field = model.index("name=pw").await;
    model
        .ok("input", json!({ "index": field, "text": "once" }))
        .await;
    let send = model.index("Send it").await;
    model.ok("click", json!({ "index": send })).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while model.browser.page_map().await.expect("map").title != "Echo once" {
        assert!(Instant::now() < deadline, "the form was never sent");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (message, _) = model.err("navigate", json!({ "url": dead })).await;
    // The page the post led to is kept in no cache (the server says
    // `no-store`, as most do): it cannot be shown again without posting
    // again, so the tab goes back to the form instead.
    assert!(message.contains(&server.url("/echo")), "{message}");
    assert_went_back(&model, &before, "Secret form", &message).await;
    let posts = server
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path() == "/echo")
        .count();
    assert_eq!(posts, 1, "the form was posted again");
}

async fn a_wait_ends_when_the_browser_dies(_shared: Browser, server: TestServer) {
    let browser = crate::support::chromium::launch().await;
    let model = Model::new(&browser, &server, policy());
    model.go("/docs").await;
    let pid = browser.pid().await.expect("pid");
    let started = Instant::now();
    let (result, ()) = tokio::join!(model.call("wait", json!({ "seconds": 10 })), async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        kill_9(pid);
    });
    let took = started.elapsed();
    assert_eq!(
        result.attributes().get("browser_fatal"),
        Some(&json!(true)),
        "{}",
        result.to_text()
    );
    // Well before the ten seconds asked for: the death ended the wait.
    assert!(took < Duration::from_secs(8), "the wait took {took:?}");
    let _ = browser.close().await;
}
