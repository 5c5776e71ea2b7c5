use toolkit_core::tool;

/// Not a function.
#[tool]
struct Search {
    query: String,
}

fn main() {}
