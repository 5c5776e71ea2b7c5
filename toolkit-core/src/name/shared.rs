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

/// A [`Name`] borrowed from a tool's definition: what a call carries, so
/// that a tool that never asks for its name costs the call no reference
/// count.
#[derive(Clone, Copy)]
pub(crate) enum NameRef<'a> {
    Static(&'static str),
    Shared(&'a Arc<str>),
}

impl NameRef<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            NameRef::Static(name) => name,
            NameRef::Shared(name) => name,
        }
    }

    /// The name, owned: a copy of the pointer, or one reference count.
    pub(crate) fn to_shared(self) -> Name {
        match self {
            NameRef::Static(name) => Name::Static(name),
            NameRef::Shared(name) => Name::Shared(Arc::clone(name)),
        }
    }
}
