//! Hints about a tool's behaviour, for clients that show or gate tools.

/// Hints about what a tool does, as MCP's `ToolAnnotations` carries them
/// (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`).
///
/// Each hint is unset until said: an unset hint is left out of the
/// definition, and clients assume MCP's defaults (not read-only,
/// destructive, not idempotent, open world). Hints are not guarantees: a
/// client must not trust them from a server it does not trust. Providers
/// whose tool lists have no such fields ignore them.
///
/// ```
/// use toolkit_core::Annotations;
///
/// let hints = Annotations::new().read_only(true).open_world(false);
/// assert_eq!(hints.read_only, Some(true));
/// assert_eq!(hints.destructive, None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Annotations {
    /// The tool does not change its environment.
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite (meaningful when not read-only).
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    pub idempotent: Option<bool>,
    /// The tool reaches an open world (the web, other systems), not a
    /// closed one (a local database).
    pub open_world: Option<bool>,
}

impl Annotations {
    /// No hints.
    pub const fn new() -> Self {
        Self {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        }
    }

    /// Says whether the tool only reads.
    pub const fn read_only(mut self, value: bool) -> Self {
        self.read_only = Some(value);
        self
    }

    /// Says whether the tool may destroy or overwrite.
    pub const fn destructive(mut self, value: bool) -> Self {
        self.destructive = Some(value);
        self
    }

    /// Says whether repeating a call changes nothing more.
    pub const fn idempotent(mut self, value: bool) -> Self {
        self.idempotent = Some(value);
        self
    }

    /// Says whether the tool reaches an open world.
    pub const fn open_world(mut self, value: bool) -> Self {
        self.open_world = Some(value);
        self
    }

    /// Whether no hint is set.
    pub const fn is_empty(&self) -> bool {
        self.read_only.is_none()
            && self.destructive.is_none()
            && self.idempotent.is_none()
            && self.open_world.is_none()
    }
}
