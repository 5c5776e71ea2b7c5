//! Independent judges of the JSON our emitters write.
//!
//! Each judge is built from a provider's public documentation, never from
//! the emitters' code, so that a shared misunderstanding cannot make both
//! sides agree on a wrong shape. Every type denies unknown fields: a key the
//! provider does not document is a bug to catch, not data to ignore. Rules
//! that types cannot express (ordering, references, payload encoding) are
//! checked by each judge's `check_*` function, which returns the parsed
//! value so tests can make further assertions on it.

pub mod anthropic;
pub mod anthropic_request;
pub mod gemini;
pub mod gemini_request;
pub mod gemini_schema;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

/// Checks that `data` is canonical standard base64 whose bytes are what
/// `mime_type` claims.
///
/// Both providers carry media as standard-alphabet base64. Anthropic also
/// rejects an image whose bytes do not match its declared media type ("Image
/// does not match the provided media type image/png"), and a mislabelled
/// payload is an emitter bug on any provider, so the magic number of every
/// format we know is checked too.
pub(crate) fn check_base64_payload(mime_type: &str, data: &str, path: &str) -> Result<(), String> {
    let bytes = STANDARD
        .decode(data)
        .map_err(|e| format!("{path}: data is not valid standard base64: {e}"))?;
    if bytes.is_empty() {
        return Err(format!("{path}: data is empty"));
    }
    let matches = match mime_type {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "image/webp" => bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP"),
        "application/pdf" => bytes.starts_with(b"%PDF-"),
        "audio/wav" | "audio/wave" | "audio/x-wav" => {
            bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WAVE")
        }
        _ => true,
    };
    if matches {
        Ok(())
    } else {
        Err(format!(
            "{path}: data does not start with the signature of {mime_type}"
        ))
    }
}

/// Calls `visit(path, schema)` for every schema object in `schema`.
pub fn walk_schemas(
    schema: &Value,
    path: &str,
    visit: &mut dyn FnMut(&str, &serde_json::Map<String, Value>),
) {
    let Value::Object(members) = schema else {
        return;
    };
    visit(path, members);
    for (keyword, value) in members {
        let at = |segment: &str| {
            if path.is_empty() {
                segment.to_owned()
            } else {
                format!("{path}.{segment}")
            }
        };
        match (keyword.as_str(), value) {
            ("items" | "additionalProperties" | "not", sub) => {
                walk_schemas(sub, &at(keyword), visit)
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(items)) => {
                for (index, sub) in items.iter().enumerate() {
                    walk_schemas(sub, &at(&format!("{keyword}[{index}]")), visit);
                }
            }
            ("properties" | "$defs", Value::Object(entries)) => {
                for (name, sub) in entries {
                    walk_schemas(sub, &at(&format!("{keyword}.{name}")), visit);
                }
            }
            _ => {}
        }
    }
}
