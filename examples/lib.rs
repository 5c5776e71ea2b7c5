//! The examples' library: the example registry (`toolkit-example-tools`,
//! re-exported here) and, with the `otlp` feature, the export of the
//! examples' `--otlp URL` flag.
//!
//! Run the examples with `cargo run -p toolkit-examples --example NAME`:
//! `quickstart`, `inspect -- --provider P`, `replay -- --provider P`.

#[cfg(feature = "otlp")]
pub mod otlp;

pub use toolkit_example_tools::*;
