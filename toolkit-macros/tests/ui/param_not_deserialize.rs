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

// The same tool as `param_not_jsonschema.rs` on purpose: each file is one
// compile failure, and this one lacks only `Deserialize`.
