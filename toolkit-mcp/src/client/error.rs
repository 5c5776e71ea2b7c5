//! What the client reports when a server cannot be reached, listed or
//! read.

use std::fmt;

#[cfg(feature = "auth")]
use super::address::EndpointRefused;
#[cfg(feature = "auth")]
use super::auth::Authorization;

/// An MCP server that could not be reached or listed.
#[derive(Debug, Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub struct ClientError {
    server: String,
    message: String,
    kind: ClientErrorKind,
    #[cfg(feature = "auth")]
    refused: Option<EndpointRefused>,
}

impl ClientError {
    pub(super) fn new(server: &str, message: impl Into<String>) -> Self {
        Self {
            server: server.to_owned(),
            message: message.into(),
            kind: ClientErrorKind::Other,
            #[cfg(feature = "auth")]
            refused: None,
        }
    }

    /// This error, of `kind`.
    pub(super) fn kind_of(mut self, kind: ClientErrorKind) -> Self {
        self.kind = kind;
        self
    }

    /// What kind of failure it is: a server that could not be reached
    /// is told apart from one that answered and could not be spoken to.
    pub fn kind(&self) -> ClientErrorKind {
        self.kind
    }

    /// This error, told as the refusal of an OAuth endpoint when the
    /// address check of `authorization` refused one and that is what it
    /// is about.
    #[cfg(feature = "auth")]
    pub(super) fn refused_by(mut self, authorization: &Authorization) -> Self {
        if let Some(refused) = authorization.take_refusal()
            // Only the failure it caused, which tells it.
            && self.message.contains(&refused.to_string())
        {
            // What rmcp's layers wrapped around it says less.
            self.message = format!("OAuth authorization failed: {refused}");
            self.refused = Some(refused);
        }
        self
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The OAuth endpoint the address check refused, when that is why the
    /// server could not be used (see [`OAuth`](crate::OAuth) and
    /// [`AddressPolicy`](crate::AddressPolicy)).
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub fn endpoint_refused(&self) -> Option<&EndpointRefused> {
        self.refused.as_ref()
    }
}

/// What kind of failure a [`ClientError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub enum ClientErrorKind {
    /// The server could not be started or reached, or stopped answering:
    /// its process could not start or exited, its connection failed or
    /// broke, an HTTP status said it is unwell (`5xx`, `429`), or no
    /// answer came in time. Nothing was learned of the server, and the
    /// revision it speaks is not guessed from it. (An HTTP request refused
    /// for want of authorization, which the transport reports as its own
    /// failure, is of this kind too.)
    Unreachable,
    /// The server answered the opening handshake but cannot be spoken
    /// to: no revision both sides speak, or it refused both
    /// `server/discover` and `initialize`.
    Incompatible,
    /// Any other failure: a request the server refused, an answer that
    /// could not be read, a lock file of pinned tools that could not be
    /// read or written.
    Other,
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP server `{}`: {}", self.server, self.message)
    }
}

impl std::error::Error for ClientError {}
