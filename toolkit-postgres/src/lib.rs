//! A Postgres [`SessionStore`](toolkit_agent::SessionStore) for toolkit
//! agents run by several workers: each session a row, with a
//! [lease](Lease) that one worker holds at a time (expired by the
//! database's clock, taken over by another worker when its holder dies),
//! every write fenced by the lease's token, and what a host asks about
//! its sessions (which are running, paused or finished; which calls wait
//! for a person) kept in columns of their own on every save.
//!
//! ```no_run
//! use std::time::Duration;
//! use toolkit_agent::Agent;
//! use toolkit_postgres::PgStore;
//! # async fn run(agent: toolkit_agent::AgentBuilder<toolkit_agent::HttpModel>) -> Result<(), Box<dyn std::error::Error>> {
//! let store = PgStore::connect("host=127.0.0.1 user=agents dbname=agents").await?;
//! let agent = agent.store(store.clone()).build()?;
//! if let Some(lease) = store.lease("chat-42", "worker-1", Duration::from_secs(10)).await? {
//!     let mut session = agent.load("chat-42").await?;
//!     agent.resume(&mut session).await?;
//!     lease.release().await?;
//! }
//! # Ok(()) }
//! ```
//!
//! The tables, the lease, the faults and what a host must still do:
//! `docs/postgres.md`.
#![deny(missing_docs)]

mod error;
mod held;
mod lease;
mod schema;
mod store;

pub use error::PgError;
pub use lease::Lease;
pub use schema::SCHEMA_VERSION;
pub use store::{AwaitingCall, DEFAULT_TIMEOUT, PgStore, SessionState, SessionSummary};
/// The driver, for [`PgStore::connect_with`]'s configuration and TLS.
pub use tokio_postgres;

/// The guide's chapter on the Postgres store (`docs/postgres.md`): its
/// examples are compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/postgres.md")]
pub struct PostgresGuide;
