//! Paired rounds of the hand-written path and the registry's: each goes
//! first in half the rounds, so that neither always finds the caches the
//! other warmed.

use std::time::Duration;

/// The rounds' times per call, each list sorted.
pub struct Paired {
    /// The registry's time over the hand-written one, per round.
    pub ratios: Vec<f64>,
    /// The hand-written path's time per call, per round.
    pub hand: Vec<Duration>,
    /// The registry's time per call, per round.
    pub tool: Vec<Duration>,
}

/// Runs `rounds` rounds of `hand` and `tool`, each of which times one
/// round of its path and returns the time per call.
pub fn alternate(
    rounds: usize,
    hand: impl Fn() -> Duration,
    tool: impl Fn() -> Duration,
) -> Paired {
    let mut ratios = Vec::with_capacity(rounds);
    let mut hand_times = Vec::with_capacity(rounds);
    let mut tool_times = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let (h, t) = if round % 2 == 0 {
            let h = hand();
            (h, tool())
        } else {
            let t = tool();
            (hand(), t)
        };
        ratios.push(t.as_secs_f64() / h.as_secs_f64());
        hand_times.push(h);
        tool_times.push(t);
    }
    ratios.sort_by(f64::total_cmp);
    hand_times.sort_unstable();
    tool_times.sort_unstable();
    Paired {
        ratios,
        hand: hand_times,
        tool: tool_times,
    }
}
