//! The click action both loop benchmarks give their model, async as the
//! browser toolbox's actions are.

use toolkit_core::tool;

/// Click an element of the page map.
#[tool]
pub async fn click(
    /// The element's index.
    index: u32,
) -> String {
    format!("clicked {index}")
}
