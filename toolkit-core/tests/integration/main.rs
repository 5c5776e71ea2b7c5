//! toolkit-core's integration tests, through its public API only, in one
//! binary: one link instead of one per file. `registry.rs` is a binary of
//! its own, because it reads the catalogue of every `#[tool]` linked in.
//!
//! Run one file's tests with `cargo test -p toolkit-core --test integration
//! snapshots::` (any module name below).

mod call_arguments;
mod call_host;
mod dispatch_agreement;
mod dispatch_builder;
mod earlier_names;
mod emit_dialects;
mod failure_paths;
#[cfg(unix)]
mod file_safety;
mod foreign_tools;
mod fuzz_bounded;
mod history;
mod images;
mod json_form;
mod result_fidelity;
mod results;
mod runtime_tools;
mod schema_agreement;
mod schema_rules;
mod snapshots;
mod tool_metadata;
mod traces;
