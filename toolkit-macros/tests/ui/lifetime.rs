use std::borrow::Cow;
use toolkit_core::tool;

/// Echoes a value.
#[tool]
fn echo<'a>(
    /// The value.
    value: Cow<'a, str>,
) -> String {
    value.into_owned()
}

/// Echoes a value, the lifetime elided.
#[tool]
fn elided(
    /// The value.
    value: Cow<'_, str>,
) -> String {
    value.into_owned()
}

fn main() {}
