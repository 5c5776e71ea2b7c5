//! Where sessions are kept between steps, turns and processes.

mod file;

use std::fmt;
use std::io;

use futures_util::future::BoxFuture;

pub use self::file::{FileStore, STALE_TEMPORARY_AGE};
use crate::session::{Session, SessionError};

/// Where an agent keeps its sessions: saved at every step boundary, and
/// before and after every call with side effects, so that a process that
/// dies loses nothing recorded and a new one resumes where it stopped.
///
/// [`FileStore`] is built in; a database, a key-value store or a queue's
/// state implements the two methods. A save must be atomic and durable
/// before it returns: a later load sees this session whole, or the one
/// before it whole, never a mix.
pub trait SessionStore: Send + Sync {
    /// Saves `session` under its [id](Session::id), replacing the one
    /// there.
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The session saved under `id`, if there is one.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>>;
}

/// Why a store could not save or load a session. Each variant says what
/// failed and returns the cause from
/// [`source`](std::error::Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// Reading or writing failed.
    Io {
        /// What was being done, and where.
        what: String,
        /// The error.
        source: io::Error,
    },
    /// What was stored is not a session this version can use.
    Session(SessionError),
    /// A store of the host's failed.
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { what, .. } => write!(f, "{what} failed"),
            Self::Session(_) => f.write_str("the stored session cannot be used"),
            Self::Other(_) => f.write_str("the host's session store failed"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Session(error) => Some(error),
            Self::Other(error) => Some(&**error),
        }
    }
}
