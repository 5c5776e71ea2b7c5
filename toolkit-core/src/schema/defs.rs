//! `$ref` and `$defs`: which definitions are recursive, inlining the others,
//! and dropping the unused.

use std::collections::{BTreeMap, BTreeSet};

use super::error::SchemaError;
use super::keywords::{Holds, child_path, holds, index_path, member_path};
use super::ordered_json::OrderedJson;

/// Where a `$ref` points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RefTarget {
    /// `#`: the root schema.
    Root,
    /// `#/$defs/NAME`.
    Def(String),
}

/// Parses a local reference; `None` for anything else.
pub(crate) fn parse_ref(reference: &str) -> Option<RefTarget> {
    if reference == "#" {
        return Some(RefTarget::Root);
    }
    let name = reference.strip_prefix("#/$defs/")?;
    if name.is_empty() || name.contains('/') {
        return None;
    }
    // JSON Pointer escapes; `~1` first would turn `~01` into `/`.
    Some(RefTarget::Def(name.replace("~1", "/").replace("~0", "~")))
}

/// Calls `visit` with every `$ref` in `schema` (not descending into data
/// keywords), and its path.
pub(crate) fn for_each_ref(
    schema: &OrderedJson,
    path: &str,
    visit: &mut impl FnMut(&str, &OrderedJson) -> Result<(), SchemaError>,
) -> Result<(), SchemaError> {
    let OrderedJson::Object(members) = schema else {
        return Ok(());
    };
    for (keyword, value) in members {
        if keyword == "$ref" {
            visit(path, value)?;
            continue;
        }
        match (holds(keyword), value) {
            (Some(Holds::One), sub) => for_each_ref(sub, &child_path(path, keyword), visit)?,
            (Some(Holds::List), OrderedJson::Array(items)) => {
                for (index, sub) in items.iter().enumerate() {
                    for_each_ref(sub, &index_path(path, keyword, index), visit)?;
                }
            }
            (Some(Holds::Map), OrderedJson::Object(entries)) => {
                for (name, sub) in entries {
                    for_each_ref(sub, &member_path(path, keyword, name), visit)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The definitions `schema` refers to directly, after checking that every
/// `$ref` in it is local and resolves.
fn referenced(
    schema: &OrderedJson,
    path: &str,
    defs: &BTreeMap<String, OrderedJson>,
) -> Result<BTreeSet<String>, SchemaError> {
    let mut names = BTreeSet::new();
    for_each_ref(schema, path, &mut |at, reference| {
        let text = reference.as_str().unwrap_or_default();
        match parse_ref(text) {
            Some(RefTarget::Root) => Ok(()),
            Some(RefTarget::Def(name)) if defs.contains_key(&name) => {
                names.insert(name);
                Ok(())
            }
            Some(RefTarget::Def(name)) => Err(SchemaError::MissingDefinition {
                path: at.to_owned(),
                name,
            }),
            None => Err(SchemaError::UnsupportedRef {
                path: at.to_owned(),
                reference: reference.to_json_string(),
            }),
        }
    })?;
    Ok(names)
}

/// The definitions that can reach themselves through references: the
/// recursive types, which must stay `$ref`s.
fn recursive(defs: &BTreeMap<String, OrderedJson>) -> Result<BTreeSet<String>, SchemaError> {
    let mut edges = BTreeMap::new();
    for (name, body) in defs {
        edges.insert(
            name.clone(),
            referenced(body, &member_path("", "$defs", name), defs)?,
        );
    }
    let mut cyclic = BTreeSet::new();
    for start in defs.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = edges.get(start).into_iter().flatten().collect();
        while let Some(next) = stack.pop() {
            if next == start {
                cyclic.insert(start.clone());
                break;
            }
            if seen.insert(next) {
                stack.extend(edges.get(next).into_iter().flatten());
            }
        }
    }
    Ok(cyclic)
}

/// How many `$ref`s inlining may replace. Non-recursive definitions form a
/// DAG, so inlining ends, but a DAG can still grow exponentially; past this
/// budget the remaining references simply stay `$ref`s, which is valid.
const INLINE_BUDGET: usize = 10_000;

/// Replaces every `$ref` to a non-recursive definition, in `root` and in
/// the definitions, with the definition's body; the `$ref` node's other
/// keys win over the body's (a field's doc over its type's).
///
/// Checks every reference on the way: only `#` and `#/$defs/NAME` that
/// exist are accepted.
pub(crate) fn inline_non_recursive(
    root: &mut OrderedJson,
    defs: &mut BTreeMap<String, OrderedJson>,
) -> Result<(), SchemaError> {
    referenced(root, "", defs)?;
    let keep = recursive(defs)?;
    let bodies = defs.clone();
    let mut budget = INLINE_BUDGET;
    inline_in(root, &bodies, &keep, &mut budget);
    for body in defs.values_mut() {
        inline_in(body, &bodies, &keep, &mut budget);
    }
    Ok(())
}

fn inline_in(
    schema: &mut OrderedJson,
    bodies: &BTreeMap<String, OrderedJson>,
    keep: &BTreeSet<String>,
    budget: &mut usize,
) {
    let OrderedJson::Object(members) = schema else {
        return;
    };
    let target = members
        .iter()
        .find(|(keyword, _)| keyword == "$ref")
        .and_then(|(_, reference)| parse_ref(reference.as_str()?));
    if let Some(RefTarget::Def(name)) = target
        && !keep.contains(&name)
        && *budget > 0
        && let Some(OrderedJson::Object(body)) = bodies.get(&name)
    {
        *budget -= 1;
        members.retain(|(keyword, _)| keyword != "$ref");
        for (keyword, value) in body {
            if !members.iter().any(|(existing, _)| existing == keyword) {
                members.push((keyword.clone(), value.clone()));
            }
        }
        // The inlined body may itself refer to other definitions.
        return inline_in(schema, bodies, keep, budget);
    }
    for (keyword, value) in members.iter_mut() {
        match (holds(keyword), value) {
            (Some(Holds::One), sub) => inline_in(sub, bodies, keep, budget),
            (Some(Holds::List), OrderedJson::Array(items)) => {
                for sub in items {
                    inline_in(sub, bodies, keep, budget);
                }
            }
            (Some(Holds::Map), OrderedJson::Object(entries)) => {
                for (_, sub) in entries {
                    inline_in(sub, bodies, keep, budget);
                }
            }
            _ => {}
        }
    }
}

/// The definitions reachable from `root`, in name order.
pub(crate) fn reachable(
    root: &OrderedJson,
    defs: &BTreeMap<String, OrderedJson>,
) -> Result<Vec<String>, SchemaError> {
    let mut found = BTreeSet::new();
    let mut stack: Vec<String> = referenced(root, "", defs)?.into_iter().collect();
    while let Some(name) = stack.pop() {
        if found.insert(name.clone())
            && let Some(body) = defs.get(&name)
        {
            stack.extend(referenced(body, &member_path("", "$defs", &name), defs)?);
        }
    }
    Ok(found.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn defs(value: serde_json::Value) -> BTreeMap<String, OrderedJson> {
        value
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, body)| (name.clone(), OrderedJson::from(body)))
            .collect()
    }

    #[test]
    fn parses_local_references_only() {
        assert_eq!(parse_ref("#"), Some(RefTarget::Root));
        assert_eq!(
            parse_ref("#/$defs/Tree"),
            Some(RefTarget::Def("Tree".into()))
        );
        assert_eq!(
            parse_ref("#/$defs/a~1b~0c"),
            Some(RefTarget::Def("a/b~c".into()))
        );
        assert_eq!(parse_ref("#/definitions/Tree"), None);
        assert_eq!(parse_ref("https://example.com/schema"), None);
    }

    #[test]
    fn inlines_only_non_recursive_definitions() {
        let mut defs = defs(json!({
            "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}, "leaf": {"$ref": "#/$defs/Leaf"}}},
            "Leaf": {"type": "string", "description": "A leaf."},
        }));
        let mut root = OrderedJson::from(&json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree"}, "leaf": {"$ref": "#/$defs/Leaf", "description": "Mine."}},
        }));
        inline_non_recursive(&mut root, &mut defs).unwrap();
        assert_eq!(
            root.get("properties")
                .unwrap()
                .get("leaf")
                .unwrap()
                .to_value(),
            json!({"type": "string", "description": "Mine."})
        );
        assert_eq!(
            root.get("properties")
                .unwrap()
                .get("tree")
                .unwrap()
                .to_value(),
            json!({"$ref": "#/$defs/Tree"})
        );
        let tree = defs["Tree"].get("properties").unwrap();
        assert_eq!(
            tree.get("leaf").unwrap().to_value(),
            json!({"type": "string", "description": "A leaf."})
        );
        assert_eq!(reachable(&root, &defs).unwrap(), ["Tree"]);
    }

    #[test]
    fn rejects_foreign_and_dangling_references() {
        let mut none = BTreeMap::new();
        let mut root = OrderedJson::from(&json!({"properties": {"a": {"$ref": "other.json"}}}));
        assert!(matches!(
            inline_non_recursive(&mut root, &mut none),
            Err(SchemaError::UnsupportedRef { path, .. }) if path == "properties.a"
        ));
        let mut root = OrderedJson::from(&json!({"items": {"$ref": "#/$defs/Gone"}}));
        assert!(matches!(
            inline_non_recursive(&mut root, &mut none),
            Err(SchemaError::MissingDefinition { name, .. }) if name == "Gone"
        ));
    }
}
