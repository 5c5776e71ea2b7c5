use toolkit_core::tool;

/// Two renamed alike.
#[tool]
fn twice(
    /// First.
    #[tool(rename = "q")]
    first: String,
    /// Second.
    #[tool(rename = "q")]
    second: String,
) {
    let _ = (first, second);
}

/// A rename onto another parameter's name.
#[tool]
fn collide(
    /// The query.
    query: String,
    /// Also the query.
    #[tool(rename = "query")]
    text: String,
) {
    let _ = (query, text);
}

fn main() {}
