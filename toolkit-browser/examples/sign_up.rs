//! A scripted agent on a real headless Chromium: it reads the page map,
//! fills in a sign-up form, submits it and reports what the page says.
//!
//! ```sh
//! cargo run -p toolkit-browser --example sign_up
//! ```
//!
//! The site is served from 127.0.0.1 by this program, and the "model" is a
//! script that picks element numbers from the page map by their labels, as
//! a model would. Nothing leaves the machine. Needs Chromium
//! (`apt-get install -y --no-install-recommends chromium`, or set `CHROME`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use toolkit_browser::{Browser, BrowserConfig, BrowserError, PageMap, SafetyPolicy};
use toolkit_core::{Registry, ToolCall};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let site = match serve_site() {
        Ok(site) => site,
        Err(error) => {
            eprintln!("could not serve the example site on 127.0.0.1: {error}");
            return ExitCode::FAILURE;
        }
    };
    let browser = match Browser::launch(BrowserConfig::default()).await {
        Ok(browser) => browser,
        Err(error @ BrowserError::NoBrowser { .. }) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
        Err(error) => {
            eprintln!("Chromium did not start: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = run_agent(&browser, &site).await;
    // Closing ends the browser's processes and removes its profile.
    let closed = browser.close().await;
    match (outcome, closed) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(error), _) => {
            eprintln!("the agent stopped: {error}");
            ExitCode::FAILURE
        }
        (Ok(()), Err(error)) => {
            eprintln!("the browser did not close cleanly: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The agent loop: show the page, decide on one action, run it, print
/// what the model would be sent.
async fn run_agent(browser: &Browser, site: &str) -> Result<(), Box<dyn std::error::Error>> {
    // Only the example site may be visited, whatever the page links to.
    let policy = SafetyPolicy::builder()
        .allow_domains(["127.0.0.1"])
        .build()?;
    let registry = toolkit_browser::registry(browser.clone(), policy).build()?;

    let mut agent = Agent::default();
    for step in 1.. {
        let map = browser.page_map().await?;
        println!("━━━ step {step}: the page map ━━━");
        println!("{}", map.render());
        let call = agent.next_call(&map, site)?;
        let Some(done) = act(&registry, step, call).await else {
            continue;
        };
        println!("The agent finished: success = {done}.");
        return Ok(());
    }
    unreachable!("the loop returns")
}

/// Runs one call as the model made it and prints the result; returns the
/// task's success once the agent called `done`.
async fn act(registry: &Registry, step: usize, call: ToolCall) -> Option<bool> {
    println!("━━━ step {step}: the action ━━━");
    println!("{} {}", call.name, call.arguments_json());
    let turn = registry.dispatch_turn(std::slice::from_ref(&call)).await;
    let result = &turn.results[0].result;
    println!("━━━ step {step}: the result ━━━");
    println!("{}", result.to_text());
    if let Some(memory) = result.memory() {
        println!("  memory: {memory}");
    }
    println!();
    result.success()
}

/// The stand-in for a model: one decision per step, made from the page map
/// alone, the way a model reads it: by labels, never by fixed numbers.
#[derive(Default)]
struct Agent {
    step: usize,
}

impl Agent {
    /// The next call, or why the script cannot go on (an element it needs is
    /// not on the page).
    fn next_call(&mut self, map: &PageMap, site: &str) -> Result<ToolCall, String> {
        self.step += 1;
        let (name, arguments) = match self.step {
            1 => ("navigate", json!({"url": site})),
            2 => ("input", typing(map, "Name", "Ada Lovelace")?),
            3 => ("input", typing(map, "Email", "ada@example.com")?),
            4 => (
                "select_option",
                json!({"index": number(map, "Plan")?, "option": "Pro"}),
            ),
            5 => (
                "click",
                json!({"index": number(map, "Send me the newsletter")?}),
            ),
            6 => ("click", json!({"index": number(map, "Create account")?})),
            7 => ("extract", json!({})),
            8 => (
                "done",
                json!({"text": format!("Signed up; the site says: {}", map.title), "success": true}),
            ),
            _ => return Err("the script has nothing left to do, but the task is not done".into()),
        };
        Ok(ToolCall::new(
            format!("call_{}", self.step),
            name,
            arguments,
        ))
    }
}

fn typing(map: &PageMap, label: &str, text: &str) -> Result<Value, String> {
    Ok(json!({"index": number(map, label)?, "text": text}))
}

/// The number of the element whose accessible name (its label, or a
/// button's text) is `label`.
fn number(map: &PageMap, label: &str) -> Result<u32, String> {
    map.elements
        .iter()
        .find(|element| element.name.as_deref() == Some(label))
        .map(|element| element.index)
        .ok_or_else(|| format!("the page map has no element labelled {label:?}"))
}

/// Serves the example site on a free port of 127.0.0.1 and returns its
/// address.
fn serve_site() -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let address = format!("http://{}/", listener.local_addr()?);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            // A thread per connection: the browser may open a connection
            // ahead of time and send nothing on it, which must not hold up
            // the next request. A broken connection is the browser's
            // business; the site keeps serving.
            std::thread::spawn(move || {
                let _ = answer(stream);
            });
        }
    });
    Ok(address)
}

fn answer(mut stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    // The request line and headers of a GET, at most 64 KiB of them.
    let mut reader = BufReader::new(stream.try_clone()?.take(64 * 1024));
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // The rest of the request (headers; a GET has no body) is not needed.
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
    }
    let target = request_line.split(' ').nth(1).unwrap_or("/");
    let (status, body) = match target.split_once('?') {
        None if target == "/" => ("200 OK", SIGN_UP.to_owned()),
        Some(("/welcome", query)) => ("200 OK", welcome(query)),
        _ => ("404 Not Found", String::from("<h1>Not found</h1>")),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

const SIGN_UP: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign up</title></head>
<body>
  <h1>Create your account</h1>
  <form action="/welcome" method="get">
    <p><label for="name">Name</label> <input id="name" name="name" required></p>
    <p><label for="email">Email</label> <input id="email" name="email" type="email" required></p>
    <p><label for="plan">Plan</label>
      <select id="plan" name="plan">
        <option>Free</option>
        <option>Pro</option>
        <option>Team</option>
      </select></p>
    <p><label><input type="checkbox" name="news" value="yes"> Send me the newsletter</label></p>
    <p><button type="submit">Create account</button></p>
  </form>
  <p><a href="https://elsewhere.example/">Our partners</a></p>
</body></html>"#;

fn welcome(query: &str) -> String {
    let field = |key: &str| {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(name, _)| *name == key)
            .map(|(_, value)| decode(value))
            .unwrap_or_default()
    };
    let news = if field("news") == "yes" {
        "The newsletter will reach you weekly."
    } else {
        "No newsletter."
    };
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Welcome, {name}</title></head><body><h1>Welcome, {name}!</h1>\
         <p>Your {plan} plan is ready. We wrote to {email}.</p><p>{news}</p></body></html>",
        name = escape(&field("name")),
        plan = escape(&field("plan")),
        email = escape(&field("email")),
    )
}

/// Decodes a form value: `+` is a space, `%XX` a byte.
fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match bytes
                .get(i + 1..i + 3)
                .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            {
                Some(byte) => {
                    out.push(byte);
                    i += 2;
                }
                None => out.push(b'%'),
            },
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
