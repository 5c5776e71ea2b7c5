//! Secrets: values the host names, the model refers to by name, and that
//! never come back out of a tool.

use super::domains::DomainPattern;

/// What the model writes in `input` to type a secret: `<secret>name</secret>`.
pub const SECRET_OPEN: &str = "<secret>";
/// The end of a secret placeholder (see [`SECRET_OPEN`]).
pub const SECRET_CLOSE: &str = "</secret>";

/// One secret: its value and, optionally, the only sites it may be typed
/// on.
#[derive(Clone)]
pub(crate) struct Secret {
    pub(crate) name: String,
    pub(crate) value: String,
    pub(crate) domains: Option<Vec<DomainPattern>>,
}

/// The placeholder the model sees instead of a secret's value.
pub(crate) fn placeholder(name: &str) -> String {
    format!("{SECRET_OPEN}{name}{SECRET_CLOSE}")
}

/// A piece of the text the model asked to type.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Typed<'a> {
    /// Plain text, typed as is.
    Text(&'a str),
    /// `<secret>name</secret>`.
    Secret(&'a str),
}

/// Splits `text` at its `<secret>name</secret>` placeholders. An opening tag
/// without a closing one is plain text.
pub(crate) fn typed_parts(text: &str) -> Vec<Typed<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(SECRET_OPEN) {
        let after = &rest[open + SECRET_OPEN.len()..];
        let Some(close) = after.find(SECRET_CLOSE) else {
            break;
        };
        if open > 0 {
            out.push(Typed::Text(&rest[..open]));
        }
        out.push(Typed::Secret(after[..close].trim()));
        rest = &after[close + SECRET_CLOSE.len()..];
    }
    if !rest.is_empty() {
        out.push(Typed::Text(rest));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_split_the_text() {
        assert_eq!(
            typed_parts("user <secret>pw</secret>!"),
            vec![Typed::Text("user "), Typed::Secret("pw"), Typed::Text("!")]
        );
        assert_eq!(
            typed_parts("<secret> a </secret>"),
            vec![Typed::Secret("a")]
        );
        assert_eq!(
            typed_parts("<secret>open"),
            vec![Typed::Text("<secret>open")]
        );
        assert_eq!(typed_parts(""), Vec::<Typed<'_>>::new());
    }
}
