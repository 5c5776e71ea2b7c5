//! A tool's definition: made by `#[tool]` at compile time, or by
//! [`ToolBuilder`] at run time.

pub(crate) mod annotations;
pub(crate) mod arguments;
pub(crate) mod attribute;
pub(crate) mod enforcement;
pub(crate) mod fields;
pub(crate) mod normalize;
pub(crate) mod output;
pub(crate) mod runtime;
pub(crate) mod schema;
pub(crate) mod shape;
pub(crate) mod unique;
pub(crate) mod validate;

use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use annotations::Annotations;
pub use output::OutputSchema;
use runtime::RuntimeDef;
pub use runtime::ToolBuilder;

use crate::call::context::CallSite;
use crate::name::NameRef;
use crate::tool::schema::ToolSchema;
use crate::{Arguments, CallError, ToolResult};

/// The future of a running tool: its result, or why it could not finish
/// (a sync tool that panicked on its thread, no runtime to run it on).
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolResult, CallError>> + Send + 'static>>;

/// What a tool's entry point gives: the tool's future, or, for an async
/// `#[tool]` whose body never awaits, the result it ended with when run
/// (such a future ends at its first poll, so it is not boxed to be polled
/// later). Not a public API.
#[doc(hidden)]
// Exhaustive on purpose: a tool has run or is to run; the code `#[tool]`
// writes and this crate change together (toolkit-macros is pinned to it).
pub enum Started {
    /// The result, the tool having run to its end.
    Ready(Result<ToolResult, CallError>),
    /// The future to run.
    Future(ToolFuture),
}

/// A host value a tool needs, named for error messages.
#[derive(Clone, Copy)]
pub struct StateNeed {
    pub(crate) type_id: fn() -> TypeId,
    pub(crate) type_name: &'static str,
}

impl StateNeed {
    #[doc(hidden)]
    pub const fn __new(type_id: fn() -> TypeId, type_name: &'static str) -> Self {
        Self { type_id, type_name }
    }

    /// The Rust type of the value, as written in the tool's signature.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

/// A tool: its name, description, schemas and entry point.
///
/// Made in one of two ways:
///
/// - `#[tool]` generates one per function, as a `static`; name it with
///   [`tools!`](crate::tools) or [`Tool::definition`].
/// - [`ToolDef::builder`] makes one at run time, from a JSON Schema and an
///   async handler: an MCP server's tools, a plugin, an endpoint a user
///   configured.
///
/// A registry holds both kinds alike. Cloning is cheap (a copy of a few
/// pointers, or a reference count).
#[derive(Clone)]
pub struct ToolDef(Kind);

#[derive(Clone)]
enum Kind {
    Static(&'static StaticDef),
    Runtime(Arc<RuntimeDef>),
}

/// What `#[tool]` knows at compile time, in a `static` of its own. Not a
/// public API.
#[doc(hidden)]
// Exhaustive on purpose: `#[tool]`'s expansion builds it as a literal in a static.
pub struct StaticDef {
    pub name: &'static str,
    pub title: Option<&'static str>,
    pub description: &'static str,
    pub annotations: Annotations,
    pub needs_approval: bool,
    pub module_path: &'static str,
    /// The function's own name, which `name` may differ from.
    pub function: &'static str,
    pub params: &'static [&'static str],
    pub states: &'static [StateNeed],
    pub schema: fn() -> &'static ToolSchema,
    pub output_schema: fn() -> Option<&'static OutputSchema>,
    pub invoke: fn(Arguments<'_>, &CallSite<'_>) -> Result<Started, CallError>,
}

impl ToolDef {
    #[doc(hidden)]
    pub const fn __static(def: &'static StaticDef) -> Self {
        Self(Kind::Static(def))
    }

    pub(crate) fn runtime(def: RuntimeDef) -> Self {
        Self(Kind::Runtime(Arc::new(def)))
    }

    /// A tool defined at run time: see [`ToolBuilder`].
    pub fn builder(name: impl Into<String>) -> ToolBuilder {
        ToolBuilder::new(name.into())
    }

    /// The name the model calls the tool by: every provider accepts it
    /// (see [`name`](crate::name)).
    pub fn name(&self) -> &str {
        match &self.0 {
            Kind::Static(def) => def.name,
            Kind::Runtime(def) => &def.name,
        }
    }

    /// The tool's own name, where it was defined: the same as
    /// [`name`](Self::name), unless a run-time tool was given a
    /// [wire name](ToolBuilder::wire_name) (an MCP server's `math.factorial`
    /// sent to models as `math_factorial`). A registry finds a tool by
    /// either.
    pub fn original_name(&self) -> &str {
        match &self.0 {
            Kind::Static(def) => def.name,
            Kind::Runtime(def) => def.original.as_deref().unwrap_or(&def.name),
        }
    }

    /// The names a registry finds the tool by: its name, and its original
    /// name when that differs.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        let original = self.original_name();
        std::iter::once(self.name()).chain((original != self.name()).then_some(original))
    }

    /// Whether the tool answers to `name`, by either of its names.
    pub(crate) fn is_named(&self, name: &str) -> bool {
        self.names().any(|own| own == name)
    }

    /// A name both tools answer to, if any: two such tools cannot share a
    /// registry.
    pub(crate) fn shared_name(&self, other: &ToolDef) -> Option<&str> {
        self.names().find(|&name| other.is_named(name))
    }

    /// The name, borrowed for a call.
    #[inline]
    pub(crate) fn name_ref(&self) -> NameRef<'_> {
        match &self.0 {
            Kind::Static(def) => NameRef::Static(def.name),
            Kind::Runtime(def) => NameRef::Shared(&def.shared_name),
        }
    }

    /// A title for people (MCP's `title`), if the tool has one.
    pub fn title(&self) -> Option<&str> {
        match &self.0 {
            Kind::Static(def) => def.title,
            Kind::Runtime(def) => def.title.as_deref(),
        }
    }

    /// What the tool does, for the model: the doc comment up to its first
    /// heading, or the `description` option.
    pub fn description(&self) -> &str {
        match &self.0 {
            Kind::Static(def) => def.description,
            Kind::Runtime(def) => &def.description,
        }
    }

    /// Hints about the tool's behaviour, for clients that show or gate
    /// tools (MCP's `annotations`).
    pub fn annotations(&self) -> Annotations {
        match &self.0 {
            Kind::Static(def) => def.annotations,
            Kind::Runtime(def) => def.annotations,
        }
    }

    /// Whether a person must approve each call before it runs: the
    /// `#[tool(needs_approval)]` option, or
    /// [`ToolBuilder::needs_approval`]. An agent also asks about tools
    /// [annotated](Self::annotations) destructive, unless its host says
    /// otherwise.
    pub fn needs_approval(&self) -> bool {
        match &self.0 {
            Kind::Static(def) => def.needs_approval,
            Kind::Runtime(def) => def.needs_approval,
        }
    }

    /// Whether the tool's definition is left out of an agent's requests
    /// until the model finds it with tool search:
    /// [`ToolBuilder::deferred`]. A `#[tool]` is deferred by name, on the
    /// agent (`toolkit_agent::ToolSearch::defer`).
    pub fn is_deferred(&self) -> bool {
        match &self.0 {
            Kind::Static(_) => false,
            Kind::Runtime(def) => def.deferred,
        }
    }

    /// Where the tool is defined: a `#[tool]`'s function, or a run-time
    /// tool's [source](ToolBuilder::source).
    pub fn origin(&self) -> Origin<'_> {
        match &self.0 {
            Kind::Static(def) => Origin::Function {
                module_path: def.module_path,
                function: def.function,
            },
            Kind::Runtime(def) => Origin::Runtime {
                source: (!def.source.is_empty()).then_some(def.source.as_str()),
            },
        }
    }

    /// The module a `#[tool]`'s function is defined in, or a run-time tool's
    /// source (empty without one). [`origin`](Self::origin) says which of
    /// the two it is and names the function too.
    #[deprecated(
        since = "0.2.0",
        note = "renamed to `origin`, which returns an `Origin`"
    )]
    pub fn module_path(&self) -> &str {
        match self.origin() {
            Origin::Function { module_path, .. } => module_path,
            Origin::Runtime { source } => source.unwrap_or(""),
        }
    }

    /// The names of the parameters the model fills in, in declaration order.
    pub fn params(&self) -> Vec<&str> {
        match &self.0 {
            Kind::Static(def) => def.params.to_vec(),
            Kind::Runtime(def) => def.params.iter().map(String::as_str).collect(),
        }
    }

    /// The host values the tool's `#[tool(state)]` parameters need.
    pub fn states(&self) -> &[StateNeed] {
        match &self.0 {
            Kind::Static(def) => def.states,
            Kind::Runtime(_) => &[],
        }
    }

    /// The tool's parameter schemas. A `#[tool]`'s are built on first use
    /// and then shared by every registry in the process.
    pub fn schema(&self) -> &ToolSchema {
        match &self.0 {
            Kind::Static(def) => (def.schema)(),
            Kind::Runtime(def) => &def.schema,
        }
    }

    /// The schema of the tool's structured output (MCP's `outputSchema`),
    /// for a tool that returns [`Json<T>`](crate::Json) or a struct that
    /// serializes: results' `structuredContent` validates against it.
    pub fn output_schema(&self) -> Option<&OutputSchema> {
        match &self.0 {
            Kind::Static(def) => (def.output_schema)(),
            Kind::Runtime(def) => def.output_schema.as_ref(),
        }
    }

    /// The same definition: the same `static`, or clones of one run-time
    /// definition.
    pub(crate) fn same_as(&self, other: &ToolDef) -> bool {
        match (&self.0, &other.0) {
            (Kind::Static(a), Kind::Static(b)) => std::ptr::eq(*a, *b),
            (Kind::Runtime(a), Kind::Runtime(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    #[inline]
    pub(crate) fn invoke(
        &self,
        arguments: Arguments<'_>,
        site: &CallSite<'_>,
    ) -> Result<Started, CallError> {
        match &self.0 {
            Kind::Static(def) => (def.invoke)(arguments, site),
            Kind::Runtime(def) => def.invoke(arguments, site).map(Started::Future),
        }
    }
}

impl From<&ToolDef> for ToolDef {
    fn from(def: &ToolDef) -> Self {
        def.clone()
    }
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name())
            .field("origin", &self.origin())
            .field("params", &self.params())
            .finish_non_exhaustive()
    }
}

/// Where a tool is defined, for people reading an error or choosing tools
/// by module.
///
/// Its `Display` is the function's path (`my_app::tools::search`), or the
/// run-time tool's source (`a run-time tool` without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin<'a> {
    /// A `#[tool]` function.
    Function {
        /// The module the function is defined in (`my_app::tools`).
        module_path: &'static str,
        /// The function's own name, which the tool's name may differ from.
        function: &'static str,
    },
    /// A tool built at run time with [`ToolDef::builder`].
    Runtime {
        /// What the host said the tool comes from (an MCP server's name, a
        /// plugin's), if it said.
        source: Option<&'a str>,
    },
}

impl fmt::Display for Origin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Function {
                module_path,
                function,
            } => write!(f, "{module_path}::{function}"),
            Origin::Runtime {
                source: Some(source),
            } => f.write_str(source),
            Origin::Runtime { source: None } => f.write_str("a run-time tool"),
        }
    }
}

/// Implemented by the type `#[tool]` generates beside each function, which
/// shares the function's name: `<search as Tool>::definition()` is the
/// definition of `fn search`.
pub trait Tool {
    /// The tool's definition.
    fn definition() -> &'static ToolDef;
}

/// The definitions of the named tool functions, for a registry.
///
/// ```
/// use toolkit_core::{Registry, tool, tools};
///
/// /// Says hello.
/// #[tool]
/// fn hello() -> &'static str {
///     "hello"
/// }
///
/// /// Says goodbye.
/// #[tool]
/// fn goodbye() -> &'static str {
///     "goodbye"
/// }
///
/// let registry = Registry::builder().tools(tools![hello, goodbye]).build()?;
/// assert_eq!(registry.names().collect::<Vec<_>>(), ["hello", "goodbye"]);
/// # Ok::<(), toolkit_core::RegistryError>(())
/// ```
#[macro_export]
macro_rules! tools {
    ($($tool:path),* $(,)?) => {
        [$(<$tool as $crate::Tool>::definition()),*]
    };
}
