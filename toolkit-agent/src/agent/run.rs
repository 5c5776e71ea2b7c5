//! One run of an agent: request, read the turn, settle its calls, record;
//! until the task is done, the run pauses, or a limit is reached.

use std::future::IntoFuture;

use futures_util::TryFutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::mpsc;
use toolkit_core::response::Turn;
use toolkit_core::{Cancellation, RunState, ToolListChanges};

use super::Agent;
use super::answer_policy::{AnswerPolicy, Verdict};
use super::outcome::{Outcome, RunError, SessionStateError, StopReason};
use crate::answer::{AnswerError, FINAL_ANSWER_TOOL};
use crate::conversation::Overlay;
use crate::event::{Event, Events};
use crate::model::{Model, ModelError};
use crate::session::{CallStatus, PendingCall, PendingTurn, RunProgress, Session};
use crate::telemetry;
use tracing::Instrument;

/// A run about to start: awaited, it runs to its [`Outcome`].
///
/// Made by [`Agent::run`], [`Agent::send`] and [`Agent::resume`]; before
/// awaiting it, give it a cancellation signal, the run's own values, or
/// take its events.
///
/// ```no_run
/// # async fn demo(agent: toolkit_agent::Agent<toolkit_agent::HttpModel>) {
/// use toolkit_core::{Cancellation, RunState};
///
/// #[derive(Clone)]
/// struct UserId(u64);
///
/// let cancellation = Cancellation::new();
/// let (run, mut events) = agent
///     .run("What is on my calendar?")
///     .state(RunState::new().with(UserId(7)))
///     .cancellation(&cancellation)
///     .events();
/// tokio::spawn(async move {
///     while let Some(event) = events.recv().await {
///         eprintln!("{event}");
///     }
/// });
/// let outcome = run.await;
/// # }
/// ```
#[must_use = "a run does nothing until awaited"]
pub struct Run<'a, M> {
    agent: &'a Agent<M>,
    session: Slot<'a>,
    message: Option<String>,
    cancellation: Option<&'a Cancellation>,
    state: Option<RunState>,
    events: Option<mpsc::UnboundedSender<Event>>,
}

pub(crate) enum Slot<'a> {
    Owned(Box<Session>),
    Borrowed(&'a mut Session),
}

impl Slot<'_> {
    fn get(&mut self) -> &mut Session {
        match self {
            Slot::Owned(session) => session,
            Slot::Borrowed(session) => session,
        }
    }
}

impl<'a, M: Model> Run<'a, M> {
    /// The agent the run belongs to.
    pub(crate) fn agent(&self) -> &'a Agent<M> {
        self.agent
    }

    pub(crate) fn new(agent: &'a Agent<M>, session: Slot<'a>, message: Option<String>) -> Self {
        Self {
            agent,
            session,
            message,
            cancellation: None,
            state: None,
            events: None,
        }
    }

    /// A signal the host raises to stop the run: a running request or call
    /// is abandoned (the call's own cancellation signal is raised) and the
    /// run ends with [`StopReason::Cancelled`].
    pub fn cancellation(mut self, cancellation: &'a Cancellation) -> Self {
        self.cancellation = Some(cancellation);
        self
    }

    /// The run's own values, read by its tools' calls before the
    /// registry's (see [`RunState`]); they replace the session's.
    pub fn state(mut self, state: RunState) -> Self {
        self.state = Some(state);
        self
    }

    /// The run, with its events as an async stream.
    pub fn events(self) -> (BoxFuture<'a, Result<Outcome, RunError>>, Events) {
        let (run, events) = self.with_events();
        (
            Box::pin(run.go(None).map_ok(|(outcome, _)| outcome)),
            events,
        )
    }

    /// This run, its events sent to the stream returned.
    pub(crate) fn with_events(mut self) -> (Self, Events) {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.events = Some(sender);
        (self, Events(receiver))
    }

    /// Runs with a typed answer's plan; gives the outcome and the answer's
    /// JSON.
    pub(crate) async fn go_typed(
        self,
        plan: AnswerPolicy,
    ) -> Result<(Outcome, Option<serde_json::Value>), RunError> {
        self.go(Some(plan)).await
    }

    /// Runs inside the run's `invoke_agent` span, which records how the
    /// run ended.
    async fn go(
        mut self,
        answer: Option<AnswerPolicy>,
    ) -> Result<(Outcome, Option<serde_json::Value>), RunError> {
        let span = telemetry::agent_span(
            self.agent.name.as_deref(),
            self.session.get().id(),
            self.agent.model.provider(),
        );
        let result = self.go_in_span(answer).instrument(span.clone()).await;
        telemetry::record_run(&span, result.as_ref().map(|(outcome, _)| outcome));
        result
    }

    async fn go_in_span(
        mut self,
        answer: Option<AnswerPolicy>,
    ) -> Result<(Outcome, Option<serde_json::Value>), RunError> {
        let events = self.events.take();
        let never = Cancellation::new();
        let cancellation = self.cancellation.unwrap_or(&never);
        let agent = self.agent;
        let session = self.session.get();
        if let Some(state) = self.state.take() {
            session.state = state;
        }
        let resuming = self.message.is_none();
        match self.message.take() {
            Some(message) => {
                // A run cut short by an error may be left for a new message;
                // calls that wait for decisions may not.
                if session.turn.is_some() {
                    return Err(SessionStateError::Unsettled.into());
                }
                session.run = RunProgress::default();
                session.conversation.push_user(message);
            }
            None => {
                if session.run.ended && session.turn.is_none() {
                    return Err(SessionStateError::Ended.into());
                }
                // Whatever was running when the session was saved may
                // have run.
                session.loaded();
                session.run.ended = false;
            }
        }
        let resumed_step = session.turn.as_ref().map(|turn| turn.step);
        if resuming {
            telemetry::resumed(resumed_step);
        }
        agent.prepare(&mut session.conversation)?;
        let overlay = match &answer {
            Some(plan) => Some(plan.overlay(&session.conversation)?),
            None => None,
        };
        let mut driver = Driver {
            agent,
            session,
            cancellation,
            events,
            changes: agent.registry.changes(),
            reported: Vec::new(),
            open_step: None,
            answer,
            overlay,
            done_by: None,
            bad_answer: None,
        };
        // A run resumed within a step opens it again for the host.
        if let Some(step) = resumed_step {
            driver.report(Event::StepStarted { step });
            driver.open_step = Some(step);
        }
        let outcome = driver.drive().await;
        // Every step is closed for the host, however the run ended.
        driver.end_step();
        let value = driver.answer.take().and_then(|plan| plan.value);
        outcome.map(|outcome| (outcome, value))
    }
}

impl<'a, M: Model> IntoFuture for Run<'a, M> {
    type Output = Result<Outcome, RunError>;
    type IntoFuture = BoxFuture<'a, Result<Outcome, RunError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.go(None).map_ok(|(outcome, _)| outcome))
    }
}

/// A run in progress: the session it advances and what it reports to.
pub(super) struct Driver<'r, M> {
    pub(super) agent: &'r Agent<M>,
    pub(super) session: &'r mut Session,
    pub(super) cancellation: &'r Cancellation,
    pub(super) events: Option<mpsc::UnboundedSender<Event>>,
    changes: ToolListChanges,
    /// The calls of the pending turn whose result event was sent, as they
    /// finished; the others' are sent when the turn's results are recorded.
    pub(super) reported: Vec<usize>,
    /// The step whose [`Event::StepEnded`] is still to be sent.
    open_step: Option<usize>,
    /// A typed run's answer: its schema, its check, its tool.
    pub(super) answer: Option<AnswerPolicy>,
    /// What a typed run adds to each request.
    overlay: Option<Overlay>,
    /// The tool whose done result ended the run, when one did.
    pub(super) done_by: Option<String>,
    /// In a typed run by tool, the error a call of the final-answer tool
    /// got in the turn just settled.
    pub(super) bad_answer: Option<AnswerError>,
}

/// What settling a turn's calls came to.
pub(super) enum Settled {
    /// Every call has its result; the run goes on.
    Next,
    /// Calls wait for decisions.
    Paused,
    /// The run ends.
    Stop(StopReason),
}

impl<M: Model> Driver<'_, M> {
    pub(super) fn report(&self, event: Event) {
        if let Some(sender) = &self.events {
            let _ = sender.send(event);
        }
    }

    /// Tells the host that the open step is over: its calls are settled,
    /// or the run stopped in it.
    fn end_step(&mut self) {
        if let Some(step) = self.open_step.take() {
            self.report(Event::StepEnded { step });
        }
    }

    /// Saves the session, when the agent has a store.
    pub(super) async fn save(&mut self) -> Result<(), RunError> {
        self.journal().save(self.session).await
    }

    /// The loop: the pending turn settled, then step after step: a limit
    /// checked, the step opened, a request answered, its calls pending;
    /// until the run ends or pauses.
    async fn drive(&mut self) -> Result<Outcome, RunError> {
        loop {
            if self.session.turn.is_some() {
                match self.settle().await? {
                    Settled::Next => {
                        // An answer the final-answer tool refused costs a
                        // retry, as a text answer that does not fit does.
                        if let Some(error) = self.bad_answer.take() {
                            self.spend_retry(&error)?;
                        }
                        // The step's end: its results are recorded.
                        self.save().await?;
                        continue;
                    }
                    Settled::Paused => return self.pause().await,
                    Settled::Stop(StopReason::Done) if self.answered_by_tool() => {
                        if self.accept_tool_answer().await? {
                            return self.finish(StopReason::Done).await;
                        }
                        continue;
                    }
                    Settled::Stop(reason) => return self.finish(reason).await,
                }
            }
            if let Some(reason) = self.limit_reached() {
                return self.finish(reason).await;
            }
            let step = self.open_next_step();
            let Some(turn) = self.request(step).await? else {
                return self.finish(StopReason::Cancelled).await;
            };
            self.record_turn(step, &turn);
            if !turn.has_calls() {
                match self.conclude(&turn)? {
                    Some(reason) => return self.finish(reason).await,
                    // Sent back with its problems; the model tries again.
                    None => continue,
                }
            }
        }
    }

    /// What ends the run before another request: cancellation, the step
    /// limit, the token budget.
    fn limit_reached(&self) -> Option<StopReason> {
        let limits = self.agent.limits;
        let run = &self.session.run;
        if self.cancellation.is_cancelled() {
            Some(StopReason::Cancelled)
        } else if run.steps >= limits.max_steps {
            Some(StopReason::StepLimit)
        } else if limits.max_tokens.is_some_and(|budget| {
            run.usage
                .input_tokens
                .saturating_add(run.usage.output_tokens)
                >= budget
        }) {
            Some(StopReason::TokenBudget)
        } else {
            None
        }
    }

    /// Closes the step before and opens the next, for the host.
    fn open_next_step(&mut self) -> usize {
        self.end_step();
        self.session.run.steps += 1;
        let step = self.session.run.steps;
        self.report(Event::StepStarted { step });
        telemetry::step_started(step);
        self.open_step = Some(step);
        step
    }

    /// The step's request and the model's turn: the host's observation
    /// first, the tool list again if it changed. `None` when the run was
    /// cancelled meanwhile.
    async fn request(&mut self, step: usize) -> Result<Option<Turn>, RunError> {
        if let Some(observe) = &self.agent.observe {
            let observed = tokio::select! {
                observed = observe(step) => observed,
                () = self.cancellation.cancelled() => return Ok(None),
            };
            if let Some(observation) = observed {
                if self.events.is_some() {
                    self.report(Event::Observed {
                        step,
                        text: observation.text().to_owned(),
                    });
                }
                self.session.conversation.push_observation(observation);
            }
        }
        // Tools added or removed since the last request (an MCP
        // server's list changed) are offered from this one on.
        if self.changes.take_change() {
            self.session.conversation.set_tools(&self.agent.registry)?;
        }
        let request = match &self.overlay {
            Some(overlay) => self.session.conversation.request_with(overlay),
            None => self.session.conversation.request(),
        };
        tokio::select! {
            turn = self.ask(&request, step) => Ok(Some(turn?)),
            () = self.cancellation.cancelled() => Ok(None),
        }
    }

    /// A turn without calls ends the run, unless it is a typed answer that
    /// does not fit and is sent back (`None`).
    fn conclude(&mut self, turn: &Turn) -> Result<Option<StopReason>, RunError> {
        if self.answer.is_some() && turn.truncated() {
            // An answer cut off is not a wrong answer: sent back, it
            // would be cut off again. What fits is kept all the same.
            if !self.accept_whole(&turn.text) {
                return Err(RunError::Truncated {
                    answer: turn.text.clone(),
                    finish_reason: turn.finish_reason.clone().unwrap_or_default(),
                });
            }
            return Ok(Some(StopReason::Answered));
        }
        if self.answer.is_some() && !self.accept(&turn.text)? {
            return Ok(None);
        }
        Ok(Some(if turn.truncated() {
            StopReason::Truncated
        } else {
            StopReason::Answered
        }))
    }

    /// A typed run's answer given by its final-answer tool: kept (`true`),
    /// or sent back, the run going on.
    async fn accept_tool_answer(&mut self) -> Result<bool, RunError> {
        let answer = self.session.run.answer.clone().unwrap_or_default();
        if self.accept(&answer)? {
            return Ok(true);
        }
        let run = &mut self.session.run;
        (run.done, run.success, run.answer) = (false, None, None);
        self.save().await?;
        Ok(false)
    }

    /// The step's turn; streamed, its pieces go to the host's events as
    /// they arrive.
    async fn ask(&self, request: &serde_json::Value, step: usize) -> Result<Turn, ModelError> {
        let model = &self.agent.model;
        if self.agent.stream {
            let events = self.events.as_ref();
            let mut forward = |stream: &toolkit_core::response::Accumulator| {
                if let Some(events) = events {
                    for event in Event::deltas(step, stream) {
                        let _ = events.send(event);
                    }
                }
            };
            model.stream(request, &mut forward).await
        } else {
            model.complete(request).await
        }
    }

    /// Adds the model's turn to the session, and its calls as pending.
    fn record_turn(&mut self, step: usize, turn: &Turn) {
        if let Some(usage) = turn.usage {
            self.session.run.usage += usage;
            self.report(Event::Usage { step, usage });
        }
        if !turn.text.is_empty() {
            self.report(Event::Text {
                step,
                text: turn.text.clone(),
            });
            self.session.run.answer = Some(turn.text.clone());
        }
        self.session.conversation.push_turn(turn);
        if !turn.has_calls() {
            return;
        }
        let calls = turn
            .calls
            .iter()
            .zip(&turn.call_info)
            .map(|(call, info)| {
                self.report(Event::Call {
                    step,
                    call: call.clone(),
                    malformed: info.malformed.clone(),
                });
                PendingCall {
                    call: call.clone(),
                    malformed: info.malformed.clone(),
                    status: CallStatus::New,
                }
            })
            .collect();
        self.session.turn = Some(PendingTurn {
            step,
            provider_ids: !turn.call_info.iter().any(|info| info.generated_id),
            calls,
        });
    }

    /// Whether a typed run's final-answer tool ended the run.
    fn answered_by_tool(&self) -> bool {
        self.answer.as_ref().is_some_and(AnswerPolicy::by_tool)
            && self.done_by.as_deref() == Some(FINAL_ANSWER_TOOL)
    }

    /// Reads a typed run's answer: kept when it fits (`true`); sent back to
    /// the model with its problems while retries remain (`false`); an error
    /// after.
    fn accept(&mut self, text: &str) -> Result<bool, RunError> {
        let Some(policy) = &mut self.answer else {
            return Ok(true);
        };
        match policy.judge(text)? {
            Verdict::Kept => Ok(true),
            Verdict::SendBack(feedback) => {
                self.session.conversation.push_user(feedback);
                Ok(false)
            }
        }
    }

    /// Keeps a typed run's answer when it fits as it is, sending nothing
    /// back when it does not.
    fn accept_whole(&mut self, text: &str) -> bool {
        self.answer
            .as_mut()
            .is_none_or(|policy| policy.keep_if_whole(text))
    }

    /// Takes one retry of a typed run's budget, for an answer the
    /// final-answer tool refused; an error once none is left.
    fn spend_retry(&mut self, problems: &AnswerError) -> Result<(), RunError> {
        let answer = self.session.run.answer.clone().unwrap_or_default();
        match &mut self.answer {
            Some(policy) => policy.spend_retry(problems, &answer),
            None => Ok(()),
        }
    }

    /// Ends the run: the session is saved as ended.
    async fn finish(&mut self, stop: StopReason) -> Result<Outcome, RunError> {
        self.session.run.ended = true;
        self.save().await?;
        let mut outcome = self.outcome(stop);
        // Stopped with calls waiting (cancelled during a decision): they
        // are the host's to see, and to settle before the run can resume.
        outcome.pending = self.session.pending().into_iter().cloned().collect();
        Ok(outcome)
    }

    /// Stops the run with calls waiting: the session is saved as it is.
    async fn pause(&mut self) -> Result<Outcome, RunError> {
        telemetry::paused(self.session.pending().len());
        self.save().await?;
        let mut outcome = self.outcome(StopReason::Paused);
        outcome.pending = self.session.pending().into_iter().cloned().collect();
        Ok(outcome)
    }

    fn outcome(&self, stop: StopReason) -> Outcome {
        let run = &self.session.run;
        Outcome {
            answer: run.answer.clone(),
            done: run.done,
            success: run.success,
            steps: run.steps,
            usage: run.usage,
            stop,
            pending: Vec::new(),
            session_id: self.session.id().to_owned(),
        }
    }
}
