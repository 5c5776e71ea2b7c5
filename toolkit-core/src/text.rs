//! Text shortened for a model: one way to cut, one mark.
//!
//! Every crate of the toolkit cuts what it shows a model (a result in an
//! envelope, a name echoed in an error, a value quoted in a refusal, an
//! element's text in a page map) with [`cut`], on a character boundary,
//! ending with [`CUT_MARK`], so that a cut text always says it was cut.
//!
//! ```
//! use toolkit_core::text::{CUT_MARK, cut};
//!
//! assert_eq!(cut("a short line", 80), "a short line");
//! assert_eq!(cut("0123456789", 5), format!("0123{CUT_MARK}"));
//! assert_eq!(cut("ééééé", 3).chars().count(), 3);
//! ```

use std::borrow::Cow;

/// What ends a text that was cut: one character, `…` (U+2026).
pub const CUT_MARK: &str = "\u{2026}";

/// `text` cut to at most `max_chars` characters, [`CUT_MARK`] included;
/// borrowed as it is when it fits. A limit of zero still yields the mark,
/// so that a cut is never invisible.
pub fn cut(text: &str, max_chars: usize) -> Cow<'_, str> {
    match kept_bytes(text, max_chars) {
        None => Cow::Borrowed(text),
        Some(keep) => Cow::Owned([&text[..keep], CUT_MARK].concat()),
    }
}

/// [`cut`], on an owned text, in place.
pub fn cut_string(mut text: String, max_chars: usize) -> String {
    if let Some(keep) = kept_bytes(&text, max_chars) {
        text.truncate(keep);
        text.push_str(CUT_MARK);
    }
    text
}

/// The byte length of the first `max_chars` characters of `text`; `None`
/// when the text has no more than that.
pub(crate) fn prefix_len(text: &str, max_chars: usize) -> Option<usize> {
    // The byte length bounds the character count from above: most texts
    // are decided without counting.
    if text.len() <= max_chars {
        return None;
    }
    text.char_indices().nth(max_chars).map(|(at, _)| at)
}

/// Where a text that must be cut to `max_chars` characters, mark included,
/// ends before the mark; `None` when it fits.
fn kept_bytes(text: &str, max_chars: usize) -> Option<usize> {
    prefix_len(text, max_chars)?;
    Some(prefix_len(text, max_chars.saturating_sub(1)).unwrap_or(text.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitting_text_is_borrowed() {
        assert!(matches!(cut("abc", 3), Cow::Borrowed("abc")));
        assert!(matches!(cut("", 0), Cow::Borrowed("")));
        assert_eq!(cut_string("abc".into(), 3), "abc");
    }

    #[test]
    fn cut_text_keeps_the_limit_with_the_mark() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut_string("abcdef".into(), 4), "abc…");
        let long = "é".repeat(300);
        assert_eq!(cut(&long, 10).chars().count(), 10);
        assert_eq!(cut(&long, 10), format!("{}…", "é".repeat(9)));
    }

    #[test]
    fn a_zero_limit_still_shows_the_mark() {
        assert_eq!(cut("abc", 0), CUT_MARK);
        assert_eq!(cut("abc", 1), CUT_MARK);
    }
}
