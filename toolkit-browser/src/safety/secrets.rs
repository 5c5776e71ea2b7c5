//! Secrets: values the host names, the model refers to by name, and that
//! never come back out of a tool.

use std::borrow::Cow;
use std::fmt::Write as _;

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

/// Every form in which a value can reach a text the tools return, longest
/// first, each with the placeholder that replaces it.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    needles: Vec<(String, String)>,
}

impl Redactor {
    pub(crate) fn new(secrets: &[Secret]) -> Self {
        let mut needles = Vec::new();
        for secret in secrets {
            let shown = placeholder(&secret.name);
            // The value as typed, and as it appears in a URL after a GET
            // form submits it (percent-encoded, `+` for spaces) or in JSON
            // that `evaluate` returns (escaped quotes and backslashes).
            let json = serde_json::to_string(&secret.value).unwrap_or_default();
            let json = json
                .strip_prefix('"')
                .and_then(|j| j.strip_suffix('"'))
                .unwrap_or_default()
                .to_owned();
            for form in [
                secret.value.clone(),
                percent_encode(&secret.value, false),
                percent_encode(&secret.value, true),
                percent_encode(&secret.value, false).to_ascii_lowercase(),
                json,
            ] {
                if !form.is_empty() && !needles.iter().any(|(n, _)| *n == form) {
                    needles.push((form, shown.clone()));
                }
            }
        }
        // Longest first, so a secret that contains another is replaced whole.
        needles.sort_by_key(|(needle, _)| std::cmp::Reverse(needle.len()));
        Self { needles }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// `text` with every secret value replaced by its placeholder.
    pub(crate) fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (needle, shown) in &self.needles {
            if out.contains(needle.as_str()) {
                out = Cow::Owned(out.replace(needle.as_str(), shown));
            }
        }
        out
    }

    pub(crate) fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redact(text) {
            *text = redacted;
        }
    }

    pub(crate) fn redact_option(&self, text: &mut Option<String>) {
        if let Some(text) = text {
            self.redact_in_place(text);
        }
    }
}

/// `encodeURIComponent`, or `application/x-www-form-urlencoded` when
/// `form` (spaces as `+`).
fn percent_encode(value: &str, form: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(byte));
            }
            b'!' | b'\'' | b'(' | b')' | b'*' if !form => out.push(char::from(byte)),
            b'*' if form => out.push('*'),
            b' ' if form => out.push('+'),
            _ => {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
    out
}

/// A piece of the text the model asked to type.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Plain text, typed as is.
    Text(&'a str),
    /// `<secret>name</secret>`.
    Secret(&'a str),
}

/// Splits `text` at its `<secret>name</secret>` placeholders. An opening tag
/// without a closing one is plain text.
pub(crate) fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(SECRET_OPEN) {
        let after = &rest[open + SECRET_OPEN.len()..];
        let Some(close) = after.find(SECRET_CLOSE) else {
            break;
        };
        if open > 0 {
            out.push(Piece::Text(&rest[..open]));
        }
        out.push(Piece::Secret(after[..close].trim()));
        rest = &after[close + SECRET_CLOSE.len()..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str, value: &str) -> Secret {
        Secret {
            name: name.into(),
            value: value.into(),
            domains: None,
        }
    }

    #[test]
    fn values_are_replaced_in_every_form() {
        let r = Redactor::new(&[secret("pw", "s3cret pass/é\"")]);
        assert_eq!(
            r.redact("typed s3cret pass/é\" here"),
            "typed <secret>pw</secret> here"
        );
        assert_eq!(
            r.redact("/login?pw=s3cret+pass%2F%C3%A9%22&x=1"),
            "/login?pw=<secret>pw</secret>&x=1"
        );
        assert_eq!(
            r.redact("q=s3cret%20pass%2F%C3%A9%22"),
            "q=<secret>pw</secret>"
        );
        assert_eq!(
            r.redact(r#"{"v":"s3cret pass/é\""}"#),
            r#"{"v":"<secret>pw</secret>"}"#
        );
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_secret_containing_another_is_replaced_whole() {
        let r = Redactor::new(&[secret("short", "abc"), secret("long", "abcdef")]);
        assert_eq!(
            r.redact("abcdef abc"),
            "<secret>long</secret> <secret>short</secret>"
        );
    }

    #[test]
    fn placeholders_split_the_text() {
        assert_eq!(
            pieces("user <secret>pw</secret>!"),
            vec![Piece::Text("user "), Piece::Secret("pw"), Piece::Text("!")]
        );
        assert_eq!(pieces("<secret> a </secret>"), vec![Piece::Secret("a")]);
        assert_eq!(pieces("<secret>open"), vec![Piece::Text("<secret>open")]);
        assert_eq!(pieces(""), Vec::<Piece<'_>>::new());
    }
}
