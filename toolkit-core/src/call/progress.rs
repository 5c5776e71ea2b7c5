//! Progress reports of a running call, and where they go.

use std::fmt;
use std::sync::Arc;

/// One progress report of a running call, as a tool made it with
/// [`CallContext::report_progress`](crate::CallContext::report_progress).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How much is done.
    pub done: f64,
    /// How much there is in all, when the tool knows.
    pub total: Option<f64>,
    /// What the tool is doing, for people.
    pub message: Option<String>,
}

impl Progress {
    /// `done` so far, of an unknown total, without a message.
    pub fn new(done: f64) -> Self {
        Self {
            done,
            total: None,
            message: None,
        }
    }

    /// With how much there is in all.
    pub fn total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// With what the tool is doing.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Where the progress reports of one call go: the host's function, called
/// on the tool's task for each report (so it should be quick: send the
/// report on, don't wait).
#[derive(Clone)]
pub struct ProgressSink(pub(super) Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressSink {
    /// A sink calling `report` for each report.
    pub fn new(report: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self(Arc::new(report))
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}
