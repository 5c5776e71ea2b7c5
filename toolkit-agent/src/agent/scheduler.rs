//! The scheduler: which approved calls run, under which limits, and what
//! the model is told of a call a limit stopped.

use std::collections::BTreeMap;
use toolkit_core::{CallError, Registry, ToolCall, ToolResult, TurnDispatch};

use super::approvals::{ApprovalRules, counted_as};
use super::limits::{Limits, ToolLimits};
use crate::session::{CallStatus, PendingCall};

/// A call cleared to run.
pub(crate) struct Runnable {
    /// Its place in the pending turn.
    pub(crate) index: usize,
    /// The call as approved (the host may have edited it).
    pub(crate) call: ToolCall,
    /// Whether it may change the world: recorded as started before it runs.
    pub(crate) side_effects: bool,
    /// Whether it calls a typed run's own final-answer tool.
    pub(crate) answers: bool,
}

/// The run's limits on calls, applied to one turn.
pub(crate) struct Scheduler<'a> {
    pub(crate) registry: &'a Registry,
    pub(crate) rules: &'a ApprovalRules,
    pub(crate) limits: &'a Limits,
    pub(crate) tool_limits: &'a [(String, ToolLimits)],
}

impl Scheduler<'_> {
    /// Admits the approved calls, in call order, each counted as a use of
    /// its tool; a call over its tool's uses is answered with an error
    /// result instead. Gives the calls admitted.
    pub(crate) fn admit(
        &self,
        calls: &mut [PendingCall],
        uses: &mut BTreeMap<String, u32>,
        own_tool: impl Fn(&str) -> bool,
    ) -> Vec<Runnable> {
        let mut admitted = Vec::new();
        for (index, pending) in calls.iter_mut().enumerate() {
            let CallStatus::Approved { call } = &pending.status else {
                continue;
            };
            let tool = counted_as(self.registry, &call.name);
            let used = uses.get(&tool).copied().unwrap_or(0);
            if let Some(max) = self.tool_limits(&tool).max_uses
                && used >= max
            {
                pending.status = CallStatus::Finished {
                    result: ToolResult::error(format!(
                        "The call was not run: `{tool}` may be used {max} time(s) in a run, \
                         and it was. Go on without it."
                    )),
                };
                continue;
            }
            *uses.entry(tool).or_insert(0) += 1;
            let answers = own_tool(&call.name);
            let side_effects = !answers
                && self.registry.get(&call.name).is_none_or(|def| {
                    !(self.rules.hints_trusted(&def) && def.annotations().read_only == Some(true))
                });
            admitted.push(Runnable {
                index,
                call: call.clone(),
                side_effects,
                answers,
            });
        }
        admitted
    }

    /// The turn's calls under the run's limits: calls at once, each
    /// tool's calls at once, and each call's time limit. A tool's time
    /// limit is its own where it has one (set on the registry, or, while it
    /// lasts, the agent's deprecated per-tool limit), the run's
    /// `call_timeout` otherwise: a tool the host gave ten minutes is not
    /// cut off at the run's two.
    pub(crate) fn limit<'r>(
        &self,
        mut turn: TurnDispatch<'r>,
        admitted: &[Runnable],
    ) -> TurnDispatch<'r> {
        turn = turn.max_concurrent(self.limits.max_concurrent_calls.max(1));
        if let Some(limit) = self.limits.call_timeout {
            turn = turn.timeout(limit);
        }
        let mut tools: Vec<String> = admitted
            .iter()
            .map(|runnable| counted_as(self.registry, &runnable.call.name))
            .collect();
        tools.sort_unstable();
        tools.dedup();
        for tool in tools {
            // The last limits the host gave the tool, whole.
            let limits = self.tool_limits(&tool);
            if let Some(max) = limits.max_concurrent {
                turn = turn.max_concurrent_for(tool.as_str(), max);
            }
            if let Some(limit) = limits.timeout.or_else(|| self.registry.timeout_of(&tool)) {
                turn = turn.__tool_timeout(tool, limit);
            }
        }
        turn
    }

    fn tool_limits(&self, tool: &str) -> ToolLimits {
        // The last given wins, as in the builder.
        self.tool_limits
            .iter()
            .rev()
            .find(|(name, _)| name == tool)
            .map(|(_, limits)| *limits)
            .unwrap_or_default()
    }
}

/// What the model is told of a call a time limit stopped; any other
/// result as the tool gave it.
pub(crate) fn told(
    runnable: &Runnable,
    result: ToolResult,
    error: Option<&CallError>,
) -> ToolResult {
    let Some(CallError::TimedOut { after, .. }) = error else {
        return result;
    };
    let seconds = after.as_secs_f64();
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

/// What the model is told of a call the run's cancellation stopped,
/// started or not.
pub(crate) fn cancelled(runnable: &Runnable, started: bool) -> ToolResult {
    if !started {
        return ToolResult::error("The call was not run: the run was stopped.");
    }
    let effect = if runnable.side_effects {
        " It may or may not have taken effect."
    } else {
        ""
    };
    ToolResult::error(format!(
        "The call was cancelled: the run was stopped.{effect}"
    ))
}
