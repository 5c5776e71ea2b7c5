//! Dispatch with many calls inside one runtime entry, for a `#[tool]` and
//! for a tool defined at run time, each paired against its hand-written
//! path (docs/performance.md, "Dispatch, many calls per runtime entry").
//!
//! One `block_on` per call, as the `dispatch` benchmark does, puts tokio's
//! entry cost (about 150 ns) into every figure; an agent loop enters the
//! runtime once and makes its calls inside. Here each round is one
//! `block_on` that makes `CALLS` calls of one path, so the figures are
//! dispatch alone.
//!
//! - macro: `Registry::call` of the guide's `search` `#[tool]` against
//!   `serde_json::from_str` into a struct and a direct call of the same
//!   `async fn`;
//! - run-time: `Registry::call` of a `ToolDef::builder` tool with the same
//!   schema against `serde_json::from_str` into a `Value`, the same schema
//!   check skipped, and a direct call of the same handler;
//! - struct parameter: `Registry::call` of a `#[tool]` that takes a struct
//!   (whose nested fields serde does not hold to the schema by itself, so
//!   the arguments are checked against the schema too) against
//!   `serde_json::from_str` into the same structs and a direct call.
//!
//! - traced: `Registry::call` of `search` with no subscriber against the
//!   same with a subscriber that keeps every span and field
//!   (`toolkit_tests::trace::Recorder`): what tracing costs a call when
//!   someone listens (docs/performance.md, "Tracing"); and the same against
//!   a subscriber that takes every span and keeps nothing, which leaves the
//!   toolkit's own part: making the span, recording its fields, entering
//!   it at each poll.
//!
//! The paths alternate round by round (each first in half the rounds), and
//! the median of the per-round ratios is printed: a machine whose speed
//! drifts moves both paths of a round alike.
//!
//! `TOOLKIT_BENCH_ROUNDS` sets the rounds (default 41); `TOOLKIT_BENCH_ONLY`
//! (`macro`, `runtime`, `struct` or `traced`, or several joined by commas)
//! runs those pairs alone; `TOOLKIT_BENCH_SIDE` (`hand` or `registry`)
//! runs one side of each pair, for counting its instructions. In the traced pairs, the
//! column printed as "hand-written" is the untraced call.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::Value;
use toolkit_core::Registry;

#[path = "support/search.rs"]
mod search_tool;

#[path = "support/shapes.rs"]
mod shapes;

#[path = "support/paired.rs"]
mod paired;

use paired::Paired;

use search_tool::{ANSWER, ARGUMENTS, SearchArguments, hand_written_body, runtime, search};
use shapes::{BOOK_ARGUMENTS, BOOKED, BookArguments, book, runtime_tool, search_json};

/// Calls of one path per round: an agent's process enters its runtime once
/// and makes every call inside it.
const CALLS: u32 = 100_000;

type Path<'a> = Box<dyn Fn() -> Duration + 'a>;

fn main() {
    // `cargo test --benches` runs this with `--test`-less arguments too;
    // only `cargo bench` (which passes `--bench`) does the long run.
    let full = std::env::args().any(|arg| arg == "--bench");
    let rounds: usize = std::env::var("TOOLKIT_BENCH_ROUNDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(if full { 41 } else { 3 });
    let calls = if full { CALLS } else { 10 };

    let runtime = runtime();
    let registry = Registry::builder()
        .tools(toolkit_core::tools![search, book])
        .tool(runtime_tool())
        .build()
        .expect("the registry builds");

    // Every path answers the same.
    runtime.block_on(async {
        assert_eq!(hand_written_body(ARGUMENTS).await, ANSWER);
        let outcome = registry.dispatch(("search", ARGUMENTS)).await;
        assert_eq!(outcome.result.as_text(), Ok(ANSWER));
        let value: Value = serde_json::from_str(ARGUMENTS).unwrap();
        assert_eq!(search_json(value).await, ANSWER);
        let outcome = registry.dispatch(("search_json", ARGUMENTS)).await;
        assert_eq!(outcome.result.as_text(), Ok(ANSWER), "{:?}", outcome.error);
        let outcome = registry.dispatch(("book", BOOK_ARGUMENTS)).await;
        assert_eq!(outcome.result.as_text(), Ok(BOOKED), "{:?}", outcome.error);
        let hand: BookArguments = serde_json::from_str(BOOK_ARGUMENTS).unwrap();
        assert_eq!(book(hand.room, hand.slot).await, BOOKED);
    });

    let timed = |round: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>| {
        let start = Instant::now();
        runtime.block_on(round);
        start.elapsed() / calls
    };
    let hand_typed: Path = Box::new(|| {
        timed(Box::pin(async {
            for _ in 0..calls {
                black_box(hand_written_body(black_box(ARGUMENTS)).await);
            }
        }))
    });
    let macro_tool: Path = Box::new(|| {
        timed(Box::pin(async {
            for _ in 0..calls {
                black_box(registry.dispatch(("search", black_box(ARGUMENTS))).await);
            }
        }))
    });
    let hand_value: Path = Box::new(|| {
        timed(Box::pin(async {
            for _ in 0..calls {
                let value: Value = match serde_json::from_str(black_box(ARGUMENTS)) {
                    Ok(value) => value,
                    Err(error) => Value::String(error.to_string()),
                };
                black_box(search_json(value).await);
            }
        }))
    });
    let runtime_tool: Path = Box::new(|| {
        timed(Box::pin(async {
            for _ in 0..calls {
                black_box(
                    registry
                        .dispatch(("search_json", black_box(ARGUMENTS)))
                        .await,
                );
            }
        }))
    });

    let hand_struct: Path = Box::new(|| {
        timed(Box::pin(async {
            for _ in 0..calls {
                let answer = match serde_json::from_str::<BookArguments>(black_box(BOOK_ARGUMENTS))
                {
                    Ok(BookArguments { room, slot }) => book(room, slot).await,
                    Err(error) => error.to_string(),
                };
                black_box(answer);
            }
        }))
    });
    let struct_tool: Path = Box::new(|| {
        timed(Box::pin(async {
            for _ in 0..calls {
                black_box(registry.dispatch(("book", black_box(BOOK_ARGUMENTS))).await);
            }
        }))
    });

    let recorder = toolkit_tests::trace::Recorder::default();
    let traced_tool: Path = Box::new(|| {
        let elapsed = {
            let _listening = tracing::subscriber::set_default(recorder.clone());
            timed(Box::pin(async {
                for _ in 0..calls {
                    black_box(registry.dispatch(("search", black_box(ARGUMENTS))).await);
                }
            }))
        };
        // Outside the timing: what the recorder kept is its own cost.
        assert_eq!(recorder.span_count(), calls as usize);
        recorder.clear();
        elapsed
    });

    let listening_tool: Path = Box::new(|| {
        let _listening = tracing::subscriber::set_default(Listening);
        timed(Box::pin(async {
            for _ in 0..calls {
                black_box(registry.dispatch(("search", black_box(ARGUMENTS))).await);
            }
        }))
    });

    println!(
        "dispatch_paths: {rounds} alternating rounds of {calls} calls per path, one runtime entry per round"
    );
    // `TOOLKIT_BENCH_ONLY=macro` runs the target's pair alone, to compare
    // instruction counts with a build that has no run-time tools;
    // `TOOLKIT_BENCH_ONLY=traced` runs the traced pairs alone.
    // `runtime` and `struct` run those pairs alone; names may be joined
    // with commas (`macro,struct`).
    let only = std::env::var("TOOLKIT_BENCH_ONLY").ok();
    let runs = |name: &str| {
        only.as_deref()
            .is_none_or(|only| only.split(',').any(|part| part.trim() == name))
    };
    if runs("macro") {
        pair("macro tool", &hand_typed, &macro_tool, rounds);
    }
    if runs("runtime") {
        pair("run-time tool", &hand_value, &runtime_tool, rounds);
    }
    if runs("struct") {
        pair("struct parameter", &hand_struct, &struct_tool, rounds);
    }
    if runs("traced") {
        let recording = "traced (recording subscriber)";
        pair(recording, &macro_tool, &traced_tool, rounds);
        let keeping_nothing = "traced (subscriber keeping nothing)";
        pair(keeping_nothing, &macro_tool, &listening_tool, rounds);
    }
    // Keeps the struct the hand-written path parses in use here.
    let _ = std::mem::size_of::<SearchArguments>();
}

/// A subscriber that wants every span and event and keeps nothing.
struct Listening;

impl tracing::Subscriber for Listening {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, _: &tracing::Event<'_>) {}

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

fn pair(label: &str, hand: &Path, tool: &Path, rounds: usize) {
    // `TOOLKIT_BENCH_SIDE=hand` (or `registry`) runs one side of each pair
    // alone, so that an instruction count (`valgrind --tool=callgrind`)
    // is that side's alone.
    match std::env::var("TOOLKIT_BENCH_SIDE").as_deref() {
        Ok("hand") => return one_side(label, "hand-written", hand, rounds),
        Ok("registry") => return one_side(label, "registry", tool, rounds),
        _ => {}
    }
    let Paired {
        ratios,
        hand: hand_times,
        tool: tool_times,
    } = paired::alternate(rounds, hand, tool);
    let at = |q: usize| (rounds - 1) * q / 100;
    println!(
        "  {label}: hand-written {} ns, registry {} ns per call (median rounds); ratio median {:.3} (p10 {:.3}, p90 {:.3})",
        hand_times[rounds / 2].as_nanos(),
        tool_times[rounds / 2].as_nanos(),
        ratios[rounds / 2],
        ratios[at(10)],
        ratios[at(90)]
    );
}

fn one_side(label: &str, side: &str, path: &Path, rounds: usize) {
    let mut times: Vec<Duration> = (0..rounds).map(|_| path()).collect();
    times.sort_unstable();
    println!(
        "  {label}: {side} alone, {} ns per call (median round)",
        times[rounds / 2].as_nanos()
    );
}
