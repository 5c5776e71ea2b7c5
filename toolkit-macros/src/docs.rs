//! Doc comments as descriptions.

use proc_macro2::Span;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The text of a doc comment, one entry per line, with the span of the
/// attribute each line came from.
pub(crate) struct DocLines {
    lines: Vec<(String, Span)>,
}

impl DocLines {
    /// The `///` and `#[doc = "..."]` lines of `attrs`. Docs given by a macro
    /// (`#[doc = include_str!(..)]`) cannot be read here and are skipped.
    pub(crate) fn of(attrs: &[Attribute]) -> Self {
        let mut lines = Vec::new();
        for attr in attrs {
            let Meta::NameValue(meta) = &attr.meta else {
                continue;
            };
            if !meta.path.is_ident("doc") {
                continue;
            }
            if let Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) = &meta.value
            {
                let span = text.span();
                // `split`, not `lines`: a bare `///` is an empty string,
                // which `lines` would drop, and with it a paragraph break.
                for line in text.value().split('\n') {
                    // rustdoc's convention: `/// text` is " text".
                    let line = line.strip_prefix(' ').unwrap_or(line);
                    let line = line.strip_suffix('\r').unwrap_or(line);
                    lines.push((line.trim_end().to_owned(), span));
                }
            }
        }
        Self { lines }
    }

    /// The text up to the first heading, paragraphs kept: what the model
    /// reads. Headings inside code blocks (rustdoc's hidden `# ` lines) do not
    /// count.
    pub(crate) fn description(&self) -> String {
        let mut in_code = false;
        let lines = self
            .lines
            .iter()
            .map(|(line, _)| line.as_str())
            .take_while(|line| {
                if line.trim_start().starts_with("```") {
                    in_code = !in_code;
                }
                in_code || !is_heading(line)
            });
        normalize(lines)
    }

    /// The entries of an `# Arguments` (or `# Parameters`) section:
    /// `` * `name` - text `` lines, continuation lines folded in.
    pub(crate) fn arguments(&self) -> Vec<ArgumentDoc> {
        let mut entries: Vec<ArgumentDoc> = Vec::new();
        let mut inside = false;
        let mut in_code = false;
        for (line, span) in &self.lines {
            if line.trim_start().starts_with("```") {
                in_code = !in_code;
            }
            if !in_code && is_heading(line) {
                let title = line.trim_start_matches('#').trim().to_ascii_lowercase();
                inside = matches!(title.as_str(), "arguments" | "parameters" | "params");
                continue;
            }
            if !inside || in_code {
                continue;
            }
            let trimmed = line.trim_start();
            if let Some(item) = trimmed
                .strip_prefix("* ")
                .or_else(|| trimmed.strip_prefix("- "))
                && let Some((name, text)) = split_entry(item)
            {
                entries.push(ArgumentDoc {
                    name,
                    text,
                    span: *span,
                });
                continue;
            }
            // A continuation of the entry above.
            if let Some(last) = entries.last_mut()
                && !trimmed.is_empty()
            {
                last.text.push(' ');
                last.text.push_str(trimmed);
            }
        }
        entries
    }

    /// All lines, paragraphs kept: a parameter's own `///` comment.
    pub(crate) fn text(&self) -> String {
        normalize(self.lines.iter().map(|(line, _)| line.as_str()))
    }
}

/// One entry of an `# Arguments` section.
pub(crate) struct ArgumentDoc {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) span: Span,
}

fn is_heading(line: &str) -> bool {
    let trimmed = line.trim_start();
    let hashes = trimmed.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ')
}

/// `` `name` - text ``, `` `name`: text `` or `name - text`.
fn split_entry(item: &str) -> Option<(String, String)> {
    let (name, rest) = match item.strip_prefix('`') {
        Some(quoted) => {
            let end = quoted.find('`')?;
            (&quoted[..end], &quoted[end + 1..])
        }
        None => {
            let bare = item.strip_prefix("r#").unwrap_or(item);
            let end = bare.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            (&bare[..end], &bare[end..])
        }
    };
    let rest = rest.trim_start();
    let text = rest
        .strip_prefix('-')
        .or_else(|| rest.strip_prefix(':'))
        .or_else(|| rest.strip_prefix('—'))?;
    let name = name.strip_prefix("r#").unwrap_or(name);
    (!name.is_empty()).then(|| (name.to_owned(), text.trim().to_owned()))
}

/// Joins lines, keeping single line breaks and one blank line between
/// paragraphs, without blank lines at either end.
fn normalize<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    let mut blank_pending = false;
    for line in lines {
        if line.trim().is_empty() {
            blank_pending = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank_pending { "\n\n" } else { "\n" });
        }
        blank_pending = false;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn docs(attrs: Vec<Attribute>) -> DocLines {
        DocLines::of(&attrs)
    }

    #[test]
    fn description_stops_at_the_first_heading() {
        let d = docs(vec![
            parse_quote!(#[doc = " Search the index."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " Returns titles,"]),
            parse_quote!(#[doc = " one per line."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " # Examples"]),
            parse_quote!(#[doc = " ```"]),
            parse_quote!(#[doc = " search(\"x\")"]),
            parse_quote!(#[doc = " ```"]),
        ]);
        assert_eq!(
            d.description(),
            "Search the index.\n\nReturns titles,\none per line."
        );
    }

    #[test]
    fn hidden_code_lines_are_not_headings() {
        let d = docs(vec![
            parse_quote!(#[doc = " Does it."]),
            parse_quote!(#[doc = " ```"]),
            parse_quote!(#[doc = " # use x;"]),
            parse_quote!(#[doc = " ```"]),
            parse_quote!(#[doc = " After."]),
        ]);
        assert_eq!(d.description(), "Does it.\n```\n# use x;\n```\nAfter.");
    }

    #[test]
    fn arguments_section() {
        let d = docs(vec![
            parse_quote!(#[doc = " Searches."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " # Arguments"]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " * `query` - The query"]),
            parse_quote!(#[doc = "   to run."]),
            parse_quote!(#[doc = " * `limit`: At most this many."]),
            parse_quote!(#[doc = " - r#type - The kind."]),
            parse_quote!(#[doc = " # Errors"]),
            parse_quote!(#[doc = " * `ignored` - not an argument."]),
        ]);
        let entries: Vec<(String, String)> = d
            .arguments()
            .into_iter()
            .map(|entry| (entry.name, entry.text))
            .collect();
        assert_eq!(
            entries,
            [
                ("query".into(), "The query to run.".into()),
                ("limit".into(), "At most this many.".into()),
                ("type".into(), "The kind.".into()),
            ]
        );
        assert_eq!(d.description(), "Searches.");
    }

    #[test]
    fn headings_need_a_space() {
        assert!(is_heading("# Examples"));
        assert!(is_heading("  ## Notes"));
        assert!(!is_heading("#[derive]"));
        assert!(!is_heading("#hashtag"));
    }
}
