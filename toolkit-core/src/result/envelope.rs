//! The `{"ok": bool, "output": string}` envelope, for hosts that want plain strings.

use serde::{Deserialize, Serialize};

use crate::ToolResult;

/// A result reduced to whether it succeeded and a bounded text.
///
/// `output` is the result's [text](ToolResult::to_text) (`Error: …` for a
/// failure), followed by its note on a line of its own, cut on a character boundary so that it holds at most the limit
/// in characters, the [`CUT_MARK`](Self::CUT_MARK) included.
///
/// ```
/// use toolkit_core::ToolResult;
///
/// let envelope = ToolResult::text("x".repeat(500)).envelope();
/// assert!(envelope.ok);
/// assert_eq!(envelope.output.chars().count(), 200);
/// assert!(envelope.output.ends_with("…[cut]"));
///
/// let json = serde_json::to_string(&ToolResult::error("no such file").envelope()).unwrap();
/// assert_eq!(json, r#"{"ok":false,"output":"Error: no such file"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// `false` when the tool failed.
    pub ok: bool,
    /// The output, at most the limit in characters.
    pub output: String,
}

impl Envelope {
    /// The default limit on `output`, in characters.
    pub const DEFAULT_LIMIT: usize = 200;

    /// What ends an output that was cut.
    pub const CUT_MARK: &'static str = "…[cut]";

    /// The envelope of `result` with `output` cut to `limit` characters.
    ///
    /// A limit shorter than the mark still yields the whole mark, so that a
    /// cut is never invisible.
    pub fn of(result: &ToolResult, limit: usize) -> Self {
        // The text first: it computes a lazy body, which may turn out failed.
        let mut text = result.to_text();
        if let Some(note) = result.note() {
            text.push('\n');
            text.push_str(note);
        }
        let output = cut(text, limit);
        Self {
            ok: !result.is_error(),
            output,
        }
    }
}

/// Cuts `text` to at most `limit` characters, the mark included.
pub(crate) fn cut(mut text: String, limit: usize) -> String {
    let Some((end, _)) = text.char_indices().nth(limit) else {
        return text; // `limit` characters or fewer: nothing to cut.
    };
    let mark_chars = Envelope::CUT_MARK.chars().count();
    let keep = limit.saturating_sub(mark_chars);
    let keep_end = text.char_indices().nth(keep).map_or(end, |(i, _)| i);
    text.truncate(keep_end);
    text.push_str(Envelope::CUT_MARK);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_respects_char_boundaries_and_limit() {
        let text = "é".repeat(300);
        let out = cut(text, 10);
        assert_eq!(out.chars().count(), 10);
        assert_eq!(out, format!("{}{}", "éééé", Envelope::CUT_MARK));
    }

    #[test]
    fn short_text_untouched() {
        assert_eq!(cut("abc".into(), 3), "abc");
        assert_eq!(cut("".into(), 0), "");
    }

    #[test]
    fn tiny_limit_keeps_whole_mark() {
        assert_eq!(cut("abcdefghijkl".into(), 2), Envelope::CUT_MARK);
    }
}
