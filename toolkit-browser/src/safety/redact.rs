//! Redaction: finding a secret in a text in any form it can take there,
//! and cutting texts only once they are redacted.
//!
//! A secret reaches a text the tools return as typed, or encoded, and each
//! character may be encoded on its own: a GET form writes `~` as `%7E`
//! (and a page may percent-encode any character, reserved or not), a form
//! body writes a space as `+`, HTML writes `&#126;` or `&amp;`, JSON writes
//! `\"` or `\u007e`, markdown writes `\|`. The redactor therefore does not
//! look for a fixed list of strings: at each position it decodes what the
//! text says there (every reading of it), and follows a secret character by
//! character through the decoded readings, in any letter case. A secret's
//! base64 forms (standard and URL-safe, at each of the three alignments it
//! can have inside a longer encoded text) are followed the same way, as
//! further strings that stand for the secret.
//!
//! It replaces a whole secret, and also any run of at least
//! [`FRAGMENT_CHARS`] of a secret's characters (a page that kept only part
//! of what was typed, a text that some earlier step cut): a piece that long
//! would give the secret away.

use std::borrow::Cow;
use std::collections::HashMap;

use super::secrets::{Secret, placeholder};

/// The shortest run of a secret's characters that is replaced when it is
/// not the whole secret.
pub const FRAGMENT_CHARS: usize = 8;

/// How many characters of text one character of a secret can take at
/// most, encoded (four percent-encoded bytes: `%F0%9F%9A%80`; a surrogate
/// pair in JSON: `\ud83d\ude80`). Texts cut in the page before redaction are
/// cut this much later per secret character, so that a secret that begins
/// before the cut ends before it too.
pub(crate) const MAX_ENCODED_CHAR: usize = 12;

/// Finds secrets in texts, in every form, and replaces them by their
/// placeholders.
#[derive(Clone)]
pub(crate) struct Redactor {
    /// Per secret: its characters and its placeholder, longest first.
    secrets: Vec<(Vec<char>, String)>,
    /// Per character: where it occurs in which secret.
    index: HashMap<char, Vec<(usize, usize)>>,
    /// The bytes a match can start with: a secret's characters' first
    /// bytes, and the first bytes of every encoding.
    starts: [bool; 256],
    /// The most characters of text a secret can take, encoded.
    longest_encoded: usize,
}

impl Default for Redactor {
    fn default() -> Self {
        Self::new(&[])
    }
}

impl Redactor {
    pub(crate) fn new(secrets: &[Secret]) -> Self {
        let mut list: Vec<(Vec<char>, String)> = Vec::new();
        for secret in secrets {
            let shown = placeholder(&secret.name);
            list.push((secret.value.chars().map(fold).collect(), shown.clone()));
            for core in base64_cores(&secret.value) {
                list.push((core.chars().map(fold).collect(), shown.clone()));
            }
        }
        // Longest first, so a secret that contains another is replaced whole.
        list.sort_by_key(|(chars, _)| std::cmp::Reverse(chars.len()));
        let mut index: HashMap<char, Vec<(usize, usize)>> = HashMap::new();
        let mut starts = [false; 256];
        for (s, (chars, _)) in list.iter().enumerate() {
            for (k, c) in chars.iter().enumerate() {
                index.entry(*c).or_default().push((s, k));
                // The text may hold the character in any letter case.
                for form in std::iter::once(*c).chain(c.to_uppercase()) {
                    let mut buf = [0; 4];
                    starts[usize::from(form.encode_utf8(&mut buf).as_bytes()[0])] = true;
                }
            }
        }
        if !list.is_empty() {
            for b in [b'%', b'+', b'&', b'\\'] {
                starts[usize::from(b)] = true;
            }
        }
        let longest_encoded = list
            .iter()
            .map(|(c, _)| c.len() * MAX_ENCODED_CHAR)
            .max()
            .unwrap_or(0);
        Self {
            secrets: list,
            index,
            starts,
            longest_encoded,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// How much later than its limit a text must be cut in the page, so
    /// that redaction sees every secret that starts before the limit whole.
    pub(crate) fn slack(&self) -> usize {
        self.longest_encoded
    }

    /// The secrets and fragments in `text`: byte ranges, in order, not
    /// overlapping, each with the placeholder that replaces it.
    fn find<'a>(&'a self, text: &str) -> Vec<(usize, usize, &'a str)> {
        let mut found = Vec::new();
        if self.secrets.is_empty() {
            return found;
        }
        let bytes = text.as_bytes();
        let mut memo = HashMap::new();
        let mut p = 0;
        while p < bytes.len() {
            let mut best: Option<(usize, usize)> = None; // (end, secret)
            if self.starts[usize::from(bytes[p])] {
                for (c, len) in readings(text, p) {
                    let Some(places) = self.index.get(&fold(c)) else {
                        continue;
                    };
                    for &(s, k) in places {
                        let chars = &self.secrets[s].0;
                        let (count, end) = self.follow(text, p + len, s, k + 1, &mut memo);
                        let count = count + 1;
                        let whole = k == 0 && count == chars.len();
                        if (whole || count >= FRAGMENT_CHARS) && best.is_none_or(|(e, _)| end > e) {
                            best = Some((end, s));
                        }
                    }
                }
            }
            match best {
                Some((end, s)) => {
                    found.push((p, end, self.secrets[s].1.as_str()));
                    p = end;
                }
                None => p += utf8_len(bytes[p]),
            }
        }
        found
    }

    /// How many more characters of secret `s`, from its character `k`, the
    /// text spells from byte `p`, and where the longest such run ends.
    fn follow(
        &self,
        text: &str,
        p: usize,
        s: usize,
        k: usize,
        memo: &mut HashMap<(usize, usize, usize), (usize, usize)>,
    ) -> (usize, usize) {
        let chars = &self.secrets[s].0;
        if k >= chars.len() || p >= text.len() {
            return (0, p);
        }
        if let Some(known) = memo.get(&(p, s, k)) {
            return *known;
        }
        let mut best = (0, p);
        for (c, len) in readings(text, p) {
            if fold(c) == chars[k] {
                let (count, end) = self.follow(text, p + len, s, k + 1, memo);
                if count + 1 > best.0 {
                    best = (count + 1, end);
                }
            }
        }
        memo.insert((p, s, k), best);
        best
    }

    /// `text` with every secret (and every long enough piece of one), in
    /// any form, replaced by its placeholder `<secret>name</secret>`.
    pub(crate) fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let found = self.find(text);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, shown) in found {
            out.push_str(&text[at..start]);
            out.push_str(shown);
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    pub(crate) fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redact(text) {
            *text = redacted;
        }
    }

    /// `text` redacted, then cut to `max` characters (with an ellipsis).
    pub(crate) fn redact_cut(&self, text: &str, max: usize) -> String {
        toolkit_core::text::cut(&self.redact(text), max).into_owned()
    }

    /// Whether `hit`, between `before` and `after`, overlaps a secret (or
    /// a piece of one) of the text they make together.
    pub(crate) fn touches(&self, before: &str, hit: &str, after: &str) -> bool {
        if self.secrets.is_empty() {
            return false;
        }
        let whole = format!("{before}{hit}{after}");
        let (from, to) = (before.len(), before.len() + hit.len());
        self.find(&whole)
            .iter()
            .any(|&(start, end, _)| start < to && end > from)
    }

    /// The text around `before` + `hit` + `after`, redacted as one text
    /// first, then cut to at most `context` characters on each side of
    /// what `hit` became (an ellipsis where something was left out).
    pub(crate) fn redact_window(
        &self,
        before: &str,
        hit: &str,
        after: &str,
        context: usize,
    ) -> String {
        let whole = format!("{before}{hit}{after}");
        let (mut from, mut to) = (before.len(), before.len() + hit.len());
        let found = self.find(&whole);
        // A secret overlapping the hit widens it to the placeholder.
        for &(start, end, _) in &found {
            if start < from && end > from {
                from = start;
            }
            if start < to && end > to {
                to = end;
            }
        }
        // Where an offset of `whole` lands once the spans before it are
        // replaced.
        let moved = |offset: usize| -> usize {
            let mut at = offset;
            for &(start, end, shown) in &found {
                if end <= offset {
                    at = at + shown.len() - (end - start);
                }
            }
            at
        };
        let (new_from, new_to) = (moved(from), moved(to));
        let mut out = String::with_capacity(whole.len());
        let mut at = 0;
        for &(start, end, shown) in &found {
            out.push_str(&whole[at..start]);
            out.push_str(shown);
            at = end;
        }
        out.push_str(&whole[at..]);
        let head: Vec<char> = out[..new_from].chars().collect();
        let tail: Vec<char> = out[new_to..].chars().collect();
        let mut window = String::new();
        if head.len() > context {
            window.push('\u{2026}');
        }
        window.extend(&head[head.len().saturating_sub(context)..]);
        window.push_str(&out[new_from..new_to]);
        window.extend(tail.iter().take(context));
        if tail.len() > context {
            window.push('\u{2026}');
        }
        window
    }
}

/// A character as the redactor compares it: in lower case (when that is
/// one character), a no-break space as a space. A page may show a secret
/// in capitals (`text-transform` is not applied to what is read, but a
/// server may upper-case what it echoes).
fn fold(c: char) -> char {
    if c == '\u{a0}' {
        return ' ';
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// The parts of the base64 forms of `value` (standard and URL-safe) that
/// depend on its bytes alone, for each of the three places it can start
/// at within a longer encoded text (a token `user:password`, a basic
/// authentication header). Parts shorter than [`FRAGMENT_CHARS`] are left
/// out: they would match unrelated text too often to be worth it.
fn base64_cores(value: &str) -> Vec<String> {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    for offset in 0..3usize {
        let mut padded = vec![0u8; offset];
        padded.extend_from_slice(bytes);
        // Base64 character i holds bits 6i..6i+6: the ones wholly inside
        // the value's bits.
        let start = (8 * offset).div_ceil(6);
        let end = 8 * (offset + bytes.len()) / 6;
        for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let encoded = engine.encode(&padded);
            if let Some(core) = encoded.get(start..end)
                && core.len() >= FRAGMENT_CHARS
                && !out.iter().any(|c: &String| c == core)
            {
                out.push(core.to_owned());
            }
        }
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

/// Every character the text can be read as at byte `p`, with how many
/// bytes that reading takes: the character itself, and each encoding that
/// starts there (percent, form, HTML character references, JSON and
/// markdown escapes).
fn readings(text: &str, p: usize) -> Vec<(char, usize)> {
    let rest = &text[p..];
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(2);
    if let Some(c) = rest.chars().next() {
        out.push((c, c.len_utf8()));
    }
    match bytes.first() {
        Some(b'+') => out.push((' ', 1)),
        Some(b'%') => {
            if let Some(read) = percent(bytes) {
                out.push(read);
            }
        }
        Some(b'&') => {
            if let Some(read) = reference(rest) {
                out.push(read);
            }
        }
        Some(b'\\') => out.extend(escape(rest)),
        _ => {}
    }
    out
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// `%HH` (one byte, or the bytes of one UTF-8 character).
fn percent(bytes: &[u8]) -> Option<(char, usize)> {
    let byte = |i: usize| -> Option<u8> {
        let at = i * 3;
        if bytes.get(at) != Some(&b'%') {
            return None;
        }
        Some(hex(*bytes.get(at + 1)?)? * 16 + hex(*bytes.get(at + 2)?)?)
    };
    let first = byte(0)?;
    let len = match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    let mut buf = [0u8; 4];
    buf[0] = first;
    for (i, slot) in buf.iter_mut().enumerate().take(len).skip(1) {
        *slot = byte(i)?;
    }
    let c = std::str::from_utf8(&buf[..len]).ok()?.chars().next()?;
    Some((c, len * 3))
}

/// Named references for the ASCII characters HTML has names for.
const NAMED: &[(&str, char)] = &[
    ("amp", '&'),
    ("AMP", '&'),
    ("lt", '<'),
    ("LT", '<'),
    ("gt", '>'),
    ("GT", '>'),
    ("quot", '"'),
    ("QUOT", '"'),
    ("apos", '\''),
    ("excl", '!'),
    ("num", '#'),
    ("dollar", '$'),
    ("percnt", '%'),
    ("lpar", '('),
    ("rpar", ')'),
    ("ast", '*'),
    ("midast", '*'),
    ("plus", '+'),
    ("comma", ','),
    ("period", '.'),
    ("sol", '/'),
    ("colon", ':'),
    ("semi", ';'),
    ("equals", '='),
    ("quest", '?'),
    ("commat", '@'),
    ("lsqb", '['),
    ("lbrack", '['),
    ("bsol", '\\'),
    ("rsqb", ']'),
    ("rbrack", ']'),
    ("Hat", '^'),
    ("lowbar", '_'),
    ("UnderBar", '_'),
    ("grave", '`'),
    ("DiacriticalGrave", '`'),
    ("lcub", '{'),
    ("lbrace", '{'),
    ("verbar", '|'),
    ("vert", '|'),
    ("VerticalLine", '|'),
    ("rcub", '}'),
    ("rbrace", '}'),
    ("Tab", '\t'),
    ("NewLine", '\n'),
    ("nbsp", '\u{a0}'),
];

/// An HTML character reference: `&#126;`, `&#x7E;` (leading zeros and a
/// missing `;` allowed, as browsers allow them), or a named one.
fn reference(rest: &str) -> Option<(char, usize)> {
    let body = rest.strip_prefix('&')?;
    if let Some(num) = body.strip_prefix('#') {
        let (digits, radix, skip) = match num.strip_prefix(['x', 'X']) {
            Some(h) => (h, 16, 3),
            None => (num, 10, 2),
        };
        let len = digits
            .bytes()
            .take_while(|b| char::from(*b).is_digit(radix))
            .count();
        if len == 0 || len > 16 {
            return None;
        }
        let value = u32::from_str_radix(&digits[..len], radix).ok()?;
        let c = char::from_u32(value)?;
        let semi = usize::from(digits[len..].starts_with(';'));
        return Some((c, skip + len + semi));
    }
    NAMED.iter().find_map(|(name, c)| {
        let after = body.strip_prefix(name)?;
        after.starts_with(';').then_some((*c, name.len() + 2))
    })
}

/// A JSON or markdown escape: `\"`, `\\`, `\/`, `\n`, `\u007e`, a
/// surrogate pair `\ud83d\ude80`, `\|`, `\[`...
fn escape(rest: &str) -> Vec<(char, usize)> {
    let bytes = rest.as_bytes();
    let mut out = Vec::new();
    match bytes.get(1) {
        Some(b'u') => {
            let unit = |at: usize| -> Option<u32> {
                let digits = rest.get(at..at + 4)?;
                if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                u32::from_str_radix(digits, 16).ok()
            };
            if let Some(high) = unit(2) {
                if let Some(c) = char::from_u32(high) {
                    out.push((c, 6));
                } else if (0xD800..0xDC00).contains(&high)
                    && rest.get(6..8) == Some("\\u")
                    && let Some(low) = unit(8)
                    && (0xDC00..0xE000).contains(&low)
                    && let Some(c) =
                        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                {
                    out.push((c, 12));
                }
            }
        }
        Some(b'n') => out.push(('\n', 2)),
        Some(b't') => out.push(('\t', 2)),
        Some(b'r') => out.push(('\r', 2)),
        Some(b'b') => out.push(('\u{8}', 2)),
        Some(b'f') => out.push(('\u{c}', 2)),
        Some(b) if b.is_ascii_punctuation() => out.push((char::from(*b), 2)),
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor(secrets: &[(&str, &str)]) -> Redactor {
        let list: Vec<Secret> = secrets
            .iter()
            .map(|(name, value)| Secret {
                name: (*name).into(),
                value: (*value).into(),
                domains: None,
            })
            .collect();
        Redactor::new(&list)
    }

    #[test]
    fn every_encoding_of_every_character_is_found() {
        let r = redactor(&[("pw", "pa|ss[w]rd ~7é")]);
        for form in [
            "pa|ss[w]rd ~7é",
            "pa%7Css%5Bw%5Drd%20%7E7%C3%A9",
            "pa%7css%5bw%5drd+~7%c3%a9",
            "%70%61|ss[w]rd ~7é",
            "pa&#124;ss&lsqb;w&#x5D;rd&#32;&#0126;7&#233;",
            r"pa\|ss\[w\]rd ~7é",
            r"pa\u007css[w]rd \u007E7\u00e9",
        ] {
            assert_eq!(
                r.redact(&format!("<{form}>")),
                "<<secret>pw</secret>>",
                "{form}"
            );
        }
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn letter_case_and_base64_forms_are_found() {
        let r = redactor(&[("pw", "Pa|ss[w]rd-77")]);
        for form in [
            "PA|SS[W]RD-77",
            "pa%7css%5bW%5drd-77",
            // base64 of the secret alone, and inside `user:secret`.
            "UGF8c3Nbd11yZC03Nw==",
            "dXNlcjpQYXxzc1t3XXJkLTc3",
        ] {
            let redacted = r.redact(form);
            assert!(
                redacted.contains("<secret>pw</secret>"),
                "{form}: {redacted}"
            );
            let left: String = redacted.replace("<secret>pw</secret>", "");
            assert!(left.chars().count() <= 8, "{form}: {redacted}");
        }
        // URL-safe base64, and standard base64 percent-encoded in a query.
        let r = redactor(&[("pw", "~~~>>>???~~~")]);
        assert_eq!(r.redact("t=fn5-Pj4-Pz8_fn5-"), "t=<secret>pw</secret>");
        assert_eq!(
            r.redact("t=fn5%2BPj4%2BPz8%2Ffn5%2B"),
            "t=<secret>pw</secret>"
        );
    }

    #[test]
    fn fragments_of_eight_characters_go_too() {
        let r = redactor(&[("pw", "correct-horse-battery")]);
        assert_eq!(r.redact("a correct-h b"), "a <secret>pw</secret> b");
        assert_eq!(r.redact("x battery y"), "x battery y", "7 characters stay");
        assert_eq!(r.redact("…e-battery"), "…<secret>pw</secret>");
        let short = redactor(&[("pin", "4711")]);
        assert_eq!(short.redact("pin 4711 47"), "pin <secret>pin</secret> 47");
    }

    #[test]
    fn a_secret_containing_another_is_replaced_whole() {
        let r = redactor(&[("short", "abc"), ("long", "abcdef")]);
        assert_eq!(
            r.redact("abcdef abc"),
            "<secret>long</secret> <secret>short</secret>"
        );
    }

    #[test]
    fn a_hit_touches_a_secret_it_overlaps() {
        let r = redactor(&[("pw", "hunter2-hunter2")]);
        assert!(r.touches("You sent hun", "ter2-h", "unter2. Bye"));
        assert!(r.touches("You sent ", "hunter2-hunter2", "."));
        assert!(!r.touches("", "You sent ", "hunter2-hunter2."));
        assert!(!r.touches("hunter2-hunter2 ", "and", " more"));
    }

    #[test]
    fn windows_are_cut_after_redaction() {
        let r = redactor(&[("pw", "hunter2-hunter2")]);
        let window = r.redact_window("0 aaaa hunter2-hun", "ter2", "-x bbbb", 6);
        assert_eq!(window, "\u{2026} aaaa <secret>pw</secret>-x bbb\u{2026}");
        let plain = r.redact_window("0123456789", "XY", "abcdefghij", 3);
        assert_eq!(plain, "\u{2026}789XYabc\u{2026}");
        assert_eq!(
            r.redact_cut("hunter2-hunter2 and more", 10),
            "<secret>p\u{2026}"
        );
    }
}
