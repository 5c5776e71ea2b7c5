// Borrows below the top of a parameter's type: each is reported at the
// borrow, with the whole owned type to write instead.
use std::collections::HashMap;
use toolkit_core::tool;

/// Tags things.
#[tool]
fn tag(
    /// The tags.
    tags: Vec<&str>,
    /// A label and its weight.
    weighted: Option<(&str, u32)>,
    /// Bytes by name.
    blobs: HashMap<String, &[u8]>,
) -> usize {
    tags.len() + weighted.map_or(0, |(_, w)| w as usize) + blobs.len()
}

fn main() {}
