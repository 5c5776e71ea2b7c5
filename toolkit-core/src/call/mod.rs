//! One call of a tool, and what the call knows: its arguments, its context
//! (id, cancellation, host state, progress), and why it failed.
//!
//! Tools (`tool/`) and the registry (`registry/`) both build on the types
//! here; this module knows nothing of either.

pub(crate) mod arguments;
pub(crate) mod ask;
pub(crate) mod cancellation;
pub(crate) mod context;
pub(crate) mod error;
pub(crate) mod host;
pub(crate) mod log;
pub(crate) mod progress;
mod questions;
pub(crate) mod state;
pub(crate) mod target;

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Arguments;

/// One call the model made: its id, the tool's name and the arguments.
///
/// The arguments read the same whatever the provider sent:
/// [`arguments`](Self::arguments) is the parsed object, whether the model
/// wrote JSON text (OpenAI Chat and Responses, every compatible server) or
/// the provider sent an object (Anthropic's `input`, Gemini's `args`).
/// Text is parsed at most once, when first read, and dispatch reuses that
/// parse. Text that is not a JSON object is kept as the model wrote it
/// ([`arguments_text`](Self::arguments_text)) and marked
/// ([`is_malformed`](Self::is_malformed)); its `arguments()` is `null`,
/// and running it gives the model an error that quotes it.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::ToolCall;
///
/// // As OpenAI sends it, and as Anthropic does: read the same.
/// let openai = ToolCall::from_text("call_1", "book", r#"{"day": "Sunday"}"#);
/// let anthropic = ToolCall::new("toolu_1", "book", json!({"day": "Sunday"}));
/// assert_eq!(openai.arguments()["day"], "Sunday");
/// assert_eq!(anthropic.arguments()["day"], "Sunday");
///
/// let cut_off = ToolCall::from_text("call_2", "book", r#"{"day": "Sun"#);
/// assert!(cut_off.is_malformed());
/// assert_eq!(cut_off.arguments()["day"], serde_json::Value::Null);
/// assert_eq!(cut_off.arguments_text(), Some(r#"{"day": "Sun"#));
/// ```
///
/// Serializes as `{"id", "name", "arguments"}`, with the arguments as they
/// came: text stays text, so a saved call is the call the model made.
/// Deserializes from that and nothing else, where `arguments` is an object
/// or a string of JSON (a call without `arguments` has none). Any other key
/// is an error, so that a provider's own shape (an Anthropic `tool_use`
/// block, a Responses `function_call` item) is refused rather than read
/// wrong: without its `input`, or with its item `id` for the call's. Read
/// those with [`Provider::read`](crate::Provider::read).
///
/// ```
/// use toolkit_core::ToolCall;
///
/// let call: ToolCall =
///     serde_json::from_str(r#"{"id": "call_1", "name": "search", "arguments": "{}"}"#)?;
/// assert_eq!(call.name, "search");
///
/// let tool_use = r#"{"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}"#;
/// assert!(serde_json::from_str::<ToolCall>(tool_use).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The id the provider gave the call.
    pub id: String,
    /// The tool the model called.
    pub name: String,
    written: Written,
    /// The parsed arguments, for text and for `null`: filled on first
    /// read. `None` when the text is not a JSON object without repeated
    /// keys, which dispatch refuses with its own message.
    parsed: OnceLock<Option<Value>>,
}

/// The arguments as they came.
#[derive(Debug, Clone, PartialEq)]
enum Written {
    /// JSON text, as OpenAI's dialects send it.
    Text(String),
    /// A value, as Anthropic and Gemini send it, or as a host built it.
    Value(Value),
}

/// What `arguments()` gives for arguments that cannot be read.
static UNREADABLE: Value = Value::Null;

impl ToolCall {
    /// A call of `name` with `arguments`, an object (`null` means no
    /// arguments). A JSON string is taken as the text of the arguments, as
    /// OpenAI sends them, like [`from_text`](Self::from_text).
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        let written = match arguments {
            Value::String(text) => Written::Text(text),
            value => Written::Value(value),
        };
        Self::written(id.into(), name.into(), written)
    }

    /// A call of `name` whose arguments are JSON text, as the model wrote
    /// it; blank text means no arguments.
    pub fn from_text(
        id: impl Into<String>,
        name: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::written(id.into(), name.into(), Written::Text(text.into()))
    }

    fn written(id: String, name: String, written: Written) -> Self {
        Self {
            id,
            name,
            written,
            parsed: OnceLock::new(),
        }
    }

    /// The arguments, as an object whatever the provider sent: the parsed
    /// text, or the value sent (which dispatch refuses unless it is an
    /// object). No arguments (blank text, `null`) read as `{}`. Text that
    /// cannot be used (not a JSON object, or a key written twice) reads
    /// as `null`, so that indexing it finds nothing and never panics.
    ///
    /// ```
    /// use toolkit_core::ToolCall;
    ///
    /// let call = ToolCall::from_text("call_1", "send", r#"{"to": "ada@example.com"}"#);
    /// assert_eq!(call.arguments()["to"], "ada@example.com");
    /// assert!(ToolCall::from_text("call_2", "send", "").arguments().as_object().unwrap().is_empty());
    /// ```
    pub fn arguments(&self) -> &Value {
        match &self.written {
            Written::Value(Value::Null) => self
                .parsed
                .get_or_init(|| Some(Value::Object(Map::new())))
                .as_ref()
                .unwrap_or(&UNREADABLE),
            Written::Value(value) => value,
            Written::Text(text) => self
                .parsed
                .get_or_init(|| parse_text(text))
                .as_ref()
                .unwrap_or(&UNREADABLE),
        }
    }

    /// The arguments as the model wrote them, when it wrote JSON text
    /// (OpenAI Chat and Responses, and every compatible server); `None`
    /// when the provider sent an object, or the host set one.
    pub fn arguments_text(&self) -> Option<&str> {
        match &self.written {
            Written::Text(text) => Some(text),
            Written::Value(_) => None,
        }
    }

    /// The arguments as JSON text: the model's own text when it wrote
    /// text (even malformed), the value written out otherwise. For logs
    /// and for quoting a call back to the model.
    pub fn arguments_json(&self) -> std::borrow::Cow<'_, str> {
        match &self.written {
            Written::Text(text) => std::borrow::Cow::Borrowed(text),
            Written::Value(value) => std::borrow::Cow::Owned(value.to_string()),
        }
    }

    /// Whether the model's text cannot be used: text that is not a JSON
    /// object (cut off at the output limit, say) or that holds a key
    /// twice. A value (from Anthropic, Gemini or the host) is never
    /// malformed here; dispatch still refuses one that is not an object.
    /// Running such a call gives the model an error naming the
    /// problem. A custom tool's free-text input (OpenAI's `custom` tools,
    /// [`CallKind::Custom`](crate::response::CallKind::Custom)) is not
    /// JSON: read it with [`arguments_text`](Self::arguments_text).
    pub fn is_malformed(&self) -> bool {
        match &self.written {
            Written::Text(_) => self.arguments().is_null(),
            Written::Value(_) => false,
        }
    }

    /// The arguments to change, as an object: the host's edit of a call
    /// before it runs ([`Decision::Edit`](https://docs.rs/toolkit-agent)).
    /// `None` when they are not an object (malformed text; a value that is
    /// not an object); set them whole with
    /// [`set_arguments`](Self::set_arguments) then.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolkit_core::ToolCall;
    ///
    /// let mut call = ToolCall::from_text("call_1", "send", r#"{"to": "all@example.com"}"#);
    /// call.arguments_mut().unwrap()["to"] = json!("ada@example.com");
    /// assert_eq!(call.arguments()["to"], "ada@example.com");
    /// assert_eq!(call.arguments_text(), None); // no longer what the model wrote
    /// ```
    pub fn arguments_mut(&mut self) -> Option<&mut Map<String, Value>> {
        if !matches!(self.written, Written::Value(Value::Object(_))) {
            let value = self.arguments();
            if !value.is_object() {
                return None;
            }
            let value = value.clone();
            self.set_arguments(value);
        }
        match &mut self.written {
            Written::Value(Value::Object(map)) => Some(map),
            _ => None,
        }
    }

    /// Replaces the arguments with `arguments` (an object; `null` means
    /// none). A JSON string is taken as text, as in [`new`](Self::new).
    pub fn set_arguments(&mut self, arguments: Value) {
        *self = Self::new(
            std::mem::take(&mut self.id),
            std::mem::take(&mut self.name),
            arguments,
        );
    }

    /// The call with `arguments` instead of its own, as
    /// [`set_arguments`](Self::set_arguments).
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        self.set_arguments(arguments);
        self
    }

    /// The arguments, owned: what [`arguments`](Self::arguments) reads.
    pub fn into_arguments(self) -> Value {
        match self.written {
            Written::Value(Value::Null) => Value::Object(Map::new()),
            Written::Value(value) => value,
            Written::Text(text) => match self.parsed.into_inner() {
                Some(parsed) => parsed.unwrap_or(Value::Null),
                None => parse_text(&text).unwrap_or(Value::Null),
            },
        }
    }

    /// The arguments for dispatch: the parse already made, when the
    /// arguments were read as an object, so that they are not parsed
    /// twice; otherwise the text itself, which a tool whose parameters
    /// serde holds to their schema reads in one pass.
    pub(crate) fn dispatch_arguments(&self) -> Arguments<'_> {
        match &self.written {
            Written::Text(text) => match self.parsed.get() {
                Some(Some(value)) => Arguments::Value(value),
                _ => Arguments::Text(text),
            },
            Written::Value(value) => Arguments::Value(value),
        }
    }
}

/// Text parsed as dispatch would take it: blank is no arguments; anything
/// but an object without repeated keys cannot be used.
fn parse_text(text: &str) -> Option<Value> {
    if text.trim().is_empty() {
        return Some(Value::Object(Map::new()));
    }
    crate::tool::unique::parse(text)
        .ok()
        .filter(Value::is_object)
}

impl PartialEq for ToolCall {
    /// Calls are equal when they were made alike: the same id, name and
    /// arguments as written (text compares as text).
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.name == other.name && self.written == other.written
    }
}

/// The serialized form: `{"id", "name", "arguments"}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Form {
    id: String,
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Serialize)]
struct FormRef<'a> {
    id: &'a str,
    name: &'a str,
    arguments: WrittenRef<'a>,
}

impl Serialize for ToolCall {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let arguments = match &self.written {
            Written::Text(text) => WrittenRef::Text(text),
            Written::Value(value) => WrittenRef::Value(value),
        };
        FormRef {
            id: &self.id,
            name: &self.name,
            arguments,
        }
        .serialize(serializer)
    }
}

#[derive(Serialize)]
#[serde(untagged)]
enum WrittenRef<'a> {
    Text(&'a str),
    Value(&'a Value),
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let form = Form::deserialize(deserializer)?;
        Ok(Self::new(form.id, form.name, form.arguments))
    }
}
