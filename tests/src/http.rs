//! A real HTTP/1.1 server on 127.0.0.1 for the tests and benchmarks of the
//! workspace: fixture sites for the browser (routes by path) and model
//! endpoints for the agent (canned replies, in order), recording every
//! request it answers.
//!
//! One thread per connection and `Connection: close` on every reply: the
//! clients under test (Chromium, reqwest) open as many connections as they
//! like, and a slow handler holds up only its own request. Request bodies
//! are read by their `Content-Length`.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How much of a request body is kept: a test posting megabytes checks
/// that they arrived, not every byte, and each [`TestServer::requests`]
/// copies the log.
pub const KEPT_BODY_BYTES: usize = 1 << 20;

/// One request the server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`...
    pub method: String,
    /// The request target: the path with its query.
    pub target: String,
    /// The request line and the headers, as received (without the blank
    /// line that ends them).
    pub head: String,
    /// The body as text (its first [`KEPT_BODY_BYTES`]; invalid UTF-8
    /// replaced).
    pub body: String,
}

impl Request {
    /// The path, without the query or fragment.
    pub fn path(&self) -> &str {
        self.target.split(['?', '#']).next().unwrap_or("/")
    }

    /// The query string (after `?`), empty when there is none.
    pub fn query(&self) -> &str {
        self.target
            .split_once('?')
            .map_or("", |(_, query)| query.split('#').next().unwrap_or(""))
    }

    /// The value of the first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then_some(value.trim())
        })
    }

    /// The `Host` header (`127.0.0.1:PORT`, `localhost:PORT`), empty when
    /// missing.
    pub fn host(&self) -> &str {
        self.header("host").unwrap_or("")
    }

    /// The body parsed as JSON, `null` when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// One answer: a status, headers and a body. `Content-Length`,
/// `Connection: close` and (unless set here) `Cache-Control: no-store` are
/// added when it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Reply {
    /// `status` with these headers and body, as they are.
    pub fn raw<N, V>(
        status: u16,
        headers: impl IntoIterator<Item = (N, V)>,
        body: impl Into<Vec<u8>>,
    ) -> Self
    where
        N: Into<String>,
        V: Into<String>,
    {
        Self {
            status,
            headers: headers
                .into_iter()
                .map(|(name, value)| (name.into(), value.into()))
                .collect(),
            body: body.into(),
        }
    }

    /// `200 OK` with this HTML.
    pub fn html(text: impl Into<String>) -> Self {
        Self::raw(
            200,
            [("Content-Type", "text/html; charset=utf-8")],
            text.into(),
        )
    }

    /// `200 OK` with this JSON.
    pub fn json(value: &serde_json::Value) -> Self {
        Self::raw(
            200,
            [("Content-Type", "application/json")],
            value.to_string(),
        )
    }

    /// `200 OK` with a server-sent event stream, one `data:` event per
    /// item, sent whole.
    pub fn sse<S: AsRef<str>>(events: impl IntoIterator<Item = S>) -> Self {
        let body: String = events
            .into_iter()
            .map(|data| format!("data: {}\n\n", data.as_ref()))
            .collect();
        Self::raw(200, [("Content-Type", "text/event-stream")], body)
    }

    /// `status` with a JSON body given as text (an API's error, which need
    /// not be valid JSON).
    pub fn status(status: u16, body: &str) -> Self {
        Self::raw(status, [("Content-Type", "application/json")], body)
    }

    /// `status` with no body (`204 No Content`: a navigation to it stays
    /// on the current page).
    pub fn empty(status: u16) -> Self {
        Self::raw(status, Vec::<(String, String)>::new(), Vec::new())
    }

    /// A redirect (`302`, `307`...) to `location`.
    pub fn redirect(status: u16, location: &str) -> Self {
        Self::raw(status, [("Location", location)], Vec::new())
    }

    /// This reply with one more header.
    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

/// What the server answers for one path.
#[derive(Clone)]
pub struct Route(Answer);

#[derive(Clone)]
enum Answer {
    Html(String),
    Fixed(Reply),
    RedirectAs {
        status: u16,
        host: String,
        path: String,
    },
    Handler(Arc<Handler>),
}

impl Route {
    /// `200 OK` with this HTML, where `{PORT}` stands for the server's
    /// port (pages that link to the same server under another host name).
    pub fn html(text: impl Into<String>) -> Self {
        Self(Answer::Html(text.into()))
    }

    /// `200 OK` with this JSON.
    pub fn json(value: &serde_json::Value) -> Self {
        Self::reply(Reply::json(value))
    }

    /// This reply, as it is, to every request.
    pub fn reply(reply: Reply) -> Self {
        Self(Answer::Fixed(reply))
    }

    /// `302 Found` to `location`.
    pub fn redirect(location: &str) -> Self {
        Self::reply(Reply::redirect(302, location))
    }

    /// `302 Found` to `path` on this server under the host name `host`
    /// (`localhost` for `127.0.0.1`): another site, as a browser sees it.
    pub fn redirect_as(host: &str, path: &str) -> Self {
        Self(Answer::RedirectAs {
            status: 302,
            host: host.to_owned(),
            path: path.to_owned(),
        })
    }

    /// `307 Temporary Redirect` (the method and body are sent again) to
    /// `path` under the host name `host`, as [`Route::redirect_as`].
    pub fn repost_as(host: &str, path: &str) -> Self {
        Self(Answer::RedirectAs {
            status: 307,
            host: host.to_owned(),
            path: path.to_owned(),
        })
    }

    /// Whatever `handler` answers to the request (it runs on the request's
    /// own thread, so it may take its time).
    pub fn handler(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        Self(Answer::Handler(Arc::new(handler)))
    }

    fn answer(&self, request: &Request, port: u16) -> Reply {
        match &self.0 {
            Answer::Html(text) => Reply::html(text.replace("{PORT}", &port.to_string())),
            Answer::Fixed(reply) => reply.clone(),
            Answer::RedirectAs { status, host, path } => {
                Reply::redirect(*status, &format!("http://{host}:{port}{path}"))
            }
            Answer::Handler(handler) => handler(request),
        }
    }
}

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Answer::Html(text) => write!(f, "Route::html({} bytes)", text.len()),
            Answer::Fixed(reply) => write!(f, "Route::reply({})", reply.status),
            Answer::RedirectAs { status, host, path } => {
                write!(f, "Route::redirect_as({status}, {host}, {path})")
            }
            Answer::Handler(_) => f.write_str("Route::handler(..)"),
        }
    }
}

/// What every connection thread shares.
struct State {
    port: u16,
    routes: HashMap<String, Route>,
    replies: Mutex<VecDeque<Reply>>,
    log: Mutex<Vec<Request>>,
    stopped: AtomicBool,
}

/// Stops the server when the last [`TestServer`] handle is dropped.
struct Running {
    state: Arc<State>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.state.stopped.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stopped`.
        let _ = TcpStream::connect((Ipv4Addr::LOCALHOST, self.state.port));
    }
}

/// An HTTP/1.1 server on a free port of 127.0.0.1. A request is answered
/// by the route of its path; a path without one gets the next canned reply;
/// when there is none left, `404`. Clones share the server, which stops
/// when the last of them is dropped.
#[derive(Clone)]
pub struct TestServer {
    running: Arc<Running>,
}

impl fmt::Debug for TestServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestServer")
            .field("port", &self.port())
            .field("routes", &self.running.state.routes.len())
            .finish_non_exhaustive()
    }
}

impl TestServer {
    /// Serves `routes` (a path without its query → its answer).
    pub fn start<P: Into<String>>(routes: impl IntoIterator<Item = (P, Route)>) -> Self {
        Self::serve(routes, Vec::new())
    }

    /// Answers every request with the next of `replies`, in order (a model
    /// endpoint whose answers the test wrote).
    pub fn replying(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self::serve(Vec::<(String, Route)>::new(), replies)
    }

    /// Serves `routes`, and answers any other path with the next of
    /// `replies`.
    pub fn serve<P: Into<String>>(
        routes: impl IntoIterator<Item = (P, Route)>,
        replies: impl IntoIterator<Item = Reply>,
    ) -> Self {
        let listener =
            TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind a port of 127.0.0.1");
        let port = listener
            .local_addr()
            .map(|address: SocketAddr| address.port())
            .expect("the server's address");
        let state = Arc::new(State {
            port,
            routes: routes
                .into_iter()
                .map(|(path, route)| (path.into(), route))
                .collect(),
            replies: Mutex::new(replies.into_iter().collect()),
            log: Mutex::default(),
            stopped: AtomicBool::new(false),
        });
        let accepting = Arc::clone(&state);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if accepting.stopped.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let state = Arc::clone(&accepting);
                std::thread::spawn(move || {
                    // A client that hangs up early is its own business.
                    let _ = answer(stream, &state);
                });
            }
        });
        Self {
            running: Arc::new(Running { state }),
        }
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.running.state.port
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port())
    }

    /// The absolute URL of `path` (`http://127.0.0.1:PORT/path`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url())
    }

    /// `path` on this server under the host name `host`
    /// (`http://localhost:PORT/path`): another site to a browser.
    pub fn url_as(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port())
    }

    /// Every request answered so far, oldest first.
    pub fn requests(&self) -> Vec<Request> {
        self.running
            .state
            .log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Reads one request from `stream`, records it and answers it.
fn answer(stream: TcpStream, state: &State) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut head = String::new();
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            content_length = value.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    if head.is_empty() {
        return Ok(());
    }
    // The rest beyond what is kept is read and dropped, so that a large
    // upload is answered rather than cut off.
    let mut body = vec![0; content_length.min(KEPT_BODY_BYTES)];
    reader.read_exact(&mut body)?;
    std::io::copy(
        &mut reader.by_ref().take((content_length - body.len()) as u64),
        &mut std::io::sink(),
    )?;
    let mut words = head.split_whitespace();
    let request = Request {
        method: words.next().unwrap_or("GET").to_owned(),
        target: words.next().unwrap_or("/").to_owned(),
        head: head.trim_end().to_owned(),
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    state
        .log
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(request.clone());

    let reply = match state.routes.get(request.path()) {
        Some(route) => route.answer(&request, state.port),
        None => state
            .replies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .unwrap_or_else(|| {
                Reply::raw(
                    404,
                    [("Content-Type", "text/plain; charset=utf-8")],
                    format!("nothing here answers {}", request.target),
                )
            }),
    };
    send(stream, &reply)
}

fn send(mut stream: TcpStream, reply: &Reply) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !reply
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("cache-control"))
    {
        head.push_str("Cache-Control: no-store\r\n");
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        reply.body.len()
    ));
    stream.write_all(head.as_bytes())?;
    stream.write_all(&reply.body)?;
    stream.flush()
}

/// The reason phrase of the statuses tests use (clients ignore it).
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `request` as it is and reads the whole answer (the server
    /// closes every connection).
    fn exchange(server: &TestServer, request: &str) -> String {
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, server.port())).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    fn get(server: &TestServer, target: &str, host: &str) -> String {
        exchange(
            server,
            &format!("GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n"),
        )
    }

    #[test]
    fn routes_answer_by_path_with_the_port_filled_in() {
        let server = TestServer::start([
            (
                "/page",
                Route::html("<a href=\"http://localhost:{PORT}/x\">x</a>"),
            ),
            ("/away", Route::redirect_as("localhost", "/page?q=1")),
            ("/again", Route::repost_as("localhost", "/page")),
            ("/data", Route::json(&serde_json::json!({"a": 1}))),
            (
                "/who",
                Route::handler(|r| Reply::html(format!("{} {}", r.method, r.query()))),
            ),
        ]);
        let port = server.port();
        let page = get(&server, "/page?ignored=1", "127.0.0.1");
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
        assert!(
            page.contains("Content-Type: text/html; charset=utf-8\r\n"),
            "{page}"
        );
        assert!(page.contains("Cache-Control: no-store\r\n"), "{page}");
        assert!(page.ends_with(&format!(
            "\r\n\r\n<a href=\"http://localhost:{port}/x\">x</a>"
        )));
        let away = get(&server, "/away", "127.0.0.1");
        assert!(away.starts_with("HTTP/1.1 302 Found\r\n"), "{away}");
        assert!(away.contains(&format!("Location: http://localhost:{port}/page?q=1\r\n")));
        assert!(get(&server, "/again", "x").starts_with("HTTP/1.1 307 "));
        assert!(get(&server, "/data", "x").ends_with("\r\n\r\n{\"a\":1}"));
        assert!(get(&server, "/who?n=2", "x").ends_with("\r\n\r\nGET n=2"));
        assert!(get(&server, "/missing", "x").starts_with("HTTP/1.1 404 "));
    }

    #[test]
    fn canned_replies_go_out_in_order_and_requests_are_recorded() {
        let server = TestServer::replying([
            Reply::json(&serde_json::json!({"n": 1})).with_header("retry-after", "1"),
            Reply::sse(["{\"d\":1}", "[DONE]"]),
            Reply::status(429, "busy"),
        ]);
        let body = r#"{"model":"m"}"#;
        let post = |path: &str| {
            exchange(
                &server,
                &format!(
                    "POST {path} HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer k\r\n\
                     Content-Length: {}\r\n\r\n{body}",
                    body.len()
                ),
            )
        };
        let first = post("/v1/chat");
        assert!(first.contains("retry-after: 1\r\n"), "{first}");
        assert!(first.ends_with("{\"n\":1}"), "{first}");
        assert!(post("/other").ends_with("data: {\"d\":1}\n\ndata: [DONE]\n\n"));
        assert!(post("/v1/chat").starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
        assert!(post("/v1/chat").starts_with("HTTP/1.1 404 "), "none left");

        let requests = server.requests();
        assert_eq!(requests.len(), 4);
        let first = &requests[0];
        assert_eq!((first.method.as_str(), first.path()), ("POST", "/v1/chat"));
        assert!(first.head.starts_with("POST /v1/chat HTTP/1.1\r\n"));
        assert_eq!(first.header("authorization"), Some("Bearer k"));
        assert_eq!(first.host(), "h");
        assert_eq!(first.json()["model"], "m");
        assert_eq!(requests[1].target, "/other");
    }

    #[test]
    fn a_large_body_is_read_whole_and_kept_in_part() {
        let server = TestServer::start([("/up", Route::reply(Reply::empty(204)))]);
        let body = "x".repeat(KEPT_BODY_BYTES + 5000);
        let answer = exchange(
            &server,
            &format!(
                "POST /up HTTP/1.1\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ),
        );
        assert!(
            answer.starts_with("HTTP/1.1 204 No Content\r\n"),
            "{answer}"
        );
        assert_eq!(server.requests()[0].body.len(), KEPT_BODY_BYTES);
        assert_eq!(server.requests()[0].json(), serde_json::Value::Null);
    }

    #[test]
    fn the_server_stops_with_its_last_handle() {
        let server = TestServer::start([("/", Route::html("hi"))]);
        let port = server.port();
        let clone = server.clone();
        drop(server);
        assert!(
            get(&clone, "/", "x").ends_with("hi"),
            "a clone keeps it running"
        );
        drop(clone);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
            assert!(std::time::Instant::now() < deadline, "still listening");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
