//! An ordered JSON tree whose text is the same in every build.

use std::fmt::Write as _;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Number, Value};

/// A JSON value whose objects keep their keys in the order they were
/// inserted.
///
/// `serde_json::Value` sorts object keys, unless some crate in the build
/// turns on serde_json's `preserve_order` feature, in which case it keeps
/// insertion order. A schema held as a `Value` could therefore print
/// differently depending on unrelated dependencies; a `OrderedJson` always prints
/// its keys in its own order.
///
/// Objects are small in schemas (a dozen keywords, a few dozen
/// properties), so a `Vec` of pairs with linear look-up beats a map here.
#[derive(Debug, Clone, PartialEq)]
// Exhaustive on purpose: JSON has these six kinds of value and no others.
pub enum OrderedJson {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, exactly as serde_json holds it.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<OrderedJson>),
    /// An object: its members in order. Keys are unique when the object is
    /// built through [`OrderedJson::insert`] or converted from a `Value`.
    Object(Vec<(String, OrderedJson)>),
}

impl OrderedJson {
    /// An empty object.
    pub fn object() -> Self {
        OrderedJson::Object(Vec::new())
    }

    /// A string value.
    pub fn string(text: impl Into<String>) -> Self {
        OrderedJson::String(text.into())
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&[(String, OrderedJson)]> {
        match self {
            OrderedJson::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The members, mutably, if this is an object.
    pub fn as_object_mut(&mut self) -> Option<&mut Vec<(String, OrderedJson)>> {
        match self {
            OrderedJson::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[OrderedJson]> {
        match self {
            OrderedJson::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The text, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            OrderedJson::String(text) => Some(text),
            _ => None,
        }
    }

    /// The value at `key`, if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&OrderedJson> {
        self.as_object()?
            .iter()
            .find_map(|(name, value)| (name == key).then_some(value))
    }

    /// The value at `key`, mutably, if this is an object that has it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut OrderedJson> {
        self.as_object_mut()?
            .iter_mut()
            .find_map(|(name, value)| (name == key).then_some(value))
    }

    /// Whether this is an object that has `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`: in place if the key exists, so the member
    /// keeps its position, else at the end. Returns the old value.
    ///
    /// Does nothing and returns `None` if this is not an object.
    pub fn insert(&mut self, key: impl Into<String>, value: OrderedJson) -> Option<OrderedJson> {
        let members = self.as_object_mut()?;
        let key = key.into();
        match members.iter_mut().find(|(name, _)| *name == key) {
            Some((_, slot)) => Some(std::mem::replace(slot, value)),
            None => {
                members.push((key, value));
                None
            }
        }
    }

    /// Removes `key`, keeping the other members in order, and returns its
    /// value.
    pub fn remove(&mut self, key: &str) -> Option<OrderedJson> {
        let members = self.as_object_mut()?;
        let index = members.iter().position(|(name, _)| name == key)?;
        Some(members.remove(index).1)
    }

    /// The equivalent `serde_json::Value`. Its key order is serde_json's
    /// (sorted, or insertion order under `preserve_order`); print the `OrderedJson`
    /// itself when the order matters.
    pub fn to_value(&self) -> Value {
        match self {
            OrderedJson::Null => Value::Null,
            OrderedJson::Bool(flag) => Value::Bool(*flag),
            OrderedJson::Number(number) => Value::Number(number.clone()),
            OrderedJson::String(text) => Value::String(text.clone()),
            OrderedJson::Array(items) => {
                Value::Array(items.iter().map(OrderedJson::to_value).collect())
            }
            OrderedJson::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(key, value)| (key.clone(), value.to_value()))
                    .collect(),
            ),
        }
    }

    /// Compact JSON text, keys in this tree's order; the same bytes
    /// `serde_json::to_string` writes for it.
    pub fn to_json_string(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    /// How deeply arrays and objects nest: 0 for a scalar. Iterative, so a
    /// hostile tree cannot overflow the stack here.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 0)];
        while let Some((node, depth)) = stack.pop() {
            deepest = deepest.max(depth);
            match node {
                OrderedJson::Array(items) => {
                    stack.extend(items.iter().map(|item| (item, depth + 1)))
                }
                OrderedJson::Object(members) => {
                    stack.extend(members.iter().map(|(_, value)| (value, depth + 1)));
                }
                _ => {}
            }
        }
        deepest
    }

    // Written by hand rather than through serde_json so that printing has no
    // error path; `to_json_string` is tested byte for byte against serde_json.
    fn write(&self, out: &mut String) {
        match self {
            OrderedJson::Null => out.push_str("null"),
            OrderedJson::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
            // serde_json's `Display` for `Number` is its JSON form.
            OrderedJson::Number(number) => {
                let _ = write!(out, "{number}");
            }
            OrderedJson::String(text) => write_string(text, out),
            OrderedJson::Array(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            OrderedJson::Object(members) => {
                out.push('{');
                for (index, (key, value)) in members.iter().enumerate() {
                    if index > 0 {
                        out.push(',');
                    }
                    write_string(key, out);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// The escapes serde_json's compact formatter uses.
fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            ch if u32::from(ch) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(ch));
            }
            ch => out.push(ch),
        }
    }
    out.push('"');
}

impl From<&Value> for OrderedJson {
    fn from(value: &Value) -> Self {
        match value {
            Value::Null => OrderedJson::Null,
            Value::Bool(flag) => OrderedJson::Bool(*flag),
            Value::Number(number) => OrderedJson::Number(number.clone()),
            Value::String(text) => OrderedJson::String(text.clone()),
            Value::Array(items) => {
                OrderedJson::Array(items.iter().map(OrderedJson::from).collect())
            }
            Value::Object(map) => OrderedJson::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), OrderedJson::from(value)))
                    .collect(),
            ),
        }
    }
}

impl From<Value> for OrderedJson {
    fn from(value: Value) -> Self {
        OrderedJson::from(&value)
    }
}

impl From<&str> for OrderedJson {
    fn from(text: &str) -> Self {
        OrderedJson::String(text.to_owned())
    }
}

impl From<bool> for OrderedJson {
    fn from(flag: bool) -> Self {
        OrderedJson::Bool(flag)
    }
}

impl Serialize for OrderedJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            OrderedJson::Null => serializer.serialize_unit(),
            OrderedJson::Bool(flag) => serializer.serialize_bool(*flag),
            OrderedJson::Number(number) => number.serialize(serializer),
            OrderedJson::String(text) => serializer.serialize_str(text),
            OrderedJson::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            OrderedJson::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_insertion_order() {
        let mut object = OrderedJson::object();
        object.insert("b", OrderedJson::from(true));
        object.insert("a", OrderedJson::Null);
        object.insert("c", OrderedJson::from("x"));
        assert_eq!(object.to_json_string(), r#"{"b":true,"a":null,"c":"x"}"#);
        assert_eq!(
            serde_json::to_string(&object).unwrap(),
            object.to_json_string()
        );
    }

    #[test]
    fn insert_replaces_in_place_and_remove_keeps_order() {
        let mut object = OrderedJson::object();
        object.insert("a", OrderedJson::from(true));
        object.insert("b", OrderedJson::from(true));
        object.insert("c", OrderedJson::from(true));
        assert_eq!(
            object.insert("a", OrderedJson::Null),
            Some(OrderedJson::Bool(true))
        );
        assert_eq!(object.remove("b"), Some(OrderedJson::Bool(true)));
        assert_eq!(object.remove("b"), None);
        assert_eq!(object.to_json_string(), r#"{"a":null,"c":true}"#);
        assert!(object.contains_key("c"));
        *object.get_mut("c").unwrap() = OrderedJson::from("z");
        assert_eq!(object.get("c"), Some(&OrderedJson::from("z")));
    }

    #[test]
    fn helpers_on_non_objects_do_nothing() {
        let mut text = OrderedJson::from("x");
        assert_eq!(text.insert("a", OrderedJson::Null), None);
        assert_eq!(text.remove("a"), None);
        assert!(text.get("a").is_none());
        assert_eq!(text, OrderedJson::from("x"));
    }

    #[test]
    fn writer_matches_serde_json_byte_for_byte() {
        let value = json!({
            "text": "quote \" backslash \\ newline \n tab \t cr \r bell \u{07} bs \u{08} ff \u{0c} del \u{7f} é 😀 </script>",
            "numbers": [0, -1, 1.5, 1e300, -0.0, 18446744073709551615u64, -9223372036854775808i64, 0.1],
            "nested": {"array": [[], {}, null, true, false]},
        });
        let tree = OrderedJson::from(&value);
        assert_eq!(tree.to_json_string(), serde_json::to_string(&tree).unwrap());
        assert_eq!(
            tree.to_json_string(),
            serde_json::to_string(&value).unwrap()
        );
        assert_eq!(tree.to_value(), value);
    }

    #[test]
    fn depth_counts_containers() {
        assert_eq!(OrderedJson::Null.depth(), 0);
        assert_eq!(OrderedJson::from(&json!({"a": [1]})).depth(), 2);
    }
}
