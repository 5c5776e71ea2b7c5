//! What a tool can learn about the call it is answering.

use std::fmt;
use std::sync::Arc;

use super::ask::Asker;
use super::cancellation::Cancellation;
use super::host::CallHost;
use super::log::{LogLevel, LogMessage, LogSink};
use super::progress::{Progress, ProgressSink};
use super::state::{RunState, StateMap};
use crate::name::{Name, NameRef};

/// The per-call context: which call this is, and whether the host wants it
/// stopped.
///
/// A tool receives it through a parameter marked `#[tool(context)]`; it never
/// appears in the tool's schema.
///
/// ```
/// use toolkit_core::{CallContext, tool};
///
/// /// Waits, giving up early if the host cancels the call.
/// #[tool]
/// async fn wait(
///     /// Seconds to wait.
///     seconds: u8,
///     #[tool(context)] call: CallContext,
/// ) -> String {
///     let sleep = tokio::time::sleep(std::time::Duration::from_secs(seconds.into()));
///     tokio::select! {
///         () = sleep => format!("waited {seconds}s"),
///         () = call.cancellation().cancelled() => "cancelled".to_string(),
///     }
/// }
/// ```
#[derive(Clone)]
pub struct CallContext {
    // A call without an id (`Registry::call`) shares a static empty one,
    // so that such calls allocate nothing for it.
    call_id: Name,
    tool_name: Name,
    cancellation: Cancellation,
    state: Arc<StateMap>,
    progress: Option<ProgressSink>,
    run: Option<RunState>,
    /// What the host offers beyond progress: where [`log`](Self::log)
    /// messages go, who answers [questions](Self::elicit) (`call/host.rs`).
    pub(super) host: Option<CallHost>,
}

/// A call's id, shared: no allocation for the empty id of a call made
/// without one.
fn call_id_of(id: &str) -> Name {
    if id.is_empty() {
        Name::Static("")
    } else {
        Name::Shared(Arc::from(id))
    }
}

impl CallContext {
    /// A context for code that runs outside a registry's dispatch but logs,
    /// reports progress and asks questions as a tool does: a tool's
    /// function called directly (in a unit test, say), or a host's own work
    /// on a client's behalf (an MCP server making a prompt). It holds no
    /// state ([`state`](Self::state) finds nothing); what it logs, reports
    /// and asks goes to `host`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolkit_core::{AskError, CallContext, CallHost, Cancellation, tool};
    ///
    /// /// Lists the folders the user works in.
    /// #[tool]
    /// async fn workspaces(#[tool(context)] call: CallContext) -> Result<String, String> {
    ///     call.roots(Duration::from_secs(10))
    ///         .await
    ///         .map(|roots| format!("{} roots", roots.len()))
    ///         .map_err(|error| error.to_string())
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // The function itself, with a host that answers no question.
    /// let call = CallContext::new("call-1", "workspaces", Cancellation::new(), CallHost::new());
    /// let answer = workspaces(call).await;
    /// assert_eq!(answer, Err(AskError::NoAsker.to_string()));
    /// # }
    /// ```
    pub fn new(call_id: &str, tool_name: &str, cancellation: Cancellation, host: CallHost) -> Self {
        Self {
            call_id: call_id_of(call_id),
            tool_name: Name::Shared(Arc::from(tool_name)),
            cancellation,
            state: Arc::default(),
            progress: host.progress.clone(),
            run: None,
            host: Some(host),
        }
    }

    /// The id the provider gave the call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The call's cancellation signal.
    pub fn cancellation(&self) -> &Cancellation {
        &self.cancellation
    }

    /// A clone of the host's state of type `T`, if the host provided one:
    /// the run's own value ([`RunState`]) when the call is part of a run
    /// that gives one, else the registry's.
    pub fn state<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.run
            .as_ref()
            .and_then(RunState::get::<T>)
            .or_else(|| self.state.get::<T>())
    }

    /// The run's own values, when the call is part of a run that gives
    /// them ([`Dispatch::state`](crate::Dispatch::state)): for a tool that
    /// makes calls of its own in the same run (a program's calls in code
    /// mode, a sub-agent's), so that those calls see the same values.
    pub fn run_state(&self) -> Option<&RunState> {
        self.run.as_ref()
    }

    /// Reports how far the call has come: `done` of `total` (when known),
    /// with a message for people. The report reaches the host when it
    /// listens ([`Registry::run_reporting`](crate::Registry::run_reporting);
    /// an MCP server sends it as `notifications/progress`), and costs
    /// nothing otherwise.
    ///
    /// ```
    /// use toolkit_core::{CallContext, tool};
    ///
    /// /// Indexes the given pages.
    /// #[tool]
    /// async fn index(
    ///     /// The pages' addresses.
    ///     pages: Vec<String>,
    ///     #[tool(context)] call: CallContext,
    /// ) -> String {
    ///     let total = pages.len() as f64;
    ///     for (i, page) in pages.iter().enumerate() {
    ///         call.report_progress(i as f64, Some(total), Some(page.as_str()));
    ///     }
    ///     format!("indexed {total} pages")
    /// }
    /// ```
    pub fn report_progress(&self, done: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(sink) = &self.progress {
            (sink.0)(Progress {
                done,
                total,
                message: message.map(str::to_owned),
            });
        }
    }

    /// Whether the host listens to [progress reports](Self::report_progress),
    /// for a tool whose reports cost something to make.
    pub fn reports_progress(&self) -> bool {
        self.progress.is_some()
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("call_id", &&*self.call_id)
            .field("tool_name", &self.tool_name)
            .field("cancelled", &self.cancellation.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// The call being answered, borrowed from the registry and the caller: what
/// the code `#[tool]` generates reads hidden parameters from. Not a public
/// API.
///
/// Borrowed, so that a tool without hidden parameters costs its call no
/// reference counts; a [`CallContext`] is made only for a tool that asks.
#[doc(hidden)]
pub struct CallSite<'a> {
    pub(crate) call_id: &'a str,
    pub(crate) tool: NameRef<'a>,
    pub(crate) cancellation: &'a Cancellation,
    pub(crate) state: &'a Arc<StateMap>,
    pub(crate) progress: Option<&'a ProgressSink>,
    pub(crate) run: Option<&'a RunState>,
    pub(crate) host: Option<&'a CallHost>,
}

impl<'a> CallSite<'a> {
    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        self.tool.as_str()
    }

    /// The call's context, for a `#[tool(context)]` parameter.
    pub fn context(&self) -> CallContext {
        CallContext {
            call_id: call_id_of(self.call_id),
            tool_name: self.tool.to_shared(),
            cancellation: self.cancellation.clone(),
            state: Arc::clone(self.state),
            progress: self.progress.cloned(),
            run: self.run.cloned(),
            host: self.host.cloned(),
        }
    }

    /// A clone of the host's state of type `T`, for a `#[tool(state)]`
    /// parameter: the run's own, else the registry's.
    pub fn state<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        match self.run.and_then(RunState::get::<T>) {
            Some(value) => Some(value),
            None => self.state.get::<T>(),
        }
    }
}

impl CallContext {
    /// Sends the host a log message about this call. It reaches the host
    /// when it listens ([`Registry::run_hosted`](crate::Registry::run_hosted);
    /// an MCP server sends it as `notifications/message` when the client
    /// asked for messages of this level), and costs nothing otherwise.
    ///
    /// ```
    /// use toolkit_core::{CallContext, LogLevel, tool};
    ///
    /// /// Imports the rows of a table.
    /// #[tool]
    /// async fn import(
    ///     /// The rows, as CSV lines.
    ///     rows: Vec<String>,
    ///     #[tool(context)] call: CallContext,
    /// ) -> String {
    ///     let empty = rows.iter().filter(|row| row.is_empty()).count();
    ///     if empty > 0 {
    ///         call.log(LogLevel::Warning, format!("skipped {empty} empty rows"));
    ///     }
    ///     format!("imported {} rows", rows.len() - empty)
    /// }
    /// ```
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        if let Some(sink) = self.log_sink() {
            (sink.0)(LogMessage {
                level,
                message: message.into(),
            });
        }
    }

    /// Whether the host listens to [log messages](Self::log), for a tool
    /// whose messages cost something to make.
    pub fn logs(&self) -> bool {
        self.log_sink().is_some()
    }
}

impl CallContext {
    pub(super) fn log_sink(&self) -> Option<&LogSink> {
        self.host.as_ref()?.log.as_ref()
    }

    pub(super) fn asker(&self) -> Option<&dyn Asker> {
        self.host.as_ref()?.asker.as_deref()
    }
}
