use toolkit_core::tool;

#[tool(nmae = "x")]
unsafe fn everything<T>(
    value: &str,
    (a, b): (u8, u8),
    #[tool(renam = "v")] other: impl Into<String>,
) {
    let _ = (value, a, b, other.into());
}

fn main() {}
