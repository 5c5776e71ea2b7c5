//! Unit enums as one flat string `enum`.

use super::ordered_json::OrderedJson;

/// A `oneOf`/`anyOf` branch that is one or more string constants, as
/// schemars writes a unit variant (`const`) or a run of undocumented ones
/// (`enum`): its values and its doc.
fn unit_variant(branch: &OrderedJson) -> Option<(Vec<OrderedJson>, Option<String>)> {
    let mut values = None;
    let mut doc = None;
    for (keyword, value) in branch.as_object()? {
        match keyword.as_str() {
            "type" if value.as_str() == Some("string") => {}
            "const" if value.as_str().is_some() && values.is_none() => {
                values = Some(vec![value.clone()]);
            }
            "enum" if values.is_none() => {
                let items = value.as_array()?;
                if items.is_empty() || items.iter().any(|item| item.as_str().is_none()) {
                    return None;
                }
                values = Some(items.to_vec());
            }
            "description" => doc = Some(value.as_str()?.to_owned()),
            _ => return None,
        }
    }
    Some((values?, doc))
}

/// Rewrites a union of string constants (a unit enum whose variants have
/// docs) as one `{"type": "string", "enum": [...]}`, listing the variant
/// docs in the description: providers handle a flat `enum` best, and
/// several reject `const` or `oneOf`.
pub(crate) fn flatten_unit_enum(schema: &mut OrderedJson) {
    if ["type", "enum", "const"]
        .iter()
        .any(|k| schema.contains_key(k))
    {
        return;
    }
    for keyword in ["oneOf", "anyOf"] {
        let Some(OrderedJson::Array(branches)) = schema.get(keyword) else {
            continue;
        };
        let Some(variants) = branches
            .iter()
            .map(unit_variant)
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let mut values = Vec::new();
        let mut lines = Vec::new();
        for (group, doc) in variants {
            if let Some(doc) = doc.filter(|doc| !doc.trim().is_empty()) {
                let names = group
                    .iter()
                    .filter_map(OrderedJson::as_str)
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                // Continuation lines are indented to stay in the list item.
                lines.push(format!("- {names}: {}", doc.trim().replace('\n', "\n  ")));
            }
            values.extend(group);
        }
        schema.remove(keyword);
        schema.insert("type", OrderedJson::from("string"));
        schema.insert("enum", OrderedJson::Array(values));
        if !lines.is_empty() {
            let list = lines.join("\n");
            let text = match schema.get("description").and_then(OrderedJson::as_str) {
                Some(intro) if !intro.trim().is_empty() => format!("{intro}\n\n{list}"),
                _ => list,
            };
            schema.insert("description", OrderedJson::String(text));
        }
        return;
    }
}

/// Gives an `enum` or `const` without a `type` the type its values share,
/// when they share one: hand-written schemas (an MCP server's, a run-time
/// tool's) often leave it out, and Gemini rejects a property with no type.
pub(crate) fn type_untyped_values(schema: &mut OrderedJson) {
    if schema.contains_key("type") {
        return;
    }
    let values: Vec<&OrderedJson> = match (schema.get("enum"), schema.get("const")) {
        (Some(OrderedJson::Array(values)), _) if !values.is_empty() => values.iter().collect(),
        (None, Some(value)) => vec![value],
        _ => return,
    };
    let kind = |value: &OrderedJson| match value {
        OrderedJson::String(_) => Some("string"),
        OrderedJson::Bool(_) => Some("boolean"),
        OrderedJson::Number(number) if number.is_i64() || number.is_u64() => Some("integer"),
        OrderedJson::Number(_) => Some("number"),
        _ => None,
    };
    let Some(first) = kind(values[0]) else {
        return;
    };
    if values.iter().all(|value| kind(value) == Some(first)) {
        schema.insert("type", OrderedJson::from(first));
    }
}
