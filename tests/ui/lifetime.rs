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

fn main() {}
