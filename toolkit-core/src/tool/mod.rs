//! A tool's static definition, as `#[tool]` generates it.

pub(crate) mod arguments;
pub(crate) mod attribute;
pub(crate) mod schema;

use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use crate::registry::context::CallSite;
use crate::tool::schema::ToolSchema;
use crate::{Arguments, CallError, ToolResult};

/// The future of a running tool: its result, or why it could not finish
/// (a sync tool that panicked on its thread, no runtime to run it on).
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolResult, CallError>> + Send + 'static>>;

/// Parses a call's arguments and starts the tool.
pub(crate) type Invoke = fn(Arguments<'_>, &CallSite<'_>) -> Result<ToolFuture, CallError>;

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

/// Everything about a tool that is known at compile time: its name,
/// description, schema and entry point.
///
/// `#[tool]` generates one per function, as a `static`; a registry holds
/// references to them. Name one with [`tools!`](crate::tools) or
/// [`Tool::definition`].
pub struct ToolDef {
    name: &'static str,
    description: &'static str,
    module_path: &'static str,
    params: &'static [&'static str],
    states: &'static [StateNeed],
    schema: fn() -> &'static ToolSchema,
    invoke: Invoke,
}

impl ToolDef {
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    pub const fn __new(
        name: &'static str,
        description: &'static str,
        module_path: &'static str,
        params: &'static [&'static str],
        states: &'static [StateNeed],
        schema: fn() -> &'static ToolSchema,
        invoke: fn(Arguments<'_>, &CallSite<'_>) -> Result<ToolFuture, CallError>,
    ) -> Self {
        Self {
            name,
            description,
            module_path,
            params,
            states,
            schema,
            invoke,
        }
    }

    /// The name the model calls the tool by.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// What the tool does, for the model: the doc comment up to its first
    /// heading, or the `description` option.
    pub fn description(&self) -> &'static str {
        self.description
    }

    /// The module the tool's function is defined in, such as `my_app::tools`.
    pub fn module_path(&self) -> &'static str {
        self.module_path
    }

    /// The names of the parameters the model fills in, in declaration order.
    pub fn params(&self) -> &'static [&'static str] {
        self.params
    }

    /// The host values the tool's `#[tool(state)]` parameters need.
    pub fn states(&self) -> &'static [StateNeed] {
        self.states
    }

    /// The tool's parameter schemas, built on first use and then shared by
    /// every registry in the process.
    pub fn schema(&self) -> &'static ToolSchema {
        (self.schema)()
    }

    pub(crate) fn invoke(
        &self,
        arguments: Arguments<'_>,
        site: &CallSite<'_>,
    ) -> Result<ToolFuture, CallError> {
        (self.invoke)(arguments, site)
    }
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .field("module_path", &self.module_path)
            .field("params", &self.params)
            .finish_non_exhaustive()
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
