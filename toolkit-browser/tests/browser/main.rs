//! toolkit-browser against a real headless Chromium and fixture pages
//! served from 127.0.0.1 by the test itself: the session (lifecycle, page
//! map, input, tabs), the actions as a model calls them (and the ones
//! that hover, hold, drag and answer file choosers), the page model, the
//! page script's files each parsed alone, settled maps and the map's
//! details, and the safety promises attacked as a page would.
//!
//! Every scenario is a test of its own, named `module::function`
//! (`cargo test -p toolkit-browser --test browser click` runs those whose
//! name holds `click`), but they share one browser, each starting from one
//! blank tab, the default safety policy and a fixture server of its own
//! (so that the requests one scenario checks are its own); scenarios about
//! the session's lifecycle launch their own browsers besides. A scenario that fails does not stop
//! the others; the browser is restarted if it died. `BROWSER_TRACE=1`
//! prints every action call as the model would read it.
//!
//! Without Chromium the scenarios fail with how to install it, unless
//! `TOOLKIT_SKIP_BROWSER_TESTS=1`.

mod actions;
mod details;
mod downloads;
mod interaction;
mod page_model;
mod page_script;
mod pictures;
mod record;
mod safety;
mod session;
mod settle;
mod storage;
mod support;

use std::process::ExitCode;
use std::time::Instant;

use support::chromium::{self, SKIP_VAR};
use support::runner::Scenario;
use support::site;
use toolkit_browser::{Browser, SafetyPolicy};
use toolkit_tests::http::TestServer;
use toolkit_tests::runner::{Args, HUNG, Report, panic_message};
use toolkit_tests::skip::skipped;

fn main() -> ExitCode {
    let args = Args::from_env();
    let all: Vec<Scenario> = [
        session::scenarios(),
        actions::scenarios(),
        downloads::scenarios(),
        interaction::scenarios(),
        page_model::scenarios(),
        page_script::scenarios(),
        pictures::scenarios(),
        record::scenarios(),
        safety::scenarios(),
        storage::scenarios(),
        settle::scenarios(),
        details::scenarios(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let (selected, filtered_out) = args.select(all, |scenario| &scenario.name);
    if args.list {
        args.print_list(selected.iter().map(|scenario| scenario.name.as_str()));
        return ExitCode::SUCCESS;
    }
    let mut report = Report::begin(selected.len(), filtered_out);
    if selected.is_empty() {
        return report.finish();
    }
    if skipped(SKIP_VAR) {
        for scenario in &selected {
            report.ignore(&scenario.name, &format!("{SKIP_VAR}=1"));
        }
        return report.finish();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(run(selected, report))
}

/// Runs the scenarios one after the other in one browser, then closes it.
async fn run(selected: Vec<Scenario>, mut report: Report) -> ExitCode {
    let browser = Browser::launch(chromium::config())
        .await
        .expect("launch Chromium");
    for scenario in selected {
        let server = TestServer::start(site::routes());
        let started = Instant::now();
        let mut running = tokio::spawn((scenario.run)(browser.clone(), server));
        let outcome = match tokio::time::timeout(HUNG, &mut running).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(match error.try_into_panic() {
                Ok(payload) => panic_message(payload.as_ref()),
                Err(error) => error.to_string(),
            }),
            Err(_) => {
                running.abort();
                Err(format!("still running after {HUNG:?}"))
            }
        };
        report.record(&scenario.name, started.elapsed(), outcome);
        if !browser.is_alive().await {
            browser
                .restart()
                .await
                .expect("restart the browser after a failed scenario");
        }
        reset(&browser).await;
    }
    browser.close().await.expect("close the shared browser");
    report.finish()
}

/// Leaves the browser as a scenario expects to find it: the default
/// policy (a scenario's registry installs its own, which outlives it),
/// nothing left to report, one blank tab.
async fn reset(browser: &Browser) {
    browser.set_policy(SafetyPolicy::default());
    browser.take_blocked();
    browser.take_dialogs().await;
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
