//! Unit enums as one flat string `enum`.

use super::json::Json;

/// A `oneOf`/`anyOf` branch that is one or more string constants, as
/// schemars writes a unit variant (`const`) or a run of undocumented ones
/// (`enum`): its values and its doc.
fn unit_variant(branch: &Json) -> Option<(Vec<Json>, Option<String>)> {
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
pub(crate) fn flatten_unit_enum(schema: &mut Json) {
    if ["type", "enum", "const"]
        .iter()
        .any(|k| schema.contains_key(k))
    {
        return;
    }
    for keyword in ["oneOf", "anyOf"] {
        let Some(Json::Array(branches)) = schema.get(keyword) else {
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
                    .filter_map(Json::as_str)
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                // Continuation lines are indented to stay in the list item.
                lines.push(format!("- {names}: {}", doc.trim().replace('\n', "\n  ")));
            }
            values.extend(group);
        }
        schema.remove(keyword);
        schema.insert("type", Json::from("string"));
        schema.insert("enum", Json::Array(values));
        if !lines.is_empty() {
            let list = lines.join("\n");
            let text = match schema.get("description").and_then(Json::as_str) {
                Some(intro) if !intro.trim().is_empty() => format!("{intro}\n\n{list}"),
                _ => list,
            };
            schema.insert("description", Json::String(text));
        }
        return;
    }
}
