//! The fixture site every browser scenario is served: each page of
//! `tests/pages/` at `/NAME` (`form.html` at `/form`), the generated pages,
//! and the routes that are not pages (redirects, an empty answer, a slow
//! page, an echo of what a form sent).
//!
//! `localhost` is the same server under another name: another site to
//! the browser, for the allowed-domain and frame tests. Pages reach it
//! through `{PORT}` (see [`Route::html`]) or scripts that swap the host.

use std::time::Duration;

use toolkit_tests::http::{Reply, Route};

use super::pages::{echo_page, form_fields, long_text_page, many_elements_page};

/// `/NAME` → `tests/pages/NAME.html`, read when compiling.
macro_rules! files {
    ($($name:literal),* $(,)?) => {
        [$((
            concat!("/", $name),
            include_str!(concat!("../../pages/", $name, ".html")),
        )),*]
    };
}

/// The pages served as they are.
const FILES: &[(&str, &str)] = &files![
    // The page map's fixture, its frame, and the basic controls.
    "form",
    "frame",
    "counter",
    "inputs",
    "docs",
    "about",
    "submitted",
    "unicode",
    "links",
    "popup",
    "long",
    "dialog",
    // The actions: a native and an ARIA dropdown, a shadow root and a
    // frame, a long article, an upload, a login that echoes the password,
    // ways off the allowed site.
    "order",
    "widgets",
    "widgets-frame",
    "article",
    "upload",
    "welcome",
    "guarded",
    // Hovering, holding, dragging, and controls that open a file chooser.
    "upload-controls",
    "hidden-choosers",
    "hold",
    "hover",
    "drag",
    // Pages like those agents meet on real sites: a shop whose newsletter
    // modal covers the page, a long blog article, a booking form of custom
    // widgets, a checkout whose payment form is a frame from another site
    // holding frames of its own, an app of web components.
    "shop",
    "blog",
    "booking",
    "checkout",
    "pay-frame",
    "pay-verify",
    "pay-help",
    "chat-frame",
    "components",
    // The page model: frames from another site (covered, added late,
    // ahead of the page's own text), covers of every shape.
    "frame-buttons",
    "covered-frame",
    "late-frame",
    "frame-headings",
    "budget-frame",
    "modal-over",
    "painted-over",
    // The safety promises: ways a page could reach another site (large
    // posts, speculation rules, `javascript:` URLs, new windows, loads
    // without a click), forms that send secrets, awkward markup.
    "landed",
    "sink",
    "bigpost",
    "spec-prefetch",
    "spec-prerender",
    "js-link",
    "js-frame",
    "upload-post",
    "secret-form-get",
    "secret-form-post",
    "secret-frame",
    "secret-field",
    "list-text",
    "hidden-body",
    "hang",
    "late-leave",
    "ways-out",
    "loads-out",
    // Settled maps: panels that fade or slide in, a request behind a
    // button, a page that never stops changing, one with nothing to do.
    "settle",
    "ticker",
    "plain",
    // Map details: labels and their controls, a scroll box hiding
    // controls, a web component with a closed shadow root.
    "labels",
    "scrollbox",
    "closed-shadow",
    // Links whose content floats out of them, and one that clips it.
    "floated",
];

/// `bigpost.html` with its 8 MiB form sent `to` (the attributes after
/// `method="post"`) and its title `title`: the variants of the page differ
/// in where the form goes and nothing else.
fn big_post(title: &str, to: &str) -> String {
    const PAGE: &str = include_str!("../../pages/bigpost.html");
    const TITLE: &str = "<title>Big post</title>";
    const FORM: &str = r#"method="post" action="http://localhost:{PORT}/landed">"#;
    assert!(
        PAGE.contains(TITLE) && PAGE.contains(FORM),
        "bigpost.html lost its title or its form"
    );
    PAGE.replace(TITLE, &format!("<title>{title}</title>"))
        .replace(FORM, &format!(r#"method="post" {to}>"#))
}

/// How long `/slow` takes to answer.
const SLOW: Duration = Duration::from_millis(300);

/// Every route of the fixture site.
pub fn routes() -> Vec<(&'static str, Route)> {
    let mut routes: Vec<(&'static str, Route)> = FILES
        .iter()
        .map(|&(path, html)| (path, Route::html(html)))
        .collect();
    routes.extend([
        ("/many", Route::html(many_elements_page(1000))),
        (
            "/bigpost-frame",
            Route::html(big_post(
                "Big post into a frame",
                r#"action="/sink" target="sink""#,
            )),
        ),
        (
            "/bigpost-frame-out",
            Route::html(big_post(
                "Big post out of a frame",
                r#"action="http://localhost:{PORT}/landed" target="sink""#,
            )),
        ),
        ("/long-text", Route::html(long_text_page(280_000))),
        (
            "/slow",
            Route::handler(|_| {
                std::thread::sleep(SLOW);
                Reply::html(include_str!("../../pages/slow.html"))
            }),
        ),
        // Going back must restore the page as it was (the typed password
        // in its title), from the back/forward cache, which takes no page
        // sent with `no-store`.
        (
            "/login",
            Route::reply(
                Reply::html(include_str!("../../pages/login.html"))
                    .with_header("Cache-Control", "no-cache"),
            ),
        ),
        ("/redirect", Route::redirect("/docs")),
        ("/nocontent", Route::reply(Reply::empty(204))),
        ("/out", Route::redirect_as("localhost", "/docs")),
        ("/repost", Route::repost_as("localhost", "/landed?repost")),
        // Every field sent, from the query of a GET or the form body of a
        // POST, shown in every way a page can show it.
        (
            "/echo",
            Route::handler(|request| {
                let fields = if request.body.is_empty() {
                    request.query()
                } else {
                    request.body.as_str()
                };
                Reply::html(echo_page(&form_fields(fields)))
            }),
        ),
    ]);
    routes
}
