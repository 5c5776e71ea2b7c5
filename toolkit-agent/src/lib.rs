//! The round trip for toolkit tools: a model endpoint answers a request
//! with an assistant turn ([`toolkit_core::response::Turn`]); the registry
//! runs its calls; their results go back in the next request.
//!
//! This crate holds what needs a network or a runtime: the [`Model`] trait
//! and its HTTP implementation, [`HttpModel`], for OpenAI Chat Completions
//! (and every compatible server), OpenAI Responses, Anthropic Messages and
//! Gemini.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod agent;
mod conversation;
mod http;
mod model;
mod retry;
mod sse;

pub use agent::{Agent, Approval, Decision, Event, Events, Limits, Outcome, StopReason};
pub use conversation::{Conversation, ToolChoice};
pub use http::{HttpModel, HttpModelBuilder};
pub use model::{Model, ModelError, ModelFuture, OnProgress};
pub use retry::RetryPolicy;
pub use toolkit_core::response::{Dialect, Turn};
