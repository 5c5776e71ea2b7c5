//! The browser scenarios as named tests, run by `toolkit_tests::runner`'s
//! arguments and report while one Chromium serves them all (launching one
//! costs about half a second, and a browser shared by `#[test]` functions
//! could not be closed reliably: statics are never dropped).

use std::future::Future;
use std::pin::Pin;

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
