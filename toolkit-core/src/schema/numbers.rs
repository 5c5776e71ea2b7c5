//! schemars' numeric `format`s, replaced by bounds.

use super::json::Json;

/// The range an integer `format` of schemars stands for, as
/// `(minimum, maximum)`; `None` if `format` is not one of them. 64- and
/// 128-bit bounds are left out: beyond 2^53 they are not exact in the
/// doubles most JSON readers use, and no model will reach them.
fn integer_range(format: &str) -> Option<(Option<i64>, Option<i64>)> {
    Some(match format {
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
        "uint8" => (Some(0), Some(u8::MAX.into())),
        "uint16" => (Some(0), Some(u16::MAX.into())),
        "uint32" => (Some(0), Some(u32::MAX.into())),
        "int64" | "int128" | "int" => (None, None),
        "uint64" | "uint128" | "uint" => (Some(0), None),
        _ => return None,
    })
}

/// Replaces schemars' numeric `format`s, which are not JSON Schema formats
/// and which strict dialects reject, by the bounds they imply.
pub(crate) fn normalize_numeric_format(schema: &mut Json) {
    let Some(format) = schema.get("format").and_then(Json::as_str) else {
        return;
    };
    if matches!(format, "float" | "double") {
        schema.remove("format");
        return;
    }
    let Some((low, high)) = integer_range(format) else {
        return;
    };
    schema.remove("format");
    if let Some(low) = low {
        tighten(schema, "minimum", low, |existing, bound| existing >= bound);
    }
    if let Some(high) = high {
        tighten(schema, "maximum", high, |existing, bound| existing <= bound);
    }
}

/// Sets `keyword` to `bound` unless it already holds a number at least as
/// tight (e.g. `NonZeroU32`'s `minimum: 1`, or a `#[schemars(range)]`).
fn tighten(schema: &mut Json, keyword: &str, bound: i64, tighter: fn(f64, f64) -> bool) {
    let keeps = match schema.get(keyword) {
        Some(Json::Number(existing)) => existing
            .as_f64()
            .is_some_and(|existing| tighter(existing, bound as f64)),
        _ => false,
    };
    if !keeps {
        schema.insert(keyword, Json::Number(bound.into()));
    }
}
