//! What the host offers a running call besides its cancellation.

use std::fmt;
use std::sync::Arc;

use super::ask::Asker;
use super::log::LogSink;
use super::progress::ProgressSink;

/// What the host offers a running call besides its cancellation: where the
/// tool's [progress reports](crate::CallContext::report_progress) and
/// [log messages](crate::CallContext::log) go, and who answers its
/// [questions](crate::CallContext::elicit). Each is optional, and one the host
/// leaves out costs the call nothing. Give it to
/// [`Registry::run_hosted`](crate::Registry::run_hosted).
///
/// ```
/// use toolkit_core::{CallHost, LogSink, ProgressSink};
///
/// let host = CallHost::new()
///     .progress(ProgressSink::new(|report| eprintln!("{} done", report.done)))
///     .log(LogSink::new(|message| eprintln!("{}: {}", message.level, message.message)));
/// # let _ = host;
/// ```
#[derive(Clone, Default)]
pub struct CallHost {
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) log: Option<LogSink>,
    pub(crate) asker: Option<Arc<dyn Asker>>,
}

impl CallHost {
    /// A host that listens to nothing and answers nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Progress reports go to `sink`.
    pub fn progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Log messages go to `sink`.
    pub fn log(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// Questions go to `asker`.
    pub fn asker(mut self, asker: impl Asker + 'static) -> Self {
        self.asker = Some(Arc::new(asker));
        self
    }
}

impl fmt::Debug for CallHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallHost")
            .field("progress", &self.progress.is_some())
            .field("log", &self.log.is_some())
            .field("asker", &self.asker.is_some())
            .finish()
    }
}
