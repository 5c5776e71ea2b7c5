//! The host's values, one per type, that tools receive: the registry's,
//! shared by every call, and a run's own, given to the calls of one run.

use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// The host's shared values, one per type, handed to `#[tool(state)]`
/// parameters.
// Values behind `Arc`, so that a run's map is copied, not rebuilt, when a
// value is added to a shared one.
#[derive(Default, Clone)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    /// Types the host promised to give each run (see
    /// [`RegistryBuilder::state_per_run`](crate::RegistryBuilder::state_per_run)).
    per_run: HashSet<TypeId>,
}

impl StateMap {
    pub(crate) fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Arc::new(value));
    }

    pub(crate) fn promise<T: Send + Sync + 'static>(&mut self) {
        self.per_run.insert(TypeId::of::<T>());
    }

    /// Whether a tool needing this type can be served: by the registry's
    /// value, or by the one each run is to give.
    pub(crate) fn contains(&self, type_id: TypeId) -> bool {
        self.values.contains_key(&type_id) || self.per_run.contains(&type_id)
    }

    pub(crate) fn get<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
            .cloned()
    }

    fn len(&self) -> usize {
        self.values.len()
    }
}

/// One run's own values, one per type: the user the run acts for, a
/// database handle, permissions. A tool reads them like the registry's
/// shared values (a `#[tool(state)]` parameter, or
/// [`CallContext::state`](crate::CallContext::state)); a run's value takes
/// the place of the registry's value of the same type for that run's calls
/// only, so concurrent runs on one registry never see each other's.
///
/// Cloning is cheap (a reference count).
///
/// ```
/// use toolkit_core::{Registry, RunState, tool, tools};
///
/// #[derive(Clone)]
/// struct UserId(u64);
///
/// /// Who is asking.
/// #[tool]
/// fn whoami(#[tool(state)] user: UserId) -> String {
///     format!("user {}", user.0)
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// // The registry is told that each run gives a `UserId`.
/// let registry = Registry::builder()
///     .tools(tools![whoami])
///     .state_per_run::<UserId>()
///     .build()?;
/// let call = toolkit_core::ToolCall::new("c1", "whoami", serde_json::json!({}));
/// let alice = RunState::new().with(UserId(7));
/// let outcome = registry.dispatch(&call).state(&alice).await;
/// assert_eq!(outcome.result.as_text(), Ok("user 7"));
///
/// // A call outside any run that gives one is an error result, not a panic.
/// let outcome = registry.dispatch(&call).await;
/// assert!(outcome.result.is_error());
/// # Ok::<(), toolkit_core::RegistryError>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Default)]
pub struct RunState(Arc<StateMap>);

impl RunState {
    /// No values.
    pub fn new() -> Self {
        Self::default()
    }

    /// These values and `value` (replacing one of the same type).
    pub fn with<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        Arc::make_mut(&mut self.0).insert(value);
        self
    }

    /// The value of type `T`, if the run has one.
    pub fn get<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.0.get::<T>()
    }

    /// Whether the run holds no value.
    pub fn is_empty(&self) -> bool {
        self.0.len() == 0
    }
}

impl fmt::Debug for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Values are the host's (handles, secrets): only their number shows.
        f.debug_struct("RunState")
            .field("values", &self.0.len())
            .finish()
    }
}
