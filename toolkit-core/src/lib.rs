//! Turn plain Rust functions into tools an LLM agent can call.
//!
//! This crate owns what a tool returns and how it reaches each provider:
//!
//! - [`ToolResult`]: ordered content [`Block`]s (text, [`Image`], JSON), an
//!   error, whether the task is [done](Completion), a long-term memory line,
//!   show-once content, attachments, a note for the model and attributes the
//!   model never sees. Anything a tool naturally returns converts into one
//!   through [`IntoToolResult`].
//! - [`History`]: what the model sees of earlier steps, with long outputs
//!   saved to files under an [`OutputBudget`].
//! - [`emit`]: one turn's results as the exact messages OpenAI (Chat and
//!   Responses), Anthropic, Gemini and MCP accept, and as plain
//!   [`Envelope`]s.
//!
//! ```
//! use toolkit_core::emit::{self, EmitOptions};
//! use toolkit_core::{IntoToolResult, ToolCallResult, ToolResult};
//!
//! fn search(query: &str) -> Result<String, std::io::Error> {
//!     Ok(format!("3 documents match {query:?}"))
//! }
//!
//! let turn = [
//!     ToolCallResult::new("call_1", "search", search("rust").into_tool_result()),
//!     ToolCallResult::new("call_2", "fetch", ToolResult::error("404 Not Found")),
//! ];
//! let messages = emit::openai_chat(&turn, &EmitOptions::default()).items;
//! assert_eq!(messages[1]["content"], "Error: 404 Not Found");
//! ```
//!
//! The guide (`docs/` in the repository) explains the model in prose; this
//! reference documents every item.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The code `#[tool]` generates names `::toolkit_core`, which must resolve
// inside this crate too (for its own ready tools and tests).
extern crate self as toolkit_core;

mod action_model;
mod block;
mod budget;
mod builder;
pub mod builtin;
mod call;
mod call_error;
mod context;
mod convert;
pub mod emit;
mod envelope;
mod history;
mod image;
mod lazy_text;
mod provider;
mod registry;
pub mod response;
mod result;
mod run;
#[doc(hidden)]
pub mod schema;
mod suggest;
mod tool;
mod tool_macro;
mod tool_schema;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use block::Block;
pub use budget::{OutputBudget, Spilled};
pub use builder::{Problem, RegistryBuilder, RegistryError};
pub use call::ToolCallResult;
pub use call_error::{CallError, CallOutcome};
pub use context::{CallContext, Cancellation};
pub use convert::{IntoToolResult, Json};
pub use envelope::Envelope;
pub use history::{History, HistoryError};
pub use image::{Image, ImageError, ImageSource};
pub use provider::{Definitions, DefinitionsError, Provider, UnknownProvider};
pub use registry::{Registry, ToolCall, TurnOutcome};
pub use result::{Completion, NotSingleText, ToolResult};
pub use schema::{LoweringError, SchemaError};
pub use tool::{Arguments, StateNeed, Tool, ToolDef, ToolFuture};
pub use tool_macro::tool;
pub use tool_schema::{ToolSchema, ToolSchemaError};

/// The README's example, compiled and run as a doc test.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeExample;

/// The message of a caught panic: the `&str` or `String` it was raised with.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let detail = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    format!("the tool panicked: {detail}")
}
