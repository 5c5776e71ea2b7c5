use toolkit_core::tool;

/// Deletes a file.
#[tool(read_only, destructive)]
fn delete(
    /// The file.
    path: String,
) -> String {
    path
}

fn main() {}
