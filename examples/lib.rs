//! Runnable examples: `cargo run -p toolkit-examples --example NAME`.
