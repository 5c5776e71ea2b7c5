use toolkit_core::tool;

/// Counts the words of a text.
#[tool]
fn word_count(
    /// The text.
    #[serde(default)]
    text: String,
) -> usize {
    text.split_whitespace().count()
}

fn main() {}
