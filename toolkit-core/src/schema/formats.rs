//! schemars' numeric `format`s, replaced by bounds.

use std::cmp::Ordering;

use serde_json::Number;

use super::keywords::{Holds, holds};
use super::ordered_json::OrderedJson;
use crate::number::{compare, widen};

/// The range an integer `format` of schemars stands for, as
/// `(minimum, maximum)`; `None` if `format` is not one of them.
///
/// 128-bit integers are bounded to what every way in carries exactly: a
/// call's arguments may arrive as a parsed `serde_json::Value`, which
/// holds integers as `i64` or `u64` (anything wider becomes a lossy
/// `f64`), so `i128` takes `i64::MIN..=u64::MAX` and `u128` `0..=u64::MAX`.
fn integer_range(format: &str) -> Option<(Number, Number)> {
    let signed = |min: i64, max: i64| (Number::from(min), Number::from(max));
    let unsigned = |max: u64| (Number::from(0), Number::from(max));
    Some(match format {
        "int8" => signed(i8::MIN.into(), i8::MAX.into()),
        "int16" => signed(i16::MIN.into(), i16::MAX.into()),
        "int32" => signed(i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => signed(i64::MIN, i64::MAX),
        "int128" => (Number::from(i64::MIN), Number::from(u64::MAX)),
        "uint8" => unsigned(u8::MAX.into()),
        "uint16" => unsigned(u16::MAX.into()),
        "uint32" => unsigned(u32::MAX.into()),
        "uint64" | "uint" | "uint128" => unsigned(u64::MAX),
        _ => return None,
    })
}

/// The numbers an `f32` reads without becoming infinite, as `(minimum,
/// maximum)`: serde reads a number past them as an infinity, a value the
/// model never sent. Written as the `f32` they are (`3.4028235e38`); every
/// number up to that reads as `f32::MAX` at most.
fn f32_range() -> (Number, Number) {
    let max: f64 = f32::MAX.to_string().parse().unwrap_or(f64::from(f32::MAX));
    let bound = |value: f64| Number::from_f64(value).unwrap_or_else(|| Number::from(0));
    (bound(-max), bound(max))
}

/// Replaces schemars' numeric `format`s, which are not JSON Schema formats
/// and which strict dialects reject, by the bounds they imply.
pub(crate) fn normalize_numeric_format(schema: &mut OrderedJson) {
    let Some(format) = schema.get("format").and_then(OrderedJson::as_str) else {
        return;
    };
    if format == "float" {
        schema.remove("format");
        f32_values_as_written(schema);
        let (low, high) = f32_range();
        tighten(schema, "minimum", low, Ordering::is_ge);
        tighten(schema, "maximum", high, Ordering::is_le);
        return;
    }
    if format == "double" {
        schema.remove("format");
        return;
    }
    let Some((low, high)) = integer_range(format) else {
        return;
    };
    schema.remove("format");
    tighten(schema, "minimum", low, Ordering::is_ge);
    tighten(schema, "maximum", high, Ordering::is_le);
}

/// [`normalize_numeric_format`] on `schema` and every sub-schema in it:
/// for schemas that are not made canonical (a tool's output schema).
pub(crate) fn normalize_numeric_formats(schema: &mut OrderedJson) {
    normalize_numeric_format(schema);
    let OrderedJson::Object(members) = schema else {
        return;
    };
    for (keyword, value) in members.iter_mut() {
        match (holds(keyword), value) {
            (Some(Holds::One), value) => normalize_numeric_formats(value),
            (Some(Holds::List), OrderedJson::Array(items)) => {
                items.iter_mut().for_each(normalize_numeric_formats);
            }
            (Some(Holds::Map), OrderedJson::Object(entries)) => {
                entries
                    .iter_mut()
                    .for_each(|(_, sub)| normalize_numeric_formats(sub));
            }
            _ => {}
        }
    }
}

/// Sets `keyword` to `bound` unless it already holds a number at least as
/// tight (e.g. `NonZeroU32`'s `minimum: 1`, or a `#[schemars(range)]`).
fn tighten(schema: &mut OrderedJson, keyword: &str, bound: Number, tighter: fn(Ordering) -> bool) {
    let keeps = match schema.get(keyword) {
        Some(OrderedJson::Number(existing)) => tighter(compare(existing, &bound)),
        _ => false,
    };
    if !keeps {
        schema.insert(keyword, OrderedJson::Number(bound));
    }
}

/// The keywords of a number schema that hold its values.
const VALUE_KEYWORDS: &[&str] = &[
    "default",
    "enum",
    "const",
    "examples",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
];

/// An `f32`'s values in their shortest form that reads back to the same
/// `f32`: schemars widens them to `f64` on the way (`3.9_f32` becomes
/// `3.9000000953674316`), which is noise to a model.
fn f32_values_as_written(schema: &mut OrderedJson) {
    fn rewrite(value: &mut OrderedJson) {
        match value {
            OrderedJson::Number(number) => {
                if let Some(short) = number.as_f64().and_then(shortest_f32) {
                    *number = short;
                }
            }
            OrderedJson::Array(items) => items.iter_mut().for_each(rewrite),
            _ => {}
        }
    }
    for keyword in VALUE_KEYWORDS {
        if let Some(value) = schema.get_mut(keyword) {
            rewrite(value);
        }
    }
}

/// `value` written as the `f32` it is, if it is one and not an integer.
pub(crate) fn shortest_f32(value: f64) -> Option<Number> {
    let narrow = value as f32;
    if f64::from(narrow) != value || value.fract() == 0.0 || !value.is_finite() {
        return None;
    }
    Number::from_f64(widen(narrow))
}
