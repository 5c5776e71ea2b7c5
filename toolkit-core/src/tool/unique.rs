//! Parsing JSON text into a `Value`, refusing an object that repeats a key.
//!
//! serde_json keeps the last of repeated keys, and so do maps and
//! `serde_json::Value` parameters: `{"to": "ada", "to": "bob"}` would send
//! to Bob without a word. A model that repeats a key has made a mistake
//! worth telling it about.

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

/// Why text was refused.
pub(crate) enum Refusal {
    /// Not JSON.
    Syntax(serde_json::Error),
    /// A key repeated, at this path (`filters.tags`, or the key itself at
    /// the top).
    Repeated { path: String },
}

/// Parses `text` as `serde_json::from_str::<Value>` does, refusing repeated
/// keys.
pub(crate) fn parse(text: &str) -> Result<Value, Refusal> {
    let trail = Trail::default();
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = Reader { trail: &trail }
        .deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value));
    match parsed {
        Ok(value) => Ok(value),
        Err(_) if trail.repeated.get() => {
            let mut parts = trail.parts.into_inner();
            parts.reverse();
            let mut path = String::new();
            for part in parts {
                match part {
                    Part::Key(key) => {
                        if !path.is_empty() {
                            path.push('.');
                        }
                        path.push_str(&key);
                    }
                    Part::Index(index) => path.push_str(&format!("[{index}]")),
                }
            }
            Err(Refusal::Repeated { path })
        }
        Err(error) => Err(Refusal::Syntax(error)),
    }
}

/// Where a repeated key was found, filled in innermost first as the error
/// unwinds, so that a parse that succeeds pays nothing for it.
#[derive(Default)]
struct Trail {
    repeated: Cell<bool>,
    parts: RefCell<Vec<Part>>,
}

enum Part {
    Key(String),
    Index(usize),
}

#[derive(Clone, Copy)]
struct Reader<'t> {
    trail: &'t Trail,
}

impl Reader<'_> {
    fn note(&self, part: Part) {
        if self.trail.repeated.get() {
            self.trail.parts.borrow_mut().push(part);
        }
    }
}

impl<'de> DeserializeSeed<'de> for Reader<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Reader<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        loop {
            match seq.next_element_seed(self) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(Value::Array(items)),
                Err(error) => {
                    self.note(Part::Index(items.len()));
                    return Err(error);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match map.next_value_seed(self) {
                Ok(value) => value,
                Err(error) => {
                    self.note(Part::Key(key));
                    return Err(error);
                }
            };
            match object.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                Entry::Occupied(slot) => {
                    self.trail.repeated.set(true);
                    self.note(Part::Key(slot.key().clone()));
                    return Err(de::Error::custom("a key appears more than once"));
                }
            }
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeated(text: &str) -> Option<String> {
        match parse(text) {
            Err(Refusal::Repeated { path }) => Some(path),
            _ => None,
        }
    }

    #[test]
    fn parses_like_serde_json() {
        let text = r#"{"a": [1, -2, 3.5, "x", null, true, {"b": {}}], "c": 18446744073709551615}"#;
        assert_eq!(
            parse(text).ok(),
            Some(serde_json::from_str::<Value>(text).unwrap())
        );
        assert!(matches!(parse("{\"a\": 1,}"), Err(Refusal::Syntax(_))));
        assert!(matches!(parse("{} x"), Err(Refusal::Syntax(_))));
    }

    #[test]
    fn repeated_keys_are_refused_with_their_path() {
        assert_eq!(repeated(r#"{"a": 1, "a": 2}"#).as_deref(), Some("a"));
        assert_eq!(
            repeated(r#"{"x": [{}, {"k": 1, "k": 1}]}"#).as_deref(),
            Some("x[1].k")
        );
        assert_eq!(repeated(r#"{"a": {"a": 1}, "b": {"a": 2}}"#), None);
    }
}
