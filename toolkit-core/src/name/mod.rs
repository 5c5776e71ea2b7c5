//! Tool names every provider accepts.
//!
//! One rule for every crate of the toolkit: `#[tool]` checks it at compile
//! time, a [`Registry`](crate::Registry) when a run-time tool joins it, and
//! toolkit-mcp when it names an MCP server's tools.
//!
//! A tool defined elsewhere (an MCP server's, an OpenAPI operation, a
//! benchmark's function list) may have a name no provider takes, such as
//! `math.factorial`: register it under [`portable`] name with
//! [`ToolBuilder::wire_name`](crate::ToolBuilder::wire_name), and it keeps
//! its own name for the host.
//!
//! ```
//! use toolkit_core::name;
//!
//! assert!(name::is_portable("get_weather"));
//! assert!(!name::is_portable("math.factorial"));
//! assert_eq!(name::portable("math.factorial"), "math_factorial");
//! assert_eq!(name::portable("1password"), "_1password");
//! ```

mod rule;
mod shared;

use std::borrow::Cow;

pub use rule::{MAX_LEN, is_portable};
pub(crate) use shared::{Name, NameRef};

/// `name` made portable: every character a provider refuses (a dot, a
/// slash, a space, a letter outside ASCII) becomes `_`, a name that starts
/// with a digit or `-` gets a leading `_`, and a name longer than
/// [`MAX_LEN`] is cut and ends with a hash of the whole, so that two long
/// names sharing a beginning stay apart. A portable name is returned as it
/// is.
///
/// Two names may clean to the same portable name (`a.b` and `a_b`); a
/// registry refuses the second as a duplicate, naming both.
pub fn portable(name: &str) -> Cow<'_, str> {
    if is_portable(name) {
        return Cow::Borrowed(name);
    }
    let mut clean = String::with_capacity(name.len() + 1);
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        clean.push('_');
    }
    clean.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '_'
        }
    }));
    if clean.len() > MAX_LEN {
        let hash = format!("{:08x}", crate::hash::fnv1a(name.as_bytes()) as u32);
        clean.truncate(MAX_LEN - hash.len() - 1);
        clean.push('_');
        clean.push_str(&hash);
    }
    Cow::Owned(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portable_names_pass_through() {
        for name in ["a", "_", "get_weather", "A-1", &"x".repeat(MAX_LEN)] {
            assert!(matches!(portable(name), Cow::Borrowed(_)), "{name}");
        }
    }

    #[test]
    fn foreign_names_are_cleaned() {
        assert_eq!(portable("math.factorial"), "math_factorial");
        assert_eq!(portable("ChaDri.change_drink"), "ChaDri_change_drink");
        assert_eq!(portable("1password"), "_1password");
        assert_eq!(portable("-x"), "_-x");
        assert_eq!(portable("a b/c"), "a_b_c");
        assert_eq!(portable("café"), "caf_");
        assert_eq!(portable(""), "_");
        assert_eq!(portable("名前"), "___");
    }

    #[test]
    fn long_names_stay_apart_and_fit() {
        let long = "a".repeat(80);
        let one = portable(&format!("{long}.1")).into_owned();
        let two = portable(&format!("{long}.2")).into_owned();
        assert_eq!(one.len(), MAX_LEN);
        assert_ne!(one, two);
        for name in [one, two, portable(&"é".repeat(70)).into_owned()] {
            assert!(is_portable(&name), "{name}");
        }
    }
}
