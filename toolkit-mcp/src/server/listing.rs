//! The served tool list, as rmcp's `Tool`s, made again only when the
//! registry's list changed: Streamable HTTP looks a tool up on every call.

use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt;
use rmcp::ErrorData;
use rmcp::model::Tool;
use toolkit_core::{Provider, Registry, ToolListChanges};

pub(crate) struct Listing {
    registry: Arc<Registry>,
    cached: Mutex<Cached>,
}

struct Cached {
    changes: ToolListChanges,
    tools: Option<Arc<[Tool]>>,
}

impl Listing {
    pub(crate) fn new(registry: Arc<Registry>) -> Self {
        let changes = registry.changes();
        Self {
            registry,
            cached: Mutex::new(Cached {
                changes,
                tools: None,
            }),
        }
    }

    /// The enabled tools, in registration order.
    pub(crate) fn tools(&self) -> Result<Arc<[Tool]>, ErrorData> {
        let mut cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        if cached.changes.has_changed() {
            // Marked seen before the list is made, so that a change made
            // meanwhile makes it again next time.
            let _ = cached.changes.changed().now_or_never();
            cached.tools = None;
        }
        if let Some(tools) = &cached.tools {
            return Ok(Arc::clone(tools));
        }
        let definitions = self
            .registry
            .tool_list(Provider::Mcp)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let tools: Vec<Tool> = serde_json::from_value(definitions.to_value())
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        let tools: Arc<[Tool]> = tools.into();
        cached.tools = Some(Arc::clone(&tools));
        Ok(tools)
    }
}
