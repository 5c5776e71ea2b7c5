//! The program's global catalogue: every `#[tool]` not opted out, gathered
//! at link time.

use crate::{Origin, RegistryBuilder, ToolDef};

/// A `#[tool]` in the catalogue; the attribute submits one per tool.
// Exhaustive on purpose: a newtype the `#[tool]` expansion builds in a static.
pub struct CatalogueEntry(pub &'static ToolDef);

inventory::collect!(CatalogueEntry);

/// The module a catalogued tool is defined in (every one is a `#[tool]`).
pub(super) fn module_path(def: &ToolDef) -> &'static str {
    match def.origin() {
        Origin::Function { module_path, .. } => module_path,
        _ => "",
    }
}

impl RegistryBuilder {
    pub(super) fn catalogue_where(mut self, keep: impl Fn(&ToolDef) -> bool) -> Self {
        let mut found: Vec<&'static ToolDef> = inventory::iter::<CatalogueEntry>
            .into_iter()
            .map(|entry| entry.0)
            .filter(|def| keep(def))
            .collect();
        // Link order is not stable across builds; names are.
        found.sort_by_key(|def| (module_path(def), def.name()));
        self.defs.extend(found.into_iter().cloned());
        self
    }
}
