use toolkit_core::tool;

/// Searches.
#[tool]
fn search(
    /// The query.
    query: String,
    limit: Option<u32>,
) -> String {
    let _ = limit;
    query
}

fn main() {}
