//! toolkit-browser on a real headless Chromium (docs/performance.md,
//! "Browser"). One browser, one session, two tabs, pages served from
//! 127.0.0.1 by the benchmark itself:
//!
//! - `page_map/1000_elements`: [`Browser::page_map`] of a page with 1,000
//!   interactive elements, every one of them mapped (target: under 50 ms).
//! - `actions/click` and `actions/type_text`: [`Browser::click`] on a
//!   counter button and [`Browser::type_text`] (clearing, then inserting
//!   11 characters, then reading the value back) into a text field
//!   (target: each under 60 ms median).
//! - The memory of the session with its two tabs (target: under 500 MiB):
//!   PSS and RSS summed over the browser's process tree (the main process
//!   from [`Browser::pid`] and its descendants), printed once the tabs are
//!   loaded and again after every benchmark has run.
//!
//! - `extract_280k/all_parts` against `extract_280k/whole_page_once`:
//!   reading a page of about 280,000 characters part by part through the
//!   `extract` action, against converting it once (target: all parts
//!   within 3× one whole read, since a page version is converted once).
//!
//! - `settle/static_page` against `settle/static_page_unsettled`: the
//!   page map of a small page that does not change, with the default
//!   settle limit and with none (`settle_limit(Duration::ZERO)`, a second
//!   session): what looking for changes adds to a quiet page (target:
//!   under 2 ms). `settle/fade_in` against `settle/fade_in_unsettled`: the
//!   same while a panel fades in over 0.3 s, restarted before each map.
//!
//! Reference points split those figures: one `Runtime.evaluate` round trip
//! (`round_trip/evaluate`), one `Target.getTargets` (`round_trip/tabs`,
//! which every page map starts with), and the Rust side of a map of 1,000
//! elements (`page_map/decode_1000`, `page_map/render_1000`). With
//! `--bench`, the benchmark also prints per-call percentiles and the time
//! the walk itself took inside the page.
//!
//! `TOOLKIT_BENCH_CHROME_ARGS` (space-separated) adds Chromium flags to
//! the launch, for experiments: for instance, what a flag saves in memory.
//!
//! Without Chromium (none configured through `CHROME` nor on the `PATH`)
//! the benchmark says so and exits successfully. Under `cargo test
//! --benches` each benchmark runs once.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, SamplingMode, measurement::WallTime};
use tokio::runtime::Runtime;
use toolkit_browser::{Browser, BrowserConfig, Element, PageMap, SafetyPolicy, find_executable};
use toolkit_tests::http::TestServer;

#[path = "support/pages.rs"]
mod fixtures;
#[path = "support/memory.rs"]
mod memory;
// The browser tests' generated pages (the long text page).
#[allow(dead_code)]
#[path = "../tests/browser/support/pages.rs"]
mod test_pages;

fn main() {
    let executable = match find_executable() {
        Ok(path) => path,
        Err(error) => {
            // The error says what was looked for and how to install one.
            println!("SKIPPED the browser benchmarks: {error}");
            return;
        }
    };
    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and
    // criterion then runs each benchmark once.
    let measuring = std::env::args().any(|a| a == "--bench");
    let mut criterion = Criterion::default().configure_from_args();
    run(&mut criterion, executable, measuring);
    criterion.final_summary();
}

/// The open session and what the benchmarks act on.
struct Setup {
    runtime: Runtime,
    browser: Browser,
    /// The tab showing the 1,000 elements.
    many_tab: String,
    /// The tab showing the counter and the text field.
    controls_tab: String,
    /// The page of about 280,000 characters of text.
    long_url: String,
    /// Serves the pages until the benchmark ends.
    _server: TestServer,
}

fn run(c: &mut Criterion, executable: PathBuf, measuring: bool) {
    let setup = launch(executable, measuring);
    let Setup {
        runtime: rt,
        browser,
        ..
    } = &setup;

    // ---------- the page map ----------
    switch(&setup, &setup.many_tab);
    let map = rt.block_on(browser.page_map()).expect("map /many");
    check_many(&map);
    let elements_json = serde_json::to_string(&map.elements).expect("elements as JSON");

    let mut group = c.benchmark_group("page_map");
    browser_sampling(&mut group);
    group.bench_function("1000_elements", |b| {
        b.iter(|| black_box(rt.block_on(browser.page_map()).expect("page map")));
    });
    group.finish();

    let mut group = c.benchmark_group("page_map");
    group.bench_function("decode_1000", |b| {
        b.iter(|| {
            let elements: Vec<Element> =
                serde_json::from_str(black_box(&elements_json)).expect("decode");
            black_box(elements)
        });
    });
    group.bench_function("render_1000", |b| b.iter(|| black_box(&map).render()));
    group.finish();

    let mut group = c.benchmark_group("round_trip");
    browser_sampling(&mut group);
    group.bench_function("evaluate", |b| {
        b.iter(|| black_box(rt.block_on(browser.evaluate("1")).expect("evaluate")));
    });
    group.bench_function("tabs", |b| {
        b.iter(|| black_box(rt.block_on(browser.tabs()).expect("tabs")));
    });
    group.finish();

    if measuring {
        let mut walks = Vec::new();
        let totals = per_call(100, || {
            let map = rt.block_on(browser.page_map()).expect("page map");
            walks.push(Duration::from_secs_f64(map.walk_ms / 1000.0));
        });
        walks.sort_unstable();
        println!(
            "page_map/1000_elements per call: {}; the walk inside the page: median {:.2?}; \
             the elements as JSON: {} KiB",
            percentiles(&totals),
            walks[walks.len() / 2],
            elements_json.len() / 1024
        );
    }

    // ---------- click and type ----------
    switch(&setup, &setup.controls_tab);
    let map = rt.block_on(browser.page_map()).expect("map /controls");
    let button = find(&map, |e| e.text.as_deref() == Some("Increment"));
    let field = find(&map, |e| e.placeholder.as_deref() == Some("Text"));
    let text = "hello world";

    let mut group = c.benchmark_group("actions");
    browser_sampling(&mut group);
    group.bench_function("click", |b| {
        b.iter(|| {
            let outcome = rt.block_on(browser.click(button)).expect("click");
            assert!(!outcome.effects.navigated && outcome.effects.new_tab.is_none());
            black_box(outcome)
        });
    });
    group.bench_function("type_text", |b| {
        b.iter(|| {
            let typed = rt
                .block_on(browser.type_text(field, text, true))
                .expect("type");
            assert!(typed.matches);
            black_box(typed)
        });
    });
    group.finish();

    if measuring {
        let clicks = per_call(200, || {
            rt.block_on(browser.click(button)).expect("click");
        });
        println!("actions/click per call: {}", percentiles(&clicks));
        let typings = per_call(200, || {
            rt.block_on(browser.type_text(field, text, true))
                .expect("type");
        });
        println!("actions/type_text per call: {}", percentiles(&typings));
    }

    // The page saw what the benchmarks did: trusted clicks and input.
    let clicks = rt
        .block_on(browser.evaluate("window.clicks"))
        .expect("read the counter");
    let inputs = rt
        .block_on(browser.evaluate("window.inputs"))
        .expect("read the input count");
    let value = rt
        .block_on(browser.evaluate("document.getElementById('t').value"))
        .expect("read the field");
    assert!(clicks.as_u64().is_some_and(|n| n > 0), "clicks: {clicks}");
    assert!(inputs.as_u64().is_some_and(|n| n > 0), "inputs: {inputs}");
    assert_eq!(value, text);

    report_memory("two tabs, after the benchmarks", browser, rt, measuring);
    if measuring {
        // The renderers' garbage from a burst of actions is collected once
        // the page has been idle for a while (V8's memory reducer).
        std::thread::sleep(Duration::from_secs(14));
        report_memory(
            "two tabs, idle 14 s after the benchmarks",
            browser,
            rt,
            measuring,
        );
    }

    // ---------- reading a long page ----------
    // After the memory figures: this tab then holds a long page.
    switch(&setup, &setup.controls_tab);
    rt.block_on(browser.navigate(&setup.long_url))
        .expect("load /long");
    let registry = toolkit_browser::registry(browser.clone(), SafetyPolicy::default())
        .build()
        .expect("the browser registry");
    // A new version of the page before each read, so that each read
    // converts it (an attribute change is a change like any other).
    let touch = "document.body.dataset.version = String(Math.random()); 1";
    let read = |start: usize| -> Option<usize> {
        let args = serde_json::json!({ "start": start });
        let outcome = rt.block_on(registry.dispatch(("extract", &args)));
        let text = outcome.result.to_text();
        assert!(!outcome.result.is_error(), "{text}");
        let next = text.rsplit("start=").next()?;
        if !text.contains("call extract with start=") {
            return None;
        }
        next.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()
    };
    let mut group = c.benchmark_group("extract_280k");
    browser_sampling(&mut group);
    group.sample_size(20);
    group.bench_function("whole_page_once", |b| {
        b.iter(|| {
            rt.block_on(browser.evaluate(touch)).expect("touch");
            let text = rt.block_on(browser.page_text()).expect("page text");
            assert!(text.markdown.len() > 250_000);
            black_box(text)
        });
    });
    group.bench_function("all_parts", |b| {
        b.iter(|| {
            rt.block_on(browser.evaluate(touch)).expect("touch");
            let mut parts = 1;
            let mut next = read(0);
            while let Some(start) = next {
                next = read(start);
                parts += 1;
            }
            assert!(parts >= 25, "{parts} parts");
            black_box(parts)
        });
    });
    group.finish();

    // ---------- waiting for the page to settle ----------
    switch(&setup, &setup.controls_tab);
    bench_settle(c, &setup, measuring);

    let Setup {
        runtime, browser, ..
    } = setup;
    runtime
        .block_on(browser.close())
        .expect("close the browser");
}

/// The page map with and without waiting for the page to settle, on a
/// quiet page and on one whose panel is fading in; the session that does
/// not wait is a second browser.
fn bench_settle(c: &mut Criterion, setup: &Setup, measuring: bool) {
    let rt = &setup.runtime;
    let settled = &setup.browser;
    let config = BrowserConfig::builder()
        .executable(find_executable().expect("found before"))
        .settle_limit(Duration::ZERO)
        .build();
    let unsettled = rt
        .block_on(Browser::launch(config))
        .expect("a second browser");
    let quiet = setup.long_url.replace("/long", "/controls");
    let fade = setup.long_url.replace("/long", "/fade");
    for browser in [settled, &unsettled] {
        rt.block_on(browser.navigate(&quiet))
            .expect("load /controls");
        // The first map of a document installs the page script.
        let map = rt.block_on(browser.page_map()).expect("page map");
        assert!(map.still_changing.is_empty(), "{}", map.render());
    }
    let mut group = c.benchmark_group("settle");
    browser_sampling(&mut group);
    group.measurement_time(Duration::from_secs(4));
    for (name, browser) in [
        ("static_page", settled),
        ("static_page_unsettled", &unsettled),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let map = rt.block_on(browser.page_map()).expect("page map");
                assert_eq!(map.settle_ms, 0.0);
                black_box(map)
            });
        });
    }
    for browser in [settled, &unsettled] {
        rt.block_on(browser.navigate(&fade)).expect("load /fade");
        rt.block_on(browser.page_map()).expect("page map");
    }
    group.sample_size(10);
    for (name, browser) in [("fade_in", settled), ("fade_in_unsettled", &unsettled)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(browser.evaluate("again()")).expect("fade in");
                black_box(rt.block_on(browser.page_map()).expect("page map"))
            });
        });
    }
    group.finish();
    // What a map taken mid-fade shows with and without the wait.
    let shown = |browser: &Browser| {
        rt.block_on(browser.evaluate("again()")).expect("fade in");
        let map = rt.block_on(browser.page_map()).expect("page map");
        (map.elements.len(), map.settle_ms)
    };
    let (with_wait, waited) = shown(settled);
    let (without, _) = shown(&unsettled);
    assert_eq!(with_wait, 2, "the settled map lists the panel's controls");
    if measuring {
        println!(
            "settle/fade_in: {with_wait} elements after waiting {waited:.0} ms; \
             {without} without waiting"
        );
    }
    rt.block_on(unsettled.close())
        .expect("close the second browser");
}

/// Starts the fixture server, launches the browser, and opens the two tabs,
/// reporting the memory at each step.
fn launch(executable: PathBuf, measuring: bool) -> Setup {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let server = TestServer::start(fixtures::routes());
    let extra = std::env::var("TOOLKIT_BENCH_CHROME_ARGS").unwrap_or_default();
    if !extra.trim().is_empty() {
        println!("extra Chromium flags: {extra}");
    }
    let config = BrowserConfig::builder()
        .executable(&executable)
        .args(extra.split_whitespace())
        .build();
    let browser = runtime
        .block_on(Browser::launch(config))
        .unwrap_or_else(|e| panic!("cannot launch {}: {e}", executable.display()));
    report_memory("one blank tab", &browser, &runtime, measuring);
    runtime
        .block_on(browser.navigate(&server.url("/many")))
        .expect("load /many");
    report_memory("one tab showing /many", &browser, &runtime, measuring);
    let many_tab = runtime
        .block_on(browser.current_tab())
        .expect("the first tab")
        .id;
    let controls_tab = runtime
        .block_on(browser.open_tab(&server.url("/controls")))
        .expect("open /controls in a second tab")
        .id;
    let tabs = runtime.block_on(browser.tabs()).expect("the tabs");
    assert_eq!(tabs.len(), 2, "{tabs:?}");
    report_memory("two tabs, just loaded", &browser, &runtime, measuring);
    Setup {
        runtime,
        browser,
        many_tab,
        controls_tab,
        long_url: server.url("/long"),
        _server: server,
    }
}

/// Criterion's settings for a benchmark that talks to the browser: each
/// call takes milliseconds, so every sample runs the same number of
/// iterations (flat sampling) and the measurement is longer than the
/// default.
fn browser_sampling(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(50)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(10));
}

fn switch(setup: &Setup, tab: &str) {
    setup
        .runtime
        .block_on(setup.browser.switch_tab(tab))
        .expect("switch tabs");
}

/// The map of `/many` must hold every one of its elements, each with its
/// own number.
fn check_many(map: &PageMap) {
    assert_eq!(
        map.elements.len(),
        fixtures::MANY,
        "every element of the grid is mapped"
    );
    assert!(!map.truncated);
    let mut numbers: Vec<u32> = map.elements.iter().map(|e| e.index).collect();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), fixtures::MANY, "numbers are distinct");
    for tag in ["button", "a", "input", "select"] {
        assert!(
            map.elements.iter().any(|e| e.tag == tag),
            "the grid has a <{tag}>"
        );
    }
}

fn find(map: &PageMap, what: impl Fn(&Element) -> bool) -> u32 {
    map.elements
        .iter()
        .find(|e| what(e))
        .unwrap_or_else(|| panic!("not in the map:\n{}", map.render()))
        .index
}

/// Prints the memory of the browser's process tree. When measuring, the
/// browser is first left idle for a second, so that the processes a step
/// starts in the background (a spare renderer) are counted.
fn report_memory(when: &str, browser: &Browser, rt: &Runtime, measuring: bool) {
    if measuring {
        std::thread::sleep(Duration::from_secs(1));
    }
    let pid = rt
        .block_on(browser.pid())
        .expect("a launched session has a pid");
    let usage = memory::usage_of_tree(pid);
    println!("memory, {when}: {}", usage.summary());
    if measuring {
        print!("{}", usage.breakdown());
    }
    // Chromium's processes all name the profile folder; one that is not in
    // the tree (reparented by a double fork) would be missing above.
    if let Some(profile) = rt.block_on(browser.profile_dir()) {
        let outside: Vec<u32> = toolkit_browser::processes_mentioning(&profile)
            .into_iter()
            .filter(|p| !usage.processes.iter().any(|q| q.pid == *p))
            .collect();
        if !outside.is_empty() {
            println!("    outside the tree but using the profile: {outside:?}");
        }
    }
    let others = memory::same_executable_outside(&usage);
    if !others.is_empty() {
        println!(
            "    note: {} processes of other sessions run the same executable; they share \
             its pages, so this PSS reads lower than for this session alone",
            others.len()
        );
    }
}

/// Runs `call` `n` times, timing each call.
fn per_call(n: usize, mut call: impl FnMut()) -> Vec<Duration> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        call();
        times.push(started.elapsed());
    }
    times.sort_unstable();
    times
}

/// `p50 …, p90 …, max …` of sorted durations.
fn percentiles(sorted: &[Duration]) -> String {
    let at = |q: usize| sorted[(sorted.len() * q / 100).min(sorted.len() - 1)];
    format!(
        "p50 {:.2?}, p90 {:.2?}, p99 {:.2?}, max {:.2?} ({} calls)",
        at(50),
        at(90),
        at(99),
        sorted[sorted.len() - 1],
        sorted.len()
    )
}
