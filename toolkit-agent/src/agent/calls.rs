//! Settling one turn's calls: decisions, limits, running them with their
//! start and end recorded, and what their results mean for the run.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use toolkit_core::{
    CallHost, Cancellation, Registry, RunState, ToolCall, ToolCallResult, ToolResult,
};

use super::outcome::{RunError, StopReason};
use super::run::{Driver, Settled};
use crate::answer::{AnswerError, FINAL_ANSWER_TOOL};
use crate::event::Event;
use crate::model::Model;
use crate::session::{CallStatus, Decision};
use crate::telemetry;

impl<M: Model> Driver<'_, M> {
    /// Takes the pending turn as far as it goes: decisions first, then the
    /// approved calls, then the results into the conversation.
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

    /// Gives each new call its first status, and each call that may have
    /// run, of a tool that says it is idempotent, its retry.
    fn classify(&mut self) {
        let registry = &self.agent.registry;
        let rules = &self.agent.rules;
        let own_answer_tool = self.answer.as_ref().is_some_and(|plan| plan.tool.is_some());
        let mut retried = Vec::new();
        let Some(turn) = self.session.turn.as_mut() else {
            return;
        };
        for pending in &mut turn.calls {
            match &pending.status {
                CallStatus::New => {
                    let def = registry.get(&pending.call.name);
                    let own_tool = own_answer_tool && pending.call.name == FINAL_ANSWER_TOOL;
                    pending.status = if let Some(problem) = &pending.malformed {
                        CallStatus::Finished {
                            result: malformed_result(&pending.call, problem),
                        }
                    } else if def.is_none() && !own_tool {
                        // Answered now: a tool that appears later (a list
                        // that changes while the run waits) must not run
                        // a call no rule looked at.
                        CallStatus::Finished {
                            result: ToolResult::error(format!(
                                "there is no tool named `{}`; call one of the tools you were given",
                                pending.call.name
                            )),
                        }
                    } else if rules.needs(def.as_ref()) {
                        CallStatus::AwaitingApproval
                    } else {
                        CallStatus::Approved {
                            call: pending.call.clone(),
                        }
                    };
                }
                CallStatus::MayHaveRun { call } => {
                    let idempotent = registry.get(&call.name).filter(|def| {
                        rules.hints_trusted(def) && def.annotations().idempotent == Some(true)
                    });
                    if let Some(def) = idempotent {
                        retried.push(def.name().to_owned());
                        pending.status = CallStatus::Approved { call: call.clone() };
                    }
                }
                _ => {}
            }
        }
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
            let decision = match &self.agent.approval {
                Some(hook) => tokio::select! {
                    decision = hook(pending.clone()) => decision,
                    () = self.cancellation.cancelled() => break,
                },
                None => Decision::Defer,
            };
            telemetry::decision(&pending, &decision);
            let (call, may_have_run) = match &pending.status {
                CallStatus::MayHaveRun { call } => (call.clone(), true),
                _ => (pending.call.clone(), false),
            };
            if let Decision::Deny(reason) = &decision {
                self.report(Event::Denied {
                    step,
                    call_id: pending.call.id.clone(),
                    reason: reason.clone(),
                });
            }
            if let Some(status) = decision.settle(&call, may_have_run) {
                if may_have_run && matches!(status, CallStatus::Approved { .. }) {
                    // Uses are counted by the name models call the tool by.
                    let tool = self
                        .agent
                        .registry
                        .get(&call.name)
                        .map_or_else(|| call.name.clone(), |def| def.name().to_owned());
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

    /// Runs the approved calls, at most the limits' number at once, each
    /// recorded as started (and the session saved) before a tool with side
    /// effects runs, and its result recorded (and saved) after.
    async fn run_approved(&mut self) -> Result<(), RunError> {
        let step = self.step();
        let registry = &self.agent.registry;
        // Uses are counted in call order, before anything runs.
        let mut runnable = Vec::new();
        for index in 0..self.calls().len() {
            let CallStatus::Approved { call } = &self.calls()[index].status else {
                continue;
            };
            let call = call.clone();
            let tool = registry
                .get(&call.name)
                .map_or_else(|| call.name.clone(), |def| def.name().to_owned());
            let limits = self.agent.tool_limits(&tool);
            let used = self.session.run.uses.get(&tool).copied().unwrap_or(0);
            if let Some(max) = limits.max_uses
                && used >= max
            {
                self.calls_mut()[index].status = CallStatus::Finished {
                    result: ToolResult::error(format!(
                        "The call was not run: `{tool}` may be used {max} time(s) in a run, \
                         and it was. Go on without it."
                    )),
                };
                continue;
            }
            *self.session.run.uses.entry(tool.clone()).or_insert(0) += 1;
            // A typed run's final-answer tool is the run's own, not the
            // registry's.
            let own = self
                .answer
                .as_ref()
                .and_then(|plan| plan.tool.as_ref())
                .filter(|_| call.name == FINAL_ANSWER_TOOL && registry.get(&call.name).is_none());
            let (registry, side_effects) = match own {
                Some(own) => (Arc::clone(own), false),
                None => (
                    Arc::clone(registry),
                    registry.get(&call.name).is_none_or(|def| {
                        !(self.agent.rules.hints_trusted(&def)
                            && def.annotations().read_only == Some(true))
                    }),
                ),
            };
            runnable.push(Runnable {
                index,
                call,
                tool,
                registry,
                side_effects,
                timeout: self.timeout(limits.timeout),
                max_concurrent: limits.max_concurrent,
            });
        }
        if runnable.is_empty() {
            return Ok(());
        }
        let journaled: Vec<usize> = runnable
            .iter()
            .filter(|r| r.side_effects)
            .map(|r| r.index)
            .collect();
        if !journaled.is_empty() {
            for r in runnable.iter().filter(|r| r.side_effects) {
                self.calls_mut()[r.index].status = CallStatus::Started {
                    call: r.call.clone(),
                };
            }
            if let Err(error) = self.save().await {
                // Nothing ran: the calls are approved still.
                for r in runnable.iter().filter(|r| r.side_effects) {
                    self.calls_mut()[r.index].status = CallStatus::Approved {
                        call: r.call.clone(),
                    };
                }
                return Err(error);
            }
        }
        let state = self.session.state.clone();
        let host = self.agent.host.clone();
        let max_at_once = self.agent.limits.max_concurrent_calls.max(1);
        let mut queue: Vec<Runnable> = runnable;
        queue.reverse();
        let mut running = FuturesUnordered::new();
        let mut running_per_tool: HashMap<String, usize> = HashMap::new();
        let mut journaled_left = journaled.len();
        let mut in_flight: Vec<(usize, Cancellation)> = Vec::new();
        loop {
            // Start what the limits allow, in call order.
            let mut position = queue.len();
            while running.len() < max_at_once && position > 0 {
                position -= 1;
                let r = &queue[position];
                let busy = running_per_tool.get(&r.tool).copied().unwrap_or(0);
                if r.max_concurrent.is_some_and(|max| busy >= max) {
                    continue;
                }
                let r = queue.remove(position);
                *running_per_tool.entry(r.tool.clone()).or_insert(0) += 1;
                let own = Cancellation::new();
                in_flight.push((r.index, own.clone()));
                running.push(run_one(
                    state.clone(),
                    host.clone(),
                    self.cancellation.clone(),
                    own,
                    r,
                ));
            }
            let Some((r, result)) = running.next().await else {
                break;
            };
            if let Some(busy) = running_per_tool.get_mut(&r.tool) {
                *busy -= 1;
            }
            in_flight.retain(|(index, _)| *index != r.index);
            self.report(Event::Result {
                step,
                call_id: r.call.id.clone(),
                tool: r.call.name.clone(),
                is_error: result.is_error(),
                text: result.to_text(),
            });
            let result = tell_of_edit(&self.calls()[r.index].call, &r.call, result);
            self.calls_mut()[r.index].status = CallStatus::Finished { result };
            self.reported.push(r.index);
            if r.side_effects {
                journaled_left -= 1;
                // The last one's result is saved with the step's end.
                if journaled_left > 0
                    && let Err(error) = self.save().await
                {
                    // The run stops here: calls still running are told to
                    // stop (and stay recorded as started: they may have
                    // run); calls not yet started are approved still.
                    for (_, own) in &in_flight {
                        own.cancel();
                    }
                    for r in queue {
                        self.calls_mut()[r.index].status = CallStatus::Approved { call: r.call };
                    }
                    return Err(error);
                }
            }
        }
        Ok(())
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
        let own_answer_tool = self.answer.as_ref().is_some_and(|plan| plan.tool.is_some());
        let run = &mut self.session.run;
        for result in results {
            let tool = registry
                .get(&result.tool_name)
                .map_or_else(|| result.tool_name.clone(), |def| def.name().to_owned());
            if tool == FINAL_ANSWER_TOOL && result.result.is_error() && own_answer_tool {
                let refusal = result.result.to_text();
                let checked = match (&answer_arguments, &self.answer) {
                    (Some(arguments), Some(plan)) => (plan.check)(arguments).err(),
                    _ => None,
                };
                self.bad_answer = Some(checked.unwrap_or_else(|| AnswerError::other(refusal)));
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

    /// A call's time limit: the tool's own, else the run's.
    fn timeout(&self, tool: Option<Duration>) -> Option<Duration> {
        tool.or(self.agent.limits.call_timeout)
    }
}

/// A call cleared to run, and what limits it.
struct Runnable {
    index: usize,
    call: ToolCall,
    tool: String,
    /// Where the call is dispatched.
    registry: Arc<Registry>,
    side_effects: bool,
    timeout: Option<Duration>,
    max_concurrent: Option<usize>,
}

/// Runs one call under its time limit and the run's cancellation; either
/// raises the call's own signal, so its work stops too.
async fn run_one(
    state: RunState,
    host: Option<CallHost>,
    run_cancellation: Cancellation,
    own: Cancellation,
    runnable: Runnable,
) -> (Runnable, ToolResult) {
    let expired = async {
        match runnable.timeout {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    let call = async {
        match &host {
            Some(host) => {
                runnable
                    .registry
                    .dispatch(&runnable.call)
                    .cancellation(&own)
                    .host(host)
                    .state(&state)
                    .await
            }
            None => {
                runnable
                    .registry
                    .dispatch(&runnable.call)
                    .cancellation(&own)
                    .state(&state)
                    .await
            }
        }
    };
    let result = tokio::select! {
        outcome = call => outcome.result,
        () = expired => {
            own.cancel();
            let seconds = runnable.timeout.unwrap_or_default().as_secs_f64();
            let effect = if runnable.side_effects {
                " It may or may not have taken effect: check before repeating it."
            } else {
                " Try a smaller request, or another way."
            };
            ToolResult::error(format!(
                "The call to `{}` was stopped after {seconds} s, its time limit.{effect}",
                runnable.call.name
            ))
        }
        () = run_cancellation.cancelled() => {
            own.cancel();
            let effect = if runnable.side_effects {
                " It may or may not have taken effect."
            } else {
                ""
            };
            ToolResult::error(format!("The call was cancelled: the run was stopped.{effect}"))
        }
    };
    (runnable, result)
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

/// The error result for a call whose arguments are not JSON: it quotes
/// what the model wrote, so the model can tell what to fix.
fn malformed_result(call: &ToolCall, problem: &str) -> ToolResult {
    let written = call.arguments_json();
    let shown = toolkit_core::text::cut(&written, 300);
    ToolResult::error(format!(
        "The call to `{}` was not run: {problem}. You wrote: {shown}. \
         Call the tool again with complete JSON arguments.",
        call.name
    ))
}
