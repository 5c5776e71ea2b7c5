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

/// Makes something opaque, or fails.
#[tool]
async fn try_make(
    /// Whether to fail.
    fail: bool,
) -> Result<Opaque, String> {
    if fail {
        Err("failed".into())
    } else {
        Ok(Opaque)
    }
}

fn main() {}
