use serde::Deserialize;
use toolkit_core::tool;

/// A length.
#[derive(Deserialize)]
struct Meters(f64);

/// Doubles a length.
#[tool]
fn double(
    /// The length.
    length: Meters,
) -> f64 {
    length.0 * 2.0
}

fn main() {}
