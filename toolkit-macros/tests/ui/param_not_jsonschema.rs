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
