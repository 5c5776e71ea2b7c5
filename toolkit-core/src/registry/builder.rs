//! Building a registry, and everything that can be wrong with one.

use std::fmt;
use std::time::Duration;

use super::{Entry, catalogue, suggest};
use crate::call::state::StateMap;
use crate::name::{is_portable, portable};
use crate::telemetry::Redaction;
use crate::{Provider, Registry, ToolDef};

/// Collects tools, host state and settings, and checks them all at
/// [`build`](Self::build).
///
/// ```
/// use std::time::Duration;
/// use toolkit_core::{Provider, Registry, tool, tools};
///
/// /// Reads the configuration.
/// #[tool]
/// fn config(#[tool(state)] path: std::path::PathBuf) -> String {
///     path.display().to_string()
/// }
///
/// let registry = Registry::builder()
///     .tools(tools![config])
///     .state(std::path::PathBuf::from("/etc/app.toml"))
///     .timeout(Duration::from_secs(30))
///     .require(Provider::OpenAiStrict)
///     .build()?;
/// # Ok::<(), toolkit_core::RegistryError>(())
/// ```
#[derive(Default)]
pub struct RegistryBuilder {
    pub(super) defs: Vec<ToolDef>,
    wanted_names: Vec<String>,
    excluded: Vec<String>,
    state: StateMap,
    timeout: Option<Duration>,
    tool_timeouts: Vec<(String, Duration)>,
    required: Vec<Provider>,
    redaction: Option<Redaction>,
}

impl RegistryBuilder {
    /// Adds one tool: a `#[tool]`'s definition
    /// ([`Tool::definition`](crate::Tool::definition)) or one made at run
    /// time ([`ToolDef::builder`]).
    pub fn tool(mut self, def: impl Into<ToolDef>) -> Self {
        self.defs.push(def.into());
        self
    }

    /// Adds tools, for example [`tools![search, fetch]`](crate::tools).
    pub fn tools<T: Into<ToolDef>>(mut self, defs: impl IntoIterator<Item = T>) -> Self {
        self.defs.extend(defs.into_iter().map(Into::into));
        self
    }

    /// Adds every `#[tool]` in the program (the global catalogue), in
    /// module-path then name order.
    pub fn catalogue(self) -> Self {
        self.catalogue_where(|_| true)
    }

    /// Adds the catalogue's tools defined in the module `path` or below it,
    /// such as `my_app::tools`.
    pub fn catalogue_module(self, path: &str) -> Self {
        let prefix = format!("{path}::");
        self.catalogue_where(|def| {
            let module = catalogue::module_path(def);
            module == path || module.starts_with(&prefix)
        })
    }

    /// Adds the catalogue's tools of these names; a name with no tool is an
    /// error at [`build`](Self::build).
    pub fn catalogue_names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        self = self.catalogue_where(|def| names.iter().any(|name| name == def.name()));
        self.wanted_names.extend(names);
        self
    }

    /// Leaves these tools out (browser-use's `exclude_actions`); a name with
    /// no tool is an error at [`build`](Self::build).
    pub fn exclude<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.excluded.extend(names.into_iter().map(Into::into));
        self
    }

    /// Provides a value to every `#[tool(state)]` parameter of type `T`.
    /// Values are looked up by type; a second value of the same type
    /// replaces the first.
    pub fn state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Declares that each run gives its own value of type `T` (a
    /// [`RunState`](crate::RunState)), so that tools needing one pass the
    /// build's check without a shared value. A call made outside such a run
    /// is an error result naming the missing type.
    pub fn state_per_run<T: Clone + Send + Sync + 'static>(mut self) -> Self {
        self.state.promise::<T>();
        self
    }

    /// The time limit for every call (none by default). A call past it is
    /// stopped and answered with an error result. A sync tool cannot be
    /// stopped: its thread finishes in the background, its result dropped.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The time limit for one tool, overriding [`timeout`](Self::timeout).
    pub fn tool_timeout(mut self, name: impl Into<String>, limit: Duration) -> Self {
        self.tool_timeouts.push((name.into(), limit));
        self
    }

    /// Makes [`build`](Self::build) fail unless every tool's schema can be
    /// lowered for `provider` (say, OpenAI strict mode, or Gemini).
    pub fn require(mut self, provider: Provider) -> Self {
        self.required.push(provider);
        self
    }

    /// Passes the content a call's span captures (its arguments and its
    /// result, recorded only while
    /// [`telemetry::captures_content`](crate::telemetry::captures_content)
    /// says so) through `redact` before any subscriber sees it: the tools
    /// that handle secrets (a browser's typed passwords) keep them out of
    /// traces with the redaction they already apply to what the model
    /// reads. A later call replaces an earlier one.
    ///
    /// ```
    /// use toolkit_core::{Registry, tool, tools};
    ///
    /// /// Echoes.
    /// #[tool]
    /// fn echo(/** What. */ text: String) -> String {
    ///     text
    /// }
    ///
    /// let registry = Registry::builder()
    ///     .tools(tools![echo])
    ///     .redact_captured(|text| text.replace("hunter2", "[secret]"))
    ///     .build()?;
    /// # Ok::<(), toolkit_core::RegistryError>(())
    /// ```
    pub fn redact_captured(
        mut self,
        redact: impl Fn(&str) -> String + Send + Sync + 'static,
    ) -> Self {
        self.redaction = Some(std::sync::Arc::new(redact));
        self
    }

    /// Checks everything and builds the registry. Every problem found is
    /// reported, not only the first.
    pub fn build(self) -> Result<Registry, RegistryError> {
        let mut problems = Vec::new();
        let all_names: Vec<&str> = self.defs.iter().flat_map(ToolDef::names).collect();
        let unknown = |name: &str, problems: &mut Vec<Problem>| {
            if !all_names.contains(&name) {
                problems.push(Problem::UnknownName {
                    name: name.to_owned(),
                    suggestions: suggest::closest(name, all_names.iter().copied()),
                });
            }
        };
        for name in self.wanted_names.iter().chain(&self.excluded) {
            unknown(name, &mut problems);
        }
        for (name, _) in &self.tool_timeouts {
            unknown(name, &mut problems);
        }
        let checks = Checks {
            timeout: self.timeout,
            required: self.required,
        };
        // Excluded first: leaving a tool out also settles its name clashes.
        let kept = self
            .defs
            .iter()
            .filter(|def| !self.excluded.iter().any(|name| def.is_named(name)));
        let mut entries: Vec<Entry> = Vec::new();
        for def in kept {
            if let Some((first, name)) = entries
                .iter()
                .find_map(|e| e.def.shared_name(def).map(|name| (e, name)))
            {
                // The same definition reached twice (listed and from the
                // catalogue, say) is one tool, not a clash.
                if !first.def.same_as(def) {
                    problems.push(Problem::duplicate(name, &first.def, def));
                }
                continue;
            }
            checks.check(def, &self.state, &mut problems);
            let timeout = self
                .tool_timeouts
                .iter()
                .rev()
                .find(|(name, _)| def.is_named(name))
                .map(|(_, limit)| *limit)
                .or(checks.timeout);
            entries.push(Entry::new(def.clone(), timeout));
        }
        if problems.is_empty() {
            Ok(Registry::from_parts(
                entries,
                self.state,
                checks,
                self.redaction,
            ))
        } else {
            Err(RegistryError { problems })
        }
    }
}

/// What every tool of a registry is checked against, at build and when
/// added later.
pub(crate) struct Checks {
    pub(crate) timeout: Option<Duration>,
    required: Vec<Provider>,
}

impl Checks {
    /// Checks one tool: its name, the host state it needs, its schema and
    /// the required providers' lowerings.
    pub(crate) fn check(&self, def: &ToolDef, state: &StateMap, problems: &mut Vec<Problem>) {
        let tool = def.name();
        if !is_portable(tool) {
            problems.push(Problem::BadName {
                name: tool.to_owned(),
                portable: portable(tool).into_owned(),
            });
        }
        for need in def.states() {
            if !state.contains((need.type_id)()) {
                problems.push(Problem::MissingState {
                    tool: tool.to_owned(),
                    type_name: need.type_name(),
                });
            }
        }
        let schema = def.schema();
        if let Err(error) = schema.canonical() {
            problems.push(Problem::Schema {
                tool: tool.to_owned(),
                reason: error.to_string(),
            });
            return;
        }
        for &provider in &self.required {
            if let Err(reason) = schema.lowered(provider) {
                problems.push(Problem::Provider {
                    tool: tool.to_owned(),
                    provider,
                    reason: reason.to_string(),
                });
            }
        }
    }
}

impl Problem {
    /// Two tools answering to `name`.
    pub(crate) fn duplicate(name: &str, first: &ToolDef, second: &ToolDef) -> Self {
        Problem::Duplicate {
            name: name.to_owned(),
            first: first.origin().to_string(),
            second: second.origin().to_string(),
        }
    }
}

/// Why a registry could not be built: every problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryError {
    problems: Vec<Problem>,
}

impl RegistryError {
    pub(crate) fn new(problems: Vec<Problem>) -> Self {
        Self { problems }
    }

    /// The problems, in the order found.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                write!(f, "{} problems:", many.len())?;
                for problem in many {
                    write!(f, "\n- {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for RegistryError {}

/// One thing wrong with a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// Two different tools share a name.
    Duplicate {
        /// The name.
        name: String,
        /// Where the first is defined: a `#[tool]`'s function by its path
        /// (`my_app::tools::search`), or a run-time tool's source.
        first: String,
        /// Where the second is defined.
        second: String,
    },
    /// A name that not every provider accepts (run-time tools; `#[tool]`
    /// checks its names at compile time).
    BadName {
        /// The name.
        name: String,
        /// The same name made portable, to give as the tool's
        /// [wire name](crate::ToolBuilder::wire_name).
        portable: String,
    },
    /// A name given to the builder matches no tool.
    UnknownName {
        /// The name given.
        name: String,
        /// The closest tool names.
        suggestions: Vec<String>,
    },
    /// A tool needs host state that was not provided.
    MissingState {
        /// The tool.
        tool: String,
        /// The Rust type it needs.
        type_name: &'static str,
    },
    /// A tool's schema could not be made canonical.
    Schema {
        /// The tool.
        tool: String,
        /// Why.
        reason: String,
    },
    /// A tool's schema cannot be sent to a required provider.
    Provider {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Why.
        reason: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate {
                name,
                first,
                second,
            } => write!(
                f,
                "two tools are named `{name}`: `{first}` and `{second}`; give one another name: `#[tool(name = \"...\")]` on a function, `.wire_name(\"...\")` on a run-time tool"
            ),
            Self::UnknownName { name, suggestions } => {
                write!(f, "no tool is named `{name}`")?;
                if !suggestions.is_empty() {
                    write!(f, "; did you mean `{}`?", suggestions.join("`, `"))?;
                }
                Ok(())
            }
            Self::BadName { name, portable } => write!(
                f,
                "`{name}` is not a valid tool name: every provider accepts `^[a-zA-Z_][a-zA-Z0-9_-]{{0,63}}$`; \
                 send it to models as `{portable}` with `.wire_name(\"{portable}\")`, keeping `{name}` as its own name"
            ),
            Self::MissingState { tool, type_name } => write!(
                f,
                "the tool `{tool}` needs a `{type_name}`: provide it with `.state(...)`"
            ),
            Self::Schema { tool, reason } => write!(f, "the schema of `{tool}`: {reason}"),
            Self::Provider {
                tool,
                provider,
                reason,
            } => write!(
                f,
                "the tool `{tool}` cannot be sent to {provider}: {reason}"
            ),
        }
    }
}
