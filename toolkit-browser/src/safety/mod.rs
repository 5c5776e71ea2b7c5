//! The safety rules: the [`SafetyPolicy`] (allowed domains and schemes,
//! secrets, the files folder), the domain patterns it is made of, secret
//! redaction, and the navigation guard that enforces the domains on every
//! page load.

mod domains;
mod guard;
mod policy;
mod redact;
mod secrets;

pub use domains::{DomainPattern, PatternError};
pub use guard::BlockedNavigation;
pub(crate) use guard::{BlockedLog, Guard};
pub use policy::{PolicyError, SafetyPolicy, SafetyPolicyBuilder};
pub use redact::FRAGMENT_CHARS;
pub(crate) use redact::Redactor;
pub use secrets::{SECRET_CLOSE, SECRET_OPEN};
pub(crate) use secrets::{Typed, typed_parts};
