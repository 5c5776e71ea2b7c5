use toolkit_core::tool;

struct Opaque;

/// Makes something opaque.
#[tool]
fn make(
    /// Ignored.
    seed: u32,
) -> Opaque {
    let _ = seed;
    Opaque
}

fn main() {}
