//! For models without native tool calling: every tool as one schema of
//! one-key objects (browser-use's action model), and a plain-text
//! description of the tools.

use std::fmt::Write as _;

use serde_json::Value;

use crate::schema::Json;
use crate::{CallError, CallOutcome, DefinitionsError, Provider, Registry};

impl Registry {
    /// One schema for every enabled tool: an object with exactly one
    /// property, named for the tool, whose value is the tool's arguments
    /// (`{"click": {"index": 5}}`). Each property carries its tool's
    /// description. Ask the model for JSON of this shape, then run it with
    /// [`call_action`](Self::call_action).
    ///
    /// Fails, like [`definitions`](Self::definitions), for a tool whose
    /// schema cannot be built.
    pub fn action_schema(&self) -> Result<String, DefinitionsError> {
        let mut properties = Vec::new();
        let mut failures = Vec::new();
        for def in self.tools() {
            let params = match def.schema().lowered_tree(Provider::OpenAi) {
                Ok(lowered) => lowered.json,
                Err(error) => {
                    failures.push((def.name().to_owned(), error.to_string()));
                    continue;
                }
            };
            let mut params = params.clone();
            if let Json::Object(entries) = &mut params {
                let at = usize::from(entries.first().is_some_and(|(key, _)| key == "type"));
                entries.retain(|(key, _)| key != "description");
                entries.insert(
                    at,
                    (
                        "description".to_owned(),
                        Json::String(def.description().to_owned()),
                    ),
                );
            }
            properties.push((def.name().to_owned(), params));
        }
        if !failures.is_empty() {
            return Err(DefinitionsError {
                provider: Provider::OpenAi,
                tools: failures,
            });
        }
        let string = |s: &str| Json::String(s.to_owned());
        let schema = Json::Object(vec![
            ("type".to_owned(), string("object")),
            (
                "description".to_owned(),
                string(
                    "One action: an object with exactly one key, the action's name, holding its arguments.",
                ),
            ),
            ("properties".to_owned(), Json::Object(properties)),
            ("additionalProperties".to_owned(), Json::Bool(false)),
            ("minProperties".to_owned(), Json::Number(1.into())),
            ("maxProperties".to_owned(), Json::Number(1.into())),
        ]);
        Ok(schema.to_json_string())
    }

    /// Runs one action of the [action schema](Self::action_schema): an
    /// object with exactly one key, the tool's name, holding its arguments.
    /// Anything else is an error result saying what was expected.
    pub async fn call_action(&self, action: &Value) -> CallOutcome {
        match action
            .as_object()
            .map(|object| object.iter().collect::<Vec<_>>())
        {
            Some(entries) if entries.len() == 1 => {
                let (name, arguments) = entries[0];
                self.call(name, arguments).await
            }
            _ => {
                let names: Vec<String> = self.names().collect();
                CallOutcome::failed(CallError::InvalidAction {
                    message: format!(
                        "an action is an object with exactly one key, the action's name ({}), holding its arguments; got {}",
                        names.join(", "),
                        crate::result::envelope::cut(action.to_string(), 120)
                    ),
                })
            }
        }
    }

    /// The enabled tools described in plain text, for a prompt: each tool's
    /// signature, its description, and each parameter's description.
    ///
    /// ```text
    /// search(query: string, limit?: integer)
    ///   Search the document index.
    ///   - query: The full-text query.
    ///   - limit: Maximum number of hits.
    /// ```
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for def in self.tools() {
            let schema: Value = def
                .schema()
                .canonical()
                .ok()
                .and_then(|text| serde_json::from_str(text).ok())
                .unwrap_or(Value::Null);
            let properties = &schema["properties"];
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let signature: Vec<String> = def
                .params()
                .iter()
                .map(|&name| {
                    let optional = if required.contains(&name) { "" } else { "?" };
                    let kind = type_name(&properties[name]);
                    // An optional field may be left out; its `null` says
                    // nothing more.
                    let kind = match optional {
                        "?" => kind.strip_suffix(" | null").unwrap_or(&kind).to_owned(),
                        _ => kind,
                    };
                    format!("{name}{optional}: {kind}")
                })
                .collect();
            let _ = writeln!(out, "{}({})", def.name(), signature.join(", "));
            for line in def.description().lines() {
                let _ = writeln!(out, "  {line}");
            }
            for name in def.params() {
                if let Some(description) = properties[name]["description"].as_str() {
                    let _ = writeln!(out, "  - {name}: {}", description.replace('\n', " "));
                }
            }
        }
        out
    }
}

/// A schema's type, briefly: `string`, `integer[]`, `"asc" | "desc"`.
fn type_name(schema: &Value) -> String {
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return values.join(" | ");
    }
    if let Some(kinds) = schema["type"].as_array() {
        // `Option<T>`: the type, then `null`.
        let mut named: Vec<String> = kinds
            .iter()
            .filter_map(Value::as_str)
            .filter(|kind| *kind != "null")
            .map(|kind| {
                let mut single = schema.clone();
                single["type"] = Value::from(kind);
                type_name(&single)
            })
            .collect();
        if kinds.iter().any(|kind| kind == "null") {
            named.push("null".to_owned());
        }
        return named.join(" | ");
    }
    if let Some(branches) = schema["anyOf"].as_array()
        && let [branch, null] = branches.as_slice()
        && null["type"] == "null"
    {
        return format!("{} | null", type_name(branch));
    }
    match schema["type"].as_str() {
        Some("array") => format!("{}[]", type_name(&schema["items"])),
        Some(kind) => kind.to_owned(),
        None if schema.get("anyOf").is_some() => "one of several shapes".to_owned(),
        None => "any".to_owned(),
    }
}
