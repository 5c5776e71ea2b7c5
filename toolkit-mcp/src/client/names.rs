//! An MCP tool's name in a registry: `{prefix}_{name}`, made portable by
//! the toolkit's one rule ([`toolkit_core::name::portable`]).

use toolkit_core::name::portable;

/// The longest prefix a server's name gives: at least 39 of the 64 bytes
/// a name may have are left to the tool's own name.
const PREFIX_LEN: usize = 24;

/// `prefix` and an MCP tool's `name` joined (just `name` when `prefix` is
/// empty), and made portable. The whole is cleaned at once, so a long
/// name's hash is of the joined name: two servers' long tools sharing a
/// beginning stay apart.
pub(crate) fn tool_name(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        portable(name).into_owned()
    } else {
        portable(&format!("{prefix}_{name}")).into_owned()
    }
}

/// A server's name as a prefix: portable, and short enough to leave room
/// for the tool's.
pub(crate) fn prefix(server: &str) -> String {
    let mut prefix = portable(server).into_owned();
    // A portable name is ASCII: any length is a character boundary.
    prefix.truncate(PREFIX_LEN);
    prefix
}

#[cfg(test)]
mod tests {
    use toolkit_core::name::{MAX_LEN, is_portable};

    use super::*;

    #[test]
    fn joins_and_cleans() {
        assert_eq!(tool_name("fs", "read_file"), "fs_read_file");
        assert_eq!(tool_name("gh", "repos.list"), "gh_repos_list");
        assert_eq!(tool_name("", "a b/c"), "a_b_c");
        assert_eq!(tool_name("x", "café"), "x_caf_");
        assert_eq!(tool_name("", ""), "_");
        assert_eq!(prefix("my.server v2"), "my_server_v2");
    }

    #[test]
    fn a_leading_digit_gets_an_underscore() {
        let prefix = prefix("1password");
        assert_eq!(prefix, "_1password");
        assert!(is_portable(&prefix));
        let name = tool_name(&prefix, "list_items");
        assert_eq!(name, "_1password_list_items");
        assert!(is_portable(&name));
        // With no prefix, the tool's own name is held to the same rule; a
        // prefix set by the host is too, through the joined name.
        assert_eq!(tool_name("", "2fa"), "_2fa");
        assert_eq!(tool_name("-x", "t"), "_-x_t");
        assert!(is_portable(&tool_name("9", "t")));
    }

    #[test]
    fn long_names_stay_apart() {
        let long = "a".repeat(80);
        let one = tool_name("srv", &format!("{long}1"));
        let two = tool_name("srv", &format!("{long}2"));
        assert_eq!(one.len(), MAX_LEN);
        assert!(is_portable(&one) && is_portable(&two));
        assert_ne!(one, two);
        assert_eq!(prefix(&"s".repeat(100)).len(), PREFIX_LEN);
    }

    #[test]
    fn every_name_is_portable() {
        let names = [
            "",
            "..",
            "名前",
            "a.b.c",
            &"é".repeat(70),
            "ok-name_1",
            "1password",
            "-",
            "0",
        ];
        for name in names {
            assert!(is_portable(&tool_name("p", name)), "{name}");
            assert!(is_portable(&tool_name("", name)), "{name}");
            assert!(is_portable(&prefix(name)), "{name}");
            assert!(is_portable(&tool_name(&prefix(name), "t")), "{name}");
        }
    }
}
