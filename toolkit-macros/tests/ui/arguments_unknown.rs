use toolkit_core::tool;

/// Searches.
///
/// # Arguments
///
/// * `query` - The query.
/// * `limt` - At most this many.
#[tool]
fn search(query: String, limit: Option<u32>) -> String {
    let _ = limit;
    query
}

fn main() {}
