//! What [`Registry::dispatch`](crate::Registry::dispatch) runs: a call the
//! model made, or a tool's name and arguments given by the host.

use super::arguments::Arguments;
use crate::ToolCall;

/// What [`Registry::dispatch`](crate::Registry::dispatch) takes: a
/// [`ToolCall`] the model made (`&call`), or a tool's name and its
/// arguments as a pair (`("add", r#"{"a": 2}"#)`), for a host that calls a
/// tool itself, the way [`std::net::ToSocketAddrs`] takes an address or a
/// `(host, port)` pair.
///
/// The arguments of a pair are anything that is [`Into<Arguments>`]: JSON
/// text (`&str`, `&String`) or a parsed `&Value`. A host's call has no id.
///
/// Implemented for those two shapes only; the trait is sealed.
///
/// ```
/// use serde_json::json;
/// use toolkit_core::{Registry, ToolCall, tool, tools};
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
///
/// // A call the model made.
/// let call = ToolCall::from_text("call_1", "add", r#"{"a": 2, "b": 3}"#);
/// assert_eq!(registry.dispatch(&call).await.result.to_text(), "5");
///
/// // The host calling the tool by name, with text or a value.
/// assert_eq!(registry.dispatch(("add", r#"{"a": 1, "b": 1}"#)).await.result.to_text(), "2");
/// let arguments = json!({"a": 4, "b": 4});
/// assert_eq!(registry.dispatch(("add", &arguments)).await.result.to_text(), "8");
/// # Ok::<(), toolkit_core::RegistryError>(())
/// # }).unwrap();
/// ```
pub trait IntoCall<'a>: sealed::Sealed {
    /// The call's id (empty for a host's call), the tool's name and the
    /// arguments.
    #[doc(hidden)]
    fn into_call(self) -> (&'a str, &'a str, Arguments<'a>);
}

mod sealed {
    pub trait Sealed {}
}

impl sealed::Sealed for &ToolCall {}

impl<'a> IntoCall<'a> for &'a ToolCall {
    fn into_call(self) -> (&'a str, &'a str, Arguments<'a>) {
        (&self.id, &self.name, self.dispatch_arguments())
    }
}

impl<'a, A: Into<Arguments<'a>>> sealed::Sealed for (&'a str, A) {}

impl<'a, A: Into<Arguments<'a>>> IntoCall<'a> for (&'a str, A) {
    fn into_call(self) -> (&'a str, &'a str, Arguments<'a>) {
        ("", self.0, self.1.into())
    }
}

impl<'a, A: Into<Arguments<'a>>> sealed::Sealed for (&'a String, A) {}

impl<'a, A: Into<Arguments<'a>>> IntoCall<'a> for (&'a String, A) {
    fn into_call(self) -> (&'a str, &'a str, Arguments<'a>) {
        ("", self.0, self.1.into())
    }
}
