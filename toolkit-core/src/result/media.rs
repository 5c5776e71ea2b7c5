//! What the blocks that carry bytes share: MIME types, sizes.

use std::fmt;

/// `mime_type` trimmed and lower-cased, if it is `type/subtype` with both
/// parts non-empty tokens.
pub(crate) fn media_mime(mime_type: &str) -> Option<String> {
    let lower = mime_type.trim().to_ascii_lowercase();
    let token = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.!#$&^_".contains(&b))
    };
    let (kind, subtype) = lower.split_once('/')?;
    (token(kind) && token(subtype)).then_some(lower)
}

/// The number of bytes base64 text decodes to, for text that says how
/// large a payload is.
pub(crate) fn decoded_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count();
    (data.len() / 4 * 3 + data.len() % 4 * 3 / 4).saturating_sub(padding)
}

/// A byte count as people read it: `512 B`, `12 KiB`, `3 MiB` (rounded
/// up, so that a payload is never said to be smaller than it is).
pub(crate) struct ByteSize(pub(crate) usize);

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const KIB: usize = 1024;
        match self.0 {
            bytes if bytes < KIB => write!(f, "{bytes} B"),
            bytes if bytes < KIB * KIB => write!(f, "{} KiB", bytes.div_ceil(KIB)),
            bytes => write!(f, "{} MiB", bytes.div_ceil(KIB * KIB)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(decoded_len("AAAA"), 3);
        assert_eq!(decoded_len("AA=="), 1);
        assert_eq!(decoded_len("AAA="), 2);
        assert_eq!(decoded_len(""), 0);
        assert_eq!(ByteSize(0).to_string(), "0 B");
        assert_eq!(ByteSize(1023).to_string(), "1023 B");
        assert_eq!(ByteSize(1025).to_string(), "2 KiB");
        assert_eq!(ByteSize(3 * 1024 * 1024).to_string(), "3 MiB");
    }

    #[test]
    fn mime_types() {
        assert_eq!(media_mime(" Text/Plain ").as_deref(), Some("text/plain"));
        assert_eq!(
            media_mime("application/vnd.api+json").as_deref(),
            Some("application/vnd.api+json")
        );
        for bad in ["", "text", "text/", "/plain", "te xt/plain"] {
            assert_eq!(media_mime(bad), None, "{bad:?}");
        }
    }
}
