//! The page map side by side with browser-use's, on the same pages, in one
//! run (`scripts/compare-browser-use`; docs/performance.md, "Page map
//! against browser-use").
//!
//! The fixture site of the browser tests (`tests/browser/support/site.rs`:
//! the pages of `tests/pages/`, the realistic ones among them) is served
//! from 127.0.0.1. For each page, this crate's
//! session maps it (`Browser::page_map` then `PageMap::render`, the text
//! the model reads), then browser-use (`compare_browser_use.py`, its DOM
//! service called directly, on its own session of the same Chromium)
//! maps it; after one untimed map each, this crate maps it `COMPARE_RUNS`
//! times (15 by default) and browser-use twice as often (before and after
//! each of the round trips below), the two sides in turn (so that both
//! meet the same load on a busy machine), and the median time is
//! reported, with the walk's own time inside the page and the time of one
//! round trip to the page that does nothing there (`evaluate("1")`, timed
//! between two of browser-use's maps, as the maps are). Then the elements
//! are matched by position:
//!
//! - the same element: the same tag, centre and size within 4 px;
//! - parts of one control: a differently tagged element whose box holds
//!   the other's centre, at most forty times its area (a `<label>` and
//!   the `<input>` it wraps, a `<select>` and its inner button);
//!
//! and every element browser-use offers that this crate does not is
//! listed (and the other way round). Both count only elements within the
//! viewport extended by 1,000 px above and below (the region both map).
//!
//! `COMPARE_PAGES=/shop,/form` limits the pages. The maps' texts are
//! written under `target/tmp/compare-browser-use/`.
//!
//! `COMPARE_DIR=FOLDER` compares on saved real pages instead: each folder
//! in FOLDER (or link to one) is a saved site, served as it is by
//! Python's `http.server` from 127.0.0.1, and `COMPARE_SAMPLE` of its
//! `.html` files (20 by default, evenly spread over their sorted paths)
//! are mapped. A page either side fails on is reported and left out. The
//! report ends with the median and the 90th percentile of the per-page
//! ratio of this crate's map time to browser-use's.
//!
//! Without the browser-use environment (`TOOLKIT_BROWSER_USE_PYTHON`,
//! which `scripts/compare-browser-use` sets up) or without Chromium the
//! benchmark says so and exits successfully.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use toolkit_browser::{Browser, BrowserConfig, Element, find_executable};
use toolkit_tests::http::TestServer;

// The browser tests' fixture site.
#[allow(dead_code)]
#[path = "../tests/browser/support/pages.rs"]
mod pages;
#[path = "../tests/browser/support/site.rs"]
mod site;

/// The pages compared: the fixture site, then the realistic pages.
const PAGES: &[&str] = &[
    "/form",
    "/counter",
    "/inputs",
    "/many",
    "/links",
    "/popup",
    "/long",
    "/unicode",
    "/dialog",
    "/order",
    "/widgets",
    "/article",
    "/upload",
    "/login",
    "/guarded",
    "/shop",
    "/blog",
    "/booking",
    "/checkout",
    "/components",
];

/// The viewport both sessions use, and the band beyond it both map.
const VIEWPORT_HEIGHT: f64 = 800.0;
const BAND: f64 = 1000.0;

/// Whether `python` runs and imports browser-use; the reason when not.
fn peer_installed(python: &Path) -> Result<(), String> {
    if !python.is_file() {
        return Err(format!(
            "TOOLKIT_BROWSER_USE_PYTHON is {}, which does not exist",
            python.display()
        ));
    }
    let status = Command::new(python)
        .args(["-c", "import browser_use"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|error| format!("{} cannot be run: {error}", python.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} cannot import browser_use", python.display()))
    }
}

/// How long a page is left to settle after its load event (frames set by
/// scripts, custom elements) before it is mapped.
const SETTLE: Duration = Duration::from_millis(400);

fn main() {
    let Some(python) = std::env::var_os("TOOLKIT_BROWSER_USE_PYTHON").map(PathBuf::from) else {
        println!(
            "SKIPPED the browser-use comparison: TOOLKIT_BROWSER_USE_PYTHON is not set \
             (run scripts/compare-browser-use)"
        );
        return;
    };
    // `scripts/deps --print-env` names the virtualenv whether or not it is
    // installed: a missing or incomplete one is a skip, not a crash.
    if let Err(reason) = peer_installed(&python) {
        println!(
            "SKIPPED the browser-use comparison: {reason} \
             (scripts/compare-browser-use installs it)"
        );
        return;
    }
    let executable = match find_executable() {
        Ok(path) => path,
        Err(error) => {
            println!("SKIPPED the browser-use comparison: {error}");
            return;
        }
    };
    let runs: usize = std::env::var("COMPARE_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15)
        .max(1);
    let only: Vec<String> = std::env::var("COMPARE_PAGES")
        .map(|p| p.split(',').map(|s| s.trim().to_owned()).collect())
        .unwrap_or_default();

    // The fixture site, or a folder of saved sites; either stays up for
    // the whole run.
    let mut fixture_site = None;
    let mut saved_site = None;
    let pages: Vec<(String, String)> = match std::env::var_os("COMPARE_DIR") {
        Some(dir) if !Path::new(&dir).is_dir() => {
            println!(
                "SKIPPED the browser-use comparison: COMPARE_DIR is {}, which is not a folder \
                 (scripts/compare-browser-use --saved-sites makes it)",
                Path::new(&dir).display()
            );
            return;
        }
        Some(dir) => {
            let sample = std::env::var("COMPARE_SAMPLE")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(20);
            let site = SavedSite::serve(Path::new(&dir));
            let pages = saved_pages(Path::new(&dir), sample)
                .into_iter()
                .filter(|p| only.is_empty() || only.iter().any(|o| o == p))
                .map(|p| {
                    let url = format!("{}{p}", site.base_url);
                    (p, url)
                })
                .collect();
            saved_site = Some(site);
            pages
        }
        None => {
            let server = TestServer::start(site::routes());
            let pages = PAGES
                .iter()
                .filter(|p| only.is_empty() || only.iter().any(|o| o == *p))
                .map(|p| ((*p).to_owned(), server.url(p)))
                .collect();
            fixture_site = Some(server);
            pages
        }
    };
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare-browser-use");
    std::fs::create_dir_all(&out_dir).expect("create the output folder");

    let mut peer = Peer::start(&python, &executable);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let config = BrowserConfig::builder().executable(&executable).build();
    let browser = runtime
        .block_on(Browser::launch(config))
        .unwrap_or_else(|e| panic!("cannot launch {}: {e}", executable.display()));
    let user_agent = runtime
        .block_on(browser.evaluate("navigator.userAgent"))
        .expect("the user agent");

    println!("Chromium: {} ({})", peer.product, executable.display());
    println!("this crate: {user_agent}");
    println!(
        "{runs} timed maps per page and side, medians; {} pages\n",
        pages.len()
    );

    let mut rows = Vec::new();
    let mut details = String::new();
    let mut left_out = Vec::new();
    for (path, url) in &pages {
        let mut ours = match runtime.block_on(open_ours(&browser, url)) {
            Ok(maps) => maps,
            Err(error) => {
                left_out.push(format!("- {path}: this crate: {error}"));
                continue;
            }
        };
        let mut theirs = match peer.open(url) {
            Ok(maps) => maps,
            Err(error) => {
                left_out.push(format!("- {path}: browser-use: {error}"));
                continue;
            }
        };
        // The two sides in turn, so that both meet the same load: our map,
        // theirs, then one round trip of ours that does nothing in the
        // page, after the same pause (the floor under any map that asks
        // the page), and theirs again.
        let mut floor_ms = Vec::with_capacity(runs);
        for _ in 0..runs {
            let (ms, walk_ms) = runtime.block_on(time_ours(&browser));
            ours.times_ms.push(ms);
            ours.walk_ms.push(walk_ms);
            theirs.times_ms.push(peer.again());
            floor_ms.push(runtime.block_on(time_round_trip(&browser)));
            theirs.times_ms.push(peer.again());
        }
        let name = path.trim_start_matches('/').replace('/', "_");
        std::fs::write(out_dir.join(format!("{name}.ours.txt")), &ours.text).expect("write");
        std::fs::write(
            out_dir.join(format!("{name}.browser-use.txt")),
            &theirs.text,
        )
        .expect("write");
        let compared = compare(&ours.elements, &theirs.elements);
        details.push_str(&compared.listing(path));
        rows.push(Row {
            page: path,
            ours_ms: median(&ours.times_ms),
            walk_ms: median(&ours.walk_ms),
            floor_ms: median(&floor_ms),
            theirs_ms: median(&theirs.times_ms),
            ours_chars: ours.text.chars().count(),
            orientation: ours.orientation,
            theirs_chars: theirs.text.chars().count(),
            compared,
        });
    }
    runtime
        .block_on(browser.close())
        .expect("close the browser");
    peer.finish();
    drop((fixture_site, saved_site));

    let mut report = format!("{}\n{}\n", table(&rows), summary(&rows));
    if !left_out.is_empty() {
        report.push_str(&format!(
            "\nLeft out ({}):\n\n{}\n",
            left_out.len(),
            left_out.join("\n")
        ));
    }
    report.push_str(&format!("\n{details}"));
    println!("{report}");
    std::fs::write(out_dir.join("report.md"), report).expect("write");
    println!("maps and this report: {}", out_dir.display());
}

/// One map of one side: its times, its text and its elements.
struct Maps {
    times_ms: Vec<f64>,
    /// This crate's walk inside the page, by the page's own clock.
    walk_ms: Vec<f64>,
    text: String,
    elements: Vec<Found>,
    /// This crate's orientation texts: how many, and their characters.
    orientation: (usize, usize),
}

/// An element as either side offers it, for matching.
#[derive(Debug, Clone)]
struct Found {
    tag: String,
    /// The box in the top-level page, CSS pixels; `None` when the side
    /// gives none.
    rect: Option<[f64; 4]>,
    /// How it reads in a listing.
    label: String,
}

impl Found {
    fn in_band(&self) -> bool {
        self.rect
            .is_none_or(|[_, y, _, h]| y + h > -BAND && y < VIEWPORT_HEIGHT + BAND)
    }

    fn centre(&self) -> Option<(f64, f64)> {
        self.rect.map(|[x, y, w, h]| (x + w / 2.0, y + h / 2.0))
    }
}

/// Opens `url` and maps it once (untimed: the first map installs the page
/// script).
async fn open_ours(browser: &Browser, url: &str) -> Result<Maps, String> {
    browser.navigate(url).await.map_err(|e| e.to_string())?;
    tokio::time::sleep(SETTLE).await;
    let map = browser.page_map().await.map_err(|e| e.to_string())?;
    let text = map.render();
    let elements = map.elements.iter().map(found_ours).collect();
    let chars = map.texts.iter().map(|t| t.text.chars().count()).sum();
    Ok(Maps {
        times_ms: Vec::new(),
        walk_ms: Vec::new(),
        text,
        elements,
        orientation: (map.texts.len(), chars),
    })
}

/// One map of the open page, as the model reads it, timed in
/// milliseconds, with the walk's own time inside the page.
async fn time_ours(browser: &Browser) -> (f64, f64) {
    let started = Instant::now();
    let map = browser.page_map().await.expect("page map");
    std::hint::black_box(map.render());
    (started.elapsed().as_secs_f64() * 1000.0, map.walk_ms)
}

/// One round trip to the open page that does nothing there
/// (`evaluate("1")`), timed in milliseconds.
async fn time_round_trip(browser: &Browser) -> f64 {
    let started = Instant::now();
    browser.evaluate("1").await.expect("a round trip");
    started.elapsed().as_secs_f64() * 1000.0
}

#[allow(clippy::cast_precision_loss)] // pixel values
fn found_ours(e: &Element) -> Found {
    Found {
        tag: e.tag.clone(),
        rect: Some([e.x as f64, e.y as f64, e.w as f64, e.h as f64]),
        label: format!("{} at {},{} {}x{}", e.render(), e.x, e.y, e.w, e.h),
    }
}

/// browser-use, running `compare_browser_use.py` in its own environment.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    product: String,
}

#[derive(Deserialize)]
struct PeerElement {
    index: u64,
    tag: String,
    x: Option<f64>,
    y: Option<f64>,
    w: Option<f64>,
    h: Option<f64>,
    #[serde(default)]
    attrs: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    other_target: bool,
}

#[derive(Deserialize)]
struct PeerAnswer {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    times_ms: Vec<f64>,
    #[serde(default)]
    text: String,
    #[serde(default)]
    elements: Vec<PeerElement>,
}

impl Peer {
    fn start(python: &Path, executable: &Path) -> Self {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/compare_browser_use.py"
        );
        let mut child = Command::new(python)
            .arg(script)
            .arg(executable)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("browser-use's first line");
        let ready: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("browser-use did not start ({e}): {line:?}"));
        let product = ready["product"].as_str().unwrap_or("?").to_owned();
        Self {
            child,
            stdin,
            stdout,
            product,
        }
    }

    fn ask(&mut self, request: &serde_json::Value) -> Result<PeerAnswer, String> {
        writeln!(self.stdin, "{request}").expect("write to browser-use");
        self.stdin.flush().expect("flush");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read browser-use");
        let answer: PeerAnswer = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("browser-use answered {line:?}: {e}"));
        match answer.error {
            Some(error) => Err(error),
            None => Ok(answer),
        }
    }

    /// Opens `url` and maps it once (untimed).
    fn open(&mut self, url: &str) -> Result<Maps, String> {
        let answer = self.ask(&serde_json::json!({
            "url": url,
            "settle_ms": SETTLE.as_millis(),
        }))?;
        Ok(Maps {
            times_ms: Vec::new(),
            walk_ms: Vec::new(),
            text: answer.text,
            elements: answer.elements.iter().map(found_theirs).collect(),
            orientation: (0, 0),
        })
    }

    /// One more map of the open page, timed in milliseconds (NaN when it
    /// failed: the median then reads past it).
    fn again(&mut self) -> f64 {
        self.ask(&serde_json::json!({ "again": true }))
            .ok()
            .and_then(|answer| answer.times_ms.first().copied())
            .unwrap_or(f64::NAN)
    }

    fn finish(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn found_theirs(e: &PeerElement) -> Found {
    let rect = match (e.x, e.y, e.w, e.h) {
        (Some(x), Some(y), Some(w), Some(h)) => Some([x, y, w, h]),
        _ => None,
    };
    let mut label = format!("[{}]<{}", e.index, e.tag);
    for (key, value) in &e.attrs {
        let value = value.as_str().unwrap_or_default();
        label.push_str(&format!(" {key}={value:?}"));
    }
    label.push('>');
    if !e.name.is_empty() {
        label.push_str(&format!(" name={:?}", e.name));
    }
    if !e.text.is_empty() && e.text != e.name {
        label.push_str(&format!(" text={:?}", e.text));
    }
    if e.other_target {
        label.push_str(" (in a frame from another process)");
    }
    match rect {
        Some([x, y, w, h]) => label.push_str(&format!(" at {x:.0},{y:.0} {w:.0}x{h:.0}")),
        None => label.push_str(" (no box)"),
    }
    Found {
        tag: e.tag.to_lowercase(),
        rect,
        label,
    }
}

/// How the two sides' elements of one page match.
struct Compared {
    ours: usize,
    theirs: usize,
    /// Both offer it as the same element.
    same: usize,
    /// browser-use's element is a part of a control this crate offers
    /// whole (or the other way round).
    parts: usize,
    theirs_only: Vec<Found>,
    ours_only: Vec<Found>,
}

fn compare(ours: &[Found], theirs: &[Found]) -> Compared {
    let ours: Vec<&Found> = ours.iter().filter(|f| f.in_band()).collect();
    let theirs: Vec<&Found> = theirs.iter().filter(|f| f.in_band()).collect();
    let mut ours_used = vec![false; ours.len()];
    let mut theirs_used = vec![false; theirs.len()];
    let mut same = 0;
    for (t, theirs_one) in theirs.iter().enumerate() {
        let hit = ours.iter().enumerate().position(|(o, ours_one)| {
            !ours_used[o] && ours_one.tag == theirs_one.tag && same_box(ours_one, theirs_one)
        });
        if let Some(o) = hit {
            ours_used[o] = true;
            theirs_used[t] = true;
            same += 1;
        }
    }
    // Parts of one control: several of browser-use's elements may be
    // parts of one of ours, and one of ours may be part of one of theirs.
    let mut parts = 0;
    for (t, theirs_one) in theirs.iter().enumerate() {
        if theirs_used[t] {
            continue;
        }
        if let Some(o) = ours
            .iter()
            .position(|ours_one| part_of(ours_one, theirs_one))
        {
            ours_used[o] = true;
            theirs_used[t] = true;
            parts += 1;
        }
    }
    for (o, ours_one) in ours.iter().enumerate() {
        if !ours_used[o]
            && theirs
                .iter()
                .any(|theirs_one| part_of(ours_one, theirs_one))
        {
            ours_used[o] = true;
        }
    }
    Compared {
        ours: ours.len(),
        theirs: theirs.len(),
        same,
        parts,
        theirs_only: theirs
            .iter()
            .zip(&theirs_used)
            .filter(|(_, used)| !**used)
            .map(|(f, _)| (*f).clone())
            .collect(),
        ours_only: ours
            .iter()
            .zip(&ours_used)
            .filter(|(_, used)| !**used)
            .map(|(f, _)| (*f).clone())
            .collect(),
    }
}

fn same_box(a: &Found, b: &Found) -> bool {
    match (a.rect, b.rect) {
        (Some(ra), Some(rb)) => ra.iter().zip(rb).all(|(p, q)| (p - q).abs() <= 4.0),
        _ => false,
    }
}

/// Whether one box holds the other's centre, with areas within a factor
/// of forty (a label and the checkbox it wraps).
fn part_of(a: &Found, b: &Found) -> bool {
    let (Some(ra), Some(rb)) = (a.rect, b.rect) else {
        return false;
    };
    let holds = |r: [f64; 4], (cx, cy): (f64, f64)| {
        cx >= r[0] - 1.0 && cx <= r[0] + r[2] + 1.0 && cy >= r[1] - 1.0 && cy <= r[1] + r[3] + 1.0
    };
    let (area_a, area_b) = ((ra[2] * ra[3]).max(1.0), (rb[2] * rb[3]).max(1.0));
    let ratio = area_a.max(area_b) / area_a.min(area_b);
    let centred = match (a.centre(), b.centre()) {
        (Some(ca), Some(cb)) => holds(ra, cb) || holds(rb, ca),
        _ => false,
    };
    centred && ratio <= 40.0
}

impl Compared {
    fn listing(&self, page: &str) -> String {
        let mut out = String::new();
        if self.theirs_only.is_empty() && self.ours_only.is_empty() {
            return out;
        }
        out.push_str(&format!("### {page}\n\n"));
        if !self.theirs_only.is_empty() {
            out.push_str("Offered by browser-use only:\n\n");
            for f in &self.theirs_only {
                out.push_str(&format!("- `{}`\n", f.label));
            }
            out.push('\n');
        }
        if !self.ours_only.is_empty() {
            out.push_str("Offered by this crate only:\n\n");
            for f in &self.ours_only {
                out.push_str(&format!("- `{}`\n", f.label));
            }
            out.push('\n');
        }
        out
    }
}

struct Row<'a> {
    page: &'a str,
    ours_ms: f64,
    walk_ms: f64,
    floor_ms: f64,
    theirs_ms: f64,
    ours_chars: usize,
    theirs_chars: usize,
    orientation: (usize, usize),
    compared: Compared,
}

fn table(rows: &[Row<'_>]) -> String {
    let mut out = String::from(
        "| page | map ms, ours | walk ms, ours | one round trip ms | map ms, browser-use | ratio | \
         browser-use ÷ one round trip | map chars, ours | map chars, browser-use | \
         orientation texts, ours (chars) | elements, ours | elements, browser-use | same | \
         parts of one control | browser-use only | ours only |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let c = &r.compared;
        out.push_str(&format!(
            "| {} | {:.1} | {:.1} | {:.2} | {:.1} | 1/{:.1} | {:.1} | {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} |\n",
            r.page,
            r.ours_ms,
            r.walk_ms,
            r.floor_ms,
            r.theirs_ms,
            r.theirs_ms / r.ours_ms,
            r.theirs_ms / r.floor_ms,
            r.ours_chars,
            r.theirs_chars,
            r.orientation.0,
            r.orientation.1,
            c.ours,
            c.theirs,
            c.same,
            c.parts,
            c.theirs_only.len(),
            c.ours_only.len(),
        ));
    }
    out
}

/// The per-page ratios of this crate's map time to browser-use's: median,
/// 90th percentile and the range.
fn summary(rows: &[Row<'_>]) -> String {
    let mut ratios: Vec<f64> = rows
        .iter()
        .map(|r| r.ours_ms / r.theirs_ms)
        .filter(|r| r.is_finite())
        .collect();
    if ratios.is_empty() {
        return "No page was mapped by both sides.".to_owned();
    }
    ratios.sort_by(f64::total_cmp);
    let within = |limit: f64| ratios.iter().filter(|&&r| r <= limit).count();
    format!(
        "Per-page ratio of this crate's map time to browser-use's, {} pages: median {:.3}, \
         90th percentile {:.3}, from {:.3} to {:.3}; at most 0.1 on {} pages, at most 0.25 on {}.",
        ratios.len(),
        percentile(&ratios, 0.5),
        percentile(&ratios, 0.9),
        ratios[0],
        ratios[ratios.len() - 1],
        within(0.1),
        within(0.25),
    )
}

/// The `p` quantile of sorted `values`, by the nearest rank.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The median of `times`, leaving out failed (NaN) ones.
fn median(times: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = times.iter().copied().filter(|t| !t.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// A folder of saved sites served as it is, by Python's `http.server`
/// from 127.0.0.1 (symbolic links followed), for as long as it lives.
struct SavedSite {
    child: Child,
    base_url: String,
}

impl SavedSite {
    fn serve(dir: &Path) -> Self {
        let mut child = Command::new("python3")
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start python3 -m http.server: {e}"));
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut line = String::new();
        stdout
            .read_line(&mut line)
            .expect("http.server's first line");
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("http.server said {line:?}"));
        // Its log of requests is not read: let it go nowhere.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        Self {
            child,
            base_url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for SavedSite {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `sample` `.html` pages of each site in `dir` (a folder or a link to
/// one), evenly spread over their sorted paths, as paths from `dir`.
fn saved_pages(dir: &Path, sample: usize) -> Vec<String> {
    let mut sites: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_dir())
        .collect();
    sites.sort();
    let mut pages = Vec::new();
    for site in sites {
        let mut found = Vec::new();
        html_files(&site, 0, &mut found);
        found.sort();
        let step = found.len().div_ceil(sample.max(1)).max(1);
        for path in found.iter().step_by(step).take(sample) {
            let relative = path.strip_prefix(dir).expect("under the folder");
            pages.push(format!("/{}", relative.to_string_lossy()));
        }
    }
    pages
}

/// The `.html` files under `dir`, a few levels deep.
fn html_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > 4 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            html_files(&path, depth + 1, out);
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
}
