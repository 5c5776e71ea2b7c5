//! What the agent's test binaries share: the model's replies as the test
//! HTTP server plays them, small tools, the forms of typed answers.

// Each binary uses its own part of it.
#![allow(dead_code)]

pub mod answers;
pub mod chat;
pub mod tools;
