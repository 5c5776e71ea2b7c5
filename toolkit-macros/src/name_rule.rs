//! The tool-name rule, as toolkit-core states it (`toolkit_core::name`).
//!
//! A copy: toolkit-core depends on this crate, so this crate cannot call
//! it. The test below includes toolkit-core's own file and holds the two
//! equal on every name of up to three characters from an alphabet that
//! covers each case of the rule, and on names around the length limit.

/// The longest tool name every provider accepts.
pub(crate) const MAX_LEN: usize = 64;

/// Whether every provider accepts `name` as a tool name:
/// `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
pub(crate) fn is_portable(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= MAX_LEN
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

// Relative to this file's folder: a `#[path]` inside the inline test
// module would be relative to a folder that does not exist.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../toolkit-core/src/name/rule.rs"]
mod core_rule;

#[cfg(test)]
mod tests {
    use super::core_rule;

    #[test]
    fn the_copy_is_the_rule_of_toolkit_core() {
        assert_eq!(super::MAX_LEN, core_rule::MAX_LEN);
        let alphabet = ['a', 'Z', '0', '9', '_', '-', '.', ' ', 'é', '名', '/'];
        let mut names = vec![String::new()];
        for length in 1..=3 {
            let mut longer = Vec::new();
            for name in names
                .iter()
                .filter(|name| name.chars().count() == length - 1)
            {
                for c in alphabet {
                    longer.push(format!("{name}{c}"));
                }
            }
            names.extend(longer);
        }
        for length in [63, 64, 65] {
            names.push("a".repeat(length));
            names.push(format!("{}é", "a".repeat(length - 2)));
        }
        for name in &names {
            assert_eq!(
                super::is_portable(name),
                core_rule::is_portable(name),
                "{name:?}"
            );
        }
    }
}
