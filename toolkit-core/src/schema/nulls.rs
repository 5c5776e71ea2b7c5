//! The `null` that `Option<T>` adds to a schema, for Gemini's dialect,
//! which says `nullable: true` instead.

use super::ordered_json::OrderedJson;

fn is_null_type(value: &OrderedJson) -> bool {
    value.as_str() == Some("null")
}

/// A branch that only admits `null`: `{"type": "null"}`, `{"const": null}`
/// or `{"enum": [null]}` (annotations aside).
pub(crate) fn is_null_schema(branch: &OrderedJson) -> bool {
    let Some(members) = branch.as_object() else {
        return false;
    };
    let mut admits_only_null = false;
    for (keyword, value) in members {
        match keyword.as_str() {
            "type" => admits_only_null |= is_null_type(value),
            "const" => admits_only_null |= *value == OrderedJson::Null,
            "enum" => admits_only_null |= value.as_array() == Some(&[OrderedJson::Null]),
            "description" | "title" | "$comment" => {}
            _ => return false,
        }
    }
    admits_only_null
}

/// Removes the `null` alternative an `Option<T>` added: from a `type` array
/// (and the `enum` schemars extends with `null`), or as a branch of
/// `anyOf`/`oneOf`, merging the one remaining branch into the schema (the
/// schema's own keys, such as a field's doc, win over the branch's, such
/// as its type's doc).
pub(crate) fn strip_null(schema: &mut OrderedJson) {
    if let Some(OrderedJson::Array(types)) = schema.get_mut("type")
        && types.len() > 1
        && types.iter().any(is_null_type)
    {
        types.retain(|kind| !is_null_type(kind));
        if let [single] = types.as_slice() {
            let single = single.clone();
            schema.insert("type", single);
        }
    }
    // schemars extends a unit enum's values with `null` for `Option<E>`.
    if let Some(OrderedJson::Array(values)) = schema.get_mut("enum")
        && values.len() > 1
        && values.contains(&OrderedJson::Null)
    {
        values.retain(|value| *value != OrderedJson::Null);
    }
    for keyword in ["anyOf", "oneOf"] {
        let Some(OrderedJson::Array(branches)) = schema.get_mut(keyword) else {
            continue;
        };
        if branches.len() < 2 || !branches.iter().any(is_null_schema) {
            continue;
        }
        branches.retain(|branch| !is_null_schema(branch));
        if let [single] = branches.as_slice() {
            match single.clone() {
                OrderedJson::Object(body) => {
                    schema.remove(keyword);
                    for (key, value) in body {
                        if !schema.contains_key(&key) {
                            schema.insert(key, value);
                        }
                    }
                }
                OrderedJson::Bool(true) => {
                    schema.remove(keyword);
                }
                // `false` or junk: leave the one-branch union as it is.
                _ => {}
            }
        }
    }
}
