//! Procedural macros for [`toolkit-core`](https://docs.rs/toolkit-core).
//!
//! Users depend on `toolkit-core` alone; it re-exports everything defined here.
