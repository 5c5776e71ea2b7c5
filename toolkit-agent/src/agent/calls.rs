//! Settling one turn's calls: decisions, limits, running them with their
//! start and end recorded, and what their results mean for the run.

use toolkit_core::{Cancellation, ToolCall, ToolCallResult, ToolResult};

use super::approvals::{Approvals, counted_as};
use super::journal::Journal;
use super::outcome::{RunError, StopReason};
use super::run::{Driver, Settled};
use super::scheduler::{self, Runnable, Scheduler};
use crate::answer::FINAL_ANSWER_TOOL;
use crate::event::Event;
use crate::model::Model;
use crate::search::TOOL_SEARCH_TOOL;
use crate::session::CallStatus;
use crate::telemetry;

impl<'r, M: Model> Driver<'r, M> {
    /// Takes the pending turn as far as it goes, in four steps: the calls'
    /// first statuses, the decisions awaited, the approved calls run, and
    /// their results recorded.
    pub(super) async fn settle(&mut self) -> Result<Settled, RunError> {
        self.classify();
        if !self.decide().await? {
            // Cancelled while a decision was awaited: the turn stays
            // pending, for a later resume.
            if self.cancellation.is_cancelled() {
                return Ok(Settled::Stop(StopReason::Cancelled));
            }
            return Ok(Settled::Paused);
        }
        self.run_approved().await?;
        Ok(self.record_results())
    }

    fn approvals(&self) -> Approvals<'_> {
        Approvals {
            registry: &self.agent.registry,
            rules: &self.agent.rules,
            hook: self.agent.approval.as_ref(),
        }
    }

    fn scheduler(&self) -> Scheduler<'_> {
        Scheduler {
            registry: &self.agent.registry,
            rules: &self.agent.rules,
            limits: &self.agent.limits,
            tool_limits: &self.agent.tool_limits,
        }
    }

    pub(super) fn journal(&self) -> Journal<'r> {
        let agent: &'r super::Agent<M> = self.agent;
        Journal::new(agent.store.as_ref())
    }

    /// Whether `name` calls a tool the run answers itself: a typed run's
    /// own final-answer tool, or the conversation's tool search.
    fn answers(&self, name: &str) -> bool {
        self.answer
            .as_ref()
            .is_some_and(|policy| policy.own_tool(name, &self.agent.registry).is_some())
            || self.searches(name)
    }

    /// Whether `name` calls the conversation's own tool search.
    fn searches(&self, name: &str) -> bool {
        name == TOOL_SEARCH_TOOL
            && self.agent.registry.get(name).is_none()
            && self.session.conversation.offers_own_search()
    }

    /// Gives each new call its first status, and each call that may have
    /// run, of a tool that says it is idempotent, its retry.
    fn classify(&mut self) {
        let Some(mut turn) = self.session.turn.take() else {
            return;
        };
        let retried = self
            .approvals()
            .classify(&mut turn.calls, |name| self.answers(name));
        self.session.turn = Some(turn);
        // Running again is not another use: the run counted the call when
        // it started.
        for tool in retried {
            self.session.run.uncount(&tool);
        }
    }

    /// Asks the approval hook about each call waiting for a decision.
    /// Returns whether every call is decided.
    async fn decide(&mut self) -> Result<bool, RunError> {
        let step = self.step();
        let waiting: Vec<usize> = self
            .calls()
            .iter()
            .enumerate()
            .filter(|(_, pending)| pending.status.awaits_decision())
            .map(|(index, _)| index)
            .collect();
        for index in waiting {
            let pending = self.calls()[index].clone();
            let Some(decision) = self.approvals().ask(&pending, self.cancellation).await else {
                break;
            };
            telemetry::decision(&pending, &decision);
            let (call, may_have_run) = match &pending.status {
                CallStatus::MayHaveRun { call } => (call.clone(), true),
                _ => (pending.call.clone(), false),
            };
            if let crate::session::Decision::Deny(reason) = &decision {
                self.report(Event::Denied {
                    step,
                    call_id: pending.call.id.clone(),
                    reason: reason.clone(),
                });
            }
            if let Some(status) = decision.settle(&call, may_have_run) {
                if may_have_run && matches!(status, CallStatus::Approved { .. }) {
                    let tool = counted_as(&self.agent.registry, &call.name);
                    self.session.run.uncount(&tool);
                }
                self.calls_mut()[index].status = status;
            }
        }
        let waiting = self
            .calls()
            .iter()
            .filter(|pending| pending.status.awaits_decision())
            .count();
        Ok(waiting == 0)
    }

    /// Runs the approved calls under the run's limits: admitted against
    /// their tools' uses, a typed run's answers checked, the calls with
    /// side effects journaled as started, then the turn.
    async fn run_approved(&mut self) -> Result<(), RunError> {
        let admitted = self.admit();
        let (answers, calls): (Vec<Runnable>, Vec<Runnable>) =
            admitted.into_iter().partition(|r| r.answers);
        let journaled: Vec<(usize, &ToolCall)> = calls
            .iter()
            .filter(|r| r.side_effects)
            .map(|r| (r.index, &r.call))
            .collect();
        self.journal().start(self.session, &journaled).await?;
        self.check_answers(answers).await?;
        if calls.is_empty() {
            return Ok(());
        }
        self.run_turn(&calls).await
    }

    /// The scheduler's step: the approved calls admitted against their
    /// tools' uses, in call order.
    fn admit(&mut self) -> Vec<Runnable> {
        let Some(mut turn) = self.session.turn.take() else {
            return Vec::new();
        };
        let mut uses = std::mem::take(&mut self.session.run.uses);
        let admitted = self
            .scheduler()
            .admit(&mut turn.calls, &mut uses, |name| self.answers(name));
        self.session.run.uses = uses;
        self.session.turn = Some(turn);
        admitted
    }

    /// A typed run's final answers, checked by the run's own tool, and
    /// tool searches, answered by the conversation: nothing to journal,
    /// settled before the turn.
    async fn check_answers(&mut self, answers: Vec<Runnable>) -> Result<(), RunError> {
        for runnable in answers {
            if self.searches(&runnable.call.name) {
                let result = self
                    .session
                    .conversation
                    .answer_search(runnable.call.arguments());
                self.ended(&runnable, result, false).await?;
                continue;
            }
            let own = self
                .answer
                .as_ref()
                .and_then(|policy| policy.own_tool(&runnable.call.name, &self.agent.registry))
                .map(std::sync::Arc::clone);
            if let Some(own) = own {
                let outcome = own.dispatch(&runnable.call).await;
                self.ended(&runnable, outcome.result, false).await?;
            }
        }
        Ok(())
    }

    /// Runs the admitted calls as one turn of core's turn runner, under
    /// the scheduler's limits, each result journaled as it comes. The
    /// run's cancellation ends the turn at once: every call not ended is
    /// answered as stopped. A save that fails ends it too, and is the
    /// run's error.
    async fn run_turn(&mut self, admitted: &[Runnable]) -> Result<(), RunError> {
        let calls: Vec<ToolCall> = admitted.iter().map(|r| r.call.clone()).collect();
        let registry = std::sync::Arc::clone(&self.agent.registry);
        let state = self.session.state.clone();
        let host = self.agent.host.clone();
        // The calls' signal: raised when the run is cancelled, or stops
        // while they run.
        let stop = Cancellation::new();
        let mut turn = registry
            .dispatch_turn(&calls)
            .cancellation(&stop)
            .state(&state);
        if let Some(host) = &host {
            turn = turn.host(host);
        }
        let mut each = self.scheduler().limit(turn, admitted).each();
        let mut ended = vec![false; admitted.len()];
        let mut journaled_left = admitted.iter().filter(|r| r.side_effects).count();
        loop {
            // The cancellation first: a run cancelled before its calls
            // start starts none.
            let next = tokio::select! {
                biased;
                () = self.cancellation.cancelled() => {
                    stop.cancel();
                    let started: Vec<bool> =
                        (0..admitted.len()).map(|i| each.has_started(i)).collect();
                    drop(each);
                    for (i, runnable) in admitted.iter().enumerate() {
                        if !ended[i] {
                            let result = scheduler::cancelled(runnable, started[i]);
                            self.ended(runnable, result, false).await?;
                        }
                    }
                    return Ok(());
                }
                next = each.next() => next,
            };
            let Some((i, outcome)) = next else {
                return Ok(());
            };
            ended[i] = true;
            let runnable = &admitted[i];
            let result = scheduler::told(runnable, outcome.result, outcome.error.as_ref());
            let save = runnable.side_effects && {
                journaled_left -= 1;
                // The last one's result is saved with the step's end.
                journaled_left > 0
            };
            if let Err(error) = self.ended(runnable, result, save).await {
                // Calls still running are told to stop, and stay recorded
                // as started (they may have run); calls not yet started are
                // approved again.
                stop.cancel();
                let not_started: Vec<(usize, &ToolCall)> = admitted
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !each.has_started(*i))
                    .map(|(_, r)| (r.index, &r.call))
                    .collect();
                drop(each);
                self.journal().roll_back(self.session, not_started);
                return Err(error);
            }
        }
    }

    /// A call's end: its result reported to the host, told of any edit
    /// the host made, and journaled (saved at once when `save`).
    async fn ended(
        &mut self,
        runnable: &Runnable,
        result: ToolResult,
        save: bool,
    ) -> Result<(), RunError> {
        self.report(Event::Result {
            step: self.step(),
            call_id: runnable.call.id.clone(),
            tool: runnable.call.name.clone(),
            is_error: result.is_error(),
            text: result.to_text(),
        });
        let result = tell_of_edit(&self.calls()[runnable.index].call, &runnable.call, result);
        self.reported.push(runnable.index);
        let journal = self.journal();
        journal
            .finish(self.session, runnable.index, result, save)
            .await
    }

    /// Puts the settled results into the conversation, and tells whether
    /// they end the run.
    fn record_results(&mut self) -> Settled {
        let Some(turn) = self.session.turn.take() else {
            return Settled::Next;
        };
        let reported = std::mem::take(&mut self.reported);
        // The final answer as the model gave it, to say what is wrong
        // with it should the tool refuse it.
        let answer_arguments = turn
            .calls
            .iter()
            .find(|pending| pending.call.name == FINAL_ANSWER_TOOL)
            .map(|pending| pending.call.arguments_json().into_owned());
        let results: Vec<ToolCallResult> = turn
            .calls
            .into_iter()
            .enumerate()
            .map(|(index, pending)| {
                let result = match pending.status {
                    CallStatus::Finished { result } => result,
                    // Every call is finished here; should one not be, the
                    // model is told rather than left without an answer.
                    _ => ToolResult::error("The call was not run."),
                };
                if !reported.contains(&index) {
                    self.report(Event::Result {
                        step: turn.step,
                        call_id: pending.call.id.clone(),
                        tool: pending.call.name.clone(),
                        is_error: result.is_error(),
                        text: result.to_text(),
                    });
                }
                ToolCallResult::new(pending.call.id, pending.call.name, result)
            })
            .collect();
        let pushed = self
            .session
            .conversation
            .push_results_for(turn.provider_ids, results);
        if let Some(error) = pushed.unsaved {
            self.report(Event::Unsaved {
                step: turn.step,
                error: error.to_string(),
            });
        }
        if self.cancellation.is_cancelled() {
            return Settled::Stop(StopReason::Cancelled);
        }
        let results = self
            .session
            .conversation
            .history()
            .step(pushed.step)
            .unwrap_or_default();
        let registry = &self.agent.registry;
        let run = &mut self.session.run;
        for result in results {
            let tool = counted_as(registry, &result.tool_name);
            if let Some(policy) = self.answer.as_ref().filter(|policy| policy.by_tool())
                && tool == FINAL_ANSWER_TOOL
                && result.result.is_error()
            {
                self.bad_answer =
                    Some(policy.refusal(answer_arguments.as_deref(), result.result.to_text()));
                // Counted against the answer's retries, not as failures.
                continue;
            }
            let counter = run.failures.entry(tool.clone()).or_insert(0);
            if result.result.is_error() {
                *counter += 1;
                if *counter > self.agent.limits.max_failures {
                    return Settled::Stop(StopReason::ToolFailures {
                        tool,
                        last_error: result.result.to_text(),
                    });
                }
            } else {
                *counter = 0;
            }
            if result.result.is_done() {
                self.done_by = Some(tool);
                run.done = true;
                run.success = result.result.success();
                run.answer = Some(result.result.to_text());
                return Settled::Stop(StopReason::Done);
            }
            if self.agent.stop_after.contains(&tool) && !result.result.is_error() {
                run.answer = Some(result.result.to_text());
                return Settled::Stop(StopReason::StopAfter(tool));
            }
        }
        Settled::Next
    }

    fn step(&self) -> usize {
        self.session.turn.as_ref().map_or(0, |turn| turn.step)
    }

    fn calls(&self) -> &[crate::session::PendingCall] {
        self.session.calls()
    }

    fn calls_mut(&mut self) -> &mut Vec<crate::session::PendingCall> {
        &mut self
            .session
            .turn
            .as_mut()
            .expect("calls are settled only while a turn is pending")
            .calls
    }
}

/// A call the host edited before it ran carries a note saying so: without
/// it the model would take the result for one of the call it made, and
/// could repeat that call to get what it asked for. The note names what
/// changed (the tool, the parameters), never the host's values: an edit
/// may put in what the model must not read (a credential, an internal id),
/// and the result shows what the call did.
fn tell_of_edit(made: &ToolCall, ran: &ToolCall, result: ToolResult) -> ToolResult {
    if made.name == ran.name && made.arguments() == ran.arguments() {
        return result;
    }
    let told = if made.name != ran.name {
        format!(
            "The host ran `{}` instead of this call; its result is below.",
            ran.name
        )
    } else {
        match (made.arguments().as_object(), ran.arguments().as_object()) {
            (Some(before), Some(after)) => {
                let mut changed: Vec<&str> = before
                    .keys()
                    .chain(after.keys())
                    .map(String::as_str)
                    .filter(|key| before.get(*key) != after.get(*key))
                    .collect();
                changed.sort_unstable();
                changed.dedup();
                let named: Vec<String> = changed.iter().map(|key| format!("`{key}`")).collect();
                format!(
                    "The host changed {} of this call before it ran; the result is of the \
                     call as changed.",
                    named.join(", ")
                )
            }
            _ => "The host replaced the arguments of this call before it ran; the result is \
                  of the call as changed."
                .to_owned(),
        }
    };
    let note = match result.note() {
        Some(own) => format!("{told}\n{own}"),
        None => told,
    };
    result.with_note(note)
}
