//! A call's arguments, as the provider sent them.

use serde_json::Value;

/// The arguments of one call, as the provider sent them: JSON text (OpenAI's
/// `arguments` string) or an already-parsed value (Anthropic's `input`,
/// Gemini's `args`).
#[derive(Debug, Clone, Copy)]
// Exhaustive on purpose: the two forms providers send arguments in: text or a parsed value.
pub enum Arguments<'a> {
    /// JSON text. An empty or blank text means no arguments (`{}`).
    Text(&'a str),
    /// A parsed value. `null` means no arguments.
    Value(&'a Value),
}

impl<'a> From<&'a str> for Arguments<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a String> for Arguments<'a> {
    fn from(text: &'a String) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a Value> for Arguments<'a> {
    fn from(value: &'a Value) -> Self {
        Self::Value(value)
    }
}
