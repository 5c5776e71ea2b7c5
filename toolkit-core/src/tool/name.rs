//! A tool's name, shared without copying it.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A tool name held by errors, timers and call contexts: a `#[tool]`'s is
/// a `&'static str`, a run-time tool's a shared string, so that no call
/// copies it.
#[derive(Clone)]
pub(crate) enum Name {
    Static(&'static str),
    Shared(Arc<str>),
}

impl Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Name::Static(name) => name,
            Name::Shared(name) => name,
        }
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Whether every provider accepts `name` as a tool name:
/// `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`, the rule `#[tool]` checks at compile
/// time.
pub(crate) fn is_portable(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
