//! The transcript of a run, rendered as each provider's request body.

mod json_form;
mod search;

pub(crate) use self::json_form::{
    Changes as ConversationChanges, ReadChanges as ReadConversationChanges,
};

use std::ops::Range;

use serde_json::{Map, Value};
use toolkit_core::emit::{EmitOptions, EmitProblem, Emitted};
use toolkit_core::response::Turn;
use toolkit_core::{
    History, HistoryError, OutputBudget, Provider, Registry, ToolCallResult, ToolListError,
};

use crate::answer::AnswerSchema;
use crate::observation::Observation;
use crate::providers::{Api, Dialect, Transcript};
use crate::settings::Settings;
pub use crate::tool_choice::ToolChoice;

/// A conversation in one provider: system instructions, user messages,
/// assistant turns echoed as the provider requires, tool results and the
/// host's [observations](Observation).
///
/// [`request`](Self::request) gives the complete request body (without the
/// model's name, which the [`Model`](crate::Model) adds).
///
/// Results are recorded in a [`History`], which decides what the model
/// sees of them: errors and [memory](toolkit_core::ToolResult::with_memory)
/// lines always; [show-once](toolkit_core::ToolResult::with_show_once) content
/// in the request right after its step only (then its memory line, or a
/// line saying where it was saved); with an
/// [output budget](Self::set_output_budget), long outputs as their
/// beginning and the name of the file holding them whole. Each step's
/// results are emitted when added and kept; a step holding show-once
/// content is emitted once more, in its final form, when the next step's
/// results arrive. Nothing is emitted again at every step.
///
/// ```
/// use toolkit_agent::Conversation;
/// use toolkit_core::{Provider, ToolResult, ToolCallResult};
///
/// let mut conversation = Conversation::new(Provider::OpenAi);
/// conversation.push_user("List the products, then open the first.");
/// for (step, result) in [
///     ToolResult::text("[500 lines of products]").with_show_once().with_memory("50 products"),
///     ToolResult::text("opened"),
/// ]
/// .into_iter()
/// .enumerate()
/// {
///     let body = serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant",
///         "tool_calls": [{"id": format!("c{step}"), "type": "function",
///             "function": {"name": "tool", "arguments": "{}"}}]}}]});
///     let turn = Provider::OpenAi.read(&body).unwrap();
///     conversation.push_turn(&turn);
///     let seen = conversation.request().to_string();
///     conversation.push_results(&turn, vec![ToolCallResult::new(format!("c{step}"), "tool", result)]);
/// }
/// let request = conversation.request().to_string();
/// assert!(!request.contains("[500 lines of products]"));
/// assert!(request.contains("Memory: 50 products"));
/// ```
///
/// One form is changed on the way back: a call whose arguments are not
/// valid JSON is echoed with empty arguments (`{}`), since servers refuse
/// the broken text in an assistant message (llama.cpp answers HTTP 500);
/// the call's error result, which quotes what the model wrote, tells the
/// model what went wrong.
///
/// A conversation is saved as JSON and loaded back with serde, so that it
/// goes on in another process: the loaded conversation renders the same
/// requests and takes the next step as the original would. Loading refuses
/// a form it cannot go on from (another version, positions past the
/// items) with an error that says why. The form is documented in the
/// guide's "Saving a conversation" (`docs/round-trip.md`).
#[derive(Debug, Clone)]
pub struct Conversation {
    provider: Provider,
    instructions: Option<String>,
    items: Vec<Value>,
    tools: Option<Value>,
    /// Chat Completions only: the tool list in the other mode (strict or
    /// not), or why some tools cannot be sent in it, so that
    /// [`set_strict`](Self::set_strict) may come after
    /// [`set_tools`](Self::set_tools).
    other_mode_tools: Option<OtherMode>,
    tool_choice: ToolChoice,
    typed: Settings,
    answer: Option<AnswerSchema>,
    options: EmitOptions,
    /// Top-level fields set by [`set`](Self::set), written last.
    settings: Map<String, Value>,
    history: History,
    /// Where the latest step's results sit in `items`: they are emitted
    /// again, once, when they stop being the latest.
    latest: Option<LatestResults>,
    /// Where the latest observation sits in `items`, and what it becomes.
    observation: Option<ShownObservation>,
    /// Deferred tools, and those the model found.
    search: search::SearchState,
    /// What changed since the session was last saved. Every change to
    /// `items` goes through [`touch`](Self::touch) (an item missed there is
    /// an item a journaled store loses); the history only grows.
    pub(crate) tracker: Tracker,
}

/// Where a conversation stands against its last save, so that a store
/// writes what a step added, not the whole transcript again.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tracker {
    /// The save the positions below are counted from; `None`: never
    /// saved, or made or loaded without a store: all of it is new.
    pub(crate) base: Option<u64>,
    /// The lowest item changed (replaced, added, removed) since.
    pub(crate) items_from: usize,
    /// The history's steps then.
    pub(crate) steps_from: usize,
}

/// The Chat Completions tool list in the mode not in use.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum OtherMode {
    /// The list (`None` when there are no tools).
    Tools(Option<Value>),
    /// The tools that mode cannot take, each with the reason.
    Refused(Vec<(String, String)>),
}

#[derive(Debug, Clone)]
struct LatestResults {
    step: usize,
    items: Range<usize>,
    gemini_ids: bool,
}

#[derive(Debug, Clone)]
struct ShownObservation {
    item: usize,
    later: String,
}

/// What adding one step's results did.
#[derive(Debug)]
#[non_exhaustive]
pub struct Pushed {
    /// The step's number in the [`History`], from 1.
    pub step: usize,
    /// Images that could not be sent (each replaced, for the model, by a
    /// sentence saying why).
    pub problems: Vec<EmitProblem>,
    /// Outputs over the budget that could not be saved to a file; they were
    /// sent whole instead, so nothing was lost.
    pub unsaved: Option<HistoryError>,
}

impl Conversation {
    /// An empty conversation in `provider`.
    ///
    /// [`Provider::OpenAiStrict`] is Chat Completions with tools sent in
    /// strict mode. [`Provider::Mcp`] is not a model API; a conversation
    /// given it is written as Chat Completions.
    ///
    /// Anthropic requires an output-token limit: unless
    /// [settings](Self::set_settings) give one, it gets
    /// [`ANTHROPIC_DEFAULT_MAX_TOKENS`](crate::ANTHROPIC_DEFAULT_MAX_TOKENS).
    pub fn new(provider: Provider) -> Self {
        Self {
            provider,
            instructions: None,
            items: Vec::new(),
            tools: None,
            other_mode_tools: None,
            tool_choice: ToolChoice::Auto,
            typed: Settings::default(),
            answer: None,
            options: EmitOptions::default(),
            settings: Map::new(),
            history: History::new(),
            latest: None,
            observation: None,
            tracker: Tracker::default(),
            search: search::SearchState::default(),
        }
    }

    /// Notes that the items from `index` on changed since the last save.
    fn touch(&mut self, index: usize) {
        self.tracker.items_from = self.tracker.items_from.min(index);
    }

    /// Counts the changes from here: the state the store now holds, as
    /// saved under `mark`.
    pub(crate) fn mark_saved(&mut self, mark: u64) {
        self.tracker = Tracker {
            base: Some(mark),
            items_from: self.items.len(),
            steps_from: self.history.len(),
        };
    }

    /// The provider.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// Sets the system instructions.
    pub fn set_instructions(&mut self, instructions: impl Into<String>) {
        self.instructions = Some(instructions.into());
    }

    /// Sets the tool list to the registry's enabled tools.
    ///
    /// For Chat Completions the list is also written in the other mode
    /// (strict or not), so that [`set_strict`](Self::set_strict) can
    /// switch later; a tool that cannot be sent in that mode fails the
    /// switch, not this call.
    pub fn set_tools(&mut self, registry: &Registry) -> Result<(), ToolListError> {
        let api = Api::of(self.provider);
        let list = |api: Api| {
            registry
                .tool_list(api.provider())
                .map(|list| (!list.is_empty()).then(|| list.to_value()))
        };
        self.tools = list(api)?;
        self.read_deferred(registry);
        let other = api.other_mode().map(list);
        self.other_mode_tools = other.map(|other| match other {
            Ok(tools) => OtherMode::Tools(tools),
            Err(error) => OtherMode::Refused(error.tools),
        });
        Ok(())
    }

    /// Whether Chat Completions tools are sent in strict mode: switches
    /// between [`Provider::OpenAi`] and [`Provider::OpenAiStrict`], and the
    /// tool list already set with it, before or after
    /// [`set_tools`](Self::set_tools). Other providers are left as they
    /// are (Responses marks each tool strict when it can be).
    ///
    /// Fails, changing nothing, when some tools of the list cannot be sent
    /// in strict mode (a free-form map, for one), naming each.
    ///
    /// ```
    /// use toolkit_agent::Conversation;
    /// use toolkit_core::Provider;
    ///
    /// let registry = toolkit_example_tools::registry()?;
    /// let mut conversation = Conversation::new(Provider::OpenAi);
    /// conversation.set_tools(&registry)?;
    /// conversation.set_strict(true)?;
    /// assert_eq!(conversation.provider(), Provider::OpenAiStrict);
    /// assert_eq!(conversation.request()["tools"][0]["function"]["strict"], true);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_strict(&mut self, strict: bool) -> Result<(), ToolListError> {
        let api = Api::of(self.provider);
        // A conversation in a provider that is not a model API (MCP) is
        // left as it is, as are APIs without the choice.
        let target = match api.with_strict(strict) {
            Some(target) if target != api && api.provider() == self.provider => target.provider(),
            _ => return Ok(()),
        };
        match &mut self.other_mode_tools {
            Some(OtherMode::Refused(tools)) => {
                return Err(ToolListError::new(target, tools.clone()));
            }
            Some(OtherMode::Tools(other)) => std::mem::swap(&mut self.tools, other),
            None => {}
        }
        self.provider = target;
        Ok(())
    }

    /// Which calls the model may make.
    pub fn tool_choice(&self) -> &ToolChoice {
        &self.tool_choice
    }

    /// Sets which calls the model may make.
    pub fn set_tool_choice(&mut self, choice: ToolChoice) {
        self.tool_choice = choice;
    }

    /// Sets the typed request settings (temperature, output length,
    /// reasoning, parallel calls...), each written in the provider's own
    /// field: see [`Settings`] for the table. Fields set with
    /// [`set`](Self::set) are written after them, and win.
    pub fn set_settings(&mut self, settings: Settings) {
        self.typed = settings;
    }

    /// The typed request settings.
    pub fn settings(&self) -> &Settings {
        &self.typed
    }

    /// The typed request settings, to change one of them.
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.typed
    }

    /// Allows or forbids several calls in one turn: the earlier form of
    /// `settings_mut().parallel_calls = Some(parallel)`, kept for one release.
    #[deprecated(
        since = "0.2.0",
        note = "set `settings_mut().parallel_calls = Some(parallel)` instead"
    )]
    pub fn set_parallel_calls(&mut self, parallel: bool) {
        self.typed.parallel_calls = Some(parallel);
    }

    /// Asks for a final answer that keeps `schema`, in the provider's
    /// structured-output field (see [`AnswerSchema`] for each form);
    /// `None` asks for none. A field of the same name set with
    /// [`set`](Self::set) wins.
    ///
    /// Some models cannot take tools and a response schema in one request:
    /// give them [`AnswerSchema::tool`] among their tools instead.
    pub fn set_answer_schema(&mut self, schema: Option<AnswerSchema>) {
        self.answer = schema;
    }

    /// The schema the final answer must keep, if any.
    pub fn answer_schema(&self) -> Option<&AnswerSchema> {
        self.answer.as_ref()
    }

    /// How results are emitted.
    pub fn set_emit_options(&mut self, options: EmitOptions) {
        self.options = options;
    }

    /// Saves outputs longer than the budget to files: the model sees their
    /// beginning and the file's name (the ready tool
    /// [`read_output`](toolkit_core::builtin::read_output) reads them back).
    /// Applies to the steps added from now on.
    pub fn set_output_budget(&mut self, budget: OutputBudget) {
        self.history.set_budget(Some(budget));
    }

    /// The results of every step so far, kept whole.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Sets a top-level request field, for what [`Settings`] does not
    /// name (`top_k`, `service_tier`, `safetySettings`).
    ///
    /// The body is written in this order, each step replacing the fields
    /// the one before wrote: the transcript and tools, then the
    /// [typed settings](Self::set_settings) and the
    /// [answer schema](Self::set_answer_schema), then these fields. A field
    /// set here replaces the whole top-level field: setting Gemini's
    /// `generationConfig` replaces the one the typed settings wrote.
    pub fn set(&mut self, key: impl Into<String>, value: Value) {
        self.settings.insert(key.into(), value);
    }

    /// The items so far (messages, input items or contents), in order.
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// Adds a user message.
    pub fn push_user(&mut self, text: impl Into<String>) {
        let item = self.user_item(text.into());
        self.touch(self.items.len());
        self.items.push(item);
    }

    /// Adds the host's observation for the coming step; the one shown
    /// before it is replaced by its [`later`](Observation::later) line.
    pub fn push_observation(&mut self, observation: Observation) {
        if let Some(previous) = self.observation.take() {
            self.touch(previous.item);
            self.items[previous.item] = self.user_item(previous.later);
        }
        let (text, later) = observation.into_parts();
        self.observation = Some(ShownObservation {
            item: self.items.len(),
            later,
        });
        self.push_user(text);
    }

    fn user_item(&self, text: String) -> Value {
        self.dialect().user_item(text)
    }

    /// The wire format of the conversation's API.
    fn dialect(&self) -> &'static dyn Dialect {
        Api::of(self.provider).dialect()
    }

    /// Adds the model's turn, as the provider requires it back.
    pub fn push_turn(&mut self, turn: &Turn) {
        let malformed: Vec<&str> = turn
            .calls
            .iter()
            .zip(&turn.call_info)
            .filter(|(_, info)| info.malformed.is_some())
            .map(|(call, _)| call.id.as_str())
            .collect();
        // A dialect only adds the turn's items after the others.
        self.touch(self.items.len());
        self.dialect()
            .push_echo(&mut self.items, turn.echo.clone(), &malformed);
    }

    /// Adds the results answering `turn`'s calls, in call order: records
    /// them in the [`history`](Self::history) and emits what the model sees
    /// of them. The step before, if it held show-once content, is emitted
    /// again without it.
    pub fn push_results(&mut self, turn: &Turn, results: Vec<ToolCallResult>) -> Pushed {
        let provider_ids = !turn.call_info.iter().any(|info| info.generated_id);
        self.push_results_for(provider_ids, results)
    }

    /// [`push_results`](Self::push_results), for a turn whose calls all had
    /// ids from the provider (`provider_ids`), or not.
    pub(crate) fn push_results_for(
        &mut self,
        provider_ids: bool,
        results: Vec<ToolCallResult>,
    ) -> Pushed {
        let gemini_ids = provider_ids;
        let (step, unsaved) = match self.history.record(results) {
            Ok(step) => (step, None),
            Err(error) => (error.step, Some(error)),
        };
        if let Some(previous) = self.latest.take() {
            let shown_once = self
                .history
                .step(previous.step)
                .is_some_and(|calls| calls.iter().any(|call| call.result.is_show_once()));
            if shown_once {
                let view = self.history.view(previous.step);
                // Its images' problems were reported when it was first sent.
                let items = self.emit(&view, previous.gemini_ids).items;
                self.replace(previous.items, items);
            }
        }
        let emitted = match self.history.step(step) {
            Some(calls) if !self.shaped(step, calls) => self.emit(calls, gemini_ids),
            _ => self.emit(&self.history.view(step), gemini_ids),
        };
        let start = self.items.len();
        self.touch(start);
        self.items.extend(emitted.items);
        self.latest = Some(LatestResults {
            step,
            items: start..self.items.len(),
            gemini_ids,
        });
        Pushed {
            step,
            problems: emitted.problems,
            unsaved,
        }
    }

    /// Whether the history shows `step` differently from its results as
    /// they are (a memory line, a saved or shortened output).
    fn shaped(&self, step: usize, calls: &[ToolCallResult]) -> bool {
        calls.iter().enumerate().any(|(index, call)| {
            call.result.memory().is_some() || self.history.saved_file(step, index).is_some()
        })
    }

    fn emit(&self, results: &[ToolCallResult], provider_ids: bool) -> Emitted {
        self.dialect().emit(results, &self.options, provider_ids)
    }

    /// Puts `items` in place of the items at `range`, keeping the
    /// positions recorded after it right.
    fn replace(&mut self, range: Range<usize>, items: Vec<Value>) {
        let (start, removed, added) = (range.start, range.len(), items.len());
        self.touch(start);
        self.items.splice(range, items);
        if let Some(observation) = &mut self.observation
            && observation.item >= start + removed
        {
            observation.item = observation.item + added - removed;
        }
    }

    /// The complete request body.
    pub fn request(&self) -> Value {
        self.render_request(&Overlay::default())
    }

    /// The request body with a run's own additions, which the conversation
    /// does not keep: a typed run's answer schema, or its final-answer tool
    /// and the tool choice that goes with it.
    pub(crate) fn request_with(&self, overlay: &Overlay) -> Value {
        self.render_request(overlay)
    }

    fn render_request(&self, overlay: &Overlay) -> Value {
        let tools = self.offered_tools(overlay.tools.as_ref());
        let tool_choice = overlay.tool_choice.as_ref().unwrap_or(&self.tool_choice);
        let dialect = self.dialect();
        let mut body = dialect.body(Transcript {
            instructions: self.instructions.as_deref(),
            items: &self.items,
            tools: tools.as_deref(),
            tool_choice,
        });
        dialect.settings(&self.typed, &mut body);
        if let Some(answer) = overlay.answer.as_ref().or(self.answer.as_ref()) {
            dialect.answer(answer, &mut body);
        }
        for (key, value) in &self.settings {
            body.insert(key.clone(), value.clone());
        }
        Value::Object(body)
    }
}

/// What a run adds to its requests without the conversation keeping it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overlay {
    /// Tool definitions in the provider's form, after the conversation's.
    pub(crate) tools: Option<Vec<Value>>,
    /// The tool choice, in place of the conversation's.
    pub(crate) tool_choice: Option<ToolChoice>,
    /// The answer schema, in place of the conversation's.
    pub(crate) answer: Option<AnswerSchema>,
}

impl Conversation {
    /// The provider a registry's tool list is read in for this
    /// conversation.
    pub(crate) fn tool_provider(&self) -> Provider {
        Api::of(self.provider).provider()
    }
}
