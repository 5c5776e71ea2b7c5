//! The agent: a model, a registry and the host's rules, run until the task
//! is done; sessions that continue, pause and resume.

mod answer_policy;
mod approvals;
mod calls;
mod journal;
mod limits;
pub(crate) mod outcome;
mod run;
mod scheduler;
mod typed;

use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use toolkit_core::{CallHost, OutputBudget, Registry};

use self::approvals::{Approval, ApprovalRules};
pub use self::limits::{Limits, ToolLimits};
pub use self::outcome::{Outcome, RunError, SessionStateError, StopReason};
pub use self::run::Run;
pub use self::typed::{AnswerMode, Typed, TypedRun};
use crate::conversation::{Conversation, ToolChoice};
use crate::model::Model;
use crate::observation::Observation;
use crate::search::ToolSearch;
use crate::session::{Decision, PendingCall, Session};
use crate::settings::Settings;
use crate::store::SessionStore;

/// A hook that adjusts a new session's conversation.
type Configure = Arc<dyn Fn(&mut Conversation) + Send + Sync>;

/// A hook that observes the world at the start of each step.
type Observe = Arc<dyn Fn(usize) -> BoxFuture<'static, Option<Observation>> + Send + Sync>;

/// A model, a registry and the host's rules, run until the task is done.
///
/// [`run`](Self::run) runs one task; [`session`](Self::session) and
/// [`send`](Self::send) hold a conversation over many messages;
/// [`resume`](Self::resume) continues a run that paused for a decision or
/// was cut short. Each returns a [`Run`], awaited for its [`Outcome`]:
///
/// ```no_run
/// # async fn demo(agent: toolkit_agent::Agent<toolkit_agent::HttpModel>)
/// # -> Result<(), toolkit_agent::RunError> {
/// let outcome = agent.run("How many words in 'a b c'?").await?;
///
/// let mut chat = agent.session();
/// agent.send(&mut chat, "Hello").await?;
/// let outcome = agent.send(&mut chat, "And then?").await?;
/// # Ok(()) }
/// ```
pub struct Agent<M> {
    model: M,
    name: Option<String>,
    registry: Arc<Registry>,
    instructions: Option<String>,
    limits: Limits,
    tool_limits: Vec<(String, ToolLimits)>,
    approval: Option<Approval>,
    rules: ApprovalRules,
    stop_after: Vec<String>,
    tool_choice: ToolChoice,
    stream: bool,
    configure: Option<Configure>,
    observe: Option<Observe>,
    budget: Option<OutputBudget>,
    store: Option<Arc<dyn SessionStore>>,
    settings: Option<Settings>,
    strict: Option<bool>,
    host: Option<CallHost>,
    tool_search: Option<ToolSearch>,
}

impl<M> fmt::Debug for Agent<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.name)
            .field("instructions", &self.instructions.is_some())
            .field("limits", &self.limits)
            .field("stop_after", &self.stop_after)
            .finish_non_exhaustive()
    }
}

/// Builds an [`Agent`]; [`build`](Self::build) checks every tool name the
/// rules give against the registry.
#[must_use = "a builder does nothing until `build`"]
pub struct AgentBuilder<M> {
    agent: Agent<M>,
}

/// Why an agent could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A rule names a tool the registry does not have (a typo would
    /// otherwise leave the real tool without the rule).
    UnknownTool {
        /// The rule: `needs_approval`, `trust`, `stop_after`, `tool_limits`,
        /// `tool_search`.
        rule: &'static str,
        /// The name given.
        name: String,
        /// The registry's tools, for the message.
        known: Vec<String>,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTool { rule, name, known } => write!(
                f,
                "`{rule}` names `{name}`, which is not a tool of the registry (its tools: {})",
                known.join(", ")
            ),
        }
    }
}

impl std::error::Error for BuildError {}

impl<M: Model> Agent<M> {
    /// An agent running `registry`'s tools with `model`, with the default
    /// rules: tools that declare `needs_approval` and tools marked
    /// destructive wait for a decision; nothing else does.
    pub fn new(model: M, registry: impl Into<Arc<Registry>>) -> Self {
        Self {
            model,
            name: None,
            registry: registry.into(),
            instructions: None,
            limits: Limits::default(),
            tool_limits: Vec::new(),
            approval: None,
            rules: ApprovalRules::default(),
            stop_after: Vec::new(),
            tool_choice: ToolChoice::Auto,
            stream: false,
            configure: None,
            observe: None,
            budget: None,
            store: None,
            settings: None,
            strict: None,
            host: None,
            tool_search: None,
        }
    }

    /// A builder for an agent with instructions, limits and rules.
    ///
    /// ```
    /// use toolkit_agent::{Agent, BuildError, HttpModel};
    /// use toolkit_core::{Registry, tool, tools};
    ///
    /// /// Book a meeting.
    /// #[tool(destructive)]
    /// fn book(/** Who. */ with: String) -> String {
    ///     format!("booked with {with}")
    /// }
    ///
    /// let registry = Registry::builder().tools(tools![book]).build()?;
    /// let model = HttpModel::openai_chat("m").no_key().build()?;
    /// let typo = Agent::builder(model, registry).stop_after("bokk").build();
    /// assert!(matches!(typo, Err(BuildError::UnknownTool { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder(model: M, registry: impl Into<Arc<Registry>>) -> AgentBuilder<M> {
        AgentBuilder {
            agent: Self::new(model, registry),
        }
    }

    /// The registry whose tools the agent runs.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// A new session: an empty conversation in the model's provider, with
    /// the agent's instructions and settings.
    pub fn session(&self) -> Session {
        let mut conversation = Conversation::new(self.model.provider());
        conversation.set_tool_choice(self.tool_choice.clone());
        if let Some(settings) = &self.settings {
            conversation.set_settings(settings.clone());
        }
        if let Some(budget) = &self.budget {
            conversation.set_output_budget(budget.clone());
        }
        if self.tool_search.is_some() {
            conversation.set_tool_search(self.tool_search.clone());
        }
        if let Some(configure) = &self.configure {
            configure(&mut conversation);
        }
        Session::new(conversation)
    }

    /// Runs `task` in a new session, to its end.
    pub fn run(&self, task: impl Into<String>) -> Run<'_, M> {
        Run::new(
            self,
            run::Slot::Owned(Box::new(self.session())),
            Some(task.into()),
        )
    }

    /// Sends the user's next message in `session` and runs to the end of
    /// the model's answer. The run before must have ended: a paused one is
    /// [resumed](Self::resume) first.
    pub fn send<'a>(&'a self, session: &'a mut Session, message: impl Into<String>) -> Run<'a, M> {
        Run::new(self, run::Slot::Borrowed(session), Some(message.into()))
    }

    /// Goes on with `session`'s run where it stopped: after the host
    /// [decided](Session::decide) the waiting calls, or in a new process
    /// after the old one died. Nothing that was recorded as started runs
    /// again without a decision (see [`CallStatus`](crate::CallStatus)).
    pub fn resume<'a>(&'a self, session: &'a mut Session) -> Run<'a, M> {
        Run::new(self, run::Slot::Borrowed(session), None)
    }

    /// The session the store keeps under `id`.
    pub async fn load(&self, id: &str) -> Result<Session, RunError> {
        let Some(store) = &self.store else {
            return Err(SessionStateError::NoStore.into());
        };
        store
            .load(id)
            .await?
            .ok_or_else(|| SessionStateError::NotFound(id.to_owned()).into())
    }

    /// A new conversation for a task, as a run starts it (for hosts that
    /// drive the model themselves).
    pub fn conversation(&self, task: &str) -> Result<Conversation, toolkit_core::ToolListError> {
        let mut conversation = self.session().conversation;
        self.prepare(&mut conversation)?;
        conversation.push_user(task);
        Ok(conversation)
    }

    /// Sets what may change between turns: the instructions and the tool
    /// list, as they are now.
    fn prepare(&self, conversation: &mut Conversation) -> Result<(), toolkit_core::ToolListError> {
        if let Some(instructions) = &self.instructions {
            conversation.set_instructions(instructions.clone());
        }
        conversation.set_tools(&self.registry)?;
        match self.strict {
            Some(strict) => conversation.set_strict(strict),
            None => Ok(()),
        }
    }
}

impl<M: Model> AgentBuilder<M> {
    /// The agent's name, for people reading traces: each run's span is
    /// `invoke_agent {name}` with `gen_ai.agent.name` (docs/observability.md).
    /// Never sent to the model.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.agent.name = Some(name.into());
        self
    }

    /// The system instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.agent.instructions = Some(instructions.into());
        self
    }

    /// The run's limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.agent.limits = limits;
        self
    }

    /// One tool's limits within a run: uses, calls at once, time.
    pub fn tool_limits(mut self, tool: impl Into<String>, limits: ToolLimits) -> Self {
        self.agent.tool_limits.push((tool.into(), limits));
        self
    }

    /// The approval hook, asked about each call that waits for a decision
    /// (a tool needing approval; a call that may have run): it may approve,
    /// deny, edit, answer, or [defer](Decision::Defer) to a person, which
    /// pauses the run. Without a hook, such calls pause the run.
    ///
    /// ```no_run
    /// # fn demo(builder: toolkit_agent::AgentBuilder<toolkit_agent::HttpModel>) {
    /// use toolkit_agent::{CallStatus, Decision};
    ///
    /// builder.approval(|pending| async move {
    ///     // An object on every provider, whether the model wrote text or not.
    ///     let arguments = pending.call.arguments();
    ///     match pending.status {
    ///         // The process stopped while it ran: a person checks first.
    ///         CallStatus::MayHaveRun { .. } => Decision::Defer,
    ///         _ if arguments["day"] == "Sunday" => Decision::Deny("no meetings on Sundays".into()),
    ///         _ => Decision::Defer, // a person decides, later
    ///     }
    /// });
    /// # }
    /// ```
    pub fn approval<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(PendingCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Decision> + Send + 'static,
    {
        self.agent.approval = Some(Arc::new(move |pending| Box::pin(hook(pending))));
        self
    }

    /// Marks a tool as needing approval, besides those that declare it.
    pub fn needs_approval(mut self, tool: impl Into<String>) -> Self {
        self.agent.rules.marked.push(tool.into());
        self
    }

    /// Every call needs approval.
    pub fn approve_every_call(mut self) -> Self {
        self.agent.rules.all = true;
        self
    }

    /// Trusts a tool: marked destructive, it runs without approval; from
    /// elsewhere (an MCP server, a plugin), its hints that it is read-only
    /// (its calls are not recorded as started before they run) or
    /// idempotent (a call that may have run is run again) are believed.
    /// Hints of a tool from elsewhere are not believed otherwise: a server
    /// must not be able to turn off the record that keeps its calls from
    /// running twice.
    pub fn trust(mut self, tool: impl Into<String>) -> Self {
        self.agent.rules.trusted.push(tool.into());
        self
    }

    /// Stops the run after this tool runs (its result is the answer).
    pub fn stop_after(mut self, tool: impl Into<String>) -> Self {
        self.agent.stop_after.push(tool.into());
        self
    }

    /// Which calls the model may make.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.agent.tool_choice = choice;
        self
    }

    /// The request settings of every new session (temperature, output
    /// limit, reasoning effort, parallel calls), each sent in the model's
    /// dialect (see [`Settings`]).
    pub fn settings(mut self, settings: Settings) -> Self {
        self.agent.settings = Some(settings);
        self
    }

    /// Allows or forbids several calls in one turn: the earlier form of
    /// `settings(Settings::new().parallel_calls(parallel))`, kept for one
    /// release. It keeps the other settings already given.
    #[deprecated(
        since = "0.2.0",
        note = "use `settings(Settings::new().parallel_calls(parallel))`"
    )]
    pub fn parallel_calls(mut self, parallel: bool) -> Self {
        self.agent
            .settings
            .get_or_insert_with(Settings::default)
            .parallel_calls = Some(parallel);
        self
    }

    /// What the agent offers its tools' calls: where their
    /// [progress reports](toolkit_core::CallContext::report_progress) and
    /// [log messages](toolkit_core::CallContext::log) go, and who answers
    /// their [questions](toolkit_core::CallContext::elicit) to the user or
    /// the model. The same tool served over MCP asks the MCP client; run
    /// by this agent, it asks this host. Without one, a question is an
    /// error the tool sees, and log messages go nowhere.
    pub fn call_host(mut self, host: CallHost) -> Self {
        self.agent.host = Some(host);
        self
    }

    /// Sends the tools in OpenAI's strict mode (Chat Completions; other
    /// dialects are unchanged). A tool strict mode cannot express makes
    /// each run fail with [`RunError::Tools`], naming it.
    pub fn strict(mut self, strict: bool) -> Self {
        self.agent.strict = Some(strict);
        self
    }

    /// Defers tools and says how the model finds them (the guide's "Tool
    /// search" chapter): a deferred tool's definition is left out of
    /// requests until the model looks for it, with the provider's own
    /// tool search where it has one (Anthropic, OpenAI Responses) and the
    /// agent's [`search_tools`](crate::TOOL_SEARCH_TOOL) elsewhere. Tools
    /// [deferred on themselves](toolkit_core::ToolDef::is_deferred) are
    /// deferred without it. Each name given must be a tool of the
    /// registry.
    pub fn tool_search(mut self, search: ToolSearch) -> Self {
        self.agent.tool_search = Some(search);
        self
    }

    /// Streams each model turn: the same turns, and, in a run with events
    /// ([`Run::events`]), the model's text, reasoning and call arguments as
    /// they arrive ([`Event::TextDelta`](crate::Event::TextDelta),
    /// [`Event::ReasoningDelta`](crate::Event::ReasoningDelta),
    /// [`Event::ArgumentsDelta`](crate::Event::ArgumentsDelta)).
    pub fn streaming(mut self, stream: bool) -> Self {
        self.agent.stream = stream;
        self
    }

    /// Adjusts each new session's conversation (request settings such as
    /// `max_tokens`).
    pub fn configure(mut self, hook: impl Fn(&mut Conversation) + Send + Sync + 'static) -> Self {
        self.agent.configure = Some(Arc::new(hook));
        self
    }

    /// Observes the world at the start of each step (the hook gets the
    /// step's number, from 1): what it returns is shown to the model before
    /// the step's request, and older observations shrink to their
    /// [`later`](Observation::later) line. A browser agent shows the page
    /// map this way.
    pub fn observe<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(usize) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<Observation>> + Send + 'static,
    {
        self.agent.observe = Some(Arc::new(move |step| Box::pin(hook(step))));
        self
    }

    /// Saves outputs longer than the budget to files; the model sees their
    /// beginning and the file's name (see
    /// [`Conversation::set_output_budget`]).
    pub fn output_budget(mut self, budget: OutputBudget) -> Self {
        self.agent.budget = Some(budget);
        self
    }

    /// Where sessions are saved: at every step boundary, and before and
    /// after every call with side effects (every tool not marked
    /// read-only).
    pub fn store(mut self, store: impl SessionStore + 'static) -> Self {
        self.agent.store = Some(Arc::new(store));
        self
    }

    /// The agent, once every tool name its rules give is a tool of the
    /// registry.
    pub fn build(self) -> Result<Agent<M>, BuildError> {
        let mut agent = self.agent;
        let registry = Arc::clone(&agent.registry);
        // Each name becomes the name models call the tool by, so that a
        // rule given a tool's original name still applies to its calls.
        let resolve = |rule: &'static str, name: &mut String| match registry.get(name) {
            Some(def) => {
                *name = def.name().to_owned();
                Ok(())
            }
            None => Err(BuildError::UnknownTool {
                rule,
                name: name.clone(),
                known: registry.names().collect(),
            }),
        };
        for name in &mut agent.rules.marked {
            resolve("needs_approval", name)?;
        }
        for name in &mut agent.rules.trusted {
            resolve("trust", name)?;
        }
        for name in &mut agent.stop_after {
            resolve("stop_after", name)?;
        }
        for (name, _) in &mut agent.tool_limits {
            resolve("tool_limits", name)?;
        }
        if let Some(search) = &mut agent.tool_search {
            for name in search.names_mut() {
                resolve("tool_search", name)?;
            }
        }
        Ok(agent)
    }
}
