//! JSON numbers: compared and written exactly, and an `f32` in the form its
//! programmer wrote.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

use serde_json::Number;

/// Two JSON numbers compared by value, exactly: integers as integers
/// (`u64::MAX` and `u64::MAX - 1` differ, though they are one `f64`),
/// a float against an integer without rounding the integer.
pub(crate) fn compare(a: &Number, b: &Number) -> Ordering {
    match (exact(a), exact(b)) {
        (Exact::Int(x), Exact::Int(y)) => x.cmp(&y),
        (Exact::Int(x), Exact::Float(y)) => int_vs_float(x, y),
        (Exact::Float(x), Exact::Int(y)) => int_vs_float(y, x).reverse(),
        (Exact::Float(x), Exact::Float(y)) => x.total_cmp(&y),
    }
}

enum Exact {
    Int(i128),
    Float(f64),
}

fn exact(number: &Number) -> Exact {
    if let Some(n) = number.as_u64() {
        return Exact::Int(n.into());
    }
    if let Some(n) = number.as_i64() {
        return Exact::Int(n.into());
    }
    let f = number.as_f64().unwrap_or(f64::NAN);
    // Every `f64` this large is an integer, and converts exactly.
    if f.fract() == 0.0 && f.abs() < 1e38 {
        Exact::Int(f as i128)
    } else {
        Exact::Float(f)
    }
}

/// An integer against a float that is not an integer (or is huge).
fn int_vs_float(int: i128, float: f64) -> Ordering {
    if float.is_nan() {
        return Ordering::Less;
    }
    // A float that is not a whole number is below 2^53 in size, where
    // integers convert to `f64` exactly; larger ones are past any `i128`.
    if float >= 1e38 {
        return Ordering::Less;
    }
    if float <= -1e38 {
        return Ordering::Greater;
    }
    (int as f64).total_cmp(&float)
}

/// Writes a number exactly, integers in full: `18446744073709551616`
/// rather than `1.8446744073709552e19`.
pub(crate) fn show(number: &Number) -> String {
    match exact(number) {
        Exact::Int(n) => n.to_string(),
        Exact::Float(_) => number.to_string(),
    }
}

/// The `f64` whose shortest decimal form is `value`'s: the `f64` nearest to
/// the decimal Rust prints for the `f32` (the shortest that reads back as
/// it). Not finite values stay as they are (serde_json makes them `null`).
pub(crate) fn widen(value: f32) -> f64 {
    if !value.is_finite() {
        return f64::from(value);
    }
    let mut text = Digits::default();
    // `{:e}` is the shortest round-trip form, in at most 15 bytes
    // (`-1.1754942e-38`): no allocation.
    if write!(text, "{value:e}").is_err() {
        return f64::from(value);
    }
    text.as_str().parse().unwrap_or(f64::from(value))
}

/// A fixed buffer for one formatted `f32`.
#[derive(Default)]
struct Digits {
    bytes: [u8; 32],
    len: usize,
}

impl Digits {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for Digits {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
