//! For models without native tool calling: every tool as one schema of
//! one-key objects (browser-use's action model), and a plain-text
//! description of the tools.

use std::fmt::Write as _;

use serde_json::Value;

use crate::schema::OrderedJson;
use crate::{CallError, CallOutcome, Provider, Registry, ToolListError};

impl Registry {
    /// One schema for every enabled tool: an object with exactly one
    /// property, named for the tool, whose value is the tool's arguments
    /// (`{"click": {"index": 5}}`). Each property carries its tool's
    /// description. Ask the model for JSON of this shape, then read it with
    /// [`action`](Self::action) and run it with [`dispatch`](Self::dispatch).
    ///
    /// Fails, like [`tool_list`](Self::tool_list), for a tool whose
    /// schema cannot be built.
    pub fn action_schema(&self) -> Result<String, ToolListError> {
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
            if let OrderedJson::Object(entries) = &mut params {
                let at = usize::from(entries.first().is_some_and(|(key, _)| key == "type"));
                entries.retain(|(key, _)| key != "description");
                entries.insert(
                    at,
                    (
                        "description".to_owned(),
                        OrderedJson::String(def.description().to_owned()),
                    ),
                );
            }
            properties.push((def.name().to_owned(), params));
        }
        if !failures.is_empty() {
            return Err(ToolListError {
                provider: Provider::OpenAi,
                tools: failures,
            });
        }
        let string = |s: &str| OrderedJson::String(s.to_owned());
        let schema = OrderedJson::Object(vec![
            ("type".to_owned(), string("object")),
            (
                "description".to_owned(),
                string(
                    "One action: an object with exactly one key, the action's name, holding its arguments.",
                ),
            ),
            ("properties".to_owned(), OrderedJson::Object(properties)),
            ("additionalProperties".to_owned(), OrderedJson::Bool(false)),
            ("minProperties".to_owned(), OrderedJson::Number(1.into())),
            ("maxProperties".to_owned(), OrderedJson::Number(1.into())),
        ]);
        Ok(schema.to_json_string())
    }

    /// Reads one action of the [action schema](Self::action_schema): an
    /// object with exactly one key, the tool's name, holding its arguments.
    /// What it gives is run like any call, with [`dispatch`](Self::dispatch);
    /// anything else is a [`CallError::InvalidAction`] saying what was
    /// expected, for [`CallOutcome::failed`] to give the model.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolkit_core::{CallOutcome, Registry, tool, tools};
    ///
    /// /// Adds two numbers.
    /// #[tool]
    /// fn add(
    ///     /// The first number.
    ///     a: i64,
    ///     /// The second number.
    ///     b: i64,
    /// ) -> i64 {
    ///     a + b
    /// }
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::builder().tools(tools![add]).build()?;
    /// let action = json!({"add": {"a": 1, "b": 2}});
    /// let outcome = match registry.action(&action) {
    ///     Ok(call) => registry.dispatch(call).await,
    ///     Err(error) => CallOutcome::failed(error),
    /// };
    /// assert_eq!(outcome.result.to_text(), "3");
    /// # Ok::<(), toolkit_core::RegistryError>(())
    /// # }).unwrap();
    /// ```
    pub fn action<'v>(&self, action: &'v Value) -> Result<(&'v str, &'v Value), CallError> {
        match action.as_object() {
            Some(object) if object.len() == 1 => {
                let (name, arguments) = object.iter().next().expect("one entry");
                Ok((name, arguments))
            }
            _ => {
                let names: Vec<String> = self.names().collect();
                Err(CallError::InvalidAction {
                    message: format!(
                        "an action is an object with exactly one key, the action's name ({}), holding its arguments; got {}",
                        names.join(", "),
                        crate::tool::validate::describe(action)
                    ),
                })
            }
        }
    }

    /// Runs one action of the [action schema](Self::action_schema).
    #[deprecated(
        since = "0.2.0",
        note = "use `registry.action(&value)` and `registry.dispatch(call)`, or `CallOutcome::failed(error)`"
    )]
    pub async fn call_action(&self, action: &Value) -> CallOutcome {
        match self.action(action) {
            Ok(call) => self.dispatch(call).await,
            Err(error) => CallOutcome::failed(error),
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
        let empty = OrderedJson::object();
        for def in self.tools() {
            let schema = def.schema().canonical_tree().unwrap_or(&empty);
            let brief = Brief::new(schema);
            let required = names(schema.get("required"));
            let property = |name: &str| schema.get("properties").and_then(|p| p.get(name));
            let signature: Vec<String> = def
                .params()
                .iter()
                .map(|&name| {
                    let kind = property(name).map_or("any".to_owned(), |p| brief.of(p, 0));
                    field(name, required.contains(&name), &kind)
                })
                .collect();
            let _ = writeln!(out, "{}({})", def.name(), signature.join(", "));
            for line in def.description().lines() {
                let _ = writeln!(out, "  {line}");
            }
            for name in def.params() {
                let description = property(name)
                    .and_then(|p| p.get("description"))
                    .and_then(OrderedJson::as_str);
                if let Some(description) = description {
                    let _ = writeln!(out, "  - {name}: {}", description.replace('\n', " "));
                }
            }
        }
        out
    }
}

/// A field as the signature shows it: `name: kind`, or `name?: kind` for
/// one that may be left out, whose `null` then says nothing more.
fn field(name: &str, required: bool, kind: &str) -> String {
    if required {
        format!("{name}: {kind}")
    } else {
        format!("{name}?: {}", kind.strip_suffix(" | null").unwrap_or(kind))
    }
}

/// The strings of a `required` list.
fn names(list: Option<&OrderedJson>) -> Vec<&str> {
    list.and_then(OrderedJson::as_array)
        .map(|names| names.iter().filter_map(OrderedJson::as_str).collect())
        .unwrap_or_default()
}

/// A schema's type, briefly, for a prompt: `string`, `integer[]`,
/// `"asc" | "desc"`, `{from: string, to?: string}`. Objects show their
/// fields (so that a model reading only this text knows what `filters`
/// holds), down to a few levels; `$ref`s are followed through the root's
/// `$defs`.
struct Brief<'a> {
    root: &'a OrderedJson,
    /// Schema nodes still to visit: bounds the text for huge or
    /// self-referencing schemas (`$ref` cycles).
    budget: std::cell::Cell<usize>,
}

impl<'a> Brief<'a> {
    /// Past this depth an object is shown as `object`: a prompt line, not
    /// a schema dump.
    const DEPTH: usize = 3;
    /// At most this many alternatives or enum values are listed.
    const CHOICES: usize = 8;

    fn new(root: &'a OrderedJson) -> Self {
        Self {
            root,
            budget: std::cell::Cell::new(200),
        }
    }

    /// `depth` counts the objects around `schema`.
    fn of(&self, schema: &OrderedJson, depth: usize) -> String {
        let Some(budget) = self.budget.get().checked_sub(1) else {
            return "…".to_owned();
        };
        self.budget.set(budget);
        if let Some(target) = schema.get("$ref").and_then(OrderedJson::as_str) {
            let resolved = target.strip_prefix("#/").and_then(|pointer| {
                pointer
                    .split('/')
                    .try_fold(self.root, |node, key| node.get(key))
            });
            return resolved.map_or("any".to_owned(), |schema| self.of(schema, depth));
        }
        if let Some(values) = schema.get("enum").and_then(OrderedJson::as_array) {
            return Self::choices(values.iter().map(OrderedJson::to_json_string));
        }
        if let Some(value) = schema.get("const") {
            return value.to_json_string();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(variants) = schema.get(key).and_then(OrderedJson::as_array) {
                return Self::choices(variants.iter().map(|variant| self.of(variant, depth)));
            }
        }
        match schema.get("type") {
            Some(OrderedJson::Array(kinds)) => Self::choices(kinds.iter().map(|kind| {
                let mut single = schema.clone();
                single.insert("type", kind.clone());
                self.of(&single, depth)
            })),
            // A tuple: each position's own type, not `any[]`.
            Some(OrderedJson::String(kind))
                if kind == "array"
                    && schema
                        .get("prefixItems")
                        .is_some_and(|p| p.as_array().is_some()) =>
            {
                let positions = schema
                    .get("prefixItems")
                    .and_then(OrderedJson::as_array)
                    .unwrap_or_default();
                let shown: Vec<String> =
                    positions.iter().map(|item| self.of(item, depth)).collect();
                format!("[{}]", shown.join(", "))
            }
            Some(OrderedJson::String(kind)) if kind == "array" => {
                let items = schema
                    .get("items")
                    .map_or("any".to_owned(), |items| self.of(items, depth));
                if items.contains(" | ") {
                    format!("({items})[]")
                } else {
                    format!("{items}[]")
                }
            }
            Some(OrderedJson::String(kind)) if kind == "object" => self.object(schema, depth),
            Some(OrderedJson::String(kind)) => kind.clone(),
            _ => "any".to_owned(),
        }
    }

    fn object(&self, schema: &OrderedJson, depth: usize) -> String {
        let properties = schema.get("properties").and_then(OrderedJson::as_object);
        if depth >= Self::DEPTH || properties.is_none_or(<[_]>::is_empty) {
            return match schema.get("additionalProperties") {
                Some(values @ OrderedJson::Object(_)) => {
                    format!("{{string: {}}}", self.of(values, depth + 1))
                }
                _ => "object".to_owned(),
            };
        }
        let required = names(schema.get("required"));
        let fields: Vec<String> = properties
            .into_iter()
            .flatten()
            .map(|(name, schema)| {
                let kind = self.of(schema, depth + 1);
                field(name, required.contains(&name.as_str()), &kind)
            })
            .collect();
        format!("{{{}}}", fields.join(", "))
    }

    fn choices(choices: impl Iterator<Item = String>) -> String {
        let mut listed: Vec<String> = Vec::new();
        let mut more = false;
        for choice in choices {
            if listed.len() == Self::CHOICES {
                more = true;
                break;
            }
            if !listed.contains(&choice) {
                listed.push(choice);
            }
        }
        if more {
            listed.push("…".to_owned());
        }
        listed.join(" | ")
    }
}
