//! Traces of tool calls, in the names of the OpenTelemetry GenAI semantic
//! conventions.
//!
//! Every call the [`Registry`](crate::Registry) dispatches runs inside a
//! [`tracing`] span named `execute_tool`, whose `otel.name` field holds the
//! conventions' span name, `execute_tool {gen_ai.tool.name}` (a `tracing`
//! span's own name is fixed at compile time; `tracing-opentelemetry` and
//! other exporters take `otel.name` as the exported name). Its fields are
//! the conventions' attributes, named by the constants of [`attr`]:
//!
//! | field | value |
//! |---|---|
//! | `gen_ai.operation.name` | `execute_tool` |
//! | `gen_ai.tool.name` | the name the call used |
//! | `gen_ai.tool.call.id` | the call's id, when it has one |
//! | `gen_ai.tool.description` | the tool's description, when the tool exists |
//! | `gen_ai.tool.type` | `function` |
//! | `error.type` | on failure: a [`CallError::kind`](crate::CallError::kind), or `tool_error` for an error the tool returned |
//! | `gen_ai.tool.call.arguments` | the arguments as JSON text, only while [content is captured](capture_content) |
//! | `gen_ai.tool.call.result` | the result's text, only while content is captured and the call succeeded |
//! | `url.full` | the address the tool acted on, when it says one ([`record_url`]) |
//!
//! A registry built with
//! [`RegistryBuilder::redact_captured`](crate::RegistryBuilder::redact_captured)
//! passes the captured arguments and result through its redaction before
//! any subscriber sees them.
//!
//! With no subscriber (or one that filters the span out), a call pays one
//! relaxed atomic load for it. The span is entered while the tool's future
//! is polled, so a tool's own spans and events are its children.
//!
//! ```
//! use toolkit_core::telemetry::{self, attr};
//!
//! // Off by default: arguments, results and messages are never recorded.
//! assert!(!telemetry::captures_content());
//! assert_eq!(attr::TOOL_NAME, "gen_ai.tool.name");
//! ```

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::Span;
use tracing::field::Empty;

use crate::{Arguments, CallOutcome};

static CAPTURE: AtomicBool = AtomicBool::new(false);

/// Turns content capture on or off for the whole process: while on, spans
/// also carry what the conventions mark opt-in because it may hold user
/// data or secrets (tool arguments and results here; model messages,
/// system instructions and tool definitions in `toolkit-agent`). Off by
/// default.
///
/// One switch for the process rather than an option per registry or
/// model: the decision is the operator's (the conventions suggest an
/// environment variable, `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`,
/// which a host can read and pass here), and it must reach every crate that
/// records content, including models built far from the registry.
///
/// ```
/// toolkit_core::telemetry::capture_content(true);
/// assert!(toolkit_core::telemetry::captures_content());
/// toolkit_core::telemetry::capture_content(false);
/// ```
pub fn capture_content(on: bool) {
    CAPTURE.store(on, Ordering::Relaxed);
}

/// Whether content is captured (see [`capture_content`]).
pub fn captures_content() -> bool {
    CAPTURE.load(Ordering::Relaxed)
}

/// The conventions' attribute names the toolkit's spans record, so that a
/// subscriber or a test names them without spelling them.
pub mod attr {
    /// The exported span name (`tracing-opentelemetry`'s convention).
    pub const OTEL_NAME: &str = "otel.name";
    /// The exported span kind: `internal`, `client`.
    pub const OTEL_KIND: &str = "otel.kind";
    /// What the span does: `execute_tool`, `chat`, `invoke_agent`.
    pub const OPERATION_NAME: &str = "gen_ai.operation.name";
    /// The failure's kind, on a span that failed.
    pub const ERROR_TYPE: &str = "error.type";
    /// The tool's name.
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    /// The call's id.
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    /// The tool's description.
    pub const TOOL_DESCRIPTION: &str = "gen_ai.tool.description";
    /// The tool's type: `function`.
    pub const TOOL_TYPE: &str = "gen_ai.tool.type";
    /// The call's arguments (captured content).
    pub const TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    /// The call's result (captured content).
    pub const TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
    /// The address a call acted on, without credentials (OpenTelemetry's
    /// URL conventions).
    pub const URL_FULL: &str = "url.full";
}

/// The operation of a tool call's span.
pub const EXECUTE_TOOL: &str = "execute_tool";

/// A span name of the conventions: an operation and what it acts on,
/// written only when a subscriber asks for the field's value.
#[derive(Clone, Copy)]
// Exhaustive on purpose: the conventions name a span by these two parts.
pub struct SpanName<'a>(pub &'a str, pub &'a str);

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.1.is_empty() {
            f.write_str(self.0)
        } else {
            write!(f, "{} {}", self.0, self.1)
        }
    }
}

/// The span of one call, or `None` when no subscriber wants it (the common
/// case, which then costs a load of tracing's interest in the call site).
///
/// A name the model sent may be of any length: a span holds at most
/// [`MAX_NAME_CHARS`] characters of it (and of the call's id), so that a
/// million-character name does not become a megabyte of every exported
/// span.
#[inline]
pub(crate) fn tool_span(name: &str, call_id: &str) -> Option<Span> {
    // The fields' values are computed only when a subscriber wants the
    // span, so a call with none does not even measure the name.
    let span = tracing::info_span!(
        "execute_tool",
        "otel.name" = %SpanName(EXECUTE_TOOL, &bounded(name)),
        "otel.kind" = "internal",
        "gen_ai.operation.name" = EXECUTE_TOOL,
        "gen_ai.tool.name" = &*bounded(name),
        "gen_ai.tool.call.id" = (!call_id.is_empty()).then_some(&*bounded(call_id)),
        "gen_ai.tool.description" = Empty,
        "gen_ai.tool.type" = "function",
        "error.type" = Empty,
        "gen_ai.tool.call.arguments" = Empty,
        "gen_ai.tool.call.result" = Empty,
        "url.full" = Empty,
    );
    (!span.is_disabled()).then_some(span)
}

/// The span of the call running here, if a subscriber records it.
fn current_call() -> Option<Span> {
    let span = Span::current();
    span.metadata()
        .is_some_and(|meta| meta.name() == EXECUTE_TOOL && meta.target() == module_path!())
        .then_some(span)
}

/// Whether the code runs inside a call whose span a subscriber records:
/// a tool asks before it gathers what only the span wants (a browser
/// action reads the page's address only then).
///
/// ```
/// // No subscriber, no call: nothing would be recorded.
/// assert!(!toolkit_core::telemetry::in_recorded_call());
/// ```
pub fn in_recorded_call() -> bool {
    current_call().is_some()
}

/// Records `url` as the `url.full` of the call running here (the address
/// a browser action left the page at, the resource a fetch read); nothing
/// outside a recorded call. The text is recorded as given, so the tool
/// removes what must not be kept first: OpenTelemetry's URL conventions
/// want credentials written `REDACTED:REDACTED` and secret query values
/// left out.
///
/// ```
/// // Outside a call it does nothing.
/// toolkit_core::telemetry::record_url("https://example.com/search?q=rust");
/// ```
pub fn record_url(url: &str) {
    if let Some(span) = current_call() {
        span.record(attr::URL_FULL, url);
    }
}

/// How a registry redacts captured content before it is recorded
/// ([`RegistryBuilder::redact_captured`](crate::RegistryBuilder::redact_captured)).
pub(crate) type Redaction = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// `text`, through the redaction if there is one.
fn redacted<'a>(redaction: Option<&Redaction>, text: &'a str) -> Cow<'a, str> {
    match redaction {
        Some(redact) => Cow::Owned(redact(text)),
        None => Cow::Borrowed(text),
    }
}

/// The most characters of a name or an id a span holds.
const MAX_NAME_CHARS: usize = 200;

/// `text`, cut to [`MAX_NAME_CHARS`] when longer; a length test otherwise.
#[inline]
fn bounded(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_NAME_CHARS {
        Cow::Borrowed(text)
    } else {
        crate::text::cut(text, MAX_NAME_CHARS)
    }
}

/// Records what is known once the tool is found: its description.
pub(crate) fn record_description(span: &Span, description: &str) {
    if !description.is_empty() {
        span.record(attr::TOOL_DESCRIPTION, description);
    }
}

/// Records the arguments, if content is captured, redacted first when
/// the registry redacts.
pub(crate) fn record_arguments(
    span: &Span,
    arguments: Arguments<'_>,
    redaction: Option<&Redaction>,
) {
    if !captures_content() {
        return;
    }
    match (arguments, redaction) {
        (Arguments::Text(text), _) => {
            span.record(attr::TOOL_CALL_ARGUMENTS, &*redacted(redaction, text))
        }
        (Arguments::Value(value), None) => {
            span.record(attr::TOOL_CALL_ARGUMENTS, tracing::field::display(value))
        }
        (Arguments::Value(value), Some(redact)) => span.record(
            attr::TOOL_CALL_ARGUMENTS,
            redact(&value.to_string()).as_str(),
        ),
    };
}

/// Records how the call ended: the error's kind, or (if content is
/// captured) the result's text, redacted first when the registry redacts.
pub(crate) fn record_outcome(span: &Span, outcome: &CallOutcome, redaction: Option<&Redaction>) {
    if let Some(error) = &outcome.error {
        span.record(attr::ERROR_TYPE, error.kind());
    } else if outcome.result.is_error() {
        span.record(attr::ERROR_TYPE, "tool_error");
    } else if captures_content() {
        let text = outcome.result.to_text();
        span.record(attr::TOOL_CALL_RESULT, &*redacted(redaction, text.as_str()));
    }
}
