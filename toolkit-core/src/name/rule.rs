// The tool-name rule alone, with no dependency: `#[tool]` checks names at
// compile time with a copy of it, and a test of toolkit-macros includes this
// file to hold that copy equal to it.

/// The longest tool name every provider accepts, in bytes (every accepted
/// character is ASCII).
pub const MAX_LEN: usize = 64;

/// Whether every provider accepts `name` as a tool name:
/// `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
///
/// That is what OpenAI (`^[a-zA-Z0-9_-]{1,64}$`), Anthropic
/// (`^[a-zA-Z0-9_-]{1,128}$`) and Gemini (a letter or `_` first, at most 64)
/// all take.
pub fn is_portable(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= MAX_LEN
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
