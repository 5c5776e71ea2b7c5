//! The `{"ok": bool, "output": string}` envelope, for hosts that want plain strings.

use serde::{Deserialize, Serialize};

use crate::ToolResult;
use crate::text::cut_string;

/// A result reduced to whether it succeeded and a bounded text.
///
/// `output` is the result's [text](ToolResult::to_text) (`Error: …` for a
/// failure), followed by its note on a line of its own,
/// [cut](crate::text::cut) to at most the limit in characters, the
/// [`CUT_MARK`](crate::text::CUT_MARK) included.
///
/// ```
/// use toolkit_core::ToolResult;
///
/// let envelope = ToolResult::text("x".repeat(500)).envelope();
/// assert!(envelope.ok);
/// assert_eq!(envelope.output.chars().count(), 200);
/// assert!(envelope.output.ends_with(toolkit_core::text::CUT_MARK));
///
/// let json = serde_json::to_string(&ToolResult::error("no such file").envelope()).unwrap();
/// assert_eq!(json, r#"{"ok":false,"output":"Error: no such file"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Envelope {
    /// `false` when the tool failed.
    pub ok: bool,
    /// The output, at most the limit in characters.
    pub output: String,
}

impl Envelope {
    /// The default limit on `output`, in characters.
    pub const DEFAULT_LIMIT: usize = 200;

    /// An envelope saying `output`, failed unless `ok`; the text is kept
    /// as given (use [`of`](Self::of) to cut it to a limit).
    pub fn new(ok: bool, output: impl Into<String>) -> Self {
        Self {
            ok,
            output: output.into(),
        }
    }

    /// The envelope of `result` with `output` cut to `limit` characters.
    pub fn of(result: &ToolResult, limit: usize) -> Self {
        // The text first: it computes a lazy body, which may turn out failed.
        let mut text = result.to_text();
        if let Some(note) = result.note() {
            text.push('\n');
            text.push_str(note);
        }
        let output = cut_string(text, limit);
        Self {
            ok: !result.is_error(),
            output,
        }
    }
}
