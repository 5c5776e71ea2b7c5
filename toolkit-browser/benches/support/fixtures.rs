//! The benchmark's fixture pages and the minimal HTTP server on 127.0.0.1
//! that serves them (the browser benchmark cannot use the `tests` package's
//! server: a published crate's benchmarks depend on nothing unpublished).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// How many interactive elements the page-map fixture holds.
pub const MANY: usize = 1000;

/// An HTTP/1.1 server on a free port of 127.0.0.1: one thread per
/// connection, `Connection: close`, GET only. It lives until the process
/// exits.
pub struct Server {
    base: String,
}

impl Server {
    /// Starts serving the fixture pages: `/many`, `/controls` and
    /// `/long` (about 280,000 characters of text); anything else is `404`.
    pub fn start() -> Self {
        let routes: Arc<HashMap<&'static str, String>> = Arc::new(HashMap::from([
            ("/many", many_elements_page(MANY)),
            ("/controls", controls_page()),
            ("/long", long_text_page(LONG_TEXT_CHARS)),
        ]));
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("the server's address");
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let routes = Arc::clone(&routes);
                std::thread::spawn(move || {
                    let _ = serve(stream, &routes);
                });
            }
        });
        Self {
            base: format!("http://{addr}"),
        }
    }

    /// The absolute URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

fn serve(stream: TcpStream, routes: &HashMap<&'static str, String>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // The headers are read and ignored: a GET has no body.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let target = request_line.split_whitespace().nth(1).unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let (status, body) = match routes.get(path) {
        Some(html) => ("200 OK", html.as_str()),
        None => ("404 Not Found", "<h1>Not found</h1>"),
    };
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head>\
         <body>{body}</body></html>"
    )
}

/// `count` interactive elements, a mix of buttons, links, text inputs,
/// checkboxes and selects, in a dense grid: 25 columns of 48 px (1,250 px,
/// inside the 1,280 px viewport) by 26 px rows, so 1,000 elements take
/// 1,040 px, well inside the mapped band (the 800 px viewport plus
/// `VIEWPORT_EXPANSION_PX` = 1,000 px below it). Every one of them counts.
pub fn many_elements_page(count: usize) -> String {
    let mut body = String::from(
        "<style>body{margin:0;font:10px sans-serif}.g{display:grid;\
         grid-template-columns:repeat(25,48px);gap:2px}.g>*{height:24px;margin:0;\
         box-sizing:border-box;width:48px}</style><div class=g>",
    );
    for i in 0..count {
        let item = match i % 5 {
            0 => format!("<button type=button>B{i}</button>"),
            1 => format!("<a href=\"/l{i}\">L{i}</a>"),
            2 => format!("<input name=i{i} placeholder=\"I{i}\">"),
            3 => format!("<input type=checkbox name=c{i}>"),
            _ => format!("<select name=s{i}><option>S{i}</option><option>T{i}</option></select>"),
        };
        body.push_str(&item);
    }
    body.push_str("</div>");
    page("Many elements", &body)
}

/// A counter button that counts trusted clicks, and a text field that
/// counts trusted `input` events.
pub fn controls_page() -> String {
    page(
        "Controls",
        r#"<button id="inc" type="button">Increment</button> <span id="out">0</span>
<p><input id="t" name="t" placeholder="Text"></p>
<script>
  window.clicks = 0;
  window.inputs = 0;
  document.getElementById('inc').addEventListener('click', (e) => {
    if (e.isTrusted) window.clicks += 1;
    document.getElementById('out').textContent = String(window.clicks);
  });
  document.addEventListener('input', (e) => { if (e.isTrusted) window.inputs += 1; }, true);
</script>"#,
    )
}

/// How long the text of `/long` is, in characters (about).
pub const LONG_TEXT_CHARS: usize = 280_000;

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
