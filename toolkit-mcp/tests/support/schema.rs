//! The official MCP JSON Schemas (in `tests/data/`, copied unchanged from
//! the specification repository) as judges of what our server writes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

/// A protocol revision whose schema judges a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Revision {
    /// 2025-11-25: sessions.
    V2025_11_25,
    /// 2026-07-28: stateless.
    V2026_07_28,
}

impl Revision {
    fn text(self) -> &'static str {
        match self {
            Self::V2025_11_25 => include_str!("../data/mcp-2025-11-25.schema.json"),
            Self::V2026_07_28 => include_str!("../data/mcp-2026-07-28.schema.json"),
        }
    }
}

type Validators = Mutex<HashMap<(Revision, String), Arc<jsonschema::Validator>>>;

/// The schema of `revision`, with its root pointing at one definition.
fn validator(revision: Revision, definition: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Validators> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (revision, definition.to_owned());
    if let Some(found) = cache.lock().unwrap().get(&key) {
        return Arc::clone(found);
    }
    let mut schema: Value = serde_json::from_str(revision.text()).expect("the official schema");
    assert!(
        schema["$defs"].get(definition).is_some(),
        "{revision:?} has no {definition}"
    );
    schema["$ref"] = json!(format!("#/$defs/{definition}"));
    let made = Arc::new(jsonschema::draft202012::new(&schema).expect("a valid schema"));
    cache.lock().unwrap().insert(key, Arc::clone(&made));
    made
}

/// Fails unless `value` is a valid `definition` of `revision`.
pub fn assert_valid(revision: Revision, definition: &str, value: &Value) {
    let errors: Vec<String> = validator(revision, definition)
        .iter_errors(value)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid {definition} of {revision:?}: {errors:?}\n{value}"
    );
}
