//! The store: one connection per store, made again after it is lost, and
//! the sessions' saves and loads over it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Socket};
use toolkit_agent::{CallStatus, Session, SessionStore, StoreError};

use crate::error::PgError;
use crate::held::LeaseState;
use crate::schema::{self, SNAPSHOT_FORMAT, Statements};

/// How long a call waits for the database, unless the host says
/// otherwise ([`PgStore::with_timeout`]).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

type Connector =
    dyn Fn() -> BoxFuture<'static, Result<Client, tokio_postgres::Error>> + Send + Sync;

/// A live connection and the statements prepared on it.
pub(crate) struct Connection {
    pub(crate) client: Client,
    pub(crate) statements: Statements,
}

struct Inner {
    connect: Box<Connector>,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    /// The leases this store's worker holds, by session: its saves of
    /// those sessions carry their tokens.
    leases: Mutex<HashMap<String, Arc<LeaseState>>>,
    timeout: Duration,
}

/// Sessions in Postgres: a row per session with its latest snapshot, a
/// [lease](crate::Lease) per session for hosts with several workers, and
/// what a host queries (state, pending approvals) kept up to date on every
/// save.
///
/// Cheap to clone: clones share one connection and one set of leases (a
/// worker's). The connection is made again on the call after one is lost.
/// The tables are made, or migrated, on each new connection.
///
/// See `docs/postgres.md` for the tables, the lease and what a host must
/// still do.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("timeout", &self.inner.timeout)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// A store on the database `config` names (`host=... user=...` or a
    /// `postgresql://` URL), without TLS: connects, and makes the tables
    /// if they are missing.
    pub async fn connect(config: &str) -> Result<Self, PgError> {
        let config: Config = config.parse().map_err(PgError::Config)?;
        Self::connect_with(config, NoTls).await
    }

    /// A store on the database `config` names, with the host's TLS
    /// connector (for example `tokio-postgres-rustls` on the *ring*
    /// provider; `docs/postgres.md`, "TLS").
    pub async fn connect_with<T>(mut config: Config, tls: T) -> Result<Self, PgError>
    where
        T: MakeTlsConnect<Socket> + Clone + Send + Sync + 'static,
        T::Stream: Send + 'static,
        T::TlsConnect: Send,
        <T::TlsConnect as TlsConnect<Socket>>::Future: Send,
    {
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_TIMEOUT);
        }
        let config = Arc::new(config);
        let connect = Box::new(move || {
            let config = Arc::clone(&config);
            let tls = tls.clone();
            Box::pin(async move {
                let (client, connection) = config.connect(tls).await?;
                // The connection's own task: it ends when the socket closes,
                // and the client then reports itself closed.
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                Ok(client)
            }) as BoxFuture<'static, _>
        });
        let store = Self {
            inner: Arc::new(Inner {
                connect,
                connection: tokio::sync::Mutex::new(None),
                leases: Mutex::new(HashMap::new()),
                timeout: DEFAULT_TIMEOUT,
            }),
        };
        store.connection().await?;
        Ok(store)
    }

    /// The same store, waiting at most `timeout` for each call to the
    /// database ([`DEFAULT_TIMEOUT`] otherwise). Call before cloning.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.timeout = timeout;
        }
        self
    }

    /// The live connection, made (and the tables migrated) if there is
    /// none or it was lost.
    pub(crate) async fn connection(&self) -> Result<Arc<Connection>, PgError> {
        let mut slot = self.inner.connection.lock().await;
        if let Some(connection) = &*slot
            && !connection.client.is_closed()
        {
            return Ok(Arc::clone(connection));
        }
        *slot = None;
        let made = async {
            let mut client = (self.inner.connect)().await.map_err(PgError::Unreachable)?;
            schema::migrate(&mut client).await?;
            let statements = Statements::prepare(&client).await?;
            Ok::<_, PgError>(Connection { client, statements })
        };
        let connection = Arc::new(self.timed(made).await?);
        *slot = Some(Arc::clone(&connection));
        Ok(connection)
    }

    /// Runs `work` against the timeout.
    pub(crate) async fn timed<T>(
        &self,
        work: impl Future<Output = Result<T, PgError>>,
    ) -> Result<T, PgError> {
        tokio::time::timeout(self.inner.timeout, work)
            .await
            .unwrap_or(Err(PgError::Timeout(self.inner.timeout)))
    }

    /// Runs one prepared statement; a connection that failed under it is
    /// dropped, so that the next call makes a new one.
    pub(crate) async fn execute(
        &self,
        pick: impl FnOnce(&Statements) -> &tokio_postgres::Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, PgError> {
        let connection = self.connection().await?;
        let statement = pick(&connection.statements);
        self.on(&connection, connection.client.execute(statement, params))
            .await
    }

    /// The row, if any, of one prepared statement; as [`execute`](Self::execute).
    pub(crate) async fn query_opt(
        &self,
        pick: impl FnOnce(&Statements) -> &tokio_postgres::Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<tokio_postgres::Row>, PgError> {
        let connection = self.connection().await?;
        let statement = pick(&connection.statements);
        self.on(&connection, connection.client.query_opt(statement, params))
            .await
    }

    /// Waits for `work` on `connection`, against the timeout; drops the
    /// connection if it failed under it.
    async fn on<T>(
        &self,
        connection: &Arc<Connection>,
        work: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, PgError> {
        let result = self
            .timed(async { work.await.map_err(PgError::driver) })
            .await;
        if let Err(error) = &result {
            self.forget_if_broken(connection, error).await;
        }
        result
    }

    async fn forget_if_broken(&self, connection: &Arc<Connection>, error: &PgError) {
        if error.is_unavailable() || connection.client.is_closed() {
            let mut slot = self.inner.connection.lock().await;
            if slot
                .as_ref()
                .is_some_and(|kept| Arc::ptr_eq(kept, connection))
            {
                *slot = None;
            }
        }
    }

    /// Rows of a query (not prepared: the queries are the host's, now and
    /// then, not the run's).
    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>, PgError> {
        let connection = self.connection().await?;
        self.on(&connection, connection.client.query(sql, params))
            .await
    }

    pub(crate) fn leases(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LeaseState>>> {
        self.inner
            .leases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    async fn save_session(&self, session: &Session) -> Result<(), StoreError> {
        let id = session.id();
        let json = session.to_json().map_err(StoreError::Session)?;
        let projection = Projection::of(session);
        // jsonb holds no NUL character: the projection (not the snapshot,
        // which is text) has it replaced.
        let pending = projection.pending.to_string().replace("\\u0000", "\\ufffd");
        let state = projection.state.as_str();
        let count = projection.count;
        let lease = self.leases().get(id).cloned();
        match lease {
            Some(lease) => {
                let token = lease.token;
                let written = self
                    .execute(
                        |s| &s.save_leased,
                        &[
                            &id,
                            &token,
                            &SNAPSHOT_FORMAT,
                            &json,
                            &state,
                            &pending,
                            &count,
                        ],
                    )
                    .await?;
                if written == 0 {
                    lease.mark_lost();
                    return Err(PgError::LeaseLost {
                        session: id.to_owned(),
                        token,
                    }
                    .into());
                }
            }
            None => {
                let written = self
                    .execute(
                        |s| &s.save_free,
                        &[&id, &SNAPSHOT_FORMAT, &json, &state, &pending, &count],
                    )
                    .await?;
                if written == 0 {
                    return Err(PgError::Leased {
                        session: id.to_owned(),
                    }
                    .into());
                }
            }
        }
        Ok(())
    }

    async fn load_session(&self, id: &str) -> Result<Option<Session>, StoreError> {
        let Some(row) = self.query_opt(|s| &s.load, &[&id]).await? else {
            return Ok(None);
        };
        let format: i32 = row.get(0);
        let snapshot: Option<String> = row.get(1);
        let records: i64 = row.get(2);
        if format > SNAPSHOT_FORMAT {
            return Err(PgError::Format {
                session: id.to_owned(),
                found: format!("snapshot format {format}, this version reads {SNAPSHOT_FORMAT}"),
            }
            .into());
        }
        if records > 0 {
            return Err(PgError::Format {
                session: id.to_owned(),
                found: format!("{records} journal records after its snapshot"),
            }
            .into());
        }
        // A row made by a lease, before the session's first save.
        let Some(snapshot) = snapshot else {
            return Ok(None);
        };
        let session = Session::from_json(&snapshot).map_err(StoreError::Session)?;
        if session.id() != id {
            return Err(StoreError::Session(
                toolkit_agent::SessionError::Misplaced {
                    wanted: id.to_owned(),
                    found: session.id().to_owned(),
                },
            ));
        }
        Ok(Some(session))
    }

    /// The sessions in `state`, most recently saved first, at most
    /// `limit`.
    pub async fn sessions(
        &self,
        state: SessionState,
        limit: u32,
    ) -> Result<Vec<SessionSummary>, PgError> {
        let rows = self
            .query(
                "SELECT id, pending_count, lease_owner,
                    lease_expires IS NOT NULL AND lease_expires > now(),
                    (extract(epoch FROM updated_at) * 1000)::bigint
                 FROM toolkit_sessions WHERE state = $1
                 ORDER BY updated_at DESC LIMIT $2",
                &[&state.as_str(), &i64::from(limit)],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|row| SessionSummary {
                id: row.get(0),
                state,
                pending: usize::try_from(row.get::<_, i32>(1)).unwrap_or(0),
                leased_by: row
                    .get::<_, bool>(3)
                    .then(|| row.get::<_, Option<String>>(2))
                    .flatten(),
                updated_at_ms: row.get(4),
            })
            .collect())
    }

    /// The calls that wait for a person's decision, over every session,
    /// oldest first, at most `limit`.
    pub async fn awaiting_decision(&self, limit: u32) -> Result<Vec<AwaitingCall>, PgError> {
        let rows = self
            .query(
                "SELECT s.id, p->>'call_id', p->>'tool', (p->'arguments')::text,
                    (p->>'may_have_run')::boolean
                 FROM toolkit_sessions s, jsonb_array_elements(s.pending) p
                 WHERE s.pending_count > 0
                 ORDER BY s.updated_at, s.id LIMIT $1",
                &[&i64::from(limit)],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|row| AwaitingCall {
                session: row.get(0),
                call_id: row.get::<_, Option<String>>(1).unwrap_or_default(),
                tool: row.get::<_, Option<String>>(2).unwrap_or_default(),
                arguments: row
                    .get::<_, Option<String>>(3)
                    .and_then(|text| serde_json::from_str(&text).ok())
                    .unwrap_or(Value::Null),
                may_have_run: row.get::<_, Option<bool>>(4).unwrap_or(false),
            })
            .collect())
    }

    /// Removes the session `id` and its records; whether there was one.
    /// Refused while another worker holds its lease.
    pub async fn delete(&self, id: &str) -> Result<bool, PgError> {
        let token = self.leases().get(id).map(|lease| lease.token);
        let rows = self
            .query(
                "WITH gone AS (DELETE FROM toolkit_sessions
                    WHERE id = $1 AND (lease_token = $2 OR lease_expires IS NULL OR lease_expires <= now())
                    RETURNING 1)
                 SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM toolkit_sessions WHERE id = $1)",
                &[&id, &token.unwrap_or(-1)],
            )
            .await?;
        let (gone, left): (i64, i64) = rows.first().map_or((0, 0), |row| (row.get(0), row.get(1)));
        if gone == 0 && left > 0 {
            return Err(PgError::Leased {
                session: id.to_owned(),
            });
        }
        Ok(gone > 0)
    }
}

impl SessionStore for PgStore {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.save_session(session))
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        Box::pin(self.load_session(id))
    }
}

/// Where a session stands, as kept in its row on every save.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SessionState {
    /// A run is under way (or its worker died in it).
    Running,
    /// The run waits for decisions on its pending calls.
    Paused,
    /// The run ended: the next message starts a new one.
    Finished,
}

impl SessionState {
    /// The session's state.
    pub fn of(session: &Session) -> Self {
        if session.is_ended() {
            Self::Finished
        } else if session.pending().is_empty() {
            Self::Running
        } else {
            Self::Paused
        }
    }

    /// As kept in the `state` column.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Paused => "paused",
            Self::Finished => "finished",
        }
    }
}

/// One session, as [`PgStore::sessions`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionSummary {
    /// The session's id.
    pub id: String,
    /// Its state.
    pub state: SessionState,
    /// How many calls wait for a decision.
    pub pending: usize,
    /// The worker holding its lease, while the lease is live.
    pub leased_by: Option<String>,
    /// When it was last saved, in milliseconds since the Unix epoch (the
    /// database's clock).
    pub updated_at_ms: i64,
}

/// A call that waits for a person's decision, as
/// [`PgStore::awaiting_decision`] lists it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AwaitingCall {
    /// The session.
    pub session: String,
    /// The call's id: what [`Session::decide`] takes.
    pub call_id: String,
    /// The tool called.
    pub tool: String,
    /// The call's arguments (`null` when they are not JSON).
    pub arguments: Value,
    /// Whether it is a call that may have run (its worker died in it),
    /// rather than one that needs approval.
    pub may_have_run: bool,
}

/// What a save writes beside the snapshot, for queries.
struct Projection {
    state: SessionState,
    pending: Value,
    count: i32,
}

impl Projection {
    fn of(session: &Session) -> Self {
        let pending: Vec<Value> = session
            .pending()
            .into_iter()
            .map(|pending| {
                let (call, may_have_run) = match &pending.status {
                    CallStatus::MayHaveRun { call } => (call, true),
                    _ => (&pending.call, false),
                };
                json!({
                    "call_id": call.id,
                    "tool": call.name,
                    "arguments": call.arguments(),
                    "may_have_run": may_have_run,
                })
            })
            .collect();
        Self {
            state: SessionState::of(session),
            count: i32::try_from(pending.len()).unwrap_or(i32::MAX),
            pending: Value::Array(pending),
        }
    }
}
