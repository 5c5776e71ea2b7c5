//! A test runner for the `harness = false` test binaries, speaking
//! libtest's language so that `cargo test` and cargo-nextest treat every
//! scenario as a test of its own: `-- --list` names them, a filter runs
//! some, and a failing scenario does not hide the others.
//!
//! Such binaries exist because their scenarios need what libtest's
//! `#[test]` cannot give: a `main` that first checks whether it was
//! started as the server of another scenario, a global subscriber set
//! once, or one browser shared by all and closed at the end.
//!
//! Understood: filters (substrings of the name; whole names with
//! `--exact`), `--skip FILTER`, `--list` (`NAME: test` lines, which is
//! what nextest reads with `--format terse`), `--ignored` (no scenario is
//! marked ignored, so it runs none; one skipped by its variable is
//! reported ignored, not run) and `--include-ignored` (runs all, as
//! without it). libtest's other flags (`--nocapture`, `--test-threads N`,
//! `--color X`, `-q`...) are accepted and change nothing: the scenarios
//! run one after the other and their output is never captured. A flag
//! libtest does not know is refused, naming it.

use std::any::Any;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a scenario may run before it counts as hung: far beyond the
/// slowest, so that only a hang reaches it.
pub const HUNG: Duration = Duration::from_secs(300);

/// What the command line asks for.
#[derive(Debug, Default)]
#[non_exhaustive]
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
    /// The arguments this process was given; an unknown flag ends the
    /// process with libtest's usage error code.
    pub fn from_env() -> Self {
        match Self::parse(std::env::args().skip(1)) {
            Ok(args) => args,
            Err(message) => {
                eprintln!("error: {message}");
                std::process::exit(101);
            }
        }
    }

    /// Reads libtest's arguments.
    ///
    /// # Errors
    ///
    /// A flag libtest does not know, named.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
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
                // Flags without one that change nothing here.
                "--include-ignored"
                | "--nocapture"
                | "--no-capture"
                | "--show-output"
                | "--test"
                | "-q"
                | "--quiet"
                | "--report-time"
                | "--ensure-time"
                | "--force-run-in-process"
                | "--shuffle"
                | "--fail-fast" => {}
                _ if flag.starts_with('-') => return Err(format!("unknown option {arg}")),
                _ => parsed.filters.push(arg),
            }
        }
        Ok(parsed)
    }

    fn matches(&self, filter: &str, name: &str) -> bool {
        if self.exact {
            name == filter
        } else {
            name.contains(filter)
        }
    }

    /// Whether the arguments select the scenario of this name.
    pub fn selects(&self, name: &str) -> bool {
        !self.none
            && (self.filters.is_empty() || self.filters.iter().any(|f| self.matches(f, name)))
            && !self.skip.iter().any(|f| self.matches(f, name))
    }

    /// The items the arguments select by their names, and how many they
    /// leave out.
    pub fn select<T>(&self, all: Vec<T>, name: impl Fn(&T) -> &str) -> (Vec<T>, usize) {
        let total = all.len();
        let selected: Vec<T> = all.into_iter().filter(|t| self.selects(name(t))).collect();
        let left_out = total - selected.len();
        (selected, left_out)
    }

    /// Prints the list `--list` asks for.
    pub fn print_list<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        let mut count = 0;
        for name in names {
            println!("{name}: test");
            count += 1;
        }
        if !self.terse {
            println!("\n{count} tests, 0 benchmarks");
        }
    }
}

/// Prints what libtest prints: a line per test, the failures, a summary.
#[derive(Debug)]
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

/// One named scenario of a binary run by [`run`].
pub struct Test {
    name: String,
    body: Box<dyn FnOnce() + Send>,
    skip: Vec<&'static str>,
}

impl std::fmt::Debug for Test {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Test")
            .field("name", &self.name)
            .field("skip", &self.skip)
            .finish_non_exhaustive()
    }
}

impl Test {
    /// A scenario: it passes unless `body` panics or outlives [`HUNG`].
    /// An async one builds its runtime inside `body`, so that a failed
    /// scenario's tasks and connections end with it.
    pub fn new(name: impl Into<String>, body: impl FnOnce() + Send + 'static) -> Self {
        Self {
            name: name.into(),
            body: Box::new(body),
            skip: Vec::new(),
        }
    }

    /// Reported ignored, not run, when `variable` is `1`
    /// ([`crate::skip::skipped`], which says so on stderr); may be given
    /// several variables, any of which skips it.
    pub fn skip_when(mut self, variable: &'static str) -> Self {
        self.skip.push(variable);
        self
    }

    /// Its name, as filters match it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Runs the scenarios the command line selects, each on a thread named
/// after it (so a panic and a skip name it), one after the other, and
/// reports them as libtest does; the process's exit code.
pub fn run(tests: Vec<Test>) -> ExitCode {
    let args = Args::from_env();
    let (selected, filtered_out) = args.select(tests, Test::name);
    if args.list {
        args.print_list(selected.iter().map(Test::name));
        return ExitCode::SUCCESS;
    }
    let mut report = Report::begin(selected.len(), filtered_out);
    for test in selected {
        let Test { name, body, skip } = test;
        let started = Instant::now();
        let (done, outcome) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                if let Some(variable) = skip.into_iter().find(|v| crate::skip::skipped(v)) {
                    let _ = done.send(Err(variable));
                    return;
                }
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
                let _ = done.send(Ok(result.map_err(|payload| panic_message(payload.as_ref()))));
            });
        if let Err(error) = spawned {
            report.record(&name, started.elapsed(), Err(format!("no thread: {error}")));
            continue;
        }
        match outcome.recv_timeout(HUNG) {
            Ok(Ok(result)) => report.record(&name, started.elapsed(), result),
            Ok(Err(variable)) => report.ignore(&name, &format!("{variable}=1")),
            // The thread is left behind: nothing can stop it, and the
            // process ends after the last scenario anyway.
            Err(mpsc::RecvTimeoutError::Timeout) => report.record(
                &name,
                started.elapsed(),
                Err(format!("still running after {HUNG:?}")),
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => report.record(
                &name,
                started.elapsed(),
                Err("ended without an outcome".to_owned()),
            ),
        }
    }
    report.finish()
}

#[cfg(test)]
mod tests {
    use super::Args;

    fn args(line: &[&str]) -> Args {
        Args::parse(line.iter().map(|s| (*s).to_owned())).expect("libtest's arguments")
    }

    #[test]
    fn filters_match_substrings_or_whole_names() {
        let by_part = args(&["resume"]);
        assert!(by_part.selects("http::resume"));
        assert!(!by_part.selects("http::stateless"));
        let exact = args(&["--exact", "resume"]);
        assert!(!exact.selects("http::resume"));
        assert!(exact.selects("resume"));
        let skipping = args(&["--skip", "http", "--nocapture"]);
        assert!(!skipping.selects("http::resume"));
        assert!(skipping.selects("stdio"));
    }

    #[test]
    fn ignored_selects_none_and_unknown_flags_are_refused() {
        assert!(!args(&["--ignored"]).selects("any"));
        assert!(args(&["--include-ignored"]).selects("any"));
        assert!(args(&["--list", "--format", "terse"]).terse);
        let refused = Args::parse(["--frobnicate".to_owned()]).unwrap_err();
        assert!(refused.contains("--frobnicate"), "{refused}");
    }
}
