use toolkit_core::tool;

/// Searches.
///
/// # Arguments
///
/// * `query` - The query.
#[tool]
fn search(
    /// The query, again.
    query: String,
) -> String {
    query
}

fn main() {}
