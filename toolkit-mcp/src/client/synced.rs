//! What bringing a registry in line with a server's tool list did.

use toolkit_core::RegistryError;

use super::pins::Held;

/// What one sync of a registry with the server's tool list did: the one
/// [`attach`](super::McpClient::attach) makes, or one after a list change
/// the client [follows](super::McpClient::watch).
///
/// [`McpClient::synced`](super::McpClient::synced) holds the latest. A
/// refused tool is offered again at every later sync, and a held one
/// vetted again, so `refused` and `held` together name every tool of the
/// server the registry does not hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub struct Synced {
    /// The names of the tools added, in the server's order.
    pub added: Vec<String>,
    /// The names of the tools removed, sorted: gone from the server's list,
    /// or changed there (a changed tool is removed, then added again).
    pub removed: Vec<String>,
    /// The tools the registry refused, left out of it.
    pub refused: Vec<Refused>,
    /// The tools held back because they are not the ones pinned (see
    /// [`McpClientBuilder::pinned`](super::McpClientBuilder::pinned)), in
    /// the server's order: new, or changed since they were pinned. Never
    /// offered to the registry until [pinned](super::McpClient::pin) again.
    pub held: Vec<Held>,
}

/// A server's tool the registry refused: its name is taken, or its schema
/// is one a provider the registry requires cannot take.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub struct Refused {
    /// The name it was offered under (`{prefix}_{name}`, portable).
    pub name: String,
    /// Its name at the server.
    pub original: String,
    /// Why the registry refused it.
    pub error: RegistryError,
}
