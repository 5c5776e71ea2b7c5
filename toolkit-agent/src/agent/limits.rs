//! How far a run may go: steps, failures, time, concurrency, uses, tokens.

use std::time::Duration;

/// Limits of a run.
///
/// Every limit is checked where it is used: a call over its time limit or
/// its tool's number of uses becomes an error result the model reads and
/// can react to; the step limit and the token budget end the run with
/// their [`StopReason`](crate::StopReason).
///
/// ```
/// use std::time::Duration;
/// use toolkit_agent::Limits;
///
/// let limits = Limits::default()
///     .max_steps(8)
///     .call_timeout(Some(Duration::from_secs(30)))
///     .max_tokens(Some(50_000));
/// assert_eq!(limits.max_concurrent_calls, 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Model turns at most in one run (default 20).
    pub max_steps: usize,
    /// Consecutive failed calls of one tool before the run stops (default
    /// 3). A success of the tool resets its count.
    pub max_failures: u32,
    /// How long one call may run before it is cancelled and answered with
    /// an error result (default 120 s; `None`: no limit besides the
    /// registry's own). A tool with a limit of its own, set on the registry
    /// with `RegistryBuilder::tool_timeout` (or `timeout`, for every tool),
    /// has that limit in place of this one.
    pub call_timeout: Option<Duration>,
    /// Calls of one turn running at once (default 8): a turn with more
    /// calls runs them in waves, in call order, so a model asking for
    /// hundreds at once cannot start them all.
    pub max_concurrent_calls: usize,
    /// Tokens (input and output, as the provider reports them) one run may
    /// use; checked before each request (default: no budget).
    pub max_tokens: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_steps: 20,
            max_failures: 3,
            call_timeout: Some(Duration::from_secs(120)),
            max_concurrent_calls: 8,
            max_tokens: None,
        }
    }
}

impl Limits {
    /// With at most `steps` model turns in one run.
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps;
        self
    }

    /// With at most `failures` consecutive failed calls of one tool.
    pub fn max_failures(mut self, failures: u32) -> Self {
        self.max_failures = failures;
        self
    }

    /// With how long one call may run (`None`: no limit besides the
    /// registry's own).
    pub fn call_timeout(mut self, limit: Option<Duration>) -> Self {
        self.call_timeout = limit;
        self
    }

    /// With at most `calls` calls of one turn running at once.
    pub fn max_concurrent_calls(mut self, calls: usize) -> Self {
        self.max_concurrent_calls = calls;
        self
    }

    /// With a budget of `tokens` for the run (`None`: no budget).
    pub fn max_tokens(mut self, tokens: Option<u64>) -> Self {
        self.max_tokens = tokens;
        self
    }
}

/// Limits of one tool within a run, set with
/// [`AgentBuilder::tool_limits`](crate::AgentBuilder::tool_limits).
///
/// ```
/// use std::time::Duration;
/// use toolkit_agent::ToolLimits;
///
/// let search = ToolLimits::new().max_uses(5).max_concurrent(2);
/// # let _ = search;
///
/// // A tool's own time limit is set where the tool is registered, so that
/// // it holds wherever the tool runs (an agent, an MCP server, the host):
/// # use toolkit_core::{Registry, tool, tools};
/// # /// Reports slowly.
/// # #[tool] fn report() -> String { String::new() }
/// let registry = Registry::builder()
///     .tools(tools![report])
///     .tool_timeout("report", Duration::from_secs(600))
///     .build()?;
/// # Ok::<(), toolkit_core::RegistryError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolLimits {
    pub(crate) max_uses: Option<u32>,
    pub(crate) max_concurrent: Option<usize>,
    pub(crate) timeout: Option<Duration>,
}

impl ToolLimits {
    /// No limits beyond the run's.
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls of the tool at most in one run; later calls are answered
    /// with an error result saying the tool is used up.
    pub fn max_uses(mut self, uses: u32) -> Self {
        self.max_uses = Some(uses);
        self
    }

    /// Calls of the tool running at once within a turn.
    pub fn max_concurrent(mut self, calls: usize) -> Self {
        self.max_concurrent = Some(calls.max(1));
        self
    }

    /// The tool's call time limit, in place of the run's.
    #[deprecated(
        since = "0.2.0",
        note = "set the tool's time limit where it is registered: `RegistryBuilder::tool_timeout`"
    )]
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }
}
