//! Tools defined at run time: a name, a description, a JSON Schema and an
//! async handler.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::arguments;
use super::{Annotations, OutputSchema, ToolDef, ToolFuture};
use crate::call::context::CallSite;
use crate::schema::Source;
use crate::tool::schema::ToolSchema;
use crate::{Arguments, CallContext, CallError, IntoToolResult};

type Handler = dyn Fn(Value, CallContext) -> ToolFuture + Send + Sync;

/// Builds a tool at run time, for tools not known when the program was
/// compiled: an MCP server's, a plugin's, an HTTP endpoint a user
/// configured.
///
/// The tool follows the same rules as a `#[tool]`: its name and schema are
/// checked, and its schema lowered for every provider, when a registry is
/// built with it (or it is [added](crate::Registry::add) to one); its calls
/// get the same guarantees (panics caught, time limits, cancellation). The
/// arguments are checked against the given schema before the handler runs,
/// and every violation is reported with its path.
///
/// ```
/// use serde_json::{Value, json};
/// use toolkit_core::{CallContext, Registry, ToolDef};
///
/// let echo = ToolDef::builder("echo")
///     .description("Repeats the text.")
///     .input_schema(json!({
///         "type": "object",
///         "properties": {"text": {"type": "string", "description": "What to repeat."}},
///         "required": ["text"]
///     }))
///     .read_only(true)
///     .handler(|arguments: Value, _call: CallContext| async move {
///         arguments["text"].as_str().unwrap_or_default().to_owned()
///     });
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let registry = Registry::builder().tool(echo).build()?;
/// let outcome = registry.dispatch(("echo", r#"{"text": "hi"}"#)).await;
/// assert_eq!(outcome.result.as_text(), Ok("hi"));
///
/// let wrong = registry.dispatch(("echo", r#"{"text": 5}"#)).await;
/// assert_eq!(
///     wrong.result.error_message(),
///     Some("invalid arguments for `echo`: at `text`: expected a string, got 5")
/// );
/// # Ok::<(), toolkit_core::RegistryError>(())
/// # }).unwrap();
/// ```
#[must_use = "a builder does nothing until `handler` makes the tool"]
pub struct ToolBuilder {
    name: String,
    wire_name: Option<String>,
    title: Option<String>,
    description: String,
    annotations: Annotations,
    needs_approval: bool,
    deferred: bool,
    source: String,
    input_schema: Value,
    param_order: Option<Vec<String>>,
    output_schema: Option<Value>,
}

impl ToolBuilder {
    pub(crate) fn new(name: String) -> Self {
        Self {
            name,
            wire_name: None,
            title: None,
            description: String::new(),
            annotations: Annotations::new(),
            needs_approval: false,
            deferred: false,
            source: String::new(),
            input_schema: serde_json::json!({"type": "object", "properties": {}}),
            param_order: None,
            output_schema: None,
        }
    }

    /// What the tool does, for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The name models call the tool by, when its own name is not one
    /// every provider takes: an MCP server's `math.factorial`, an OpenAPI
    /// operation's `listPets/v2`. [`name::portable`](crate::name::portable)
    /// makes one. The tool keeps its own name as its
    /// [`original_name`](ToolDef::original_name), and a registry finds it
    /// by either; the model only ever sees this one.
    ///
    /// ```
    /// use serde_json::Value;
    /// use toolkit_core::{CallContext, Provider, Registry, ToolDef, name};
    ///
    /// let original = "math.factorial";
    /// let factorial = ToolDef::builder(original)
    ///     .wire_name(name::portable(original))
    ///     .description("n!")
    ///     .handler(|_: Value, _: CallContext| async { "120" });
    /// assert_eq!(factorial.name(), "math_factorial");
    /// assert_eq!(factorial.original_name(), "math.factorial");
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let registry = Registry::builder().tool(factorial).build()?;
    /// let list = registry.tool_list(Provider::OpenAi)?.to_value();
    /// assert_eq!(list[0]["function"]["name"], "math_factorial");
    /// assert_eq!(registry.dispatch(("math_factorial", "{}")).await.result.as_text(), Ok("120"));
    /// assert_eq!(registry.get("math.factorial").unwrap().name(), "math_factorial");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn wire_name(mut self, name: impl Into<String>) -> Self {
        self.wire_name = Some(name.into());
        self
    }

    /// Whether a person must approve each call before it runs (an agent
    /// asks its approval hook, or pauses the run for a decision). Tools
    /// marked [`destructive`](Self::destructive) need approval too, unless
    /// the host says otherwise.
    pub fn needs_approval(mut self, value: bool) -> Self {
        self.needs_approval = value;
        self
    }

    /// Whether the tool's definition is left out of an agent's requests
    /// until the model looks for it (a catalog of hundreds of tools): see
    /// [`ToolDef::is_deferred`].
    pub fn deferred(mut self, value: bool) -> Self {
        self.deferred = value;
        self
    }

    /// A title for people (MCP's `title`).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The JSON Schema of the arguments: an object schema (the default
    /// takes no arguments). Its parameters keep the order of `properties`
    /// as the value holds it.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// The order the parameters are listed in, for schemas whose
    /// `properties` come in a `Value` that does not keep the order they
    /// were written in (serde_json's default map is sorted): a tool that
    /// passes on another tool's schema keeps its parameters' order. Names
    /// left out follow in the schema's order; a name the schema does not
    /// have is an error when the tool is registered.
    ///
    /// ```
    /// use serde_json::{Value, json};
    /// use toolkit_core::{CallContext, Registry, ToolDef};
    ///
    /// let schema = json!({"type": "object", "properties": {
    ///     "url": {"type": "string"}, "new_tab": {"type": "boolean"}}});
    /// let open = ToolDef::builder("open")
    ///     .input_schema(schema.clone())
    ///     .param_order(["url", "new_tab"])
    ///     .handler(|_: Value, _: CallContext| async { "opened" });
    /// assert_eq!(open.params(), ["url", "new_tab"]);
    ///
    /// let wrong = ToolDef::builder("open")
    ///     .input_schema(schema)
    ///     .param_order(["link"])
    ///     .handler(|_: Value, _: CallContext| async { "opened" });
    /// assert!(Registry::builder().tool(wrong).build().is_err());
    /// ```
    pub fn param_order<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.param_order = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The JSON Schema of the tool's structured output (MCP's
    /// `outputSchema`); ignored unless it is an object schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Where the tool comes from (an MCP server's name, a plugin's), shown
    /// where errors name a tool's origin, such as two tools of one name.
    pub fn source(mut self, source: impl Into<String>) -> Self {
        self.source = source.into();
        self
    }

    /// All the behaviour hints at once.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Hints that the tool does not change its environment.
    pub fn read_only(mut self, value: bool) -> Self {
        self.annotations.read_only = Some(value);
        self
    }

    /// Hints that the tool may destroy or overwrite.
    pub fn destructive(mut self, value: bool) -> Self {
        self.annotations.destructive = Some(value);
        self
    }

    /// Hints that repeating a call changes nothing more.
    pub fn idempotent(mut self, value: bool) -> Self {
        self.annotations.idempotent = Some(value);
        self
    }

    /// Hints that the tool reaches an open world.
    pub fn open_world(mut self, value: bool) -> Self {
        self.annotations.open_world = Some(value);
        self
    }

    /// The handler, which makes the tool: an async function of the
    /// arguments (checked against the input schema, an object) and the
    /// call's context, returning anything that converts into a result.
    pub fn handler<F, Fut, R>(self, handler: F) -> ToolDef
    where
        F: Fn(Value, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult + 'static,
    {
        let handler: Arc<Handler> = Arc::new(move |arguments, call| {
            let running = handler(arguments, call);
            Box::pin(async move { Ok(running.await.into_tool_result()) }) as ToolFuture
        });
        let mut params: Vec<String> = self
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        if let Some(first) = self.param_order {
            params.retain(|name| !first.contains(name));
            params = first.into_iter().chain(params).collect();
        }
        let order: Vec<&str> = params.iter().map(String::as_str).collect();
        let schema = ToolSchema::build(&self.input_schema, &order, Source::Given);
        let output_schema = self
            .output_schema
            .as_ref()
            .and_then(OutputSchema::from_value);
        let (name, original) = match self.wire_name {
            Some(wire) if wire != self.name => (wire, Some(self.name)),
            _ => (self.name, None),
        };
        ToolDef::runtime(RuntimeDef {
            shared_name: Arc::from(name.as_str()),
            name,
            original,
            title: self.title,
            description: self.description,
            annotations: self.annotations,
            needs_approval: self.needs_approval,
            deferred: self.deferred,
            source: self.source,
            params,
            schema,
            output_schema,
            handler,
        })
    }
}

impl fmt::Debug for ToolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolBuilder")
            .field("name", &self.name)
            .field("wire_name", &self.wire_name)
            .finish_non_exhaustive()
    }
}

/// A run-time tool's definition.
pub(crate) struct RuntimeDef {
    /// The name models call it by.
    pub(crate) name: String,
    /// Its own name, when it differs from `name`.
    pub(crate) original: Option<String>,
    pub(crate) shared_name: Arc<str>,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) annotations: Annotations,
    pub(crate) needs_approval: bool,
    pub(crate) deferred: bool,
    pub(crate) source: String,
    pub(crate) params: Vec<String>,
    /// The arguments are checked against its canonical form: what every
    /// provider was sent.
    pub(crate) schema: ToolSchema,
    pub(crate) output_schema: Option<OutputSchema>,
    handler: Arc<Handler>,
}

impl RuntimeDef {
    /// Reads and checks the arguments, then starts the handler.
    pub(crate) fn invoke(
        &self,
        arguments: Arguments<'_>,
        site: &CallSite<'_>,
    ) -> Result<ToolFuture, CallError> {
        // Text the compiled schema takes as it is needs only serde's parse;
        // anything else goes the slow way, which decides and explains.
        let fast = match arguments {
            Arguments::Text(text) => self.schema.shape().and_then(|shape| shape.read(text)),
            Arguments::Value(_) => None,
        };
        let value = match fast {
            Some(value) => value,
            None => arguments::prepare(arguments, &self.name, &self.schema)?.into_owned(),
        };
        Ok((self.handler)(value, site.context()))
    }
}
