use schemars::JsonSchema;
use toolkit_core::tool;

/// A point.
#[derive(JsonSchema)]
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
