//! Where sessions are kept between steps, turns and processes.

mod file;

use std::fmt;
use std::io;

use futures_util::future::BoxFuture;

pub use self::file::{FileStore, STALE_TEMPORARY_AGE, STORE_FORMAT};
use crate::session::{Session, SessionChanges, SessionError};

/// Where an agent keeps its sessions: saved at every step boundary, and
/// before and after every call with side effects, so that a process that
/// dies loses nothing recorded and a new one resumes where it stopped.
///
/// [`FileStore`] is built in; a database, a key-value store or a queue's
/// state implements the two methods. A save must be atomic and durable
/// before it returns: a later load sees this session whole, or the one
/// before it whole, never a mix.
///
/// The agent saves through [`save_changes`](Self::save_changes), which
/// a store that keeps a journal implements to append what each step
/// added (as [`FileStore`] does) rather than write the whole session each
/// time; by default it is [`save`](Self::save).
pub trait SessionStore: Send + Sync {
    /// Saves `session` under its [id](Session::id), replacing the one
    /// there.
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Saves what changed in a session since it was last saved, as
    /// atomically and durably as [`save`](Self::save): a later load sees
    /// the session with these changes, or as it was before them, never a
    /// mix.
    ///
    /// A store may append [`changes.to_json()`](SessionChanges::to_json)
    /// when [`changes.base()`](SessionChanges::base) is the mark of what
    /// it holds for this session, and must store the whole
    /// [`changes.session()`](SessionChanges::session) otherwise (no base,
    /// or another). By default, the whole session is saved.
    fn save_changes<'a>(
        &'a self,
        changes: &'a SessionChanges<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.save(changes.session())
    }

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
    /// The session was stored in a store format later than this version
    /// reads ([`STORE_FORMAT`]): a newer version wrote it, and this one
    /// leaves it as it is.
    Format {
        /// Where it is stored.
        what: String,
        /// The format it was stored in.
        found: u32,
    },
    /// A store of the host's failed.
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { what, .. } => write!(f, "{what} failed"),
            Self::Session(_) => f.write_str("the stored session cannot be used"),
            Self::Format { what, found } => write!(
                f,
                "{what} was written in store format {found}; this version reads format {STORE_FORMAT} and earlier"
            ),
            Self::Other(_) => f.write_str("the host's session store failed"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Session(error) => Some(error),
            Self::Format { .. } => None,
            Self::Other(error) => Some(&**error),
        }
    }
}
