//! What a browser keeps between runs: the storage state saved to a file
//! and loaded into another browser process, and a persistent profile
//! folder used by two launches in turn. Each scenario launches browsers
//! of its own.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::{Value, json};
use toolkit_browser::{Browser, BrowserConfig, SafetyPolicy};
use toolkit_tests::http::{Reply, Route, TestServer};

use crate::support::chromium::{self, executable, profiles};
use crate::support::runner::scenarios;
use crate::support::scratch;

scenarios![
    storage_state_carries_a_sign_in_to_another_browser,
    a_persistent_profile_keeps_cookies_between_launches,
];

/// The password the sign-in page keeps in its localStorage.
const SECRET: &str = "c0rrect-h0rse-battery";

/// The session id the server hands out in an httpOnly cookie.
const SID: &str = "sid-6f1e0c";

/// The sign-in site: `/sign-in` (a form whose script posts to `/session`,
/// which sets the httpOnly cookie), `/account` (what the page sees: the
/// server's view of the cookie in its text, the script's in its title),
/// `/remember` (a cookie that outlives the browsing session).
fn sign_in_site() -> TestServer {
    TestServer::start([
        (
            "/sign-in",
            Route::html(include_str!("../pages/sign-in.html")),
        ),
        (
            "/session",
            Route::handler(|request| {
                Reply::html(format!("hello {}", request.body)).with_header(
                    "Set-Cookie",
                    &format!("sid={SID}; HttpOnly; Max-Age=3600; Path=/; SameSite=Lax"),
                )
            }),
        ),
        (
            "/account",
            Route::handler(|request| {
                let cookies = request.header("cookie").unwrap_or_default();
                let server = if cookies.contains(&format!("sid={SID}")) {
                    "ann"
                } else {
                    "none"
                };
                let remembered = if cookies.contains("kept=yes") {
                    " kept=yes"
                } else {
                    ""
                };
                let html = include_str!("../pages/account.html")
                    .replace("{SERVER}", &format!("{server}{remembered}"))
                    .replace("{PASSWORD}", &json!(SECRET).to_string());
                Reply::html(html).with_header("Cache-Control", "no-store")
            }),
        ),
        (
            "/remember",
            Route::reply(
                Reply::html("<!doctype html><title>Remembered</title>")
                    .with_header("Set-Cookie", "kept=yes; Max-Age=3600; Path=/"),
            ),
        ),
    ])
}

/// The number of the element whose label, name or text holds `label`.
async fn index_of(browser: &Browser, label: &str) -> u32 {
    let map = browser.page_map().await.expect("a page map");
    map.elements
        .iter()
        .find(|e| {
            [&e.name, &e.field_name, &e.text]
                .into_iter()
                .flatten()
                .any(|t| t.contains(label))
        })
        .unwrap_or_else(|| panic!("no element {label:?} in\n{}", map.render()))
        .index
}

async fn call(registry: &toolkit_core::Registry, name: &str, args: Value) -> String {
    let outcome = registry.dispatch((name, &args)).await;
    let text = outcome.result.to_text();
    assert!(
        outcome.error.is_none() && !outcome.result.is_error(),
        "{name}({args}) failed: {text} {:?}",
        outcome.result.error_message()
    );
    text
}

/// Waits until the current tab's title holds `part` (the page's script
/// sets it once its work is done).
async fn title_with(browser: &Browser, part: &str) -> String {
    for _ in 0..500 {
        let title = browser.page_info().await.expect("page info").title;
        if title.contains(part) {
            return title;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the title never held {part:?}");
}

async fn storage_state_carries_a_sign_in_to_another_browser(_shared: Browser, _: TestServer) {
    let server = sign_in_site();
    let policy = SafetyPolicy::builder()
        .allow_domains(["127.0.0.1"])
        .secret("password", SECRET)
        .build()
        .unwrap();
    let first = chromium::launch().await;
    let registry = toolkit_browser::registry(first.clone(), policy.clone())
        .build()
        .unwrap();
    call(
        &registry,
        "navigate",
        json!({ "url": server.url("/sign-in") }),
    )
    .await;
    let user = index_of(&first, "user").await;
    let pw = index_of(&first, "pw").await;
    call(&registry, "input", json!({ "index": user, "text": "ann" })).await;
    call(
        &registry,
        "input",
        json!({ "index": pw, "text": "<secret>password</secret>" }),
    )
    .await;
    let button = index_of(&first, "Sign in").await;
    call(&registry, "click", json!({ "index": button })).await;
    title_with(&first, "Signed in").await;

    let dir = scratch().join(format!("storage-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("state.json");
    first.save_storage_state(&file).await.expect("saved");
    first.close().await.unwrap();
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the state file is private");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(SECRET), "the secret is in the file: {text}");
    assert!(
        !text.contains("h0rse-ba"),
        "a piece of the secret is in the file"
    );
    assert!(text.contains("<secret>password</secret>"), "{text}");
    assert!(text.contains(SID), "the httpOnly cookie is saved: {text}");

    // Another browser process: signed out until the state is loaded.
    let second = chromium::launch().await;
    second.set_policy(policy);
    second.navigate(&server.url("/account")).await.unwrap();
    let before = title_with(&second, "server=").await;
    assert!(before.contains("server=none storage=none"), "{before}");
    second.load_storage_state(&file).await.expect("loaded");
    let tab = second.current_tab().await.unwrap();
    assert_eq!(tab.url, "about:blank", "loading leaves the tab blank");
    assert!(
        server.requests().iter().filter(|r| r.path() == "/").count() == 0,
        "loading the storage sent nothing to the site"
    );
    second.navigate(&server.url("/account")).await.unwrap();
    let after = title_with(&second, "server=").await;
    assert_eq!(
        after, "server=ann storage=ann theme=dark note=draft kept in this tab pw=kept sid=hidden",
        "the page sees the sign-in of the first browser"
    );
    // A second tab shares the profile's localStorage and cookies.
    second.open_tab(&server.url("/account")).await.unwrap();
    let other = title_with(&second, "server=").await;
    assert!(other.starts_with("server=ann storage=ann"), "{other}");
    second.close().await.unwrap();

    // A state that would put the secret on a site the policy does not
    // allow it on is refused whole.
    let elsewhere = text.replace("127.0.0.1", "localhost");
    let bad = dir.join("elsewhere.json");
    std::fs::write(&bad, elsewhere).unwrap();
    let third = chromium::launch().await;
    third.set_policy(
        SafetyPolicy::builder()
            .secret_for("password", SECRET, ["127.0.0.1"])
            .build()
            .unwrap(),
    );
    let refused = third.load_storage_state(&bad).await.unwrap_err();
    assert!(refused.to_string().contains("password"), "{refused}");
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"cookies\": 3}").unwrap();
    let invalid = third.load_storage_state(&junk).await.unwrap_err();
    assert!(
        invalid.to_string().contains("not a storage state"),
        "{invalid}"
    );
    third.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

async fn a_persistent_profile_keeps_cookies_between_launches(_shared: Browser, _: TestServer) {
    let server = sign_in_site();
    let folder: PathBuf = profiles().join(format!("persistent-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    let config = || {
        BrowserConfig::builder()
            .executable(executable())
            .persistent_profile(&folder)
            .build()
    };
    let first = Browser::launch(config()).await.expect("launch");
    assert_eq!(first.profile_dir().await.as_deref(), Some(folder.as_path()));
    first.navigate(&server.url("/remember")).await.unwrap();
    first.close().await.unwrap();
    assert!(folder.join("Default").is_dir(), "the profile is kept");

    let second = Browser::launch(config()).await.expect("launch again");
    second.navigate(&server.url("/account")).await.unwrap();
    let title = title_with(&second, "server=").await;
    assert!(title.contains("kept=yes"), "{title}");
    second.close().await.unwrap();

    // A fresh temporary profile has no such cookie.
    let fresh = chromium::launch().await;
    fresh.navigate(&server.url("/account")).await.unwrap();
    let title = title_with(&fresh, "server=").await;
    assert!(!title.contains("kept=yes"), "{title}");
    fresh.close().await.unwrap();
    std::fs::remove_dir_all(&folder).unwrap();
}
