//! Who a message is from, in prompts both served and received.

/// Who a prompt's message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(any(feature = "client", feature = "server"))))]
// Exhaustive on purpose: MCP has no role besides the user and the assistant.
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}
