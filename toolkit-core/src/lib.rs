//! Turn plain Rust functions into tools an LLM agent can call.
//!
//! One path runs through the crate, from a function to the messages a
//! provider accepts:
//!
//! 1. [`#[tool]`](tool) turns a function into a tool: its doc comment
//!    becomes the description, its parameters the schema.
//! 2. A [`Registry`] holds tools by name; [`Registry::tool_list`] writes
//!    their list in a [`Provider`]'s shape, from one canonical schema per
//!    tool lowered for that provider ([`schema`]).
//! 3. The model answers; [`Provider::read`] reads its calls from the
//!    response ([`response`]), and [`Registry::run_turn`] runs them: bad
//!    arguments, unknown tools, panics and timeouts become error results the
//!    model can act on, never a crash.
//! 4. [`emit`] writes the turn's [`ToolResult`]s as the exact messages the
//!    provider accepts (OpenAI Chat and Responses, Anthropic, Gemini, MCP).
//!
//! ```
//! use toolkit_core::emit::{self, EmitOptions};
//! use toolkit_core::{Provider, Registry, ToolCall, tool, tools};
//!
//! /// Search the document index.
//! #[tool]
//! fn search(
//!     /// The full-text query.
//!     query: String,
//!     /// At most this many hits.
//!     limit: Option<u8>,
//! ) -> String {
//!     format!("{} documents match {query:?}", limit.unwrap_or(3))
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = Registry::builder().tools(tools![search]).build()?;
//!
//! // 2. The tool list, as OpenAI's Chat Completions takes it.
//! let definitions = registry.tool_list(Provider::OpenAi)?;
//! assert_eq!(definitions.to_value()[0]["function"]["name"], "search");
//!
//! // 3. The calls the model made (read from its response by `Provider::read`).
//! let calls = [
//!     ToolCall::new("call_1", "search", r#"{"query": "rust"}"#.into()),
//!     ToolCall::new("call_2", "serch", "{}".into()),
//! ];
//! let turn = registry.dispatch_turn(&calls).await;
//!
//! // 4. The results, as the messages that answer those calls.
//! let messages = emit::openai_chat(&turn.results, &EmitOptions::default()).items;
//! assert_eq!(messages[0]["content"], r#"3 documents match "rust""#);
//! assert_eq!(
//!     messages[1]["content"],
//!     "Error: there is no tool named `serch`; did you mean `search`?"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! Around that path:
//!
//! - [`ToolResult`]: what a tool returns — ordered content [`Block`]s (text,
//!   [`Image`], JSON), an error, whether the task is [done](Completion), a
//!   long-term memory line, show-once content, attachments, a note for the
//!   model and attributes the model never sees. Anything a tool naturally
//!   returns converts into one through [`IntoToolResult`].
//! - [`History`]: what the model sees of earlier steps, with long outputs
//!   saved to files under an [`OutputBudget`].
//! - [`CallContext`] and [`Cancellation`]: what a tool can learn about the
//!   call it answers, and how a host stops it.
//! - [`telemetry`]: every call in an `execute_tool` span named as the
//!   OpenTelemetry GenAI conventions say, and the one switch that lets
//!   spans hold arguments and results.
//!
//! The guide (`docs/` in the repository) explains the model in prose; this
//! reference documents every item.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

// The code `#[tool]` generates names `::toolkit_core`, which must resolve
// inside this crate too (for its own ready tools and tests).
extern crate self as toolkit_core;

mod call;
mod hash;
mod history;
mod number;
mod provider;
mod registry;
mod result;
mod tool;

pub mod emit;
pub mod name;
pub mod response;
pub mod schema;
pub mod search;
pub mod telemetry;
pub mod text;

/// Ready tools that come with the crate.
pub mod builtin {
    pub use crate::history::read_output::{ReadOutputError, read_output};
}

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private_v1;

pub use call::ToolCall;
pub use call::arguments::Arguments;
pub use call::ask::{
    AskError, Asker, Asking, ElicitAction, ElicitRequest, Elicited, Root, RootsRequest,
    SampleRequest, Sampled,
};
pub use call::cancellation::Cancellation;
pub use call::context::CallContext;
pub use call::error::{CallError, CallOutcome};
pub use call::host::CallHost;
pub use call::log::{LogLevel, LogMessage, LogSink, UnknownLogLevel};
pub use call::progress::{Progress, ProgressSink};
pub use call::state::RunState;
pub use call::target::IntoCall;
pub use history::budget::{OutputBudget, Spilled};
pub use history::{History, HistoryError};
pub use provider::{Provider, UnknownProvider};
pub use registry::builder::{Problem, RegistryBuilder, RegistryError};
pub use registry::dispatch::{Dispatch, EachCall, TurnDispatch};
#[allow(deprecated)]
pub use registry::tool_list::{Definitions, DefinitionsError};
pub use registry::tool_list::{ToolList, ToolListError};
pub use registry::{Registry, ToolListChanges, TurnOutcome};
pub use result::audio::{Audio, AudioError};
pub use result::block::Block;
pub use result::call_result::ToolCallResult;
pub use result::convert::{IntoToolResult, Json};
pub use result::envelope::Envelope;
pub use result::image::{Image, ImageError, ImageSource};
pub use result::resource::{EmbeddedResource, EmbeddedResourceError, ResourceLink};

/// Renamed: the error says why an [`EmbeddedResource`] could not be built,
/// not why a resource could not be read.
#[deprecated(since = "0.2.0", note = "renamed to `EmbeddedResourceError`")]
pub type ResourceError = EmbeddedResourceError;
pub use result::{Completion, NotSingleText, ToolResult};
pub use schema::{LoweringError, SchemaError};
pub use tool::attribute::tool;
pub use tool::schema::{ToolSchema, ToolSchemaError};
pub use tool::validate::MAX_ARGUMENT_DEPTH;
pub use tool::{
    Annotations, Origin, OutputSchema, StateNeed, Tool, ToolBuilder, ToolDef, ToolFuture,
};

/// The guide's chapters on what this crate does (`docs/`): their examples
/// are compiled and run as doc tests, so they cannot drift from the API.
/// (The README's examples are `toolkit-agent`'s, which has every crate
/// they use.)
#[cfg(doctest)]
pub mod guide {
    /// The guide's table of contents and layout (`docs/README.md`).
    #[doc = include_str!("../../docs/README.md")]
    pub struct Contents;

    /// What a tool returns (`docs/results.md`).
    #[doc = include_str!("../../docs/results.md")]
    pub struct Results;

    /// Memory across steps (`docs/history.md`).
    #[doc = include_str!("../../docs/history.md")]
    pub struct History;

    /// Emitting results to each provider (`docs/emission.md`).
    #[doc = include_str!("../../docs/emission.md")]
    pub struct Emission;

    /// Tools, schemas and the registry (`docs/tools.md`).
    #[doc = include_str!("../../docs/tools.md")]
    pub struct Tools;
}
