//! Why a call did not run the tool to its end, for the host and the model.

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use crate::ToolResult;
use crate::text::cut;

/// A call that failed before, or instead of, the tool returning.
///
/// Every variant also becomes an error result the model can act on
/// ([`CallError::to_result`]); [`Registry::call`](crate::Registry::call)
/// returns both in a [`CallOutcome`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallError {
    /// No tool of that name is registered.
    UnknownTool {
        /// The name the model used.
        name: String,
        /// The registered names closest to it, best first.
        suggestions: Vec<String>,
    },
    /// The tool is registered but disabled.
    Disabled {
        /// The tool.
        name: String,
    },
    /// The arguments are not valid JSON, or do not fit the parameters.
    InvalidArguments {
        /// The tool.
        tool: String,
        /// Where in the arguments the problem is (`filter.max`), if known.
        path: Option<String>,
        /// What is wrong: the expected type and what came, a missing or an
        /// unknown field.
        message: String,
    },
    /// A `#[tool(state)]` value the host never provided.
    MissingState {
        /// The tool.
        tool: String,
        /// The Rust type of the value.
        type_name: String,
    },
    /// The tool panicked; the registry caught it and keeps working.
    Panicked {
        /// The tool.
        tool: String,
        /// The panic's message.
        message: String,
    },
    /// The tool ran past its time limit and was stopped.
    TimedOut {
        /// The tool.
        tool: String,
        /// The limit.
        after: Duration,
    },
    /// An action (see [`Registry::action`](crate::Registry::action))
    /// that is not an object with exactly one key.
    InvalidAction {
        /// What was expected, and what came.
        message: String,
    },
    /// The tool could not be started (for example, no async runtime).
    Runtime {
        /// The tool.
        tool: String,
        /// What went wrong.
        message: String,
    },
}

impl CallError {
    /// The error result the model sees for this failure.
    pub fn to_result(&self) -> ToolResult {
        ToolResult::error(self.to_string())
    }

    /// The failure's kind, one word in `snake_case`: `unknown_tool`,
    /// `disabled_tool`, `invalid_arguments`, `missing_state`, `panic`,
    /// `timeout`, `invalid_action`, `runtime`. A trace's `error.type`
    /// (docs/observability.md), and a key for counting failures.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = toolkit_core::Registry::builder().build().unwrap();
    /// let outcome = registry.dispatch(("missing", "{}")).await;
    /// assert_eq!(outcome.error.unwrap().kind(), "unknown_tool");
    /// # });
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownTool { .. } => "unknown_tool",
            Self::Disabled { .. } => "disabled_tool",
            Self::InvalidArguments { .. } => "invalid_arguments",
            Self::MissingState { .. } => "missing_state",
            Self::Panicked { .. } => "panic",
            Self::TimedOut { .. } => "timeout",
            Self::InvalidAction { .. } => "invalid_action",
            Self::Runtime { .. } => "runtime",
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTool { name, suggestions } => {
                write!(f, "there is no tool named {}", Echo(name))?;
                match suggestions.as_slice() {
                    [] => Ok(()),
                    [one] => write!(f, "; did you mean `{one}`?"),
                    many => write!(f, "; the closest are `{}`", many.join("`, `")),
                }
            }
            Self::Disabled { name } => write!(f, "the tool `{name}` is disabled"),
            Self::InvalidArguments {
                tool,
                path: Some(path),
                message,
            } => write!(f, "invalid arguments for `{tool}`: at `{path}`: {message}"),
            Self::InvalidArguments {
                tool,
                path: None,
                message,
            } => write!(f, "invalid arguments for `{tool}`: {message}"),
            Self::MissingState { tool, type_name } => write!(
                f,
                "the tool `{tool}` needs a `{type_name}` the host did not provide"
            ),
            Self::Panicked { tool, message } => {
                write!(f, "the tool `{tool}` failed unexpectedly: {message}")
            }
            Self::TimedOut { tool, after } => write!(
                f,
                "the tool `{tool}` did not finish within {:.1}s and was stopped",
                after.as_secs_f64()
            ),
            Self::InvalidAction { message } => write!(f, "invalid action: {message}"),
            Self::Runtime { tool, message } => {
                write!(f, "the tool `{tool}` could not run: {message}")
            }
        }
    }
}

impl std::error::Error for CallError {}

/// A name the model sent, quoted as the model reads it back: whole up to
/// [`Echo::MAX_CHARS`] characters, else cut, with its length. A name of a
/// million characters must not come back as one.
struct Echo<'a>(&'a str);

impl Echo<'_> {
    const MAX_CHARS: usize = 80;
}

impl fmt::Display for Echo<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match cut(self.0, Self::MAX_CHARS) {
            Cow::Borrowed(name) => write!(f, "`{name}`"),
            Cow::Owned(start) => {
                write!(f, "`{start}` ({} characters)", self.0.chars().count())
            }
        }
    }
}

/// What a call produced: the result the model sees, and, when the call
/// failed outside the tool's own logic, the typed error for the host.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CallOutcome {
    /// The result to send to the model. For a failed call, an error result
    /// explaining the failure.
    pub result: ToolResult,
    /// Set when the tool could not run to its end (unknown name, invalid
    /// arguments, panic, timeout...). A tool that returns an error result of
    /// its own leaves this `None`: it ran as designed, and the error it
    /// returned is [`tool_error`](Self::tool_error).
    pub error: Option<CallError>,
}

impl CallOutcome {
    /// A call that ran to its end with `result`.
    pub fn new(result: ToolResult) -> Self {
        Self {
            result,
            error: None,
        }
    }

    /// With the error that kept the call from running to its end; its
    /// result should say the same to the model.
    pub fn error(mut self, error: CallError) -> Self {
        self.error = Some(error);
        self
    }

    /// The error the tool itself returned (the `Err` of a tool returning
    /// `Result`), typed, for the host; the model reads its message and
    /// causes in [`result`](Self::result). `None` when the tool succeeded,
    /// failed with a plain message, or did not run to its end
    /// ([`error`](Self::error)).
    pub fn tool_error(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.result.error_source()
    }

    /// The error the tool itself returned, if it is an `E`.
    ///
    /// ```
    /// use toolkit_core::{Registry, tool, tools};
    ///
    /// /// Reads the balance.
    /// #[tool]
    /// fn balance() -> Result<String, std::io::Error> {
    ///     Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "the ledger did not answer"))
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::builder().tools(tools![balance]).build()?;
    /// let outcome = registry.dispatch(("balance", "{}")).await;
    /// assert_eq!(outcome.result.error_message(), Some("the ledger did not answer"));
    /// let error = outcome.downcast_error::<std::io::Error>().unwrap();
    /// assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
    /// # Ok::<(), toolkit_core::RegistryError>(())
    /// # }).unwrap();
    /// ```
    pub fn downcast_error<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.result.downcast_error::<E>()
    }
}

impl CallOutcome {
    pub(crate) fn ok(result: ToolResult) -> Self {
        Self {
            result,
            error: None,
        }
    }

    /// A call that failed outside the tool's own logic: the error result
    /// the model reads, written from `error`, and `error` for the host.
    ///
    /// ```
    /// use toolkit_core::{CallError, CallOutcome};
    ///
    /// let outcome = CallOutcome::failed(CallError::InvalidAction {
    ///     message: "expected one key".into(),
    /// });
    /// assert!(outcome.result.is_error());
    /// assert!(outcome.error.is_some());
    /// ```
    pub fn failed(error: CallError) -> Self {
        Self {
            result: error.to_result(),
            error: Some(error),
        }
    }
}
