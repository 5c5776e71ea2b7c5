//! The round trip for toolkit tools: a model endpoint answers a request
//! with an assistant turn ([`toolkit_core::response::Turn`]); the registry
//! runs its calls; their results go back in the next request.
//!
//! This crate holds what needs a network or a runtime: the [`Model`] trait
//! and its HTTP implementation, [`HttpModel`], for OpenAI Chat Completions
//! (and every compatible server), OpenAI Responses, Anthropic Messages and
//! Gemini; [`Conversation`], the transcript in each provider; [`Agent`], the
//! loop; [`Session`], a conversation with the agent that continues, pauses
//! for decisions and resumes; and [`SessionStore`] ([`FileStore`] built in),
//! where sessions are saved so that no call runs twice after a crash.
//! Runs and requests are traced ([`telemetry`]) in the OpenTelemetry GenAI
//! conventions' names.
//!
//! (The README shows this example; a test keeps the two the same.)
//!
//! ```no_run
//! use toolkit_agent::{Agent, HttpModel, Limits, Session};
//! use toolkit_core::{Registry, tool, tools};
//!
//! /// Count the words of a text.
//! #[tool]
//! fn word_count(
//!     /// The text.
//!     text: String,
//! ) -> usize {
//!     text.split_whitespace().count()
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let registry = Registry::builder().tools(tools![word_count]).build()?;
//!     // Any OpenAI-compatible server; `HttpModel::anthropic`, `::gemini` and
//!     // `::openai_responses` speak the other providers.
//!     let model = HttpModel::openai_chat("gemma")
//!         .base_url("http://127.0.0.1:8080/v1")
//!         .no_key()
//!         .build()?;
//!     let agent = Agent::builder(model, registry)
//!         .instructions("Use the tools.")
//!         .limits(Limits::default().max_steps(5))
//!         .build()?;
//!     // A failed endpoint, or tools the provider refuses, is an error.
//!     let outcome = agent.run("How many words in 'a b c'?").await?;
//!     println!("{:?} after {} steps ({})", outcome.answer, outcome.steps, outcome.stop);
//!
//!     // A conversation goes on over many messages, and saves as JSON.
//!     let mut chat = agent.session();
//!     agent.send(&mut chat, "Count the words of 'to be or not to be'.").await?;
//!     let saved = chat.to_json()?;
//!     let mut chat = Session::from_json(&saved)?;
//!     let outcome = agent.send(&mut chat, "And of 'let it be'?").await?;
//!     println!("{:?}", outcome.answer);
//!     Ok(())
//! }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod agent;
mod answer;
mod conversation;
mod delta;
mod event;
mod http;
mod model;
mod observation;
mod providers;
mod retry;
mod search;
mod session;
mod settings;
mod sse;
mod store;
pub mod telemetry;
mod tool_choice;

pub use agent::{
    Agent, AgentBuilder, AnswerMode, BuildError, Limits, Outcome, Run, RunError, SessionStateError,
    StopReason, ToolLimits, Typed, TypedRun,
};
pub use answer::{AnswerError, AnswerProblem, AnswerSchema, FINAL_ANSWER_TOOL};
pub use conversation::{Conversation, Pushed, ToolChoice};
pub use event::{Event, Events};
pub use http::{HttpModel, HttpModelBuilder};
pub use model::{Model, ModelError, ModelFuture, OnProgress, TimeoutLimit};
pub use observation::Observation;
pub use retry::RetryPolicy;
pub use search::{DEFAULT_MAX_RESULTS, NativeSearch, TOOL_SEARCH_TOOL, ToolSearch};
pub use session::{
    CallStatus, DecideError, Decision, PendingCall, SESSION_VERSION, Session, SessionChanges,
    SessionError,
};
pub use settings::{ANTHROPIC_DEFAULT_MAX_TOKENS, ReasoningEffort, Settings};
pub use store::{FileStore, STALE_TEMPORARY_AGE, STORE_FORMAT, SessionStore, StoreError};
pub use toolkit_core::Provider;
pub use toolkit_core::response::Turn;

/// The guide's chapter on the round trip (`docs/round-trip.md`): its
/// examples are compiled and run as doc tests, so they cannot drift from
/// the API.
#[cfg(doctest)]
#[doc = include_str!("../../docs/round-trip.md")]
pub struct RoundTripGuide;

/// The guide's page on what the store writes (`docs/durable.md`): its
/// host's store is compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../../docs/durable.md")]
pub struct DurableGuide;

/// The guide's chapter on tool search (`docs/tool-search.md`), compiled
/// and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/tool-search.md")]
pub struct ToolSearchGuide;

/// The guide's chapter on traces (`docs/observability.md`), compiled here,
/// where both crates whose spans it shows are dependencies.
#[cfg(doctest)]
#[doc = include_str!("../../docs/observability.md")]
pub struct ObservabilityGuide;

/// The README's examples, compiled as doc tests here, where every crate
/// they use is a dependency.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct Readme;
