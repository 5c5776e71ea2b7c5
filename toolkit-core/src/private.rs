//! What the code `#[tool]` generates calls into. Not a public API: it may
//! change in any release.

use std::cell::Cell;
use std::error::Error;
use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::call::context::CallSite;
pub use crate::registry::catalogue::CatalogueEntry;
pub use crate::registry::drive::run_blocking;
pub use crate::tool::arguments::parse_arguments;
pub use crate::tool::fields::{FieldSchema, object_schema};
use crate::tool::schema::ToolSchema;
pub use crate::tool::{Annotations, OutputSchema, Started, StaticDef};
use crate::{CallContext, CallError, IntoToolResult, Json, ToolResult};

/// The schemas of a tool whose argument struct is `T`, its parameters in
/// declaration order.
pub fn schema_of<T: schemars::JsonSchema>(params: &[&str]) -> ToolSchema {
    ToolSchema::of::<T>(params)
}

/// The call's context, for a `#[tool(context)]` parameter of type `T`.
pub fn context<T: FromContext>(site: &CallSite<'_>) -> T {
    T::__from_context(site)
}

/// What a `#[tool(context)]` parameter can be: the [`CallContext`]. A
/// trait rather than a plain assignment, so that a parameter of another
/// type is reported on its type with the fix, not with rustc's guesses
/// (`Some(...)` around the type).
#[diagnostic::on_unimplemented(
    message = "a `#[tool(context)]` parameter must be a `CallContext`, not `{Self}`",
    label = "write `CallContext` here",
    note = "the context is `toolkit_core::CallContext`, taken by value; a value the host provides is a `#[tool(state)]` parameter"
)]
pub trait FromContext: Sized {
    fn __from_context(site: &CallSite<'_>) -> Self;
}

impl FromContext for CallContext {
    fn __from_context(site: &CallSite<'_>) -> Self {
        site.context()
    }
}

/// Reads a present `Option<Option<T>>` parameter as `Some`: `null` is
/// `Some(None)` ("clear"), and only an absent one is `None`.
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(deserializer).map(Some)
}

/// The host's value for a `#[tool(state)]` parameter.
pub fn state<T: Clone + Send + Sync + 'static>(
    site: &CallSite<'_>,
    type_name: &str,
) -> Result<T, CallError> {
    site.state::<T>().ok_or_else(|| CallError::MissingState {
        tool: site.tool_name().to_owned(),
        type_name: type_name.to_owned(),
    })
}

/// Runs the future of an async tool whose body never awaits (so it ends
/// at its first poll) to its output, here, with no waker to wake it: it
/// is not boxed to be polled later. Should it not end, which `#[tool]`
/// rules out by reading the body, the call fails rather than hangs.
pub fn run_ready<F: std::future::Future>(tool: &str, future: F) -> Result<F::Output, CallError> {
    let future = std::pin::pin!(future);
    match future.poll(&mut std::task::Context::from_waker(std::task::Waker::noop())) {
        std::task::Poll::Ready(output) => Ok(output),
        std::task::Poll::Pending => Err(CallError::Runtime {
            tool: tool.to_owned(),
            message: "the tool waited, though its body has no `.await`".to_owned(),
        }),
    }
}

/// The value in `cell`, made by `make` the first time. One instantiation
/// of `OnceLock`'s code for every tool's schemas, where a closure per tool
/// would make one each.
pub fn once<T: Send + Sync>(cell: &'static OnceLock<T>, make: fn() -> T) -> &'static T {
    cell.get_or_init(make)
}

/// Holds a tool's return value for the conversion below.
// Exhaustive on purpose: macro support, built only by `#[tool]`'s expansion.
pub struct Wrap<T>(Cell<Option<T>>);

impl<T> Wrap<T> {
    pub fn new(value: T) -> Self {
        Self(Cell::new(Some(value)))
    }

    fn take(&self) -> T {
        // Each conversion method below takes the value exactly once.
        self.0.take().expect("a return value is converted once")
    }
}

// Conversion by autoref specialisation: `(&&&Wrap::new(v)).__into_tool_result()`
// picks the first of these that applies, so a tool can return anything that
// converts into a result, a `Result` whose `Ok` side merely serializes, or any
// other `Serialize` value (as JSON).

/// Values that convert into a result.
pub trait ViaIntoToolResult {
    fn __into_tool_result(&self) -> ToolResult;
}

impl<T: IntoToolResult> ViaIntoToolResult for &&Wrap<T> {
    fn __into_tool_result(&self) -> ToolResult {
        self.take().into_tool_result()
    }
}

/// `Result<T, E>` whose `T` serializes.
pub trait ViaSerializeResult {
    fn __into_tool_result(&self) -> ToolResult;
}

impl<T, E> ViaSerializeResult for &Wrap<Result<T, E>>
where
    T: Serialize,
    E: Into<Box<dyn Error + Send + Sync + 'static>>,
{
    fn __into_tool_result(&self) -> ToolResult {
        match self.take() {
            Ok(value) => ToolResult::serialized(&value),
            Err(error) => ToolResult::from_boxed_error(error.into()),
        }
    }
}

/// Any value that serializes, as JSON.
pub trait ViaSerialize {
    fn __into_tool_result(&self) -> ToolResult;
}

impl<T: Serialize> ViaSerialize for Wrap<T> {
    fn __into_tool_result(&self) -> ToolResult {
        ToolResult::serialized(&self.take())
    }
}

/// A tool's return type, for choosing its output schema by autoref, as
/// the result conversion above does: `(&&&&&OutputOf::<R>::NEW).__output()`
/// (one `&` more than the first impl, whose method takes `&self`).
// Exhaustive on purpose: macro support, built only by `#[tool]`'s expansion.
pub struct OutputOf<T: ?Sized>(PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> OutputOf<T> {
    pub const NEW: Self = Self(PhantomData);
}

/// `Json<T>`, plain or in a `Result`: `T`'s schema.
pub trait OutputOfJson {
    fn __output(&self) -> Option<OutputSchema>;
}

impl<T: schemars::JsonSchema> OutputOfJson for &&&&OutputOf<Json<T>> {
    fn __output(&self) -> Option<OutputSchema> {
        OutputSchema::of::<T>()
    }
}

impl<T: schemars::JsonSchema, E> OutputOfJson for &&&&OutputOf<Result<Json<T>, E>> {
    fn __output(&self) -> Option<OutputSchema> {
        OutputSchema::of::<T>()
    }
}

/// Anything else that converts into a result (text, blocks, images): no
/// structured output.
pub trait OutputOfResult {
    fn __output(&self) -> Option<OutputSchema>;
}

impl<T: IntoToolResult> OutputOfResult for &&&OutputOf<T> {
    fn __output(&self) -> Option<OutputSchema> {
        None
    }
}

/// A `Result` whose `Ok` side serializes: that side's schema.
pub trait OutputOfSerializeResult {
    fn __output(&self) -> Option<OutputSchema>;
}

impl<T: Serialize + schemars::JsonSchema, E> OutputOfSerializeResult for &&OutputOf<Result<T, E>> {
    fn __output(&self) -> Option<OutputSchema> {
        OutputSchema::of::<T>()
    }
}

/// A value that serializes: its schema.
pub trait OutputOfSerialize {
    fn __output(&self) -> Option<OutputSchema>;
}

impl<T: Serialize + schemars::JsonSchema> OutputOfSerialize for &OutputOf<T> {
    fn __output(&self) -> Option<OutputSchema> {
        OutputSchema::of::<T>()
    }
}

/// Anything else: no output schema.
pub trait OutputOfAny {
    fn __output(&self) -> Option<OutputSchema>;
}

impl<T: ?Sized> OutputOfAny for OutputOf<T> {
    fn __output(&self) -> Option<OutputSchema> {
        None
    }
}

/// The error side of a tool's `Result<T, E>`, converted by autoref as the
/// value is: `(&&ErrorOf::new(error)).__error_result()` takes an error
/// that boxes into `dyn Error` (typed errors, anyhow's and eyre's,
/// messages) with its causes and its type, and any other `Display` type
/// as its message.
// Exhaustive on purpose: macro support, built only by `#[tool]`'s expansion.
pub struct ErrorOf<E>(Cell<Option<E>>);

impl<E> ErrorOf<E> {
    pub fn new(error: E) -> Self {
        Self(Cell::new(Some(error)))
    }

    fn take(&self) -> E {
        // Each conversion method below takes the error exactly once.
        self.0.take().expect("an error is converted once")
    }
}

/// An error that keeps its causes and type.
pub trait ViaBoxedError {
    fn __error_result(&self) -> ToolResult;
}

impl<E: Into<Box<dyn Error + Send + Sync + 'static>>> ViaBoxedError for &ErrorOf<E> {
    fn __error_result(&self) -> ToolResult {
        ToolResult::from_error(self.take())
    }
}

/// The last resort: any `Display` type, as its message. The bound sits on
/// the method, so that an error type without `Display` is reported with
/// the message of [`ToolError`] rather than as a missing method.
pub trait ViaDisplay<E> {
    fn __error_result(&self) -> ToolResult
    where
        E: ToolError;
}

impl<E> ViaDisplay<E> for ErrorOf<E> {
    fn __error_result(&self) -> ToolResult
    where
        E: ToolError,
    {
        // The alternate form carries a cause chain where the type keeps
        // one in its `Display`.
        ToolResult::error(format!("{:#}", self.take()))
    }
}

/// An error type a tool's `Result` can carry.
#[diagnostic::on_unimplemented(
    message = "the error type `{Self}` of a tool's `Result` must implement `Display`",
    label = "the model reads this error as text: implement `std::error::Error` (or at least `Display`) for it",
    note = "implement `std::error::Error` (for example with `thiserror`) to keep its causes and its type for the host, or return `Result<T, String>` and map the error with `.map_err(|e| e.to_string())`"
)]
pub trait ToolError: std::fmt::Display {}

impl<E: std::fmt::Display> ToolError for E {}

/// Asserts at compile time that a parameter type can be read from JSON and
/// described by a schema; the error lands on the parameter's type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "this type must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "derive both: `#[derive(serde::Deserialize, schemars::JsonSchema)]`, or mark the parameter `#[tool(state)]` if the host provides it"
)]
pub trait ToolParam {}

impl<T: DeserializeOwned + schemars::JsonSchema + Send + 'static> ToolParam for T {}

pub const fn assert_param<T: ToolParam>() {}
