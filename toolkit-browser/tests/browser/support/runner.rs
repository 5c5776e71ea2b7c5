//! The test runner of the browser scenarios, speaking libtest's language
//! so that `cargo test` and cargo-nextest treat every scenario as a test of
//! its own, while one Chromium serves them all (launching one costs about
//! half a second, and a browser shared by `#[test]` functions could not be
//! closed reliably: statics are never dropped).
//!
//! Understood: filters (substrings of the name; whole names with
//! `--exact`), `--skip FILTER`, `--list` (`NAME: test` lines, which is what
//! nextest reads with `--format terse`), `--ignored` (no scenario is
//! ignored, so it runs none) and `--include-ignored`. Anything else libtest
//! accepts (`--nocapture`, `--test-threads N`, `--color X`, `-q`...) is
//! accepted and ignored: the scenarios run one after the other, and their
//! output is never captured.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use toolkit_browser::Browser;
use toolkit_tests::http::TestServer;

/// A scenario's body: it gets the shared browser (one blank tab) and a
/// fixture server of its own.
pub type Run = fn(Browser, TestServer) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// One named scenario.
pub struct Scenario {
    /// `module::function`, the name filters match.
    pub name: String,
    /// What it does.
    pub run: Run,
}

/// Defines `scenarios()`, the module's scenarios, from the names of its
/// `async fn name(browser: Browser, server: TestServer)`s: each is named
/// `module::name`.
macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {
        /// This module's scenarios, in the order they run.
        pub fn scenarios() -> Vec<$crate::support::runner::Scenario> {
            // `browser::session` → `session`.
            let module = module_path!()
                .split_once("::")
                .map_or(module_path!(), |(_, module)| module);
            vec![$($crate::support::runner::Scenario {
                name: format!("{module}::{}", stringify!($name)),
                run: (|browser, server| ::std::boxed::Box::pin($name(browser, server)))
                    as $crate::support::runner::Run,
            }),*]
        }
    };
}
pub(crate) use scenarios;

/// What the command line asks for.
#[derive(Debug, Default)]
pub struct Args {
    filters: Vec<String>,
    skip: Vec<String>,
    exact: bool,
    /// List the scenarios instead of running them.
    pub list: bool,
    /// `--format terse`: the list without its closing count.
    pub terse: bool,
    /// Only ignored tests (or, under `cargo bench`, only benchmarks):
    /// none here.
    none: bool,
}

impl Args {
    /// The arguments this process was given.
    pub fn from_env() -> Self {
        Self::parse(std::env::args().skip(1))
    }

    /// Reads libtest's arguments.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Self {
        let mut parsed = Self::default();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if arg.starts_with("--") => (flag.to_owned(), Some(value)),
                _ => (arg.clone(), None),
            };
            let mut value = || inline.map(str::to_owned).or_else(|| args.next());
            match flag.as_str() {
                "--exact" => parsed.exact = true,
                "--list" => parsed.list = true,
                "--ignored" | "--bench" => parsed.none = true,
                "--skip" => parsed.skip.extend(value()),
                "--format" => parsed.terse = value().as_deref() == Some("terse"),
                // Flags with a value that change nothing here.
                "--test-threads" | "--color" | "--logfile" | "--shuffle-seed" | "-Z" => {
                    value();
                }
                _ if flag.starts_with('-') => {}
                _ => parsed.filters.push(arg),
            }
        }
        parsed
    }

    fn matches(&self, filter: &str, name: &str) -> bool {
        if self.exact {
            name == filter
        } else {
            name.contains(filter)
        }
    }

    /// The scenarios the arguments select, and how many they leave out.
    pub fn select(&self, all: Vec<Scenario>) -> (Vec<Scenario>, usize) {
        let total = all.len();
        let selected: Vec<Scenario> = all
            .into_iter()
            .filter(|scenario| {
                !self.none
                    && (self.filters.is_empty()
                        || self.filters.iter().any(|f| self.matches(f, &scenario.name)))
                    && !self.skip.iter().any(|f| self.matches(f, &scenario.name))
            })
            .collect();
        let left_out = total - selected.len();
        (selected, left_out)
    }
}

/// Prints what libtest prints: a line per test, the failures, a summary.
pub struct Report {
    started: Instant,
    passed: usize,
    ignored: usize,
    failed: Vec<(String, String)>,
    filtered_out: usize,
}

impl Report {
    /// Announces `count` tests.
    pub fn begin(count: usize, filtered_out: usize) -> Self {
        println!(
            "\nrunning {count} test{}",
            if count == 1 { "" } else { "s" }
        );
        Self {
            started: Instant::now(),
            passed: 0,
            ignored: 0,
            failed: Vec::new(),
            filtered_out,
        }
    }

    /// One test's outcome: passed, or failed with this message.
    pub fn record(&mut self, name: &str, took: Duration, outcome: Result<(), String>) {
        let took = took.as_secs_f64();
        match outcome {
            Ok(()) => {
                println!("test {name} ... ok ({took:.2}s)");
                self.passed += 1;
            }
            Err(message) => {
                println!("test {name} ... FAILED ({took:.2}s)");
                self.failed.push((name.to_owned(), message));
            }
        }
    }

    /// A test not run, and why.
    pub fn ignore(&mut self, name: &str, why: &str) {
        println!("test {name} ... ignored, {why}");
        self.ignored += 1;
    }

    /// Prints the failures and the summary; 101 (libtest's code) when any
    /// test failed.
    pub fn finish(self) -> ExitCode {
        if !self.failed.is_empty() {
            println!("\nfailures:");
            for (name, message) in &self.failed {
                println!("    {name}: {}", message.replace('\n', "\n        "));
            }
        }
        println!(
            "\ntest result: {}. {} passed; {} failed; {} ignored; 0 measured; {} filtered out; \
             finished in {:.2}s\n",
            if self.failed.is_empty() {
                "ok"
            } else {
                "FAILED"
            },
            self.passed,
            self.failed.len(),
            self.ignored,
            self.filtered_out,
            self.started.elapsed().as_secs_f64()
        );
        if self.failed.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(101)
        }
    }
}

/// The message a panic carried (`panic!` with a literal or a format).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic without a message".to_owned())
}
