//! The agent loop: request, read the turn, approve, run, emit, record.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;
use toolkit_core::response::{Turn, Usage};
use toolkit_core::{Cancellation, OutputBudget, Registry, ToolCall, ToolCallResult, ToolResult};

use crate::conversation::{Conversation, ToolChoice};
use crate::event::{Event, Events};
use crate::model::{Model, ModelError};
use crate::observation::Observation;

/// What the approval hook decided about one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run the call as made.
    Approve,
    /// Do not run it; the model is told it was denied, and why.
    Deny(String),
    /// Run this call instead (same id; the arguments, or even the tool,
    /// changed by the host).
    Edit(ToolCall),
}

/// The host's approval hook: sees each call of a tool that needs approval
/// before it runs.
pub type Approval = Arc<dyn Fn(&ToolCall) -> Decision + Send + Sync>;

/// A hook that adjusts a run's conversation before its first request.
type Configure = Arc<dyn Fn(&mut Conversation) + Send + Sync>;

/// A hook that observes the world at the start of each step.
type Observe = Arc<dyn Fn(usize) -> BoxFuture<'static, Option<Observation>> + Send + Sync>;

/// Limits of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Model turns at most (default 20).
    pub max_steps: usize,
    /// Consecutive failed calls of one tool before the run stops (default
    /// 3). A success of the tool resets its count.
    pub max_failures: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_steps: 20,
            max_failures: 3,
        }
    }
}

/// Why a run stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum StopReason {
    /// A tool returned done (`ToolResult::with_done`).
    Done,
    /// A tool marked stop-after ran.
    StopAfter(String),
    /// The model answered without calls.
    Answered,
    /// The model's answer, without calls, was cut off at its output limit
    /// (`length`, `max_tokens`): the answer may be incomplete. A larger
    /// output limit, or a task asking for less, may help.
    Truncated,
    /// The step limit was reached.
    StepLimit,
    /// The host cancelled the run.
    Cancelled,
    /// A tool failed more times in a row than the limit allows.
    ToolFailures {
        /// The tool.
        tool: String,
        /// Its last error, as the model saw it.
        last_error: String,
    },
    /// The model endpoint failed.
    Model(ModelError),
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Done => f.write_str("a tool declared the task done"),
            Self::StopAfter(tool) => write!(f, "`{tool}` ran, which ends the run"),
            Self::Answered => f.write_str("the model answered"),
            Self::Truncated => f.write_str("the model's answer was cut off at its output limit"),
            Self::StepLimit => f.write_str("the step limit was reached"),
            Self::Cancelled => f.write_str("the run was cancelled"),
            Self::ToolFailures { tool, last_error } => {
                write!(f, "`{tool}` failed too many times in a row: {last_error}")
            }
            Self::Model(error) => write!(f, "the model endpoint failed: {error}"),
        }
    }
}

/// What a run came to.
#[derive(Debug)]
#[non_exhaustive]
pub struct Outcome {
    /// The final answer: the model's last text, or the summary a tool
    /// returned with done.
    pub answer: Option<String>,
    /// Whether a tool declared the task done.
    pub done: bool,
    /// The success that tool reported.
    pub success: Option<bool>,
    /// Model turns taken.
    pub steps: usize,
    /// Tokens over the whole run, as the provider reported them.
    pub usage: Usage,
    /// Why the run stopped.
    pub stop: StopReason,
}

/// A model, a registry and instructions, run until the task is done.
pub struct Agent<M> {
    model: M,
    registry: Arc<Registry>,
    instructions: Option<String>,
    limits: Limits,
    approval: Option<Approval>,
    needs_approval: HashSet<String>,
    stop_after: HashSet<String>,
    tool_choice: ToolChoice,
    parallel_calls: Option<bool>,
    stream: bool,
    configure: Option<Configure>,
    observe: Option<Observe>,
    budget: Option<OutputBudget>,
}

impl<M: Model> Agent<M> {
    /// An agent running `registry`'s tools with `model`.
    pub fn new(model: M, registry: impl Into<Arc<Registry>>) -> Self {
        Self {
            model,
            registry: registry.into(),
            instructions: None,
            limits: Limits::default(),
            approval: None,
            needs_approval: HashSet::new(),
            stop_after: HashSet::new(),
            tool_choice: ToolChoice::Auto,
            parallel_calls: None,
            stream: false,
            configure: None,
            observe: None,
            budget: None,
        }
    }

    /// The system instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The approval hook, asked about calls of tools marked with
    /// [`needs_approval`](Self::needs_approval) (every tool when none is
    /// marked).
    pub fn approval(
        mut self,
        hook: impl Fn(&ToolCall) -> Decision + Send + Sync + 'static,
    ) -> Self {
        self.approval = Some(Arc::new(hook));
        self
    }

    /// Marks a tool as needing approval.
    pub fn needs_approval(mut self, tool: impl Into<String>) -> Self {
        self.needs_approval.insert(tool.into());
        self
    }

    /// Stops the run after this tool runs (its result is the answer).
    pub fn stop_after(mut self, tool: impl Into<String>) -> Self {
        self.stop_after.insert(tool.into());
        self
    }

    /// Which calls the model may make.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// Allows or forbids several calls per turn.
    pub fn parallel_calls(mut self, parallel: bool) -> Self {
        self.parallel_calls = Some(parallel);
        self
    }

    /// Streams each model turn (events as they arrive; same turns).
    pub fn streaming(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// Adjusts each run's conversation before the first request (request
    /// settings such as `max_tokens`).
    pub fn configure(mut self, hook: impl Fn(&mut Conversation) + Send + Sync + 'static) -> Self {
        self.configure = Some(Arc::new(hook));
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
        self.observe = Some(Arc::new(move |step| Box::pin(hook(step))));
        self
    }

    /// Saves outputs longer than the budget to files; the model sees their
    /// beginning and the file's name (see
    /// [`Conversation::set_output_budget`]).
    pub fn output_budget(mut self, budget: OutputBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Runs `task` to its end.
    pub async fn run(&self, task: &str) -> Outcome {
        self.run_with(task, &Cancellation::new(), None).await
    }

    /// Runs `task`, sending events to the returned stream as it goes.
    pub fn run_events<'a>(
        &'a self,
        task: &'a str,
        cancellation: &'a Cancellation,
    ) -> (impl Future<Output = Outcome> + 'a, Events) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (
            self.run_with(task, cancellation, Some(sender)),
            Events(receiver),
        )
    }

    /// A new conversation for a task, as a run starts it.
    pub fn conversation(&self, task: &str) -> Result<Conversation, toolkit_core::ToolListError> {
        let mut conversation = Conversation::new(self.model.provider());
        if let Some(instructions) = &self.instructions {
            conversation.set_instructions(instructions.clone());
        }
        conversation.set_tools(&self.registry)?;
        conversation.set_tool_choice(self.tool_choice.clone());
        if let Some(parallel) = self.parallel_calls {
            conversation.settings_mut().parallel_calls = Some(parallel);
        }
        if let Some(budget) = &self.budget {
            conversation.set_output_budget(budget.clone());
        }
        if let Some(configure) = &self.configure {
            configure(&mut conversation);
        }
        conversation.push_user(task);
        Ok(conversation)
    }

    async fn run_with(
        &self,
        task: &str,
        cancellation: &Cancellation,
        events: Option<mpsc::UnboundedSender<Event>>,
    ) -> Outcome {
        let report = |event: Event| {
            if let Some(sender) = &events {
                let _ = sender.send(event);
            }
        };
        let mut outcome = Outcome {
            answer: None,
            done: false,
            success: None,
            steps: 0,
            usage: Usage::default(),
            stop: StopReason::StepLimit,
        };
        let mut conversation = match self.conversation(task) {
            Ok(conversation) => conversation,
            Err(error) => {
                outcome.stop = StopReason::Model(ModelError::Config(error.to_string()));
                return outcome;
            }
        };
        let mut failures: HashMap<String, u32> = HashMap::new();
        while outcome.steps < self.limits.max_steps {
            if cancellation.is_cancelled() {
                outcome.stop = StopReason::Cancelled;
                return outcome;
            }
            outcome.steps += 1;
            let step = outcome.steps;
            report(Event::StepStarted { step });
            if let Some(observe) = &self.observe {
                let observed = tokio::select! {
                    observed = observe(step) => observed,
                    () = cancellation.cancelled() => {
                        outcome.stop = StopReason::Cancelled;
                        return outcome;
                    }
                };
                if let Some(observation) = observed {
                    if events.is_some() {
                        report(Event::Observed {
                            step,
                            text: observation.text().to_owned(),
                        });
                    }
                    conversation.push_observation(observation);
                }
            }
            let request = conversation.request();
            let turn = tokio::select! {
                turn = self.ask(&request) => turn,
                () = cancellation.cancelled() => {
                    outcome.stop = StopReason::Cancelled;
                    return outcome;
                }
            };
            let turn = match turn {
                Ok(turn) => turn,
                Err(error) => {
                    outcome.stop = StopReason::Model(error);
                    return outcome;
                }
            };
            if let Some(usage) = turn.usage {
                outcome.usage += usage;
                report(Event::Usage { step, usage });
            }
            if !turn.text.is_empty() {
                report(Event::Text {
                    step,
                    text: turn.text.clone(),
                });
                outcome.answer = Some(turn.text.clone());
            }
            conversation.push_turn(&turn);
            if !turn.has_calls() {
                outcome.stop = if turn.truncated() {
                    StopReason::Truncated
                } else {
                    StopReason::Answered
                };
                return outcome;
            }
            let results = self.run_calls(step, &turn, cancellation, &report).await;
            let pushed = conversation.push_results(&turn, results);
            if let Some(error) = pushed.unsaved {
                report(Event::Unsaved {
                    step,
                    error: error.to_string(),
                });
            }
            if cancellation.is_cancelled() {
                outcome.stop = StopReason::Cancelled;
                return outcome;
            }
            // Stop conditions, in call order.
            let results = conversation.history().step(pushed.step).unwrap_or_default();
            for result in results {
                let counter = failures.entry(result.tool_name.clone()).or_insert(0);
                if result.result.is_error() {
                    *counter += 1;
                    if *counter > self.limits.max_failures {
                        outcome.stop = StopReason::ToolFailures {
                            tool: result.tool_name.clone(),
                            last_error: result.result.to_text(),
                        };
                        return outcome;
                    }
                } else {
                    *counter = 0;
                }
                if result.result.is_done() {
                    outcome.done = true;
                    outcome.success = result.result.success();
                    outcome.answer = Some(result.result.to_text());
                    outcome.stop = StopReason::Done;
                    return outcome;
                }
                if self.stop_after.contains(&result.tool_name) && !result.result.is_error() {
                    outcome.answer = Some(result.result.to_text());
                    outcome.stop = StopReason::StopAfter(result.tool_name.clone());
                    return outcome;
                }
            }
        }
        outcome.stop = StopReason::StepLimit;
        outcome
    }

    async fn ask(&self, request: &serde_json::Value) -> Result<Turn, ModelError> {
        if self.stream {
            let mut ignore = |_: &toolkit_core::response::Accumulator| {};
            self.model.stream(request, &mut ignore).await
        } else {
            self.model.complete(request).await
        }
    }

    /// Approval, then every runnable call concurrently; results in call
    /// order.
    async fn run_calls(
        &self,
        step: usize,
        turn: &Turn,
        cancellation: &Cancellation,
        report: &impl Fn(Event),
    ) -> Vec<ToolCallResult> {
        let mut answers: Vec<Option<ToolResult>> = vec![None; turn.calls.len()];
        let mut runnable = Vec::new();
        let mut positions = Vec::new();
        for (position, (call, info)) in turn.calls.iter().zip(&turn.call_info).enumerate() {
            report(Event::Call {
                step,
                call: call.clone(),
                malformed: info.malformed.clone(),
            });
            if let Some(problem) = &info.malformed {
                answers[position] = Some(malformed_result(call, problem));
                continue;
            }
            let decision = match &self.approval {
                Some(hook)
                    if self.needs_approval.is_empty()
                        || self.needs_approval.contains(&call.name) =>
                {
                    hook(call)
                }
                _ => Decision::Approve,
            };
            match decision {
                Decision::Approve => {
                    runnable.push(call.clone());
                    positions.push(position);
                }
                Decision::Edit(mut edited) => {
                    edited.id = call.id.clone();
                    runnable.push(edited);
                    positions.push(position);
                }
                Decision::Deny(reason) => {
                    report(Event::Denied {
                        step,
                        call_id: call.id.clone(),
                        reason: reason.clone(),
                    });
                    answers[position] = Some(ToolResult::error(format!(
                        "The call was not run: the user denied it ({reason}). Do not repeat it unchanged."
                    )));
                }
            }
        }
        let outcome = self.registry.run_turn_with(&runnable, cancellation).await;
        for (position, result) in positions.into_iter().zip(outcome.results) {
            answers[position] = Some(result.result);
        }
        turn.calls
            .iter()
            .zip(answers)
            .map(|(call, answer)| {
                let result = answer.unwrap_or_else(|| ToolResult::error("The call was not run."));
                report(Event::Result {
                    step,
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    is_error: result.is_error(),
                    text: result.to_text(),
                });
                ToolCallResult::new(call.id.clone(), call.name.clone(), result)
            })
            .collect()
    }
}

/// The error result for a call whose arguments are not JSON: it quotes
/// what the model wrote, so the model can tell what to fix.
fn malformed_result(call: &ToolCall, problem: &str) -> ToolResult {
    let written = match &call.arguments {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let shown: String = written.chars().take(300).collect();
    let cut = if shown.len() < written.len() {
        "…"
    } else {
        ""
    };
    ToolResult::error(format!(
        "The call to `{}` was not run: {problem}. You wrote: {shown}{cut}. \
         Call the tool again with complete JSON arguments.",
        call.name
    ))
}
