//! The connection to one server: started (or reached) when first needed,
//! started again after it dies, and shared by every handle on it.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::Value;
use tokio::sync::{Mutex, watch};
use tokio_util::sync::CancellationToken;

use super::error::ClientError;
use super::handler::Handler;
#[cfg(feature = "http-client")]
use super::http::HttpAccess;
use super::synced::Synced;
use super::target::Target;
use crate::telemetry;

/// What a server may offer besides tools, declared as a capability.
#[derive(Debug, Clone, Copy)]
pub(super) enum Offer {
    Resources,
    Prompts,
}

pub(super) type Running = RunningService<RoleClient, Handler>;

/// A running connection, numbered so that a call which saw it fail drops
/// that one and not a newer one another call opened meanwhile.
pub(super) struct Live {
    pub(super) running: Running,
    pub(super) generation: u64,
}

/// What every handle on one server's connection shares.
pub(super) struct Shared {
    /// Set when the server is reached over HTTP.
    #[cfg(feature = "http-client")]
    pub(super) http: Option<HttpAccess>,
    /// Where the requests go, as their spans name it.
    pub(super) traced: telemetry::Peer,
    pub(super) name: String,
    pub(super) prefix: String,
    pub(super) target: Target,
    pub(super) timeout: Option<Duration>,
    pub(super) connect_timeout: Duration,
    pub(super) stateless: bool,
    /// Whether the server's tools are deferred (tool search).
    pub(super) defer_tools: bool,
    pub(super) handler: Handler,
    pub(super) live: Mutex<Option<Live>>,
    pub(super) generations: AtomicU64,
    /// The tools handed to the registry (by `tools`, or added by a sync),
    /// by our name, as the server described them.
    pub(super) known: StdMutex<HashMap<String, Value>>,
    /// What the latest sync did.
    pub(super) synced: watch::Sender<Synced>,
    pub(super) closed: CancellationToken,
}

impl Shared {
    /// The tools handed to the registry, by our name.
    pub(super) fn known(&self) -> std::sync::MutexGuard<'_, HashMap<String, Value>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An error of this server, saying so plainly when the address check
    /// of its OAuth flow is what failed.
    pub(super) fn error(&self, message: impl Into<String>) -> ClientError {
        let error = ClientError::new(&self.name, message);
        #[cfg(feature = "auth")]
        if let Some(access) = &self.http
            && let Some(authorization) = access.credentials.authorization()
        {
            return error.refused_by(authorization);
        }
        error
    }

    /// The live connection's peer, starting the server first if it is not
    /// running.
    pub(super) async fn peer(&self) -> Result<(Peer<RoleClient>, u64), ClientError> {
        if self.closed.is_cancelled() {
            return Err(self.error("the connection was closed"));
        }
        let mut live = self.live.lock().await;
        if let Some(current) = &*live
            && !current.running.is_closed()
        {
            return Ok((current.running.peer().clone(), current.generation));
        }
        let generation = self.generations.fetch_add(1, Ordering::Relaxed);
        let running = tokio::time::timeout(self.connect_timeout, self.start())
            .await
            .map_err(|_| {
                self.error(format!(
                    "no answer within {} s of starting",
                    self.connect_timeout.as_secs()
                ))
            })??;
        let peer = running.peer().clone();
        self.listen_for_changes(&peer);
        *live = Some(Live {
            running,
            generation,
        });
        if generation > 0 {
            // A server started again may have other tools.
            self.handler.list_changed.notify_one();
        }
        Ok((peer, generation))
    }

    /// Starts the server (or reaches it) and makes the handshake.
    async fn start(&self) -> Result<Running, ClientError> {
        let lifecycle = if self.stateless {
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }
        } else {
            ClientLifecycleMode::Initialize
        };
        let handler = self.handler.clone();
        let started = match &self.target {
            Target::Command {
                program,
                args,
                env,
                dir,
            } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env.iter().cloned());
                if let Some(dir) = dir {
                    command.current_dir(dir);
                }
                let (transport, _) = TokioChildProcess::builder(command)
                    .stderr(Stdio::inherit())
                    .spawn()
                    .map_err(|error| {
                        self.error(format!(
                            "cannot start {}: {error}",
                            program.to_string_lossy()
                        ))
                    })?;
                handler.serve_with_lifecycle(transport, lifecycle).await
            }
            #[cfg(feature = "http-client")]
            Target::Http { url, .. } => {
                let access = self
                    .http
                    .as_ref()
                    .ok_or_else(|| self.error("no HTTP client"))?;
                handler
                    .serve_with_lifecycle(access.transport(url), lifecycle)
                    .await
            }
        };
        started.map_err(|error| self.error(format!("the handshake failed: {error}")))
    }

    /// On revision 2026-07-28 a client hears of list changes only on a
    /// `subscriptions/listen` request it holds open.
    fn listen_for_changes(&self, peer: &Peer<RoleClient>) {
        let Some(info) = peer.peer_info() else { return };
        let announces = info
            .capabilities
            .tools
            .as_ref()
            .and_then(|tools| tools.list_changed)
            == Some(true);
        if info.protocol_version.has_initialize() || !announces {
            return;
        }
        let peer = peer.clone();
        let changed = Arc::clone(&self.handler.list_changed);
        tokio::spawn(async move {
            let filter = SubscriptionFilter::builder().tools_list_changed().build();
            let Ok(mut subscription) = peer.listen(filter).await else {
                return;
            };
            while let Ok(Some(notification)) = subscription.next().await {
                if matches!(
                    notification,
                    ServerNotification::ToolListChangedNotification(_)
                ) {
                    changed.notify_one();
                }
            }
        });
    }

    /// Drops connection `generation` if it is still the live one.
    pub(super) async fn forget(&self, generation: u64) {
        let mut live = self.live.lock().await;
        if live
            .as_ref()
            .is_some_and(|current| current.generation == generation)
        {
            // Dropping the connection ends it, and stops a child process.
            *live = None;
        }
    }

    /// The connection, if the server declared `offer`.
    pub(super) async fn offering(
        &self,
        offer: Offer,
    ) -> Result<(Peer<RoleClient>, u64), ClientError> {
        let (peer, generation) = self.peer().await?;
        let info = peer.peer_info();
        let capabilities = info.as_ref().map(|info| &info.capabilities);
        let (declared, what) = match offer {
            Offer::Resources => (
                capabilities.is_some_and(|c| c.resources.is_some()),
                "resources",
            ),
            Offer::Prompts => (capabilities.is_some_and(|c| c.prompts.is_some()), "prompts"),
        };
        if declared {
            Ok((peer, generation))
        } else {
            Err(self.error(format!(
                "offers no {what} (it did not declare the `{what}` capability)"
            )))
        }
    }

    /// Ends the connection, and the following of list changes.
    pub(super) async fn close(&self) {
        self.closed.cancel();
        if let Some(live) = self.live.lock().await.take() {
            let _ = live.running.cancel().await;
        }
    }
}
