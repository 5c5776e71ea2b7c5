use toolkit_core::tool;

/// Adds two numbers.
#[tool]
fn add(
    /// The numbers.
    (a, b): (u8, u8),
) -> u16 {
    u16::from(a) + u16::from(b)
}

/// Ignores a number.
#[tool]
fn ignore(
    /// The number.
    _: u8,
) -> String {
    String::new()
}

fn main() {}
