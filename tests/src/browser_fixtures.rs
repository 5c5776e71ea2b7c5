//! Support for the browser tests: a local HTTP server for fixture pages,
//! the fixture pages themselves, finding Chromium, and running scenarios in
//! one shared browser.

use std::collections::HashMap;
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use toolkit_browser::{Browser, BrowserConfig, find_executable};

/// The variable that lets the browser tests pass without Chromium.
pub const SKIP_VAR: &str = "TOOLKIT_SKIP_BROWSER_TESTS";

/// The configuration for a browser test, with profiles under `profiles`.
/// Without Chromium the test fails with how to install it, unless
/// [`SKIP_VAR`]`=1`: then `None` (the caller returns) after printing
/// `SKIPPED`.
pub fn browser_config(test: &str, profiles: impl Into<PathBuf>) -> Option<BrowserConfig> {
    match find_executable() {
        Ok(executable) => Some(
            BrowserConfig::builder()
                .executable(executable)
                .profile_parent(profiles)
                .build(),
        ),
        Err(error) if std::env::var(SKIP_VAR).as_deref() == Ok("1") => {
            eprintln!("SKIPPED {test}: {error}");
            None
        }
        Err(error) => {
            panic!("{error}\n\nThe browser tests need Chromium (or set {SKIP_VAR}=1 to skip them).")
        }
    }
}

/// What the server answers for one path.
#[derive(Debug, Clone)]
pub enum Route {
    /// `200 OK` with this HTML.
    Html(String),
    /// `302 Found` to this location.
    Redirect(String),
    /// This HTML after a delay.
    Slow(Duration, String),
    /// `204 No Content`: a navigation to it stays on the current page.
    NoContent,
    /// `302 Found` to this path on the same server, under another host
    /// name (`localhost` for `127.0.0.1`): another site, for the
    /// allowed-domain tests.
    RedirectAs {
        /// The host name in the `Location`.
        host: String,
        /// The path.
        path: String,
    },
    /// `307 Temporary Redirect` (the method and body are sent again) to
    /// this path under another host name, as [`Route::RedirectAs`].
    RepostAs {
        /// The host name in the `Location`.
        host: String,
        /// The path.
        path: String,
    },
    /// A page that shows every field it was sent (the query of a GET, the
    /// form body of a POST) in many places: text, attributes, a link, a
    /// table, the title (see [`echo_page`]).
    Echo,
}

/// One request the server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The `Host` header (`127.0.0.1:PORT`, `localhost:PORT`).
    pub host: String,
    /// The path with its query.
    pub target: String,
    /// `GET`, `POST`...
    pub method: String,
    /// The body (its first MiB, as text).
    pub body: String,
}

/// A minimal HTTP/1.1 server on 127.0.0.1 (a free port), one thread per
/// connection, `Connection: close`. Lives until the test process exits.
#[derive(Debug)]
pub struct TestServer {
    base: String,
    port: u16,
    log: Arc<Mutex<Vec<Request>>>,
}

impl TestServer {
    /// Starts serving `routes` (path without the query string → answer);
    /// anything else is `404`.
    pub fn start<I, P>(routes: I) -> Arc<Self>
    where
        I: IntoIterator<Item = (P, Route)>,
        P: Into<String>,
    {
        let routes: Arc<HashMap<String, Route>> =
            Arc::new(routes.into_iter().map(|(p, r)| (p.into(), r)).collect());
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let log: Arc<Mutex<Vec<Request>>> = Arc::default();
        let server_log = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let routes = Arc::clone(&routes);
                let log = Arc::clone(&server_log);
                std::thread::spawn(move || {
                    let _ = serve(stream, &routes, addr.port(), &log);
                });
            }
        });
        Arc::new(Self {
            base: format!("http://{addr}"),
            port: addr.port(),
            log,
        })
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `path` on this server under the host name `host`
    /// (`http://localhost:PORT/path`).
    pub fn url_as(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    /// Every request answered so far, oldest first.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The absolute URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> &str {
        &self.base
    }
}

fn serve(
    stream: TcpStream,
    routes: &HashMap<String, Route>,
    port: u16,
    log: &Mutex<Vec<Request>>,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut content_length = 0usize;
    let mut host = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                content_length = value.trim().parse().unwrap_or(0);
            } else if name.eq_ignore_ascii_case("host") {
                value.trim().clone_into(&mut host);
            }
        }
    }
    // The first MiB is kept; the rest is read and dropped, so that a large
    // upload is answered rather than cut off.
    let mut body = vec![0; content_length.min(1 << 20)];
    reader.read_exact(&mut body)?;
    std::io::copy(
        &mut reader.by_ref().take((content_length - body.len()) as u64),
        &mut std::io::sink(),
    )?;
    let body = String::from_utf8_lossy(&body).into_owned();
    let method = request_line
        .split_whitespace()
        .next()
        .unwrap_or("GET")
        .to_owned();

    let target = request_line.split_whitespace().nth(1).unwrap_or("/");
    if let Ok(mut log) = log.lock() {
        log.push(Request {
            host,
            target: target.to_owned(),
            method,
            body: body.clone(),
        });
    }
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let (status, headers, body) = match routes.get(path) {
        Some(Route::Html(html)) => (
            "200 OK",
            String::new(),
            html.replace("{PORT}", &port.to_string()),
        ),
        Some(Route::Echo) => {
            let fields = if body.is_empty() {
                target.split_once('?').map(|(_, q)| q).unwrap_or_default()
            } else {
                body.as_str()
            };
            ("200 OK", String::new(), echo_page(&form_fields(fields)))
        }
        Some(Route::Slow(delay, html)) => {
            std::thread::sleep(*delay);
            ("200 OK", String::new(), html.clone())
        }
        Some(Route::Redirect(to)) => ("302 Found", format!("Location: {to}\r\n"), String::new()),
        Some(Route::NoContent) => ("204 No Content", String::new(), String::new()),
        Some(Route::RedirectAs { host, path }) => (
            "302 Found",
            format!("Location: http://{host}:{port}{path}\r\n"),
            String::new(),
        ),
        Some(Route::RepostAs { host, path }) => (
            "307 Temporary Redirect",
            format!("Location: http://{host}:{port}{path}\r\n"),
            String::new(),
        ),
        None => (
            "404 Not Found",
            String::new(),
            "<h1>Not found</h1>".to_owned(),
        ),
    };
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n{headers}\r\n{body}",
        body.len()
    )?;
    out.flush()
}

/// The fields of a query string or form body, decoded.
pub fn form_fields(encoded: &str) -> Vec<(String, String)> {
    encoded
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (form_decode(k), form_decode(v))
        })
        .collect()
}

fn form_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match text.get(i + 1..i + 3).map(|h| u8::from_str_radix(h, 16)) {
                    Some(Ok(b)) => {
                        out.push(b);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes text for HTML (text and quoted attributes).
pub fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Percent-encodes every byte but ASCII letters and digits.
pub fn percent_encode_all(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// A page that echoes `fields` everywhere a page can show a value: the
/// title, a paragraph, a table, a link's text and `href`, a data attribute,
/// a text field's value, an image's `alt`, an `aria-label`, a placeholder,
/// a button's `title`, and encoded: in capitals and in base64 (standard,
/// and URL-safe in a link).
pub fn echo_page(fields: &[(String, String)]) -> String {
    let mut body = String::from("<h1>Echo</h1><table><tr><th>Field</th><th>Value</th></tr>");
    let mut title = String::from("Echo");
    for (k, v) in fields {
        let v_html = html_escape(v);
        body.push_str(&format!(
            "<tr><td>{}</td><td>{v_html}</td></tr>",
            html_escape(k)
        ));
        title.push(' ');
        title.push_str(v);
    }
    body.push_str("</table>");
    for (k, v) in fields {
        let v_html = html_escape(v);
        let k_html = html_escape(k);
        body.push_str(&format!(
            "<p id=\"said-{k_html}\">You sent {v_html}.</p>\
             <p><a href=\"/docs?{k_html}={}\" data-value=\"{v_html}\">Again with {v_html}</a></p>\
             <p><label>Copy <input name=\"copy-{k_html}\" value=\"{v_html}\"></label></p>\
             <ul>{v_html}<li>item</li></ul>\
             <p>Shouted: {upper}</p><p>Token: {b64}</p>\
             <p><a href=\"/docs?t={b64_url}\">Token link</a> \
             <a href=\"/docs\"><img alt=\"{v_html}\" width=\"24\" height=\"24\"></a> \
             <button aria-label=\"{v_html}\">?</button> \
             <input name=\"hint-{k_html}\" placeholder=\"{v_html}\"> \
             <button title=\"{v_html}\"></button></p>",
            percent_encode_all(v),
            upper = html_escape(&simple_upper(v)),
            b64 = base64::engine::general_purpose::STANDARD.encode(v),
            b64_url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v),
        ));
    }
    page(&html_escape(&title), &body)
}

/// `text` in capitals, character for character (a character whose
/// capital is two, `ß`, stays as it is).
pub fn simple_upper(text: &str) -> String {
    text.chars()
        .map(|c| {
            let mut upper = c.to_uppercase();
            match (upper.next(), upper.next()) {
                (Some(u), None) => u,
                _ => c,
            }
        })
        .collect()
}

/// Wraps a body in a page with a title.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head>\
         <body>{body}</body></html>"
    )
}

/// The page-map fixture: a form, links, ARIA widgets, an open shadow root,
/// a same-origin iframe (`/frame`), and elements that must not be mapped
/// (hidden, transparent, zero-sized, covered, inside a closed `<details>`,
/// far below the viewport).
pub fn form_page() -> String {
    page(
        "Fixture form",
        r#"
<style>
  body { margin: 8px; font: 14px sans-serif; }
  #overlay { position: fixed; left: 0; top: 700px; width: 500px; height: 90px;
             background: #eee; z-index: 10; }
  #covered { position: absolute; left: 20px; top: 720px; }
</style>
<my-widget id="widget"></my-widget>
<iframe id="frame" src="/frame" style="width:420px;height:120px;border:2px solid #000"></iframe>
<form action="/submitted" method="get">
  <label for="q">Query</label>
  <input id="q" name="q" type="text" placeholder="Search" value="rust">
  <input type="hidden" name="secret" value="x">
  <select name="lang"><option>Rust</option><option selected>Go</option></select>
  <textarea name="notes" placeholder="Notes"></textarea>
  <input type="checkbox" name="agree" id="agree"><label for="agree">I agree</label>
  <button type="submit">Search</button>
</form>
<p><a href="/docs">Docs</a> <a href="/about" title="About us">About</a></p>
<div role="button" tabindex="0" aria-label="Close dialog">x</div>
<div onclick="void 0">Clickable div</div>
<span tabindex="0">Focusable span</span>
<div contenteditable="true">Editable text</div>
<details><summary>More</summary><a href="/inner">Inner link</a></details>
<button style="display:none">Display none</button>
<button style="visibility:hidden">Visibility hidden</button>
<button style="opacity:0">Opacity zero</button>
<button style="width:0;height:0;padding:0;border:0;overflow:hidden;font-size:0">Zero size</button>
<div id="overlay">An overlay</div>
<button id="covered">Covered button</button>
<div style="position:absolute;top:3000px"><button>Far below</button></div>
<script>
  customElements.define('my-widget', class extends HTMLElement {
    constructor() {
      super();
      const root = this.attachShadow({ mode: 'open' });
      root.innerHTML = '<button id="sb">Shadow button</button> <input placeholder="Shadow input">';
    }
  });
  const closed = document.createElement('div');
  closed.attachShadow({ mode: 'closed' }).innerHTML = '<button>Closed shadow button</button>';
  document.body.appendChild(closed);
</script>
"#,
    )
}

/// The iframe of [`form_page`].
pub fn frame_page() -> String {
    page(
        "Frame",
        r#"<button id="fb" onclick="document.body.dataset.clicked = 'yes'">Frame button</button>
<a href="/x">Frame link</a> <input id="fi" placeholder="Frame input">"#,
    )
}

/// A counter whose button counts trusted clicks only.
pub fn counter_page() -> String {
    page(
        "Counter",
        r#"<button id="inc">Increment</button> <span id="out">0</span>
<script>
  let count = 0;
  document.getElementById('inc').addEventListener('click', (e) => {
    if (e.isTrusted) count += 1;
    document.getElementById('out').textContent = String(count);
  });
</script>"#,
    )
}

/// Text fields of every kind, each counting its trusted `input` events.
pub fn inputs_page() -> String {
    page(
        "Inputs",
        r#"<form action="/submitted" method="get">
<input id="t" name="t" placeholder="Text">
<textarea id="ta" name="ta"></textarea>
<div id="ce" contenteditable="true"></div>
<input id="n" type="number" name="n">
<input id="d" type="date" name="d">
<button id="b" type="button">Not a field</button>
<input id="ro" readonly value="fixed">
</form>
<script>
  window.trusted = 0;
  document.addEventListener('input', (e) => { if (e.isTrusted) window.trusted += 1; }, true);
</script>"#,
    )
}

/// `count` interactive elements (buttons, links, inputs, checkboxes) in a
/// dense grid, all within the mapped band below the viewport.
pub fn many_elements_page(count: usize) -> String {
    let mut body = String::from(
        "<style>body{margin:0;font:10px sans-serif} .g{display:grid;\
         grid-template-columns:repeat(25,48px);gap:2px} .g>*{height:24px;margin:0;\
         box-sizing:border-box;overflow:hidden;width:48px}</style><div class=g>",
    );
    for i in 0..count {
        let item = match i % 4 {
            0 => format!("<button>B{i}</button>"),
            1 => format!("<a href=\"/l{i}\">L{i}</a>"),
            2 => format!("<input name=i{i} placeholder=\"I{i}\">"),
            _ => format!("<input type=checkbox name=c{i}>"),
        };
        body.push_str(&item);
    }
    body.push_str("</div>");
    page("Many elements", &body)
}

/// The routes every browser test can use.
pub fn standard_routes() -> Vec<(&'static str, Route)> {
    vec![
        ("/form", Route::Html(form_page())),
        ("/frame", Route::Html(frame_page())),
        ("/counter", Route::Html(counter_page())),
        ("/inputs", Route::Html(inputs_page())),
        ("/many", Route::Html(many_elements_page(1000))),
        (
            "/docs",
            Route::Html(page(
                "Docs",
                "<h1>Docs</h1><a href=\"/form\">Back to the form</a>",
            )),
        ),
        ("/about", Route::Html(page("About", "<h1>About</h1>"))),
        (
            "/submitted",
            Route::Html(page("Submitted", "<h1>Thanks</h1>")),
        ),
        ("/redirect", Route::Redirect("/docs".into())),
        ("/nocontent", Route::NoContent),
        (
            "/unicode",
            Route::Html(page(
                "Ünïcødé",
                "<button id=long>ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789\
                 ABCDEFGHIJKLMNOP🚀🚀🚀🚀 trailing text</button>\
                 <button id=lone></button>\
                 <script>document.getElementById('lone').textContent = 'half \\uD83D pair';\
                 document.title += ' \\uDE00';</script>",
            )),
        ),
        (
            "/links",
            Route::Html(page(
                "Links",
                r##"<a href="#section">Fragment</a>
<button onclick="history.pushState({}, '', '/spa/next'); document.title = 'SPA next'">Push state</button>
<a href="/nocontent">No content</a>
<div id="section" style="margin-top:2000px">Section</div>"##,
            )),
        ),
        (
            "/slow",
            Route::Slow(Duration::from_millis(300), page("Slow", "<p>late</p>")),
        ),
        (
            "/popup",
            Route::Html(page(
                "Popup opener",
                r#"<a id="blank" href="/docs" target="_blank">Open docs in a new tab</a>
<button id="open" onclick="window.open('/about')">window.open</button>
<a id="same" href="/docs">Same tab</a>"#,
            )),
        ),
        (
            "/long",
            Route::Html(page(
                "Long",
                "<div style=\"height:4000px\">tall</div><button>Bottom</button>\
                 <div id=box style=\"height:200px;overflow:auto\">\
                 <div style=\"height:1000px\">inner</div><button id=inner>Inner</button></div>",
            )),
        ),
        (
            "/dialog",
            Route::Html(page(
                "Dialog",
                r#"<button id="al" onclick="alert('hello from the page'); document.title = 'after alert'">Alert</button>"#,
            )),
        ),
    ]
}

/// Sends `SIGKILL` to `pid` (through `kill(1)`, so the tests need no libc).
pub fn kill_9(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -9 {pid} failed: {status}");
}

/// An order form: a text field, a native `<select>` (with a disabled
/// option), a custom ARIA combobox whose listbox is hidden until opened,
/// and a submit button. `window.sizeEvents` counts the select's `input` and
/// `change` events.
pub fn order_page() -> String {
    page(
        "Order",
        r#"
<form action="/submitted" method="get">
  <label for="name">Name</label> <input id="name" name="name">
  <label for="size">Size</label>
  <select id="size" name="size">
    <option value="s">Small</option><option value="m" selected>Medium</option>
    <option value="l">Large</option><option value="xl" disabled>XL (sold out)</option>
  </select>
  <span id="colour-label">Colour</span>
  <button type="button" id="colour" role="combobox" aria-expanded="false"
          aria-controls="colours" aria-labelledby="colour-label">Pick a colour</button>
  <ul id="colours" role="listbox" hidden style="list-style:none;margin:0;padding:0">
    <li role="option" data-value="red" style="padding:4px;cursor:pointer">Red</li>
    <li role="option" data-value="green" style="padding:4px;cursor:pointer">Green</li>
    <li role="option" data-value="blue" aria-disabled="true" style="padding:4px">Blue</li>
  </ul>
  <input type="hidden" name="colour" id="colour-value">
  <button type="submit">Order</button>
</form>
<script>
  window.sizeEvents = 0;
  const size = document.getElementById('size');
  size.addEventListener('input', () => { window.sizeEvents += 1; });
  size.addEventListener('change', () => { window.sizeEvents += 1; });
  const combo = document.getElementById('colour');
  const list = document.getElementById('colours');
  combo.addEventListener('click', () => {
    list.hidden = !list.hidden;
    combo.setAttribute('aria-expanded', String(!list.hidden));
  });
  for (const option of list.querySelectorAll('[role=option]')) {
    option.addEventListener('click', (e) => {
      if (!e.isTrusted || option.getAttribute('aria-disabled') === 'true') return;
      for (const o of list.querySelectorAll('[role=option]')) o.setAttribute('aria-selected', 'false');
      option.setAttribute('aria-selected', 'true');
      combo.textContent = option.textContent;
      document.getElementById('colour-value').value = option.dataset.value;
      list.hidden = true;
      combo.setAttribute('aria-expanded', 'false');
    });
  }
</script>
"#,
    )
}

/// An open shadow root and a same-origin iframe (`/widgets-frame`), each
/// with a button that changes its own text when clicked (trusted clicks
/// only) and a text field.
pub fn widgets_page() -> String {
    page(
        "Widgets",
        r#"
<h1>Widgets</h1>
<fancy-card></fancy-card>
<iframe src="/widgets-frame" style="width:500px;height:150px"></iframe>
<script>
  customElements.define('fancy-card', class extends HTMLElement {
    constructor() {
      super();
      const root = this.attachShadow({ mode: 'open' });
      root.innerHTML = '<p>Shadow text</p><button id="sb">Shadow button</button>' +
        '<input id="si" placeholder="Shadow field">';
      const b = root.getElementById('sb');
      b.addEventListener('click', (e) => { if (e.isTrusted) b.textContent = 'Shadow clicked'; });
    }
  });
</script>
"#,
    )
}

/// The iframe of [`widgets_page`].
pub fn widgets_frame_page() -> String {
    page(
        "Widgets frame",
        r#"<p>Frame text</p><button id="fb">Frame button</button>
<input id="fi" placeholder="Frame field">
<script>
  const b = document.getElementById('fb');
  b.addEventListener('click', (e) => { if (e.isTrusted) b.textContent = 'Frame clicked'; });
</script>"#,
    )
}

/// A long article (well over 10,000 characters) with headings, a list, a
/// table, links and, near the end, the sentence "The hidden treasure is
/// buried here".
pub fn article_page() -> String {
    let mut body = String::from(
        "<h1>The long article</h1>\
         <p>An introduction with <a href=\"/docs\">a link to the docs</a>.</p>\
         <ul><li>First point</li><li>Second point<ol><li>Nested one</li></ol></li></ul>\
         <table><tr><th>Name</th><th>Price</th></tr><tr><td>Apple</td><td>1.20</td></tr>\
         <tr><td>Pear</td><td>0.90</td></tr></table>\
         <p style=\"display:none\">Invisible paragraph</p>",
    );
    for k in 1..=60 {
        body.push_str(&format!(
            "<h2>Section {k}</h2><p>Paragraph {k}: {}</p>",
            "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor \
             incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis \
             nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. "
        ));
    }
    body.push_str(
        "<p id=\"treasure\">The hidden treasure is buried here.</p>\
         <p>Closing words.</p><button>Bottom button</button>",
    );
    page("Article", &body)
}

/// A file input whose page shows the chosen file's name and text.
pub fn upload_page() -> String {
    page(
        "Upload",
        r#"<label for="doc">Document</label> <input type="file" id="doc" name="doc">
<button id="plain">Not a file input</button>
<pre id="out">nothing yet</pre>
<script>
  document.getElementById('doc').addEventListener('change', async (e) => {
    const f = e.target.files[0];
    document.getElementById('out').textContent = 'Got ' + f.name + ': ' + (await f.text());
  });
</script>"#,
    )
}

/// A login form whose page echoes the password field (a text field, so
/// the value would show in the page map) in its title and in a fixed
/// banner that appears on the first keystroke, covering the "Behind the
/// banner" button.
pub fn login_page() -> String {
    page(
        "Login",
        r#"<form action="/welcome" method="get">
  <label for="user">User</label> <input id="user" name="user">
  <label for="pw">Password</label> <input id="pw" name="pw" type="text">
  <button type="submit">Log in</button>
</form>
<button id="behind" style="position:absolute;top:300px;left:10px">Behind the banner</button>
<div id="echo" style="display:none;position:fixed;top:280px;left:0;width:600px;height:80px;background:#ffd;z-index:5">
  nothing typed</div>
<script>
  const pw = document.getElementById('pw');
  pw.addEventListener('input', () => {
    const echo = document.getElementById('echo');
    echo.textContent = 'You typed ' + pw.value;
    echo.style.display = 'block';
    document.title = 'Login as ' + pw.value;
  });
</script>"#,
    )
}

/// Ways off the allowed site: a link that redirects to another host, the
/// same in a new tab, and a form that submits to it.
pub fn guarded_page() -> String {
    page(
        "Guarded",
        r#"<a id="out" href="/out">Redirecting link</a>
<a id="out-tab" href="/out" target="_blank">Redirect in a new tab</a>
<form action="/out" method="get"><input id="q" name="q" placeholder="Query"></form>"#,
    )
}

/// The routes of the action tests, beside [`standard_routes`].
pub fn action_routes() -> Vec<(&'static str, Route)> {
    vec![
        ("/order", Route::Html(order_page())),
        ("/widgets", Route::Html(widgets_page())),
        ("/widgets-frame", Route::Html(widgets_frame_page())),
        ("/article", Route::Html(article_page())),
        ("/upload", Route::Html(upload_page())),
        ("/login", Route::Html(login_page())),
        (
            "/welcome",
            Route::Html(page("Welcome", "<h1>Welcome back</h1>")),
        ),
        ("/guarded", Route::Html(guarded_page())),
        (
            "/out",
            Route::RedirectAs {
                host: "localhost".into(),
                path: "/docs".into(),
            },
        ),
    ]
}

/// One scenario of a shared-browser test, run in a tab of its own.
pub type Scenario = fn(Browser, Arc<TestServer>) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// The named scenarios, for [`run_scenarios`]: `scenarios![a, b]` for
/// `async fn a(browser: Browser, server: Arc<TestServer>)`, ...
#[macro_export]
macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {
        vec![$((
            stringify!($name),
            (|b, s| ::std::boxed::Box::pin($name(b, s)))
                as $crate::browser_fixtures::Scenario,
        )),*]
    };
}

/// Runs every scenario (or only the one named by `BROWSER_SCENARIO`) in
/// `browser`, one after the other, each starting from one blank tab; a
/// scenario that panics is reported and the others still run (the browser
/// is restarted if it died). Then closes the browser, and fails naming
/// every failed scenario.
pub async fn run_scenarios(
    browser: Browser,
    server: Arc<TestServer>,
    all: Vec<(&'static str, Scenario)>,
) {
    let only = std::env::var("BROWSER_SCENARIO").ok();
    let mut failures = Vec::new();
    for (name, scenario) in all {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let started = Instant::now();
        let run = tokio::spawn(scenario(browser.clone(), Arc::clone(&server))).await;
        match run {
            Ok(()) => eprintln!("ok {name} ({:?})", started.elapsed()),
            Err(e) => {
                let message = e
                    .try_into_panic()
                    .ok()
                    .and_then(|p| {
                        p.downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    })
                    .unwrap_or_else(|| "cancelled".into());
                eprintln!("FAILED {name}: {message}");
                failures.push(format!("{name}: {message}"));
            }
        }
        if !browser.is_alive().await {
            browser
                .restart()
                .await
                .expect("restart after a failed scenario");
        }
        reset_tabs(&browser).await;
    }
    browser.close().await.expect("close the shared browser");
    assert!(
        failures.is_empty(),
        "{} scenario(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Leaves one blank tab, so the next scenario starts clean.
async fn reset_tabs(browser: &Browser) {
    let fresh = browser
        .open_tab("about:blank")
        .await
        .expect("open a blank tab");
    for tab in browser.tabs().await.expect("tabs") {
        if tab.id != fresh.id {
            browser.close_tab(&tab.id).await.expect("close a tab");
        }
    }
}

/// Pages like those agents meet on real sites (`tests/pages/`): a shop
/// whose newsletter modal covers the page, a long blog article, a booking
/// form made of custom widgets, a checkout whose payment form is a frame
/// from another site holding frames of its own (`localhost` for
/// `127.0.0.1` and back), and an app built of web components (open,
/// closed and declarative shadow roots, slots).
pub fn realistic_routes() -> Vec<(&'static str, Route)> {
    let html = |text: &str| Route::Html(text.to_owned());
    vec![
        ("/shop", html(include_str!("../pages/shop.html"))),
        ("/blog", html(include_str!("../pages/blog.html"))),
        ("/booking", html(include_str!("../pages/booking.html"))),
        ("/checkout", html(include_str!("../pages/checkout.html"))),
        ("/pay-frame", html(include_str!("../pages/pay-frame.html"))),
        (
            "/pay-verify",
            html(include_str!("../pages/pay-verify.html")),
        ),
        ("/pay-help", html(include_str!("../pages/pay-help.html"))),
        (
            "/chat-frame",
            html(include_str!("../pages/chat-frame.html")),
        ),
        (
            "/components",
            html(include_str!("../pages/components.html")),
        ),
    ]
}

/// The script line that sets `id`'s `src` to `path` on the other host name
/// of the server (`localhost` for `127.0.0.1` and back): another site.
fn other_site_src(id: &str, path: &str) -> String {
    format!(
        "<script>document.getElementById('{id}').src = location.protocol + '//' + \
         (location.hostname === '127.0.0.1' ? 'localhost' : '127.0.0.1') + ':' + \
         location.port + '{path}';</script>"
    )
}

/// The pages of the page-model tests, beside [`realistic_routes`]: a frame
/// from another site half covered by the page's own banner, a frame from
/// another site added by a click, and a button painted over by a
/// transformed (not positioned) neighbour.
pub fn page_model_routes() -> Vec<(&'static str, Route)> {
    vec![
        (
            "/frame-buttons",
            Route::Html(page(
                "Frame buttons",
                r#"<style>body{margin:0;font:14px sans-serif}</style>
<button id="top" style="position:absolute;top:10px;left:10px">Top button</button>
<select id="size" style="position:absolute;top:10px;left:200px" aria-label="Size">
  <option>Small</option><option>Large</option></select>
<button id="bottom" style="position:absolute;top:150px;left:10px">Bottom button</button>
<script>
  for (const b of document.querySelectorAll('button')) {
    b.addEventListener('click', (e) => { if (e.isTrusted) b.textContent += ' clicked'; });
  }
  // The parent page (another site) can have a button added, and hears
  // when it is there.
  window.addEventListener('message', (e) => {
    if (e.data !== 'add') return;
    const b = document.createElement('button');
    b.textContent = 'Added button';
    b.style.cssText = 'position:absolute;top:80px;left:10px';
    document.body.appendChild(b);
    e.source.postMessage('added', '*');
  });
</script>"#,
            )),
        ),
        (
            "/covered-frame",
            Route::Html(page(
                "Covered frame",
                &format!(
                    r#"<style>body{{margin:0}}</style>
<iframe id="f" style="position:absolute;top:100px;left:0;width:600px;height:200px;border:0"></iframe>
<div id="banner" style="position:fixed;top:90px;left:0;width:700px;height:100px;background:#fd0;z-index:3">
  A banner over the frame's top half</div>
{}"#,
                    other_site_src("f", "/frame-buttons")
                ),
            )),
        ),
        (
            "/late-frame",
            Route::Html(page(
                "Late frame",
                r#"<button id="add">Add the frame</button>
<script>
  document.getElementById('add').addEventListener('click', () => {
    const f = document.createElement('iframe');
    f.style.cssText = 'width:600px;height:200px;border:0;display:block';
    f.src = location.protocol + '//' + (location.hostname === '127.0.0.1' ? 'localhost' : '127.0.0.1') +
      ':' + location.port + '/frame-buttons';
    document.body.appendChild(f);
  });
  window.addEventListener('message', (e) => { if (e.data === 'added') window.added = true; });
</script>"#,
            )),
        ),
        (
            "/frame-headings",
            Route::Html(page(
                "Frame headings",
                &(0..10)
                    .map(|n| format!("<h3>Heading {n} of the frame from the other site</h3>"))
                    .collect::<String>(),
            )),
        ),
        (
            "/budget-frame",
            Route::Html(page(
                "Budget frame",
                &format!(
                    r#"<style>h3{{margin:2px 0}}</style>
<iframe id="f" style="width:600px;height:300px;border:0;display:block"></iframe>
{}{}"#,
                    (0..30)
                        .map(|n| format!(
                            "<h3>Heading {n:02} of the page itself, after the frame</h3>"
                        ))
                        .collect::<String>(),
                    other_site_src("f", "/frame-headings")
                ),
            )),
        ),
        (
            "/modal-over",
            Route::Html(page(
                "Modal over",
                r#"<style>body{margin:0;font:14px sans-serif}</style>
<button id="under" style="position:absolute;left:20px;top:20px;width:200px;height:100px">Under the backdrop</button>
<button id="badged" style="position:absolute;left:20px;top:300px;width:200px;height:100px">Behind a rounded badge</button>
<div id="badge" style="position:absolute;left:65px;top:320px;width:120px;height:70px;border-radius:40px;background:#c33;z-index:5"></div>
<div id="backdrop" style="position:fixed;left:0;top:0;width:100%;height:200px;background:rgba(0,0,0,.5);z-index:50"></div>
<div role="dialog" style="position:fixed;left:300px;top:40px;z-index:51;background:#fff;padding:10px">
  <button id="in-modal">Modal button</button></div>"#,
            )),
        ),
        (
            "/painted-over",
            Route::Html(page(
                "Painted over",
                r#"<button id="under" style="display:block;margin:20px">Painted over</button>
<div style="transform:translateY(-60px);height:80px;background:#ccc">A transformed card</div>
<button id="free">Free button</button>"#,
            )),
        ),
    ]
}

/// A page that fills a form field with `mib` MiB of text when `#fill` is
/// clicked: a submission larger than the DevTools message limit.
fn big_form(title: &str, action: &str, target: Option<&str>, mib: usize) -> String {
    let target = target.map_or(String::new(), |t| format!(" target=\"{t}\""));
    page(
        title,
        &format!(
            r#"<iframe name="sink" src="/about" style="width:300px;height:80px"></iframe>
<form id="big" method="post" action="{action}"{target}>
  <input type="hidden" name="blob" id="blob">
  <button type="submit" id="send">Send the big form</button>
</form>
<a id="away" href="http://localhost:{{PORT}}/landed">Leave for the other site</a>
<script>
  window.marker = 'still here';
  document.getElementById('blob').value = 'x'.repeat({mib} * 1024 * 1024);
</script>"#
        ),
    )
}

/// The routes of the safety tests: ways a page could reach another site
/// (large form posts, speculation rules, `javascript:` links and frames), a
/// page echoing what it is sent, an upload form that posts the file, and
/// pages that test the page map and `extract` on awkward markup.
pub fn safety_routes() -> Vec<(&'static str, Route)> {
    let landed = page("Landed", "<h1>You should not be here</h1>");
    vec![
        ("/landed", Route::Html(landed.clone())),
        ("/sink", Route::Html(page("Sink", "<p>Received</p>"))),
        (
            "/bigpost",
            Route::Html(big_form(
                "Big post",
                "http://localhost:{PORT}/landed",
                None,
                8,
            )),
        ),
        (
            "/bigpost-frame",
            Route::Html(big_form("Big post into a frame", "/sink", Some("sink"), 8)),
        ),
        (
            "/bigpost-frame-out",
            Route::Html(big_form(
                "Big post out of a frame",
                "http://localhost:{PORT}/landed",
                Some("sink"),
                8,
            )),
        ),
        (
            "/spec-prefetch",
            Route::Html(page(
                "Prefetch",
                r#"<script type="speculationrules">{"prefetch":[{"source":"list","urls":["http://localhost:{PORT}/landed?prefetch"]}]}</script>
<a id="go" href="http://localhost:{PORT}/landed?prefetch">Prefetched link</a>"#,
            )),
        ),
        (
            "/spec-prerender",
            Route::Html(page(
                "Prerender",
                r#"<script type="speculationrules">{"prerender":[{"source":"list","urls":["http://localhost:{PORT}/landed?prerender"]}]}</script>
<a id="go" href="http://localhost:{PORT}/landed?prerender">Prerendered link</a>"#,
            )),
        ),
        (
            "/js-link",
            Route::Html(page(
                "Script link",
                r#"<a id="js" href="javascript:location.href='http://localhost:{PORT}/landed?js'">Script link</a>
<a id="docs" href="/docs">Docs</a>
<script>window.marker = 'still here';</script>"#,
            )),
        ),
        (
            "/js-frame",
            Route::Html(page(
                "Script frame",
                r#"<p>A frame that sends itself away:</p>
<iframe src="javascript:location.href='http://localhost:{PORT}/landed?frame'"></iframe>"#,
            )),
        ),
        (
            "/upload-post",
            Route::Html(page(
                "Upload and send",
                r#"<form method="post" action="/echo" enctype="multipart/form-data">
  <label for="doc">Document</label> <input type="file" id="doc" name="doc">
  <button type="submit">Send the file</button>
</form>"#,
            )),
        ),
        ("/echo", Route::Echo),
        (
            "/secret-form-get",
            Route::Html(page(
                "Secret form",
                r#"<form method="get" action="/echo">
  <label for="pw">Password</label> <input id="pw" name="pw" type="text">
  <button type="submit">Send it</button>
</form>"#,
            )),
        ),
        (
            "/secret-form-post",
            Route::Html(page(
                "Secret form",
                r#"<form method="post" action="/echo">
  <label for="pw">Password</label> <input id="pw" name="pw" type="text">
  <button type="submit">Send it</button>
</form>"#,
            )),
        ),
        (
            "/list-text",
            Route::Html(page(
                "List text",
                "<ul>Loose words in the list<li>An item</li>More loose words</ul>\
                 <ol>Numbered intro<li>First</li></ol>",
            )),
        ),
        (
            "/hidden-body",
            Route::Html(
                "<!doctype html><html><head><title>Hidden</title>\
                 <style>body{display:none}</style></head>\
                 <body><p>You cannot see me</p><a href=\"/docs\">Nor me</a>\
                 <div style=\"height:3000px\"></div></body></html>"
                    .to_owned(),
            ),
        ),
        ("/long-text", Route::Html(long_text_page(280_000))),
        (
            "/hang",
            Route::Html(page(
                "Hang",
                r#"<button id="hang" onclick="setTimeout(() => { const end = Date.now() + 60000; while (Date.now() < end) {} }, 400)">Hang the page</button>"#,
            )),
        ),
        (
            "/late-leave",
            Route::Html(page(
                "Late leave",
                r#"<button id="late" onclick="setTimeout(() => { location.href = 'http://localhost:{PORT}/landed?late' }, 300)">Leave later</button>
<a id="docs" href="/docs">Docs</a>"#,
            )),
        ),
        (
            "/secret-frame",
            Route::Html(page(
                "Secret frame",
                &format!(
                    r#"<label for="own">Own field</label> <input id="own">
<iframe id="f" style="width:500px;height:120px;border:0;display:block"></iframe>
{}"#,
                    other_site_src("f", "/secret-field")
                ),
            )),
        ),
        (
            "/secret-field",
            Route::Html(page(
                "Secret field",
                r#"<label for="ff">Frame field</label> <input id="ff">"#,
            )),
        ),
        (
            "/ways-out",
            Route::Html(page(
                "Ways out",
                r#"<button id="open" onclick="window.open('http://localhost:{PORT}/landed?open')">Open a window</button>
<button id="open-later" onclick="const w = window.open(); w.location.href = 'http://localhost:{PORT}/landed?later'">Open a blank window, then send it away</button>
<a id="blank" href="http://localhost:{PORT}/landed?blank" target="_blank">Link into a new tab</a>
<form action="http://localhost:{PORT}/landed?form" method="post" target="_blank">
  <input type="hidden" name="a" value="b"><button type="submit">Post into a new tab</button></form>
<form action="/repost" method="post">
  <input type="hidden" name="a" value="b"><button type="submit">Post through a 307</button></form>
<a id="docs" href="/docs">Docs</a>
<script>window.marker = 'still here';</script>"#,
            )),
        ),
        (
            "/repost",
            Route::RepostAs {
                host: "localhost".into(),
                path: "/landed?repost".into(),
            },
        ),
        (
            "/loads-out",
            Route::Html(
                "<!doctype html><html><head><title>Loads out</title>\
                 <meta http-equiv=\"refresh\" content=\"0;url=http://localhost:{PORT}/landed?meta\">\
                 <link rel=\"prefetch\" href=\"http://localhost:{PORT}/landed?link-prefetch\">\
                 <link rel=\"prerender\" href=\"http://localhost:{PORT}/landed?link-prerender\">\
                 </head><body><h1>Loads out</h1>\
                 <object data=\"http://localhost:{PORT}/landed?object\" type=\"text/html\" width=\"300\" height=\"80\"></object>\
                 <embed src=\"http://localhost:{PORT}/landed?embed\" type=\"text/html\" width=\"300\" height=\"80\">\
                 <script>window.marker = 'still here';</script></body></html>"
                    .to_owned(),
            ),
        ),
    ]
}

/// A page of about `chars` characters of readable text, in paragraphs.
pub fn long_text_page(chars: usize) -> String {
    let sentence = "The quick brown fox jumps over the lazy dog near the riverbank. ";
    let mut body = String::with_capacity(chars + 1000);
    let mut k = 0;
    while body.len() < chars {
        k += 1;
        body.push_str(&format!("<p>Paragraph {k}. {}</p>", sentence.repeat(4)));
    }
    page("Long text", &body)
}
