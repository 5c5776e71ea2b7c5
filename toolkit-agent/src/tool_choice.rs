//! Which calls the model may make: one setting every provider spells its
//! own way.

use serde::{Deserialize, Serialize};

/// Which calls the model may make.
///
/// Its JSON form is `"auto"`, `"none"`, `"required"` or `{"tool": name}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the providers' default).
    #[default]
    Auto,
    /// No calls: the model answers in text.
    None,
    /// At least one call (`required`, Anthropic's `any`, Gemini's `ANY`).
    Required,
    /// A call of this tool.
    Tool(String),
}
