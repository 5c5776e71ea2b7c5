//! What can go wrong with the Postgres store, as one type a host can find
//! in any error chain.

use std::fmt;
use std::time::Duration;

/// Why the Postgres store could not do what it was asked.
///
/// A [`SessionStore`](toolkit_agent::SessionStore) call returns it in
/// [`StoreError::Other`](toolkit_agent::StoreError::Other); a run stopped
/// by it carries it in its error chain: [`PgError::find`] gets it back.
///
/// Nothing already recorded is lost by any of these: a save either
/// committed whole or not at all, and every save writes the whole session,
/// so the next one that succeeds leaves the store complete.
#[derive(Debug)]
#[non_exhaustive]
pub enum PgError {
    /// The connection string is not one the driver understands.
    Config(tokio_postgres::Error),
    /// The database could not be reached, or the connection was lost (the
    /// server stopped or restarted). The next call connects again.
    Unreachable(tokio_postgres::Error),
    /// The database did not answer in time; the connection is dropped and
    /// the next call connects again.
    Timeout(Duration),
    /// The database refused a statement.
    Database(tokio_postgres::Error),
    /// The session's lease is no longer this worker's: it expired and
    /// another worker took the session over (or a write without a lease
    /// fenced it). Nothing was written; the worker must stop driving the
    /// session.
    LeaseLost {
        /// The session.
        session: String,
        /// The fencing token the refused write carried.
        token: i64,
    },
    /// A write without a lease, while another worker holds the session's
    /// lease. Nothing was written.
    Leased {
        /// The session.
        session: String,
    },
    /// The database's tables were made by a newer version of this crate.
    Schema {
        /// The version found.
        found: i32,
        /// The newest version this crate reads.
        supported: i32,
    },
    /// The session was stored in a form this version cannot read (a newer
    /// snapshot format, or journal records it does not know).
    Format {
        /// The session.
        session: String,
        /// What was found.
        found: String,
    },
}

impl PgError {
    /// The `PgError` in `error` or in its chain of sources (a
    /// [`RunError`](toolkit_agent::RunError), a
    /// [`StoreError`](toolkit_agent::StoreError)).
    pub fn find<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a PgError> {
        let mut current = Some(error);
        while let Some(error) = current {
            if let Some(found) = error.downcast_ref::<PgError>() {
                return Some(found);
            }
            current = error.source();
        }
        None
    }

    /// Whether the session's lease was lost: the worker must stop driving
    /// it (another worker has it).
    pub fn is_lease_lost(&self) -> bool {
        matches!(self, Self::LeaseLost { .. })
    }

    /// Whether the database could not be reached or did not answer: the
    /// call may be made again later, on a new connection.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unreachable(_) | Self::Timeout(_))
    }

    /// A driver error, sorted: a lost connection or one that could not be
    /// made is [`Unreachable`](Self::Unreachable), a statement refused by
    /// a running server is [`Database`](Self::Database).
    pub(crate) fn driver(error: tokio_postgres::Error) -> Self {
        // A server shutting down (57P01 admin shutdown, 57P02, 57P03 cannot
        // connect now) answers with a code before it closes the socket.
        let shutting_down = error
            .code()
            .is_some_and(|code| code.code().starts_with("57P"));
        if error.is_closed() || error.code().is_none() || shutting_down {
            Self::Unreachable(error)
        } else {
            Self::Database(error)
        }
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Config(_) => f.write_str("the Postgres connection string is not valid"),
            Self::Unreachable(_) => f.write_str("Postgres could not be reached"),
            Self::Timeout(after) => write!(f, "Postgres did not answer within {after:?}"),
            Self::Database(_) => f.write_str("Postgres refused a statement"),
            Self::LeaseLost { session, token } => write!(
                f,
                "the lease on session `{session}` (token {token}) was lost: another worker has it; nothing was written"
            ),
            Self::Leased { session } => write!(
                f,
                "session `{session}` is leased by another worker; a write without its lease was refused"
            ),
            Self::Schema { found, supported } => write!(
                f,
                "the session tables are of schema version {found}; this version reads up to {supported}: upgrade toolkit-postgres"
            ),
            Self::Format { session, found } => write!(
                f,
                "session `{session}` was stored in a form this version cannot read ({found}): upgrade toolkit-postgres"
            ),
        }
    }
}

impl std::error::Error for PgError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Config(error) | Self::Unreachable(error) | Self::Database(error) => Some(error),
            _ => None,
        }
    }
}

impl From<PgError> for toolkit_agent::StoreError {
    fn from(error: PgError) -> Self {
        toolkit_agent::StoreError::Other(Box::new(error))
    }
}
