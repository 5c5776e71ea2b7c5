//! The server's tools as tools of a registry: listed, made run-time tools,
//! and kept in line with the server's list.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, PoisonError, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{PaginatedRequestParams, ServerResult, Tool};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;
use tokio::sync::watch;
use toolkit_core::{CallContext, Registry, ToolDef};

use super::connection::{Listing, Shared};
use super::error::ClientError;
use super::pins::Held;
use super::requests::{MAX_PAGES, list_tools};
use super::synced::{Refused, Synced};
use super::{McpClient, names};

impl McpClient {
    /// The server's tools, as run-time tools for a registry, in the
    /// server's order.
    ///
    /// With [pinned](crate::McpClientBuilder::pinned) tools, a tool that is new or
    /// changed is left out, and named in [`synced`](Self::synced)'s
    /// `held`.
    pub async fn tools(&self) -> Result<Vec<ToolDef>, ClientError> {
        let listed = self.shared.list().await?;
        let (listed, held) = self.shared.vet(listed);
        let mut known = self.shared.known();
        known.clear();
        let mut added = Vec::new();
        let defs = listed
            .into_iter()
            .map(|(name, raw)| {
                let def = self.shared.tool_def(&raw);
                added.push(name.clone());
                known.insert(name, raw);
                def
            })
            .collect();
        drop(known);
        if self.shared.pins.is_some() {
            self.shared.synced.send_replace(Synced {
                added,
                held,
                ..Synced::default()
            });
        }
        Ok(defs)
    }

    /// Pins the server's tools as it lists them now (see
    /// [`McpClientBuilder::pinned`](crate::McpClientBuilder::pinned)): writes their fingerprints to the lock
    /// file, replacing the server's pins, and brings the registry the tools
    /// follow ([`attach`](Self::attach), [`watch`](Self::watch)) in line,
    /// the tools held back before admitted. Returns what that sync did
    /// (empty when no registry follows; [`tools`](Self::tools) then lists
    /// them all). The host calls it once a person (or a policy) approved
    /// the tools as [`synced`](Self::synced) reported them.
    ///
    /// ```no_run
    /// # async fn run(client: toolkit_mcp::McpClient) -> Result<(), toolkit_mcp::ClientError> {
    /// let held = client.synced().borrow().held.clone();
    /// if !held.is_empty() /* and the user approved them */ {
    ///     let synced = client.pin().await?;
    ///     println!("admitted: {:?}", synced.added);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn pin(&self) -> Result<Synced, ClientError> {
        let Some(pins) = &self.shared.pins else {
            return Err(self
                .shared
                .error("no tools are pinned: the client was built without `pinned`"));
        };
        self.shared.forget_listing();
        let listed = self.shared.list().await?;
        pins.pin(listed.iter().map(|(_, raw)| raw))
            .map_err(|error| self.shared.error(error))?;
        let registry = self
            .shared
            .attached
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .and_then(Weak::upgrade);
        Ok(match registry {
            Some(registry) => self.shared.sync(&registry, listed),
            None => Synced::default(),
        })
    }

    /// Adds the server's tools to `registry` and keeps them following the
    /// server's list ([`watch`](Self::watch)). Tools the registry refuses
    /// (a name taken, a schema a required provider cannot take) are left
    /// out and reported in the returned [`Synced`], which
    /// [`synced`](Self::synced) holds too; the others are added.
    pub async fn attach(&self, registry: &Arc<Registry>) -> Result<Synced, ClientError> {
        let listed = self.shared.list().await?;
        // The tools listed before, if any, were for another registry.
        self.shared.known().clear();
        let synced = self.shared.sync(registry, listed);
        self.watch(registry);
        Ok(synced)
    }

    /// Keeps the tools listed last (by [`tools`](Self::tools) or
    /// [`attach`](Self::attach)) in `registry` following the server's list:
    /// when the server says its list changed (or was restarted), tools it
    /// no longer has are removed, new ones added and changed ones replaced.
    /// What each such sync did, refusals included, is
    /// [`synced`](Self::synced), and a refusal is logged as a `tracing`
    /// warning. Stops when the registry is dropped or the client
    /// [closed](Self::close).
    pub fn watch(&self, registry: &Arc<Registry>) {
        let shared = Arc::clone(&self.shared);
        let registry = Arc::downgrade(registry);
        *shared
            .attached
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(registry.clone());
        tokio::spawn(async move { shared.follow(registry).await });
    }

    /// What the latest sync of a registry with the server's list did
    /// ([`attach`](Self::attach), or a list change [followed](Self::watch)):
    /// `borrow()` reads it (empty before the first), `changed().await`
    /// waits for the next. A refusal stays visible here until a sync adds
    /// the tool or the server drops it, as every sync offers the refused
    /// tools again.
    ///
    /// ```no_run
    /// # async fn run(client: toolkit_mcp::McpClient) {
    /// let mut synced = client.synced();
    /// while synced.changed().await.is_ok() {
    ///     for refused in &synced.borrow().refused {
    ///         eprintln!("`{}` left out: {}", refused.original, refused.error);
    ///     }
    /// }
    /// # }
    /// ```
    pub fn synced(&self) -> watch::Receiver<Synced> {
        self.shared.synced.subscribe()
    }
}

impl Shared {
    /// The server's tools, by our name, as the server described them: the
    /// list kept, while the server said it is fresh, else a new one. The
    /// first list of a server a lock file holds nothing for is pinned.
    pub(super) async fn list(&self) -> Result<Vec<(String, Value)>, ClientError> {
        if let Some(kept) = self.kept_listing() {
            return Ok(kept);
        }
        let (peer, generation) = self.peer().await?;
        let changes = self.handler.changes();
        let (tools, ttl) = match self.list_pages(&peer).await {
            Ok(listed) => listed,
            Err(error) => {
                self.forget(generation).await;
                return Err(self.error(format!("listing its tools failed: {error}")));
            }
        };
        let listed: Vec<(String, Value)> = tools
            .iter()
            .map(|tool| {
                let raw = serde_json::to_value(tool)
                    .map_err(|error| self.error(format!("a tool it listed: {error}")))?;
                Ok((names::tool_name(&self.prefix, &tool.name), raw))
            })
            .collect::<Result<_, ClientError>>()?;
        if let Some(pins) = &self.pins
            && !pins.holds_server()
        {
            pins.pin(listed.iter().map(|(_, raw)| raw))
                .map_err(|error| self.error(error))?;
        }
        if !ttl.is_zero() {
            *self.listing.lock().unwrap_or_else(PoisonError::into_inner) = Some(Listing {
                tools: listed.clone(),
                fresh_until: Instant::now() + ttl,
                generation,
                changes,
            });
        }
        Ok(listed)
    }

    /// The list kept, if the server still holds it fresh: within its
    /// `ttlMs`, on the same connection, with no list change heard since.
    /// Both of 2026-07-28's `cacheScope`s are kept in this client alone,
    /// one authorization context, never shared with another client: what
    /// `private` requires and `public` allows.
    fn kept_listing(&self) -> Option<Vec<(String, Value)>> {
        let mut kept = self.listing.lock().unwrap_or_else(PoisonError::into_inner);
        let listing = kept.as_ref()?;
        let current = self
            .generations
            .load(std::sync::atomic::Ordering::Relaxed)
            .checked_sub(1);
        if Instant::now() < listing.fresh_until
            && current == Some(listing.generation)
            && listing.changes == self.handler.changes()
        {
            return Some(listing.tools.clone());
        }
        *kept = None;
        None
    }

    /// Drops the list kept, so that the next is asked of the server.
    pub(super) fn forget_listing(&self) {
        *self.listing.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Every page of the tool list, and how long the server says it stays
    /// fresh: the shortest `ttlMs` of its pages, zero when a page has none
    /// (2025-11-25).
    async fn list_pages(
        &self,
        peer: &Peer<RoleClient>,
    ) -> Result<(Vec<Tool>, Duration), rmcp::ServiceError> {
        let mut tools = Vec::new();
        let mut cursor = None;
        let mut ttl = u64::MAX;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let ServerResult::ListToolsResult(page) = self.send(peer, list_tools(params)).await?
            else {
                return Err(rmcp::ServiceError::UnexpectedResponse);
            };
            ttl = ttl.min(page.ttl_ms.unwrap_or(0));
            tools.extend(page.tools);
            cursor = page.next_cursor;
            if cursor.is_none() {
                return Ok((tools, Duration::from_millis(ttl)));
            }
        }
        Err(rmcp::ServiceError::UnexpectedResponse)
    }

    /// The listed tools the pins admit, and those they hold back (all are
    /// admitted when nothing is pinned).
    pub(super) fn vet(&self, listed: Vec<(String, Value)>) -> (Vec<(String, Value)>, Vec<Held>) {
        let Some(pins) = &self.pins else {
            return (listed, Vec::new());
        };
        let mut held = Vec::new();
        let admitted = listed
            .into_iter()
            .filter(|(name, raw)| {
                let original = raw["name"].as_str().unwrap_or_default();
                let Some(reason) = pins.vet(original, raw) else {
                    return true;
                };
                tracing::warn!(
                    server = %self.name,
                    tool = %original,
                    %reason,
                    "a tool of the MCP server is not the one pinned; it is held back until pinned again"
                );
                held.push(Held {
                    name: name.clone(),
                    original: original.to_owned(),
                    reason,
                });
                false
            })
            .collect();
        (admitted, held)
    }

    /// One of the server's tools (as it described it) as a run-time tool.
    fn tool_def(self: &Arc<Self>, raw: &Value) -> ToolDef {
        let text = |key: &str| raw.get(key).and_then(Value::as_str);
        let original = text("name").unwrap_or_default().to_owned();
        let mut builder = ToolDef::builder(names::tool_name(&self.prefix, &original))
            .description(text("description").unwrap_or_default())
            .source(format!("MCP server `{}`, tool `{original}`", self.name))
            .deferred(self.defer_tools);
        if let Some(schema) = raw.get("inputSchema") {
            builder = builder.input_schema(schema.clone());
        }
        if let Some(schema) = raw.get("outputSchema") {
            builder = builder.output_schema(schema.clone());
        }
        let annotations = raw.get("annotations");
        if let Some(title) = text("title").or_else(|| {
            annotations
                .and_then(|a| a.get("title"))
                .and_then(Value::as_str)
        }) {
            builder = builder.title(title);
        }
        let hint = |key: &str| {
            annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_bool)
        };
        if let Some(value) = hint("readOnlyHint") {
            builder = builder.read_only(value);
        }
        if let Some(value) = hint("destructiveHint") {
            builder = builder.destructive(value);
        }
        if let Some(value) = hint("idempotentHint") {
            builder = builder.idempotent(value);
        }
        if let Some(value) = hint("openWorldHint") {
            builder = builder.open_world(value);
        }
        let shared = Arc::clone(self);
        let original: Arc<str> = original.into();
        builder.handler(move |arguments: Value, call: CallContext| {
            let shared = Arc::clone(&shared);
            let original = Arc::clone(&original);
            async move { shared.call(&original, arguments, &call).await }
        })
    }

    /// Keeps `registry` following the server's tool list.
    pub(super) async fn follow(self: Arc<Self>, registry: Weak<Registry>) {
        loop {
            tokio::select! {
                () = self.handler.list_changed.notified() => {}
                () = self.closed.cancelled() => return,
            }
            let Some(registry) = registry.upgrade() else {
                return;
            };
            match self.list().await {
                Ok(listed) => {
                    self.sync(&registry, listed);
                }
                Err(error) => tracing::warn!(
                    server = %self.name,
                    %error,
                    "the tool list could not be read after a change; it is read again at the next one"
                ),
            }
        }
    }

    /// Brings `registry` in line with the server's `listed` tools: removes
    /// the ones gone or changed, offers the others it does not hold (the
    /// ones refused before included), and publishes what it did.
    pub(super) fn sync(
        self: &Arc<Self>,
        registry: &Registry,
        listed: Vec<(String, Value)>,
    ) -> Synced {
        let (listed, held) = self.vet(listed);
        let mut synced = Synced {
            held,
            ..Synced::default()
        };
        let mut known = self.known();
        // Of two tools listed under one name the first counts; the second
        // is offered, and refused as a duplicate.
        let mut first: HashMap<&str, &Value> = HashMap::new();
        for (name, raw) in &listed {
            first.entry(name).or_insert(raw);
        }
        known.retain(|name, raw| {
            let keep = first.get(name.as_str()) == Some(&&*raw);
            if !keep && registry.remove(name) {
                synced.removed.push(name.clone());
            }
            keep
        });
        let mut seen = HashSet::new();
        for (name, raw) in listed {
            if seen.insert(name.clone()) && known.contains_key(&name) {
                continue;
            }
            match registry.add(self.tool_def(&raw)) {
                Ok(()) => {
                    synced.added.push(name.clone());
                    known.insert(name, raw);
                }
                Err(error) => {
                    let original = raw["name"].as_str().unwrap_or_default().to_owned();
                    tracing::warn!(
                        server = %self.name,
                        tool = %original,
                        %error,
                        "the registry refused a tool of the MCP server; it is left out"
                    );
                    synced.refused.push(Refused {
                        name,
                        original,
                        error,
                    });
                }
            }
        }
        drop(known);
        synced.removed.sort();
        self.synced.send_replace(synced.clone());
        synced
    }
}
