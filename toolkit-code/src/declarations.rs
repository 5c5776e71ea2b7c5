//! TypeScript declarations of a registry's tools, written from each tool's
//! canonical JSON Schema and output schema.

use std::fmt::Write as _;

use serde_json::{Map, Value};
use toolkit_core::ToolDef;

/// How deep `$ref`s are followed before a type is written as `unknown`:
/// a recursive definition would otherwise never end.
const MAX_REF_DEPTH: usize = 6;

/// The declaration of every tool in `tools`, members of one `tools`
/// object, in the order given.
pub(crate) fn write_declarations(tools: &[ToolDef]) -> String {
    let mut out = String::from("declare const tools: {\n");
    for def in tools {
        write_tool(&mut out, def);
    }
    out.push_str("};\n");
    out
}

fn write_tool(out: &mut String, def: &ToolDef) {
    // A schema that does not canonicalize cannot be called either: the
    // registry refused the tool at build time, so this is not reached for
    // a registered tool; `unknown` keeps the declaration well-formed.
    let input: Value = def
        .schema()
        .canonical()
        .ok()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or(Value::Null);
    let output = def.output_schema().map(|schema| schema.to_value());
    let mut doc = def.description().trim().to_owned();
    if output.is_none() {
        if !doc.is_empty() {
            doc.push_str("\n\n");
        }
        doc.push_str("@returns The tool's result as text.");
    }
    write_doc(out, &doc, 1);
    let parameters = if input.is_null() {
        "unknown".to_owned()
    } else {
        let order = def.params();
        let mut writer = Writer::new(&input);
        writer.order = &order;
        writer.ty(&input, 1)
    };
    let returns = match &output {
        Some(schema) => Writer::new(schema).ty(schema, 1),
        None => "string".to_owned(),
    };
    let _ = writeln!(
        out,
        "  {}(args: {parameters}): Promise<{returns}>;",
        property_key(def.name())
    );
}

/// Writes `text` as a JSDoc comment indented `level` steps; nothing for an
/// empty text.
fn write_doc(out: &mut String, text: &str, level: usize) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    let indent = "  ".repeat(level);
    // A `*/` in a description would end the comment early.
    let text = text.replace("*/", "*\\/");
    if !text.contains('\n') {
        let _ = writeln!(out, "{indent}/** {text} */");
        return;
    }
    let _ = writeln!(out, "{indent}/**");
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            let _ = writeln!(out, "{indent} *");
        } else {
            let _ = writeln!(out, "{indent} * {line}");
        }
    }
    let _ = writeln!(out, "{indent} */");
}

/// A property key as TypeScript writes it: bare when it is an identifier,
/// else quoted.
fn property_key(name: &str) -> String {
    let mut chars = name.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if identifier {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

/// Turns one schema (and the `$defs` of its root) into TypeScript types.
struct Writer<'a> {
    root: &'a Value,
    depth: usize,
    /// The root object's properties in declaration order (a tool's
    /// parameters): a parsed schema's maps may be in name order.
    order: &'a [&'a str],
}

impl<'a> Writer<'a> {
    fn new(root: &'a Value) -> Self {
        Self {
            root,
            depth: 0,
            order: &[],
        }
    }

    /// The TypeScript type of `schema`, laid out for `level` steps of
    /// indentation.
    fn ty(&mut self, schema: &Value, level: usize) -> String {
        let Some(schema) = schema.as_object() else {
            // `true` accepts anything, `false` nothing.
            return if schema == &Value::Bool(false) {
                "never".to_owned()
            } else {
                "unknown".to_owned()
            };
        };
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            return self.reference(reference, level);
        }
        if let Some(value) = schema.get("const") {
            return literal(value);
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            return union(values.iter().map(literal).collect());
        }
        for keyword in ["anyOf", "oneOf"] {
            if let Some(options) = schema.get(keyword).and_then(Value::as_array) {
                let types = options.iter().map(|s| self.ty(s, level)).collect();
                return union(types);
            }
        }
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            let types: Vec<String> = parts.iter().map(|s| self.ty(s, level)).collect();
            return match types.len() {
                0 => "unknown".to_owned(),
                1 => types.into_iter().next().unwrap_or_default(),
                _ => types
                    .iter()
                    .map(|t| format!("({t})"))
                    .collect::<Vec<_>>()
                    .join(" & "),
            };
        }
        match schema.get("type") {
            Some(Value::String(name)) => self.of_type(name, schema, level),
            Some(Value::Array(names)) => union(
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|name| self.of_type(name, schema, level))
                    .collect(),
            ),
            _ if schema.contains_key("properties") => self.object(schema, level),
            _ => "unknown".to_owned(),
        }
    }

    fn of_type(&mut self, name: &str, schema: &Map<String, Value>, level: usize) -> String {
        match name {
            "string" => "string".to_owned(),
            "integer" | "number" => "number".to_owned(),
            "boolean" => "boolean".to_owned(),
            "null" => "null".to_owned(),
            "array" => self.array(schema, level),
            "object" => self.object(schema, level),
            _ => "unknown".to_owned(),
        }
    }

    fn array(&mut self, schema: &Map<String, Value>, level: usize) -> String {
        if let Some(prefix) = schema.get("prefixItems").and_then(Value::as_array) {
            let items: Vec<String> = prefix.iter().map(|s| self.ty(s, level)).collect();
            return format!("[{}]", items.join(", "));
        }
        match schema.get("items") {
            Some(items) => {
                let item = self.ty(items, level);
                if item.contains(' ') {
                    format!("Array<{item}>")
                } else {
                    format!("{item}[]")
                }
            }
            None => "unknown[]".to_owned(),
        }
    }

    fn object(&mut self, schema: &Map<String, Value>, level: usize) -> String {
        let properties = schema.get("properties").and_then(Value::as_object);
        let extra = match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => None,
            Some(Value::Object(_)) => schema.get("additionalProperties"),
            _ if properties.is_none() => Some(&Value::Bool(true)),
            _ => None,
        };
        let Some(properties) = properties.filter(|p| !p.is_empty()) else {
            return match extra {
                Some(extra) => format!("Record<string, {}>", self.ty(extra, level)),
                None => "{}".to_owned(),
            };
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let indent = "  ".repeat(level + 1);
        let mut out = String::from("{\n");
        let mut properties: Vec<(&String, &Value)> = properties.iter().collect();
        if std::ptr::eq(schema, self.root.as_object().unwrap_or(schema)) {
            let position = |name: &str| self.order.iter().position(|own| *own == name);
            properties.sort_by_key(|(name, _)| position(name).unwrap_or(usize::MAX));
        }
        for (name, property) in properties {
            write_doc(&mut out, &property_doc(property), level + 1);
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let ty = self.ty(property, level + 1);
            let _ = writeln!(out, "{indent}{}{optional}: {ty};", property_key(name));
        }
        if let Some(extra) = extra {
            let ty = self.ty(extra, level + 1);
            let _ = writeln!(out, "{indent}[key: string]: {ty};");
        }
        let _ = write!(out, "{}}}", "  ".repeat(level));
        out
    }

    fn reference(&mut self, reference: &str, level: usize) -> String {
        let target = reference
            .strip_prefix("#/$defs/")
            .and_then(|name| self.root.get("$defs")?.get(name))
            .or_else(|| (reference == "#").then_some(self.root));
        match target {
            Some(target) if self.depth < MAX_REF_DEPTH => {
                self.depth += 1;
                let ty = self.ty(target, level);
                self.depth -= 1;
                ty
            }
            _ => "unknown".to_owned(),
        }
    }
}

/// What a property's comment says: its description, then the constraints
/// a type cannot carry.
fn property_doc(schema: &Value) -> String {
    let Some(schema) = schema.as_object() else {
        return String::new();
    };
    let mut doc = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_owned();
    let mut notes = Vec::new();
    for keyword in [
        "format",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "default",
    ] {
        if let Some(value) = schema.get(keyword) {
            notes.push(format!("{keyword}: {value}"));
        }
    }
    if schema.get("type").and_then(Value::as_str) == Some("integer") {
        notes.push("an integer".to_owned());
    }
    if !notes.is_empty() {
        if !doc.is_empty() {
            doc.push_str(if doc.contains('\n') { "\n" } else { " " });
        }
        let _ = write!(doc, "({})", notes.join("; "));
    }
    doc
}

fn literal(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => "unknown".to_owned(),
        other => other.to_string(),
    }
}

fn union(mut types: Vec<String>) -> String {
    types.dedup();
    match types.len() {
        0 => "never".to_owned(),
        1 => types.pop().unwrap_or_default(),
        _ => types.join(" | "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_objects_with_docs_optional_fields_and_unions() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "limit": {"type": ["integer", "null"], "minimum": 1},
                "unit": {"enum": ["c", "f"]},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}}
            },
            "required": ["city", "unit"],
            "$defs": {"Tag": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
        });
        let order = ["unit", "city", "limit", "tags"];
        let mut writer = Writer::new(&schema);
        writer.order = &order;
        let ty = writer.ty(&schema, 0);
        assert_eq!(
            ty,
            "{\n  unit: \"c\" | \"f\";\n  /** The city. */\n  city: string;\n  /** (minimum: 1) */\n  limit?: number | null;\n  tags?: Array<{\n    name: string;\n  }>;\n}"
        );
    }

    #[test]
    fn recursive_references_end_in_unknown() {
        let schema = json!({
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
            "$ref": "#/$defs/Node"
        });
        let ty = Writer::new(&schema).ty(&schema, 0);
        assert!(ty.contains("next?: unknown;"), "{ty}");
    }

    #[test]
    fn names_that_are_not_identifiers_are_quoted() {
        assert_eq!(property_key("get_weather"), "get_weather");
        assert_eq!(property_key("math-factorial"), "\"math-factorial\"");
        assert_eq!(property_key("9lives"), "\"9lives\"");
    }
}
