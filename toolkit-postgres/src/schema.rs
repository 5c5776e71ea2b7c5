//! The tables, their migrations, and the statements the store prepares on
//! each connection.

use tokio_postgres::{Client, Statement};

use crate::error::PgError;

/// The newest version of the tables this crate makes and reads.
pub const SCHEMA_VERSION: i32 = 1;

/// The form of `snapshot` this crate writes and reads: the session's JSON
/// form (`Session::to_json`).
pub(crate) const SNAPSHOT_FORMAT: i32 = 1;

/// Any constant: the advisory lock that keeps two processes from making
/// the tables at once.
const MIGRATION_LOCK: i64 = 0x746f_6f6c_6b69_7401;

/// Version 1: a row per session (the latest snapshot, its projection, its
/// lease), and an append-only table of records for the journal
/// (`docs/postgres.md`, "Tables").
const V1: &str = "
CREATE TABLE toolkit_sessions (
    id text PRIMARY KEY,
    format integer NOT NULL DEFAULT 1,
    snapshot text,
    snapshot_seq bigint NOT NULL DEFAULT 0,
    last_seq bigint NOT NULL DEFAULT 0,
    state text,
    pending jsonb NOT NULL DEFAULT '[]',
    pending_count integer NOT NULL DEFAULT 0,
    lease_owner text,
    lease_token bigint NOT NULL DEFAULT 0,
    lease_expires timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX toolkit_sessions_by_state ON toolkit_sessions (state, updated_at);
CREATE INDEX toolkit_sessions_awaiting ON toolkit_sessions (updated_at) WHERE pending_count > 0;
CREATE TABLE toolkit_session_records (
    session_id text NOT NULL REFERENCES toolkit_sessions (id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    record text NOT NULL,
    PRIMARY KEY (session_id, seq)
);
";

/// Makes the tables, or brings them up to [`SCHEMA_VERSION`]; refuses
/// tables of a newer version.
pub(crate) async fn migrate(client: &mut Client) -> Result<(), PgError> {
    let transaction = client.transaction().await.map_err(PgError::driver)?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(PgError::driver)?;
    transaction
        .batch_execute("CREATE TABLE IF NOT EXISTS toolkit_schema (version integer NOT NULL)")
        .await
        .map_err(PgError::driver)?;
    let found: Option<i32> = transaction
        .query_one("SELECT max(version) FROM toolkit_schema", &[])
        .await
        .map_err(PgError::driver)?
        .get(0);
    let found = found.unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(PgError::Schema {
            found,
            supported: SCHEMA_VERSION,
        });
    }
    if found < 1 {
        transaction
            .batch_execute(V1)
            .await
            .map_err(PgError::driver)?;
    }
    if found < SCHEMA_VERSION {
        transaction
            .execute(
                "INSERT INTO toolkit_schema (version) VALUES ($1)",
                &[&SCHEMA_VERSION],
            )
            .await
            .map_err(PgError::driver)?;
    }
    transaction.commit().await.map_err(PgError::driver)
}

/// The statements of the store, prepared once per connection so that each
/// call is one round trip (bind and execute, no parse).
pub(crate) struct Statements {
    pub(crate) save_leased: Statement,
    pub(crate) save_free: Statement,
    pub(crate) load: Statement,
    pub(crate) acquire: Statement,
    pub(crate) renew: Statement,
    pub(crate) release: Statement,
}

/// A fenced save: written only while the lease's token is the session's.
/// The token is not compared with the clock: a lease that expired but
/// that no one took over is still the only writer.
const SAVE_LEASED: &str = "
UPDATE toolkit_sessions
SET format = $3, snapshot = $4, snapshot_seq = last_seq, state = $5,
    pending = $6::text::jsonb, pending_count = $7, updated_at = now()
WHERE id = $1 AND lease_token = $2";

/// A save without a lease: refused while another worker's lease is live;
/// it moves the token on, so that a worker whose lease expired cannot
/// write over it.
const SAVE_FREE: &str = "
INSERT INTO toolkit_sessions AS s (id, format, snapshot, state, pending, pending_count, lease_token)
VALUES ($1, $2, $3, $4, $5::text::jsonb, $6, 1)
ON CONFLICT (id) DO UPDATE
SET format = EXCLUDED.format, snapshot = EXCLUDED.snapshot, snapshot_seq = s.last_seq,
    state = EXCLUDED.state, pending = EXCLUDED.pending, pending_count = EXCLUDED.pending_count,
    lease_owner = NULL, lease_expires = NULL, lease_token = s.lease_token + 1,
    updated_at = now()
WHERE s.lease_expires IS NULL OR s.lease_expires <= now()";

/// The snapshot, and how many journal records follow it.
const LOAD: &str = "
SELECT s.format, s.snapshot,
    (SELECT count(*) FROM toolkit_session_records r
     WHERE r.session_id = s.id AND r.seq > s.snapshot_seq)
FROM toolkit_sessions s WHERE s.id = $1";

/// Takes the lease when no one holds it or it expired, by the database's
/// clock; each taking moves the token on. Two workers asking at once: the
/// row lock orders them, and the second sees the first's lease.
const ACQUIRE: &str = "
INSERT INTO toolkit_sessions AS s (id, lease_owner, lease_token, lease_expires)
VALUES ($1, $2, 1, now() + $3::float8 * interval '1 second')
ON CONFLICT (id) DO UPDATE
SET lease_owner = EXCLUDED.lease_owner, lease_token = s.lease_token + 1,
    lease_expires = EXCLUDED.lease_expires
WHERE s.lease_expires IS NULL OR s.lease_expires <= now()
RETURNING lease_token";

const RENEW: &str = "
UPDATE toolkit_sessions SET lease_expires = now() + $3::float8 * interval '1 second'
WHERE id = $1 AND lease_token = $2";

const RELEASE: &str = "
UPDATE toolkit_sessions SET lease_owner = NULL, lease_expires = NULL
WHERE id = $1 AND lease_token = $2";

impl Statements {
    pub(crate) async fn prepare(client: &Client) -> Result<Self, PgError> {
        let prepare =
            |sql: &'static str| async move { client.prepare(sql).await.map_err(PgError::driver) };
        Ok(Self {
            save_leased: prepare(SAVE_LEASED).await?,
            save_free: prepare(SAVE_FREE).await?,
            load: prepare(LOAD).await?,
            acquire: prepare(ACQUIRE).await?,
            renew: prepare(RENEW).await?,
            release: prepare(RELEASE).await?,
        })
    }
}
