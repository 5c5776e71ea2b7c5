//! Log messages a running tool sends its host: an MCP server passes them to
//! its client as `notifications/message`.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// How severe a log message is: the eight levels of syslog (RFC 5424),
/// which MCP uses too, from the least severe to the most.
///
/// Levels compare by severity: `LogLevel::Debug < LogLevel::Error`.
///
/// ```
/// use toolkit_core::LogLevel;
///
/// assert!(LogLevel::Warning > LogLevel::Info);
/// assert_eq!("notice".parse::<LogLevel>(), Ok(LogLevel::Notice));
/// assert_eq!(LogLevel::Critical.as_str(), "critical");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
// Exhaustive on purpose: the eight levels of RFC 5424, which is fixed.
pub enum LogLevel {
    /// Details for debugging.
    Debug,
    /// What the tool is doing.
    Info,
    /// Normal, but worth noticing.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A part of the tool failed.
    Critical,
    /// Someone must act now.
    Alert,
    /// Nothing works.
    Emergency,
}

impl LogLevel {
    /// Every level, from the least severe to the most.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name, in lower case as MCP writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the eight [`LogLevel`]s.
#[derive(Debug, Clone, PartialEq, Eq)]
// Exhaustive on purpose: a newtype around the name given.
pub struct UnknownLogLevel(pub String);

impl fmt::Display for UnknownLogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown log level `{}` (debug, info, notice, warning, error, critical, alert, emergency)",
            self.0
        )
    }
}

impl std::error::Error for UnknownLogLevel {}

impl FromStr for LogLevel {
    type Err = UnknownLogLevel;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == name)
            .ok_or_else(|| UnknownLogLevel(name.to_owned()))
    }
}

/// One log message of a running call, as a tool sent it with
/// [`CallContext::log`](crate::CallContext::log).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogMessage {
    /// How severe it is.
    pub level: LogLevel,
    /// What happened, for people.
    pub message: String,
}

impl LogMessage {
    /// A message saying `message` at `level`.
    pub fn new(level: LogLevel, message: impl Into<String>) -> Self {
        Self {
            level,
            message: message.into(),
        }
    }
}

/// Where the log messages of one call go: the host's function, called on
/// the tool's task for each message (so it should be quick: send the
/// message on, don't wait). The host drops the messages it does not want
/// (an MCP server, those below the level its client asked for).
#[derive(Clone)]
pub struct LogSink(pub(super) Arc<dyn Fn(LogMessage) + Send + Sync>);

impl LogSink {
    /// A sink calling `log` for each message.
    pub fn new(log: impl Fn(LogMessage) + Send + Sync + 'static) -> Self {
        Self(Arc::new(log))
    }
}

impl fmt::Debug for LogSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LogSink")
    }
}
