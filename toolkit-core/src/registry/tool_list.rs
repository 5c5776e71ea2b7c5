//! The tool list in each provider's shape.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::schema::{Dialect, OrderedJson};
use crate::{Provider, Registry, ToolDef};

/// A registry's tool list for one provider, in registration order.
///
/// It serializes (with serde, or [`to_json_string`](Self::to_json_string))
/// to exactly the JSON array the provider takes, keys in a fixed order
/// whatever serde_json features the build enables. For Gemini it is the list
/// of function declarations: send it as
/// `"tools": [{"functionDeclarations": <this>}]`.
#[derive(Clone)]
pub struct ToolList {
    items: Vec<OrderedJson>,
}

impl ToolList {
    /// The list as JSON text.
    pub fn to_json_string(&self) -> String {
        OrderedJson::Array(self.items.clone()).to_json_string()
    }

    /// The list as a `serde_json::Value` (whose key order then follows the
    /// build's serde_json features).
    pub fn to_value(&self) -> Value {
        Value::Array(self.items.iter().map(OrderedJson::to_value).collect())
    }

    /// How many tools the list holds.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl Serialize for ToolList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.items.serialize(serializer)
    }
}

impl fmt::Debug for ToolList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json_string())
    }
}

/// The earlier name of [`ToolList`], kept for one release.
#[deprecated(since = "0.2.0", note = "renamed to `ToolList`")]
pub type Definitions = ToolList;

/// The earlier name of [`ToolListError`], kept for one release.
#[deprecated(since = "0.2.0", note = "renamed to `ToolListError`")]
pub type DefinitionsError = ToolListError;

/// Tools that cannot be sent to a provider, each with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolListError {
    /// The provider.
    pub provider: Provider,
    /// Each tool that cannot be sent, with the reason.
    pub tools: Vec<(String, String)>,
}

impl ToolListError {
    /// The `tools` (each a name and the reason) `provider` cannot take.
    pub fn new(provider: Provider, tools: Vec<(String, String)>) -> Self {
        Self { provider, tools }
    }
}

impl fmt::Display for ToolListError {
    /// One line per tool, each with every problem of that tool.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tools that cannot be sent to {}:", self.provider)?;
        for (tool, reason) in &self.tools {
            write!(f, "\n- `{tool}`: {reason}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ToolListError {}

impl Registry {
    /// The enabled tools as `provider` takes them: the earlier name of
    /// [`tool_list`](Self::tool_list), kept for one release.
    #[deprecated(since = "0.2.0", note = "renamed to `tool_list`")]
    pub fn definitions(&self, provider: Provider) -> Result<ToolList, ToolListError> {
        self.tool_list(provider)
    }

    /// The enabled tools as `provider` takes them.
    ///
    /// Fails, naming each tool and the reason, when a tool's schema cannot
    /// be lowered for the provider (a free-form map under OpenAI strict
    /// mode, a recursive type for Gemini).
    /// [`RegistryBuilder::require`](crate::RegistryBuilder::require) moves
    /// that check to build time.
    pub fn tool_list(&self, provider: Provider) -> Result<ToolList, ToolListError> {
        let mut items = Vec::new();
        let mut failures = Vec::new();
        for def in self.tools() {
            match definition(&def, provider) {
                Ok(item) => items.push(item),
                Err(reason) => failures.push((def.name().to_owned(), reason)),
            }
        }
        if failures.is_empty() {
            Ok(ToolList { items })
        } else {
            Err(ToolListError {
                provider,
                tools: failures,
            })
        }
    }
}

/// One tool's definition for `provider`.
fn definition(def: &ToolDef, provider: Provider) -> Result<OrderedJson, String> {
    let schema = def.schema();
    let lowered = schema
        .lowered_tree(provider)
        .map_err(|error| error.to_string())?;
    let parameters = lowered.json.clone();
    // Gemini takes full JSON Schema under another key.
    let gemini_key = match lowered.dialect {
        Dialect::GeminiJsonSchema => "parametersJsonSchema",
        _ => "parameters",
    };
    let name = || {
        (
            "name".to_owned(),
            OrderedJson::String(def.name().to_owned()),
        )
    };
    let description = || {
        (
            "description".to_owned(),
            OrderedJson::String(def.description().to_owned()),
        )
    };
    let kind = || {
        (
            "type".to_owned(),
            OrderedJson::String("function".to_owned()),
        )
    };
    Ok(match provider {
        Provider::OpenAi => OrderedJson::Object(vec![
            kind(),
            (
                "function".to_owned(),
                OrderedJson::Object(vec![
                    name(),
                    description(),
                    ("parameters".to_owned(), parameters),
                ]),
            ),
        ]),
        Provider::OpenAiStrict => OrderedJson::Object(vec![
            kind(),
            (
                "function".to_owned(),
                OrderedJson::Object(vec![
                    name(),
                    description(),
                    ("strict".to_owned(), OrderedJson::Bool(true)),
                    ("parameters".to_owned(), parameters),
                ]),
            ),
        ]),
        Provider::OpenAiResponses => OrderedJson::Object(vec![
            kind(),
            name(),
            description(),
            ("parameters".to_owned(), parameters),
            (
                "strict".to_owned(),
                OrderedJson::Bool(schema.is_strict_valid()),
            ),
        ]),
        Provider::Anthropic => OrderedJson::Object(vec![
            name(),
            description(),
            ("input_schema".to_owned(), parameters),
        ]),
        Provider::Gemini => OrderedJson::Object(vec![
            name(),
            description(),
            (gemini_key.to_owned(), parameters),
        ]),
        Provider::Mcp => {
            let mut fields = vec![name()];
            if let Some(title) = def.title() {
                fields.push(("title".to_owned(), OrderedJson::String(title.to_owned())));
            }
            fields.push(description());
            fields.push(("inputSchema".to_owned(), parameters));
            if let Some(output) = def.output_schema() {
                fields.push(("outputSchema".to_owned(), output.json().clone()));
            }
            let hints = def.annotations();
            if !hints.is_empty() {
                let hint = |key: &str, value: Option<bool>| {
                    value.map(|value| (key.to_owned(), OrderedJson::Bool(value)))
                };
                let set = [
                    hint("readOnlyHint", hints.read_only),
                    hint("destructiveHint", hints.destructive),
                    hint("idempotentHint", hints.idempotent),
                    hint("openWorldHint", hints.open_world),
                ];
                fields.push((
                    "annotations".to_owned(),
                    OrderedJson::Object(set.into_iter().flatten().collect()),
                ));
            }
            OrderedJson::Object(fields)
        }
    })
}
