//! Re-exports `toolkit_core` as `facade::agents`, the way a framework
//! built on it would, so that its users need no dependency of their own.

pub use toolkit_core as agents;
