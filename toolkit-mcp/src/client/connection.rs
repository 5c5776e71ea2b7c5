//! The connection to one server: started (or reached) when first needed,
//! started again after it dies, and shared by every handle on it.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex as StdMutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{ErrorCode, ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService,
};
use rmcp::transport::TokioChildProcess;
use serde_json::Value;
use tokio::sync::{Mutex, watch};
use tokio_util::sync::CancellationToken;
use toolkit_core::Registry;

use super::error::{ClientError, ClientErrorKind};
use super::handler::Handler;
#[cfg(feature = "http-client")]
use super::http::HttpAccess;
use super::pins::Pins;
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

/// Which of MCP's two eras a server speaks, learned from how it answered
/// the opening of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Era {
    /// 2026-07-28: `server/discover`, then every request on its own.
    Modern,
    /// 2025-11-25 and before: a session opened with `initialize`.
    Legacy,
}

impl Era {
    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Self::Modern => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Self::Legacy => ClientLifecycleMode::Initialize,
        }
    }

    /// The era a running connection speaks.
    fn of(running: &Running) -> Self {
        match running.peer().peer_info() {
            Some(info) if !info.protocol_version.has_initialize() => Self::Modern,
            _ => Self::Legacy,
        }
    }
}

/// Whether a failed `server/discover` was answered as only a legacy server
/// answers it: with a complete JSON-RPC error (on HTTP, rmcp's transport
/// makes one of a `4xx` that has none) that is not one of the errors a
/// modern server refuses a request with, or with a result that is not a
/// `DiscoverResult` (some answer any method they do not know with an empty
/// result), which a modern server, bound to implement `server/discover`,
/// never gives. A transport failure, a closed connection, a `5xx` or
/// silence is not an answer, and says nothing of the era.
fn answered_as_legacy(error: &ClientInitializeError) -> bool {
    match error {
        ClientInitializeError::JsonRpcError(data) => !matches!(
            data.code,
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                | ErrorCode::HEADER_MISMATCH
        ),
        ClientInitializeError::ExpectedInitResult(Some(_)) => true,
        _ => false,
    }
}

/// What kind of failure a handshake's is.
fn kind_of(error: &ClientInitializeError) -> ClientErrorKind {
    match error {
        ClientInitializeError::ConnectionClosed(_)
        | ClientInitializeError::TransportError { .. }
        | ClientInitializeError::Cancelled => ClientErrorKind::Unreachable,
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => kind_of(fallback),
        _ => ClientErrorKind::Incompatible,
    }
}

/// A tool list kept: the server's tools by our name, as it described them,
/// and until when it may be used.
pub(super) struct Listing {
    pub(super) tools: Vec<(String, Value)>,
    pub(super) fresh_until: Instant,
    /// The connection it was listed on, and the count of list changes
    /// then: another connection, or a change since, makes it stale.
    pub(super) generation: u64,
    pub(super) changes: u64,
}

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
    /// The host's choice of era (`.stateless(..)`), if it made one.
    pub(super) stateless: Option<bool>,
    /// The era the server spoke at the last opening, kept for the client's
    /// life (across restarts and reconnections) and probed again only when
    /// the server stops answering as that era does.
    pub(super) era: StdMutex<Option<Era>>,
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
    /// The tools pinned, when the host keeps a lock file.
    pub(super) pins: Option<Pins>,
    /// The registry the tools follow (`watch`), if any.
    pub(super) attached: StdMutex<Option<Weak<Registry>>>,
    /// The task holding the 2026-07-28 `subscriptions/listen` request open.
    pub(super) listening: StdMutex<Option<tokio::task::JoinHandle<()>>>,
    /// The tool list kept while the server says it is fresh (`ttlMs`).
    pub(super) listing: StdMutex<Option<Listing>>,
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
                .kind_of(ClientErrorKind::Unreachable)
            })??;
        let peer = running.peer().clone();
        self.listen_for_changes(&peer).await;
        *live = Some(Live {
            running,
            generation,
        });
        if generation > 0 {
            // A server started again may have other tools.
            self.handler.tools_changed();
        }
        Ok((peer, generation))
    }

    /// The era learned last, if any.
    fn era(&self) -> std::sync::MutexGuard<'_, Option<Era>> {
        self.era.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts the server (or reaches it) and makes the handshake of the
    /// era the host chose, else of the era learned before, else of the one
    /// a probe finds. A server that no longer answers as the era learned
    /// before is probed again.
    async fn start(&self) -> Result<Running, ClientError> {
        let span = telemetry::connect_span(&self.traced);
        let started = async {
            let era = match self.stateless {
                Some(true) => Some(Era::Modern),
                Some(false) => Some(Era::Legacy),
                None => *self.era(),
            };
            let Some(era) = era else {
                return self.probe().await;
            };
            match self.open(era.lifecycle()).await? {
                Ok(running) => Ok(running),
                // Refused as only a server of the other era refuses: it was
                // replaced, or its configuration changed.
                Err(error)
                    if self.stateless.is_none()
                        && match era {
                            Era::Modern => answered_as_legacy(&error),
                            Era::Legacy => matches!(error, ClientInitializeError::JsonRpcError(_)),
                        } =>
                {
                    tracing::debug!(
                        server = %self.name,
                        ?era,
                        %error,
                        "the server no longer answers as the era it spoke; probing again"
                    );
                    *self.era() = None;
                    self.probe().await
                }
                Err(error) => Err(self.handshake_failed(error)),
            }
        };
        let started = tracing::Instrument::instrument(started, span.clone()).await;
        match &started {
            Ok(running) => {
                if let Some(info) = running.peer().peer_info() {
                    telemetry::record_version(&span, info.protocol_version.as_str());
                }
            }
            Err(error) => telemetry::record_connect_failure(&span, error.kind()),
        }
        started
    }

    /// Finds the server's era and opens the connection in it: asks
    /// `server/discover` (2026-07-28), and opens a session with
    /// `initialize` when the server answers the way only a 2025-11-25 (or
    /// older) server does. Over stdio one process is asked both, as rmcp's
    /// `Auto` lifecycle does: a complete JSON-RPC error that is not a
    /// modern refusal, or silence past its ten seconds, is the old era;
    /// over HTTP the opening is made again on a new transport, only after
    /// an answer (a `4xx` or a JSON-RPC error), never after silence or a
    /// failed connection.
    async fn probe(&self) -> Result<Running, ClientError> {
        let running = match &self.target {
            Target::Command { .. } => {
                let auto = ClientLifecycleMode::Auto {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    legacy_version: None,
                };
                match self.open(auto).await? {
                    Ok(running) => running,
                    // rmcp's probe falls back on errors only; an answer that
                    // is a result of another kind says the same, and the
                    // process that gave it is left for a new one.
                    Err(discover @ ClientInitializeError::ExpectedInitResult(Some(_))) => {
                        self.fall_back(discover).await?
                    }
                    Err(error) => return Err(self.handshake_failed(error)),
                }
            }
            #[cfg(feature = "http-client")]
            Target::Http { .. } => match self.open(Era::Modern.lifecycle()).await? {
                Ok(running) => running,
                Err(discover) if answered_as_legacy(&discover) => self.fall_back(discover).await?,
                Err(error) => return Err(self.handshake_failed(error)),
            },
        };
        *self.era() = Some(Era::of(&running));
        Ok(running)
    }

    /// Opens a 2025-11-25 session after `server/discover` was answered as
    /// only an older server answers it.
    async fn fall_back(&self, discover: ClientInitializeError) -> Result<Running, ClientError> {
        tracing::debug!(
            server = %self.name,
            answer = %discover,
            "server/discover answered as by a 2025-11-25 server; opening a session"
        );
        self.open(Era::Legacy.lifecycle())
            .await?
            .map_err(|fallback| {
                self.handshake_failed(ClientInitializeError::LegacyFallbackFailed {
                    discover: Box::new(discover),
                    fallback: Box::new(fallback),
                })
            })
    }

    /// A failed handshake as this server's error, of its kind.
    fn handshake_failed(&self, error: ClientInitializeError) -> ClientError {
        let kind = kind_of(&error);
        let told = match &error {
            ClientInitializeError::LegacyFallbackFailed { discover, fallback } => format!(
                "the handshake failed: server/discover: {discover}; then initialize: {fallback}"
            ),
            _ => format!("the handshake failed: {error}"),
        };
        self.error(told).kind_of(kind)
    }

    /// Starts the server (or reaches it) and makes the handshake `lifecycle`
    /// says; the outer error is a server that could not be started.
    async fn open(
        &self,
        lifecycle: ClientLifecycleMode,
    ) -> Result<Result<Running, ClientInitializeError>, ClientError> {
        let handler = self.handler.clone();
        Ok(match &self.target {
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
                        .kind_of(ClientErrorKind::Unreachable)
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
        })
    }

    /// On revision 2026-07-28 a client hears of list changes only on a
    /// `subscriptions/listen` request it holds open.
    /// The subscription is acknowledged before the connection is used, so
    /// that no change made after the first listing is missed.
    async fn listen_for_changes(&self, peer: &Peer<RoleClient>) {
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
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut subscription = match tokio::time::timeout(self.connect_timeout, peer.listen(filter))
            .await
        {
            Ok(Ok(subscription)) => subscription,
            Ok(Err(error)) => {
                tracing::warn!(
                    server = %self.name,
                    %error,
                    "subscriptions/listen was refused; changes of the tool list are not followed"
                );
                return;
            }
            Err(_) => {
                tracing::warn!(
                    server = %self.name,
                    "subscriptions/listen was not acknowledged in time; changes of the tool list are not followed"
                );
                return;
            }
        };
        let handler = self.handler.clone();
        let closed = self.closed.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    // Told to the server, which otherwise holds the request
                    // open: a server on stdio would not end when its input
                    // does, and the client's close would wait for it.
                    () = closed.cancelled() => {
                        let _ = subscription.cancel().await;
                        return;
                    }
                    next = subscription.next() => match next {
                        Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                            handler.tools_changed();
                        }
                        Ok(Some(_)) => {}
                        _ => return,
                    },
                }
            }
        });
        *self
            .listening
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(task);
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
        let listening = self
            .listening
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(listening) = listening {
            // The subscription's end told before the connection ends.
            let _ = tokio::time::timeout(Duration::from_secs(1), listening).await;
        }
        if let Some(live) = self.live.lock().await.take() {
            let _ = live.running.cancel().await;
        }
    }
}
