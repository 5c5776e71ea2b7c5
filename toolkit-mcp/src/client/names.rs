//! Tool names every provider accepts: `^[a-zA-Z0-9_-]{1,64}$`.

/// The longest name OpenAI, Anthropic and Gemini all accept.
const MAX_LEN: usize = 64;

/// `prefix` and an MCP tool's `name` joined into a name every provider
/// accepts: other characters (dots, slashes, spaces, letters outside
/// ASCII) become `_`; a name too long is cut and ends with a hash of the
/// whole, so that two long names sharing a beginning stay apart.
pub(crate) fn tool_name(prefix: &str, name: &str) -> String {
    let joined = if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}_{name}")
    };
    let mut clean: String = joined
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        clean.push('_');
    }
    if clean.len() > MAX_LEN {
        let hash = format!("{:08x}", fnv1a(joined.as_bytes()) as u32);
        clean.truncate(MAX_LEN - hash.len() - 1);
        clean.push('_');
        clean.push_str(&hash);
    }
    clean
}

/// A server's name as a prefix: cleaned like a tool name, and short
/// enough to leave room for the tool's.
pub(crate) fn prefix(server: &str) -> String {
    let mut prefix = tool_name("", server);
    prefix.truncate(24);
    prefix
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(name: &str) -> bool {
        (1..=MAX_LEN).contains(&name.len())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn joins_and_cleans() {
        assert_eq!(tool_name("fs", "read_file"), "fs_read_file");
        assert_eq!(tool_name("gh", "repos.list"), "gh_repos_list");
        assert_eq!(tool_name("", "a b/c"), "a_b_c");
        assert_eq!(tool_name("x", "café"), "x_caf_");
        assert_eq!(tool_name("", ""), "_");
    }

    #[test]
    fn long_names_stay_apart() {
        let long = "a".repeat(80);
        let one = tool_name("srv", &format!("{long}1"));
        let two = tool_name("srv", &format!("{long}2"));
        assert_eq!(one.len(), MAX_LEN);
        assert!(accepted(&one) && accepted(&two));
        assert_ne!(one, two);
    }

    #[test]
    fn every_name_is_accepted() {
        for name in ["", "..", "名前", "a.b.c", &"é".repeat(70), "ok-name_1"] {
            assert!(accepted(&tool_name("p", name)), "{name}");
            assert!(accepted(&tool_name(&prefix(name), "t")), "{name}");
        }
    }
}
