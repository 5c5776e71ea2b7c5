use serde::Deserialize;
use toolkit_core::tool;

#[derive(Deserialize)]
struct Point {
    x: f64,
    y: f64,
}

/// Measures a point.
#[tool]
fn norm(
    /// The point.
    point: Point,
) -> f64 {
    point.x.hypot(point.y)
}

fn main() {}

// The same tool as `param_not_deserialize.rs` on purpose: each file is one
// compile failure, and this one lacks only `JsonSchema`.
