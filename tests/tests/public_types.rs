//! A public type users can build with a struct literal, or match without a
//! wildcard, cannot gain a field or a variant without breaking them. Every
//! public enum, and every public struct whose fields are all public, in the
//! published crates is therefore `#[non_exhaustive]`, or says above it why
//! its fields or variants are closed (docs/ARCHITECTURE.md, "Types that can
//! grow").

use std::fs;
use std::path::{Path, PathBuf};

const CRATES: [&str; 7] = [
    "toolkit-core",
    "toolkit-agent",
    "toolkit-mcp",
    "toolkit-browser",
    "toolkit-http",
    "toolkit-code",
    "toolkit-postgres",
];

/// What marks a closed type, at the start of a comment above it.
const CLOSED: &str = "// Exhaustive on purpose:";

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The fields of a struct body or tuple, split at top-level commas.
fn fields(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|part| {
            // Attributes and doc comments of a field come before it.
            part.lines()
                .map(str::trim)
                .filter(|line| !line.starts_with("//") && !line.starts_with("#["))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|part| !part.is_empty())
        .collect()
}

/// Whether the struct declared at `lines[at]` has only public fields.
fn all_fields_public(lines: &[&str], at: usize) -> bool {
    let head = lines[at];
    let indent = head.len() - head.trim_start().len();
    let body = if let Some(open) = head.find('(') {
        let mut text = head[open + 1..].to_owned();
        let mut next = at + 1;
        while !text.contains(");") && next < lines.len() {
            text.push('\n');
            text.push_str(lines[next]);
            next += 1;
        }
        text[..text.rfind(')').unwrap()].to_owned()
    } else if head.trim_end().ends_with('{') {
        let close = format!("{}}}", " ".repeat(indent));
        lines[at + 1..]
            .iter()
            .take_while(|line| line.trim_end() != close)
            .copied()
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        // A unit struct has nothing to add to.
        return false;
    };
    let fields = fields(&body);
    !fields.is_empty()
        && fields
            .iter()
            .all(|field| field.starts_with("pub ") && !field.starts_with("pub("))
}

/// The public types of `file` that can neither grow nor say why not.
fn unmarked(file: &Path) -> Vec<String> {
    let text = fs::read_to_string(file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        // Unit tests' own types are not the crate's API.
        if line.starts_with("#[cfg(test)]")
            && lines.get(at + 1).is_some_and(|l| l.starts_with("mod "))
        {
            break;
        }
        let trimmed = line.trim_start();
        let (kind, rest) = if let Some(rest) = trimmed.strip_prefix("pub enum ") {
            ("enum", rest)
        } else if let Some(rest) = trimmed.strip_prefix("pub struct ") {
            ("struct", rest)
        } else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if kind == "struct" && !all_fields_public(&lines, at) {
            continue;
        }
        let above = lines[..at]
            .iter()
            .rev()
            .map(|line| line.trim())
            .take_while(|line| {
                line.starts_with("#")
                    || line.starts_with("//")
                    || line.ends_with(',')
                    || line.ends_with(")]")
            });
        let mut marked = false;
        for line in above {
            marked |= line == "#[non_exhaustive]" || line.starts_with(CLOSED);
        }
        if !marked {
            found.push(format!("{}:{} {kind} {name}", file.display(), at + 1));
        }
    }
    found
}

#[test]
fn public_types_can_grow_or_say_why_not() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for name in CRATES {
        sources(&root.join(name).join("src"), &mut files);
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let found: Vec<String> = files.iter().flat_map(|file| unmarked(file)).collect();
    assert!(
        found.is_empty(),
        "public types without #[non_exhaustive] or a `{CLOSED}` comment:\n{}",
        found.join("\n")
    );
}

/// The check itself finds what it should, so that it cannot pass by
/// finding nothing.
#[test]
fn the_check_finds_an_unmarked_type_and_passes_marked_ones() {
    let dir = std::env::temp_dir().join(format!("public-types-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sample.rs");
    fs::write(
        &file,
        "/// Open.\n#[derive(Debug)]\npub struct Open {\n    /// A.\n    pub a: u8,\n}\n\n\
         #[derive(Debug)]\n#[non_exhaustive]\npub enum Growing {\n    A,\n}\n\n\
         #[derive(Debug)]\n// Exhaustive on purpose: a bit.\npub enum Bit {\n    Zero,\n    One,\n}\n\n\
         pub struct Hidden {\n    pub a: u8,\n    b: u8,\n}\n\n\
         pub struct Tuple(pub u8, pub(crate) u8);\n\n\
         pub struct Newtype(pub Vec<(u8, u8)>);\n\n\
         pub enum Loose {\n    A,\n}\n",
    )
    .unwrap();
    let found = unmarked(&file);
    fs::remove_dir_all(&dir).unwrap();
    let names: Vec<&str> = found
        .iter()
        .map(|line| line.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(names, ["Open", "Newtype", "Loose"], "{found:#?}");
}
