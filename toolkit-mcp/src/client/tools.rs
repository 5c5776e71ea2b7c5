//! The server's tools as tools of a registry: listed, made run-time tools,
//! and kept in line with the server's list.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};

use rmcp::model::ServerResult;
use serde_json::Value;
use tokio::sync::watch;
use toolkit_core::{CallContext, Registry, ToolDef};

use super::connection::Shared;
use super::error::ClientError;
use super::requests::list_tools;
use super::synced::{Refused, Synced};
use super::{McpClient, names};

impl McpClient {
    /// The server's tools, as run-time tools for a registry, in the
    /// server's order.
    pub async fn tools(&self) -> Result<Vec<ToolDef>, ClientError> {
        let listed = self.shared.list().await?;
        let mut known = self.shared.known();
        known.clear();
        Ok(listed
            .into_iter()
            .map(|(name, raw)| {
                let def = self.shared.tool_def(&raw);
                known.insert(name, raw);
                def
            })
            .collect())
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
    /// The server's tools, by our name, as the server described them.
    pub(super) async fn list(&self) -> Result<Vec<(String, Value)>, ClientError> {
        let (peer, generation) = self.peer().await?;
        let listed = self.list_all(&peer, list_tools, |answer| match answer {
            ServerResult::ListToolsResult(page) => Some((page.tools, page.next_cursor)),
            _ => None,
        });
        let tools = match listed.await {
            Ok(tools) => tools,
            Err(error) => {
                self.forget(generation).await;
                return Err(self.error(format!("listing its tools failed: {error}")));
            }
        };
        tools
            .iter()
            .map(|tool| {
                let raw = serde_json::to_value(tool)
                    .map_err(|error| self.error(format!("a tool it listed: {error}")))?;
                Ok((names::tool_name(&self.prefix, &tool.name), raw))
            })
            .collect()
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
        let mut synced = Synced::default();
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
