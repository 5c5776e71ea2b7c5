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
//! (`macro` or `traced`) runs some pairs alone. In the traced pairs, the
//! column printed as "hand-written" is the untraced call.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolkit_core::{CallContext, Registry, ToolDef};

#[path = "support/search.rs"]
mod search_tool;

#[path = "support/paired.rs"]
mod paired;

use paired::Paired;

use search_tool::{ANSWER, ARGUMENTS, SearchArguments, hand_written_body, runtime, search};

/// Where a booking goes: a struct parameter.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Slot {
    /// The day, `YYYY-MM-DD`.
    day: String,
    /// The hour, 0 to 23.
    hour: u8,
    /// Who comes.
    guests: Vec<String>,
}

/// Books a room.
#[toolkit_core::tool]
async fn book(
    /// The room's name.
    room: String,
    /// When, and for whom.
    slot: Slot,
) -> String {
    booked(&room, &slot)
}

fn booked(room: &str, slot: &Slot) -> String {
    format!(
        "{room} on {} at {}:00 for {} guests",
        slot.day,
        slot.hour,
        slot.guests.len()
    )
}

/// The hand-written path's arguments for `book`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BookArguments {
    room: String,
    slot: Slot,
}

const BOOK_ARGUMENTS: &str =
    r#"{"room": "Lovelace", "slot": {"day": "2026-12-01", "hour": 14, "guests": ["Ada", "Alan"]}}"#;
const BOOKED: &str = "Lovelace on 2026-12-01 at 14:00 for 2 guests";

/// Calls of one path per round: an agent's process enters its runtime once
/// and makes every call inside it.
const CALLS: u32 = 100_000;

/// The run-time tool's handler: what `search` does, from JSON arguments.
async fn search_json(arguments: Value) -> String {
    let query = arguments["query"].as_str().unwrap_or_default();
    let limit = arguments["limit"].as_u64().unwrap_or(10);
    let tags = arguments["tags"].as_array().map_or(0, Vec::len);
    let order = arguments["order"].as_str().unwrap_or("relevance");
    format!("{query}: {limit} hits at most, {tags} tags, by {order}")
}

fn runtime_tool() -> ToolDef {
    ToolDef::builder("search_json")
        .description("Search the document index.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The full-text query."},
                "limit": {"type": "integer", "minimum": 0, "maximum": 4294967295u64},
                "tags": {"type": "array", "items": {"type": "string"}},
                "order": {"type": "string", "enum": ["relevance", "newest"]}
            },
            "required": ["query", "tags", "order"],
            "additionalProperties": false
        }))
        .handler(|arguments: Value, _: CallContext| search_json(arguments))
}

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
        let outcome = registry.call("search", ARGUMENTS).await;
        assert_eq!(outcome.result.as_text(), Ok(ANSWER));
        let value: Value = serde_json::from_str(ARGUMENTS).unwrap();
        assert_eq!(search_json(value).await, ANSWER);
        let outcome = registry.call("search_json", ARGUMENTS).await;
        assert_eq!(outcome.result.as_text(), Ok(ANSWER), "{:?}", outcome.error);
        let outcome = registry.call("book", BOOK_ARGUMENTS).await;
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
                black_box(registry.call("search", black_box(ARGUMENTS)).await);
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
                black_box(registry.call("search_json", black_box(ARGUMENTS)).await);
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
                black_box(registry.call("book", black_box(BOOK_ARGUMENTS)).await);
            }
        }))
    });

    let recorder = toolkit_tests::trace::Recorder::default();
    let traced_tool: Path = Box::new(|| {
        let elapsed = {
            let _listening = tracing::subscriber::set_default(recorder.clone());
            timed(Box::pin(async {
                for _ in 0..calls {
                    black_box(registry.call("search", black_box(ARGUMENTS)).await);
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
                black_box(registry.call("search", black_box(ARGUMENTS)).await);
            }
        }))
    });

    println!(
        "dispatch_paths: {rounds} alternating rounds of {calls} calls per path, one runtime entry per round"
    );
    // `TOOLKIT_BENCH_ONLY=macro` runs the target's pair alone, to compare
    // instruction counts with a build that has no run-time tools;
    // `TOOLKIT_BENCH_ONLY=traced` runs the traced pairs alone.
    let only = std::env::var("TOOLKIT_BENCH_ONLY").ok();
    if only.as_deref() != Some("traced") {
        pair("macro tool", &hand_typed, &macro_tool, rounds);
    }
    if only.is_none() {
        pair("run-time tool", &hand_value, &runtime_tool, rounds);
        pair("struct parameter", &hand_struct, &struct_tool, rounds);
    }
    if only.as_deref() != Some("macro") {
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
