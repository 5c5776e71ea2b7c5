//! The cost of telling what each streamed event added: a stream of 300
//! events per provider (200 pieces of text, then a call whose arguments
//! arrive in 100 pieces), read three ways:
//!
//! - `read`: each event's data pushed into the accumulator, as every
//!   streamed request does;
//! - `deltas`: that, and the accumulator's deltas of each event walked;
//! - `events`: that, and the deltas made into the events a streaming run
//!   sends ([`Event::deltas`]: each piece copied into its event).
//!
//! The difference from `read`, divided by the events, is the cost of delta
//! extraction per SSE event. Gemini sends its call whole, so its stream is
//! the text pieces and one event with the call.
//!
//! That difference is a few percent of reading the events, within what a
//! busy machine's timings drift by; so, besides criterion's times,
//! `DELTAS_COUNT=read|deltas|events` runs 200 streams of each provider
//! the one way and exits, for an instruction count under valgrind
//! (`valgrind --tool=cachegrind --cache-sim=no`), which load does not
//! change: the difference between two ways, over the 220,800 events
//! (`DELTAS_PROVIDER=openai` and so on: one provider's), is the cost per
//! event.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group};
use serde_json::{Value, json};
use toolkit_agent::Event;
use toolkit_core::Provider;
use toolkit_core::response::Accumulator;

const TEXT_PIECES: usize = 200;
const ARGUMENT_PIECES: usize = 100;

fn text_piece(n: usize) -> String {
    format!("w{:02} ", n % 100)
}

fn argument_piece(n: usize) -> String {
    match n {
        0 => "{\"text\":\"".to_owned(),
        n if n + 1 == ARGUMENT_PIECES => "end\"}".to_owned(),
        n => format!("a{:02} ", n % 100),
    }
}

/// The stream's `data:` payloads.
fn stream(provider: Provider) -> Vec<String> {
    let texts = (0..TEXT_PIECES).map(text_piece);
    let arguments = (0..ARGUMENT_PIECES).map(argument_piece);
    let events: Vec<Value> = match provider {
        Provider::OpenAi => texts
            .map(|text| json!({"choices": [{"index": 0, "delta": {"content": text}}]}))
            .chain(arguments.enumerate().map(|(n, piece)| {
                let mut call = json!({"index": 0, "function": {"arguments": piece}});
                if n == 0 {
                    call["id"] = json!("call_1");
                    call["function"]["name"] = json!("word_count");
                }
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
            }))
            .collect(),
        Provider::OpenAiResponses => {
            let mut events: Vec<Value> = texts
                .map(|text| json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": text}))
                .collect();
            events.push(json!({"type": "response.output_item.added", "output_index": 1,
                "item": {"type": "function_call", "call_id": "call_1", "name": "word_count", "arguments": ""}}));
            events.extend(arguments.map(|piece| json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": piece})));
            events
        }
        Provider::Anthropic => {
            let mut events = vec![
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ];
            events.extend(texts.map(|text| json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})));
            events.push(json!({"type": "content_block_start", "index": 1,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "word_count", "input": {}}}));
            events.extend(arguments.map(|piece| json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": piece}})));
            events
        }
        Provider::Gemini => {
            let mut events: Vec<Value> = texts
                .map(|text| json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]}))
                .collect();
            let written: String = arguments.collect();
            let args: Value = serde_json::from_str(&written).unwrap();
            events.push(json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "word_count", "args": args}}]}, "finishReason": "STOP"}]}));
            events
        }
        other => unreachable!("{other}"),
    };
    events.iter().map(Value::to_string).collect()
}

const PROVIDERS: [Provider; 4] = [
    Provider::OpenAi,
    Provider::OpenAiResponses,
    Provider::Anthropic,
    Provider::Gemini,
];

/// The ways a stream is read.
#[derive(Clone, Copy)]
enum Way {
    Read,
    Deltas,
    Events,
}

impl Way {
    const ALL: [Way; 3] = [Way::Read, Way::Deltas, Way::Events];

    fn name(self) -> &'static str {
        match self {
            Way::Read => "read",
            Way::Deltas => "deltas",
            Way::Events => "events",
        }
    }
}

#[inline(never)]
fn read(provider: Provider, data: &[String], way: Way) -> Accumulator {
    let mut stream = provider.accumulator();
    for event in data {
        stream.push_data(event).unwrap();
        match way {
            Way::Read => {}
            Way::Deltas => {
                for delta in stream.deltas() {
                    black_box(delta);
                }
            }
            Way::Events => {
                for event in Event::deltas(1, &stream) {
                    black_box(event);
                }
            }
        }
    }
    stream
}

fn bench(c: &mut Criterion) {
    for provider in PROVIDERS {
        let data = stream(provider);
        let mut group = c.benchmark_group(format!("stream_{}", provider.as_str()));
        group.throughput(Throughput::Elements(data.len() as u64));
        for way in Way::ALL {
            group.bench_function(way.name(), |b| {
                b.iter(|| read(provider, black_box(&data), way))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(name) = std::env::var("DELTAS_COUNT") {
        let way = Way::ALL
            .into_iter()
            .find(|way| way.name() == name)
            .expect("DELTAS_COUNT is read, deltas or events");
        // `DELTAS_PROVIDER` (`openai`, `responses`, ...) keeps to one.
        let only = std::env::var("DELTAS_PROVIDER").ok();
        for provider in PROVIDERS {
            if only.as_ref().is_some_and(|only| only != provider.as_str()) {
                continue;
            }
            let data = stream(provider);
            for _ in 0..200 {
                black_box(read(provider, black_box(&data), way));
            }
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
