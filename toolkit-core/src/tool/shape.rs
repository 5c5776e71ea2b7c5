//! A tool's canonical schema compiled once into a checker that serde reads
//! the arguments' text through, so that most calls are one pass over the
//! text, with no `Value` built and walked.
//!
//! The checker only ever lets a read finish when the slow way in
//! (`prepare`: the text parsed into a `Value` with repeated keys refused,
//! the `null`s that mean "absent" removed, the value checked against the
//! canonical schema) would take the text as it is, unchanged. Anything it
//! is not sure of (a keyword it does not know, a `null` or a float the slow
//! way would rewrite, a repeated key, any refusal) stops the read and sends
//! the call the slow way, which decides and explains. So the checker needs
//! no messages, and a schema it cannot compile costs nothing but the slow
//! way, as before.
//!
//! It compiles a subset of JSON Schema: `type` (one kind or several),
//! `enum` of strings, `minimum`/`maximum`, `minLength`/`maxLength`,
//! `items`, and objects whose `properties` are all there is
//! (`additionalProperties: false`), with `required`; annotations are
//! ignored, as the validator ignores them. Each value is checked as the
//! reading type asks for it, so a type that reads a struct from an array,
//! skips a value unread or takes a unit variant as `{"name": null}` is
//! stopped: the schema refuses those forms, or has not seen them.

use std::cmp::Ordering;
use std::fmt;

use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Map, Number, Value};

use crate::number;

/// The most properties one object may have to be compiled: which of them
/// have been seen is one `u64`.
const MAX_PROPERTIES: usize = 64;

/// How deep compiling follows the schema (the arguments are limited to 127
/// levels by the parser itself).
const MAX_DEPTH: usize = 64;

/// A compiled schema.
#[derive(Debug)]
pub(crate) struct Shape {
    /// The JSON kinds allowed here.
    kinds: u8,
    /// Allowed strings, when the schema lists them.
    strings: Option<Vec<String>>,
    minimum: Option<Bound>,
    maximum: Option<Bound>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    /// The schema of every item, when there is one.
    items: Option<Box<Shape>>,
    /// The known properties, in the schema's order, and their schemas.
    properties: Vec<Property>,
    /// Which of `properties` are required, one bit each.
    required: u64,
}

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const INTEGER: u8 = 4;
/// Any number: an integer, or a float.
const NUMBER: u8 = 8;
const STRING: u8 = 16;
const ARRAY: u8 = 32;
const OBJECT: u8 = 64;

/// Keywords that describe and constrain nothing the validator checks.
fn is_annotation(keyword: &str) -> bool {
    matches!(
        keyword,
        "title"
            | "description"
            | "default"
            | "examples"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "$comment"
            | "$schema"
            | "format"
    )
}

impl Shape {
    /// The root schema compiled, or `None` when it uses anything the checker
    /// does not know, or its root is not an object.
    pub(crate) fn compile(root: &Value) -> Option<Shape> {
        let shape = Self::node(root, 0)?;
        (shape.kinds == OBJECT).then_some(shape)
    }

    fn node(schema: &Value, depth: usize) -> Option<Shape> {
        if depth > MAX_DEPTH {
            return None;
        }
        let members = schema.as_object()?;
        let mut kinds = 0;
        match members.get("type")? {
            Value::String(kind) => kinds = kind_bit(kind)?,
            Value::Array(list) if !list.is_empty() => {
                for kind in list {
                    kinds |= kind_bit(kind.as_str()?)?;
                }
            }
            _ => return None,
        }
        let mut shape = Shape {
            kinds,
            strings: None,
            minimum: None,
            maximum: None,
            min_length: None,
            max_length: None,
            items: None,
            properties: Vec::new(),
            required: 0,
        };
        let mut closed = false;
        for (keyword, value) in members {
            match keyword.as_str() {
                "type" => {}
                "enum" => {
                    let listed = value.as_array()?;
                    let strings: Option<Vec<String>> = listed
                        .iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect();
                    shape.strings = Some(strings?);
                }
                "minimum" => shape.minimum = Some(Bound::new(value)?),
                "maximum" => shape.maximum = Some(Bound::new(value)?),
                "minLength" => shape.min_length = Some(value.as_u64()?),
                "maxLength" => shape.max_length = Some(value.as_u64()?),
                "items" => shape.items = Some(Box::new(Self::node(value, depth + 1)?)),
                "properties" => shape.properties = properties(value.as_object()?, depth)?,
                "required" => {}
                "additionalProperties" => closed = value == &Value::Bool(false),
                other if is_annotation(other) => {}
                _ => return None,
            }
        }
        if let Some(Value::Array(names)) = members.get("required") {
            for name in names {
                let name = name.as_str()?;
                let index = shape.properties.iter().position(|p| p.name == name)?;
                shape.required |= 1 << index;
            }
        } else if members.contains_key("required") {
            return None;
        }
        // An object that takes other fields would have to be read whole,
        // repeated keys and all: left to the slow way.
        if kinds & OBJECT != 0 && !closed {
            return None;
        }
        // An enum of strings where other kinds are allowed too (`null`,
        // say) would need the other kinds' values listed: not compiled.
        if shape.strings.is_some() && kinds & !STRING != 0 {
            return None;
        }
        Some(shape)
    }

    /// `text` read into `T` in one pass, every value checked against this
    /// (root) schema as serde reads it; `None` when the slow way must
    /// decide (see the module's doc), or when serde refused.
    pub(crate) fn read<T: DeserializeOwned>(&self, text: &str) -> Option<T> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let value = T::deserialize(Checked {
            shape: self,
            inner: &mut deserializer,
        })
        .ok()?;
        deserializer.end().ok()?;
        Some(value)
    }
}

fn kind_bit(kind: &str) -> Option<u8> {
    Some(match kind {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "integer" => INTEGER,
        "number" => NUMBER,
        "string" => STRING,
        "array" => ARRAY,
        "object" => OBJECT,
        _ => return None,
    })
}

/// A bound of `minimum` or `maximum`, with its value as an integer when
/// it is one, so that an integer argument is compared without
/// conversions.
#[derive(Debug)]
struct Bound {
    number: Number,
    integer: Option<i128>,
}

impl Bound {
    fn new(value: &Value) -> Option<Bound> {
        let Value::Number(number) = value else {
            return None;
        };
        let integer = number
            .as_u64()
            .map(i128::from)
            .or_else(|| number.as_i64().map(i128::from));
        Some(Bound {
            number: number.clone(),
            integer,
        })
    }

    /// How `found` compares with this bound.
    fn compare(&self, found: &Found) -> Ordering {
        match (found, self.integer) {
            (Found::Integer(found), Some(bound)) => found.cmp(&bound),
            (Found::Integer(found), None) => {
                let found = match u64::try_from(*found) {
                    Ok(found) => Number::from(found),
                    Err(_) => Number::from(*found as i64),
                };
                number::compare(&found, &self.number)
            }
            (Found::Float(found), _) => number::compare(found, &self.number),
        }
    }
}

/// A number in the arguments: every JSON integer serde reads fits an
/// `i128` (it reads them as `u64` or `i64`).
enum Found {
    Integer(i128),
    Float(Number),
}

fn properties(members: &Map<String, Value>, depth: usize) -> Option<Vec<Property>> {
    if members.len() > MAX_PROPERTIES {
        return None;
    }
    members
        .iter()
        .map(|(name, schema)| {
            Some(Property {
                head: head(name),
                name: name.clone(),
                shape: Shape::node(schema, depth + 1)?,
            })
        })
        .collect()
}

/// A known property.
#[derive(Debug)]
struct Property {
    name: String,
    /// The name's first eight bytes, so that most keys are told apart, and
    /// short ones matched, without comparing strings.
    head: u64,
    shape: Shape,
}

impl Property {
    fn is_named(&self, key: &str, key_head: u64) -> bool {
        self.name.len() == key.len()
            && self.head == key_head
            && (key.len() <= 8 || self.name == key)
    }
}

fn head(name: &str) -> u64 {
    name.bytes()
        .take(8)
        .enumerate()
        .fold(0, |head, (at, byte)| head | u64::from(byte) << (8 * at))
}

/// Takes nothing: the items of an array whose schema says nothing of them
/// (they may hold repeated keys, which only the slow way finds).
static NOTHING: Shape = Shape {
    kinds: 0,
    strings: None,
    minimum: None,
    maximum: None,
    min_length: None,
    max_length: None,
    items: None,
    properties: Vec::new(),
    required: 0,
};

/// Every refusal means the same to the caller ("ask the slow way"), so all
/// are made alike and cheaply.
fn no<E: de::Error>() -> E {
    E::custom("outside the compiled schema")
}

impl Shape {
    fn within(&self, found: &Found) -> bool {
        self.minimum
            .as_ref()
            .is_none_or(|min| min.compare(found) != Ordering::Less)
            && self
                .maximum
                .as_ref()
                .is_none_or(|max| max.compare(found) != Ordering::Greater)
    }

    fn takes(&self, kind: u8) -> bool {
        self.kinds & kind != 0
    }

    fn takes_integer(&self, found: i128) -> bool {
        self.takes(INTEGER | NUMBER) && self.within(&Found::Integer(found))
    }

    /// A float where an integer is wanted is rewritten or refused by the
    /// slow way.
    fn takes_float(&self, found: f64) -> bool {
        self.takes(NUMBER)
            && Number::from_f64(found).is_some_and(|found| self.within(&Found::Float(found)))
    }

    fn takes_str(&self, value: &str) -> bool {
        if !self.takes(STRING) {
            return false;
        }
        if let Some(allowed) = &self.strings
            && !allowed.iter().any(|candidate| candidate == value)
        {
            return false;
        }
        if self.min_length.is_none() && self.max_length.is_none() {
            return true;
        }
        let count = value.chars().count() as u64;
        self.min_length.is_none_or(|min| count >= min)
            && self.max_length.is_none_or(|max| count <= max)
    }
}

/// A deserializer whose every value is checked against `shape` as the
/// reading type asks for it.
struct Checked<'s, D> {
    shape: &'s Shape,
    inner: D,
}

macro_rules! guarded {
    ($($method:ident($($arg:ident: $type:ty),*);)*) => {
        $(
            fn $method<V: Visitor<'de>>(
                self,
                $($arg: $type,)*
                visitor: V,
            ) -> Result<V::Value, Self::Error> {
                self.inner.$method($($arg,)* Guard { shape: self.shape, visitor })
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Checked<'_, D> {
    type Error = D::Error;

    guarded! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_identifier();
    }

    /// Read as the string the schema says it is, so that serde's other
    /// forms of a unit variant (`{"newest": null}`) go the slow way.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        if self.shape.kinds != STRING {
            return Err(no());
        }
        self.inner.deserialize_str(UnitVariant {
            shape: self.shape,
            visitor,
        })
    }

    /// A value skipped unread would be unchecked.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
        Err(no())
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// The reading type's visitor, given only what `shape` takes.
struct Guard<'s, V> {
    shape: &'s Shape,
    visitor: V,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Guard<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<V::Value, E> {
        if !self.shape.takes(BOOLEAN) {
            return Err(no());
        }
        self.visitor.visit_bool(value)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<V::Value, E> {
        if !self.shape.takes_integer(i128::from(value)) {
            return Err(no());
        }
        self.visitor.visit_i64(value)
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<V::Value, E> {
        if !self.shape.takes_integer(i128::from(value)) {
            return Err(no());
        }
        self.visitor.visit_u64(value)
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<V::Value, E> {
        if !self.shape.takes_float(value) {
            return Err(no());
        }
        self.visitor.visit_f64(value)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<V::Value, E> {
        if !self.shape.takes_str(value) {
            return Err(no());
        }
        self.visitor.visit_str(value)
    }

    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<V::Value, E> {
        if !self.shape.takes_str(value) {
            return Err(no());
        }
        self.visitor.visit_borrowed_str(value)
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<V::Value, E> {
        if !self.shape.takes_str(&value) {
            return Err(no());
        }
        self.visitor.visit_string(value)
    }

    /// A `null` the schema does not take may mean "absent": the slow way
    /// decides.
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        if !self.shape.takes(NULL) {
            return Err(no());
        }
        self.visitor.visit_unit()
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        if !self.shape.takes(NULL) {
            return Err(no());
        }
        self.visitor.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(Checked {
            shape: self.shape,
            inner,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, inner: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_newtype_struct(Checked {
            shape: self.shape,
            inner,
        })
    }

    /// Also a struct read from an array, which the schema refuses.
    fn visit_seq<A: SeqAccess<'de>>(self, inner: A) -> Result<V::Value, A::Error> {
        if !self.shape.takes(ARRAY) {
            return Err(no());
        }
        let shape = self.shape.items.as_deref().unwrap_or(&NOTHING);
        self.visitor.visit_seq(Items { shape, inner })
    }

    fn visit_map<A: MapAccess<'de>>(self, inner: A) -> Result<V::Value, A::Error> {
        if !self.shape.takes(OBJECT) {
            return Err(no());
        }
        self.visitor.visit_map(Fields {
            shape: self.shape,
            inner,
            seen: 0,
            current: None,
        })
    }
}

/// A seed whose value is checked against `shape`.
struct Seed<'s, T> {
    shape: &'s Shape,
    seed: T,
}

impl<'de, T: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<T::Value, D::Error> {
        self.seed.deserialize(Checked {
            shape: self.shape,
            inner,
        })
    }
}

/// An array's items, each checked against `shape`.
struct Items<'s, A> {
    shape: &'s Shape,
    inner: A,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Items<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.inner.next_element_seed(Seed {
            shape: self.shape,
            seed,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// An object's fields: each key a known property seen once, each value
/// checked against its property's schema, and every required one there.
struct Fields<'s, A> {
    shape: &'s Shape,
    inner: A,
    /// The properties seen so far, one bit each.
    seen: u64,
    /// The property whose value comes next.
    current: Option<usize>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Fields<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let mut found = None;
        let key = self.inner.next_key_seed(KeySeed {
            shape: self.shape,
            found: &mut found,
            seed,
        })?;
        let Some(key) = key else {
            return if self.seen & self.shape.required == self.shape.required {
                Ok(None)
            } else {
                Err(no())
            };
        };
        // A key read some other way than as a string was not looked at.
        let index = found.ok_or_else(no)?;
        let bit = 1u64 << index;
        if self.seen & bit != 0 {
            return Err(no());
        }
        self.seen |= bit;
        self.current = Some(index);
        Ok(Some(key))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        let shape = match self.current.take() {
            Some(index) => &self.shape.properties[index].shape,
            None => &NOTHING,
        };
        self.inner.next_value_seed(Seed { shape, seed })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A key, which must name one of `shape`'s properties; which one is put
/// in `found`.
struct KeySeed<'s, 'f, K> {
    shape: &'s Shape,
    found: &'f mut Option<usize>,
    seed: K,
}

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, '_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<K::Value, D::Error> {
        self.seed.deserialize(KeyReader {
            shape: self.shape,
            found: self.found,
            inner,
        })
    }
}

/// Reads a key as a string, whatever the reading type asks for.
struct KeyReader<'s, 'f, D> {
    shape: &'s Shape,
    found: &'f mut Option<usize>,
    inner: D,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyReader<'_, '_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_str(Key {
            shape: self.shape,
            found: self.found,
            visitor,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct Key<'s, 'f, V> {
    shape: &'s Shape,
    found: &'f mut Option<usize>,
    visitor: V,
}

impl<'de, V: Visitor<'de>> Key<'_, '_, V> {
    fn known<E: de::Error>(&mut self, key: &str) -> Result<(), E> {
        let key_head = head(key);
        let index = self
            .shape
            .properties
            .iter()
            .position(|property| property.is_named(key, key_head))
            .ok_or_else(no)?;
        *self.found = Some(index);
        Ok(())
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Key<'_, '_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_str<E: de::Error>(mut self, key: &str) -> Result<V::Value, E> {
        self.known(key)?;
        self.visitor.visit_str(key)
    }

    fn visit_borrowed_str<E: de::Error>(mut self, key: &'de str) -> Result<V::Value, E> {
        self.known(key)?;
        self.visitor.visit_borrowed_str(key)
    }

    fn visit_string<E: de::Error>(mut self, key: String) -> Result<V::Value, E> {
        self.known(&key)?;
        self.visitor.visit_string(key)
    }
}

/// A unit variant, read from the string the schema allows.
struct UnitVariant<'s, V> {
    shape: &'s Shape,
    visitor: V,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for UnitVariant<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<V::Value, E> {
        if !self.shape.takes_str(value) {
            return Err(no());
        }
        self.visitor.visit_enum(StrDeserializer::<E>::new(value))
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use crate::schema::Source;
    use crate::tool::schema::ToolSchema;
    use crate::tool::{normalize, unique, validate};

    /// Whether the slow way takes `text` as it is: parsed with no repeated
    /// key, an object, nothing to rewrite, nothing the schema refuses.
    fn slow_way_takes_unchanged(schema: &Value, text: &str) -> bool {
        let Ok(value) = unique::parse(text) else {
            return false;
        };
        value.is_object()
            && !normalize::needed(schema, &value)
            && validate::check(schema, &value).is_empty()
    }

    fn search() -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The query."},
                "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "maximum": 4294967295u64},
                "tags": {"type": "array", "items": {"type": "string"}},
                "order": {"type": "string", "enum": ["relevance", "newest"]},
                "slot": {
                    "type": "object",
                    "properties": {
                        "day": {"type": "string", "minLength": 10, "maxLength": 10},
                        "hour": {"type": "integer", "minimum": 0, "maximum": 23},
                        "share": {"type": "number", "maximum": 1.5}
                    },
                    "required": ["day", "hour"],
                    "additionalProperties": false
                }
            },
            "required": ["query", "tags", "order"],
            "additionalProperties": false
        })
    }

    /// Arguments a model may send, good and bad, for `search()`.
    const SEARCH_TEXTS: &[&str] = &[
        r#"{"query": "q", "limit": 5, "tags": ["a"], "order": "newest"}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "limit": null}"#,
        r#"{"query": "q", "tags": [], "order": "relevance", "slot": {"day": "2026-12-01", "hour": 23, "share": 1.5}}"#,
        // Repeated keys, at the top and nested.
        r#"{"query": "q", "query": "r", "tags": [], "order": "newest"}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "slot": {"day": "2026-12-01", "hour": 1, "hour": 2}}"#,
        // Unknown fields, at the top and nested.
        r#"{"query": "q", "tags": [], "order": "newest", "other": 1}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "slot": {"day": "2026-12-01", "hour": 1, "room": "x"}}"#,
        // Null where the schema refuses it, required or not.
        r#"{"query": null, "tags": [], "order": "newest"}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "slot": null}"#,
        r#"{"query": "q", "tags": [null], "order": "newest"}"#,
        // Wrong types, values and bounds.
        r#"{"query": 1, "tags": [], "order": "newest"}"#,
        r#"{"query": "q", "tags": "a", "order": "newest"}"#,
        r#"{"query": "q", "tags": [], "order": "oldest"}"#,
        r#"{"query": "q", "tags": [], "order": {"newest": null}}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "limit": -1}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "limit": 4294967296}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "limit": 5.0}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "limit": 5.5}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "slot": {"day": "2026-12-1", "hour": 1}}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "slot": {"day": "2026-12-01", "hour": 24}}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "slot": {"day": "2026-12-01", "hour": 1, "share": 1.6}}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "slot": {"day": "2026-12-01", "hour": 1, "share": 2}}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "slot": ["2026-12-01", 1]}"#,
        // Missing required fields, at the top and nested.
        r#"{"query": "q", "tags": []}"#,
        r#"{"query": "q", "tags": [], "order": "newest", "slot": {"day": "2026-12-01"}}"#,
        // Not an object, not JSON, trailing text, escapes.
        r#"[]"#,
        r#"null"#,
        r#""{}""#,
        r#"{"query": "q", "tags": [], "order": "newest"} x"#,
        r#"{"query": "q", "tags": [], "order": "newest""#,
        r#"{"qu\u0065ry": "q\n", "tags": ["\ud83d\ude00"], "order": "newest"}"#,
        r#"{"qu\u0065ry": "q", "query": "r", "tags": [], "order": "newest"}"#,
    ];

    #[test]
    fn a_value_is_read_when_the_slow_way_takes_it_unchanged_and_only_then() {
        let schema = search();
        let shape = Shape::compile(&schema).expect("compiles");
        for text in SEARCH_TEXTS {
            let fast: Option<Value> = shape.read(text);
            let slow = slow_way_takes_unchanged(&schema, text).then(|| unique::parse(text).ok());
            assert_eq!(fast, slow.flatten(), "{text}");
        }
    }

    /// Where a booking goes: serde alone would take unknown fields here,
    /// and the struct from an array.
    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    struct Slot {
        day: String,
        hour: u8,
        guests: Vec<String>,
    }

    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Order {
        Newest,
        Relevance,
    }

    /// As `#[tool]` generates an argument struct.
    #[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Book {
        room: String,
        slot: Slot,
        order: Order,
        limit: Option<u32>,
    }

    #[test]
    fn a_typed_read_refuses_what_the_slow_way_refuses() {
        let schema = ToolSchema::of::<Book>(&["room", "slot", "order", "limit"]);
        let canonical = schema.canonical_value().expect("a canonical schema");
        let shape = schema.shape().expect("compiles");
        let deep = format!(
            r#"{{"room": "r", "order": "newest", "slot": {{"day": "d", "hour": 1, "guests": {}{}}}}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        let texts = [
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": 1, "guests": ["a"]}}"#,
            r#"{"room": "r", "order": "newest", "limit": null, "slot": {"day": "d", "hour": 1, "guests": []}}"#,
            r#"{"room": "r", "order": "newest", "limit": 7, "slot": {"hour": 1, "guests": [], "day": "d"}}"#,
            // Repeated keys.
            r#"{"room": "r", "room": "s", "order": "newest", "slot": {"day": "d", "hour": 1, "guests": []}}"#,
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "day": "e", "hour": 1, "guests": []}}"#,
            // An unknown nested field, which serde alone would drop.
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": 1, "guests": [], "room": "x"}}"#,
            // A struct as an array, a unit variant as an object: serde
            // alone takes both.
            r#"{"room": "r", "order": "newest", "slot": ["d", 1, []]}"#,
            r#"{"room": "r", "order": {"newest": null}, "slot": {"day": "d", "hour": 1, "guests": []}}"#,
            // Null where forbidden, floats where integers are wanted.
            r#"{"room": "r", "order": "newest", "slot": null}"#,
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": null, "guests": []}}"#,
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": 1, "guests": [null]}}"#,
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": 1.0, "guests": []}}"#,
            // Wrong types and values.
            r#"{"room": 1, "order": "newest", "slot": {"day": "d", "hour": 1, "guests": []}}"#,
            r#"{"room": "r", "order": "oldest", "slot": {"day": "d", "hour": 1, "guests": []}}"#,
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": 256, "guests": []}}"#,
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": -1, "guests": []}}"#,
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": 1, "guests": "a"}}"#,
            r#"{"room": "r", "order": "newest", "limit": 4294967296, "slot": {"day": "d", "hour": 1, "guests": []}}"#,
            // Missing fields.
            r#"{"room": "r", "order": "newest"}"#,
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": 1}}"#,
            // Past the depth limit.
            &deep,
            r#"{"room": "r", "order": "newest", "slot": {"day": "d", "hour": 1, "guests": []}} {}"#,
        ];
        for text in texts {
            let fast: Option<Book> = shape.read(text);
            let slow = slow_way_takes_unchanged(canonical, text)
                .then(|| serde_json::from_str::<Book>(text).ok())
                .flatten();
            assert_eq!(fast, slow, "{text}");
        }
        assert!(shape.read::<Book>(texts[0]).is_some());
        assert!(shape.read::<Book>(texts[1]).is_some());
        // serde alone takes these; the schema does not.
        for text in &texts[5..8] {
            assert!(serde_json::from_str::<Book>(text).is_ok(), "{text}");
            assert!(shape.read::<Book>(text).is_none(), "{text}");
        }
    }

    #[test]
    fn deep_arguments_are_left_to_the_slow_way() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "array"}}}, "additionalProperties": false});
        let shape = Shape::compile(&schema).expect("compiles");
        let deep = format!(r#"{{"a": [{}{}]}}"#, "[".repeat(200), "]".repeat(200));
        assert!(shape.read::<Value>(&deep).is_none());
        // Items with no rule may hold objects with repeated keys.
        assert!(
            shape
                .read::<Value>(r#"{"a": [[{"k": 1, "k": 2}]]}"#)
                .is_none()
        );
        assert!(shape.read::<Value>(r#"{"a": [[]]}"#).is_some());
    }

    #[test]
    fn long_keys_that_share_their_start_are_told_apart() {
        let schema = json!({"type": "object", "properties": {
            "arrival_time": {"type": "string"}, "arrival_gate": {"type": "integer"}, "a": {"type": "boolean"}
        }, "additionalProperties": false});
        let shape = Shape::compile(&schema).expect("compiles");
        let read = |text: &str| shape.read::<Value>(text);
        assert!(read(r#"{"arrival_gate": 4, "arrival_time": "9:00", "a": true}"#).is_some());
        assert!(read(r#"{"arrival_time": 4}"#).is_none());
        assert!(read(r#"{"arrival_timf": "9:00"}"#).is_none());
        assert!(read(r#"{"arrival_": "9:00"}"#).is_none());
        assert!(read(r#"{"b": true}"#).is_none());
        assert!(read(r#"{"a\u0000": true}"#).is_none());
    }

    #[test]
    fn unknown_keywords_and_open_objects_are_not_compiled() {
        for schema in [
            json!({"type": "object", "properties": {}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"], "enum": ["x", null]}}, "additionalProperties": false}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"], "additionalProperties": false}),
            json!({"type": "array"}),
        ] {
            assert!(Shape::compile(&schema).is_none(), "{schema}");
        }
        let given = ToolSchema::build(&search(), &[], Source::Given);
        assert!(given.shape().is_some());
    }
}
