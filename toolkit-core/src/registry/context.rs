//! What a tool can learn about the call it is answering.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

use crate::ToolDef;
use crate::tool::Name;

/// The per-call context: which call this is, and whether the host wants it
/// stopped.
///
/// A tool receives it through a parameter marked `#[tool(context)]`; it never
/// appears in the tool's schema.
///
/// ```
/// use toolkit_core::{CallContext, tool};
///
/// /// Waits, giving up early if the host cancels the call.
/// #[tool]
/// async fn wait(
///     /// Seconds to wait.
///     seconds: u8,
///     #[tool(context)] call: CallContext,
/// ) -> String {
///     let sleep = tokio::time::sleep(std::time::Duration::from_secs(seconds.into()));
///     tokio::select! {
///         () = sleep => format!("waited {seconds}s"),
///         () = call.cancellation().cancelled() => "cancelled".to_string(),
///     }
/// }
/// ```
#[derive(Clone)]
pub struct CallContext {
    call_id: Arc<str>,
    tool_name: Name,
    cancellation: Cancellation,
    state: Arc<StateMap>,
}

impl CallContext {
    /// The id the provider gave the call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        &self.tool_name
    }

    /// The call's cancellation signal.
    pub fn cancellation(&self) -> &Cancellation {
        &self.cancellation
    }

    /// A clone of the host's state of type `T`, if the host provided one.
    pub fn state<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.state.get::<T>()
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("call_id", &self.call_id)
            .field("tool_name", &self.tool_name)
            .field("cancelled", &self.cancellation.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// The call being answered, borrowed from the registry and the caller: what
/// the code `#[tool]` generates reads hidden parameters from. Not a public
/// API.
///
/// Borrowed, so that a tool without hidden parameters costs its call no
/// reference counts; a [`CallContext`] is made only for a tool that asks.
#[doc(hidden)]
pub struct CallSite<'a> {
    call_id: &'a str,
    tool: &'a ToolDef,
    cancellation: &'a Cancellation,
    state: &'a Arc<StateMap>,
}

impl<'a> CallSite<'a> {
    pub(crate) fn new(
        call_id: &'a str,
        tool: &'a ToolDef,
        cancellation: &'a Cancellation,
        state: &'a Arc<StateMap>,
    ) -> Self {
        Self {
            call_id,
            tool,
            cancellation,
            state,
        }
    }

    /// The name of the tool being called.
    pub fn tool_name(&self) -> &str {
        self.tool.name()
    }

    /// The call's context, for a `#[tool(context)]` parameter.
    pub fn context(&self) -> CallContext {
        CallContext {
            call_id: Arc::from(self.call_id),
            tool_name: self.tool.shared_name(),
            cancellation: self.cancellation.clone(),
            state: Arc::clone(self.state),
        }
    }

    /// A clone of the host's state of type `T`, for a `#[tool(state)]`
    /// parameter.
    pub fn state<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.state.get::<T>()
    }
}

/// A signal the host raises to ask running calls to stop.
///
/// Clones share the signal. Cancelling is a request: a tool that never looks
/// at it runs to the end (or to its timeout).
#[derive(Clone, Default)]
pub struct Cancellation(Arc<CancellationInner>);

#[derive(Default)]
struct CancellationInner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl Cancellation {
    /// A signal not yet raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the signal, waking every task waiting on it.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Whether the signal was raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Completes when the signal is raised (at once if it already was).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.notify.notified();
            // Checked after creating the waiter, so a cancel between the
            // check and the wait cannot be missed.
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

impl fmt::Debug for Cancellation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Cancellation")
            .field(&self.is_cancelled())
            .finish()
    }
}

/// The host's shared values, one per type, handed to `#[tool(state)]`
/// parameters.
#[derive(Default)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl StateMap {
    pub(crate) fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Box::new(value));
    }

    pub(crate) fn contains(&self, type_id: TypeId) -> bool {
        self.values.contains_key(&type_id)
    }

    pub(crate) fn get<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
            .cloned()
    }
}
