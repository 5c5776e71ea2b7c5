//! The host's values, one per type, that tools receive.

use std::any::{Any, TypeId};
use std::collections::HashMap;

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
