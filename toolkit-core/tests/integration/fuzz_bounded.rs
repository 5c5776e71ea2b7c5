//! A bounded run of the fuzz targets (`fuzz/`), on stable, in the normal
//! test suite: 100,000 inputs from a seeded generator of valid calls,
//! responses and results, mutated the way a fuzzer mutates them, plus plain
//! random bytes. `cargo fuzz run dispatch` / `emission` runs the same
//! functions for as long as wanted.

#[path = "../../../fuzz/src/lib.rs"]
#[allow(dead_code, missing_docs)]
pub(crate) mod targets;

use targets::{NAMES, Ran};

/// SplitMix64: small, fast, and the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn byte(&mut self) -> u8 {
        self.next() as u8
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.byte()).collect()
    }
}

/// Valid arguments of each tool of [`NAMES`], in order (the unknown names
/// get another tool's).
const ARGUMENTS: &[&[&str]] = &[
    &[
        r#"{"event": {"title": "Standup", "slot": {"start": 540, "minutes": 15, "timezone": "CET"}, "attendees": [{"name": "Ada", "email": "ada@example.com"}, {"name": "Alan", "email": null}], "kind": {"type": "call", "number": "+41 44"}, "labels": {"team": 1}}}"#,
        r#"{"event": {"title": "Trip", "slot": {"start": 0, "minutes": 60, "timezone": null}, "attendees": [], "kind": {"type": "trip", "from": "Bern", "to": "Basel"}}}"#,
    ],
    &[
        r#"{"id": 7, "nickname": null, "patch": {"email": null, "tags": [1, "x", {"deep": [null]}]}, "notify": true}"#,
        r#"{"id": 18446744073709551615, "nickname": "Ada", "patch": null}"#,
    ],
    &[
        r#"{"value": 36.6, "from": "celsius", "to": "kelvin"}"#,
        r#"{"value": -2000000.5, "from": "kelvin", "to": "celsius"}"#,
        r#"{"value": 13, "from": "kelvin", "to": "kelvin"}"#,
    ],
    &[
        r#"{"values": [1, -2, 9223372036854775807], "weights": {"a": 0.1, "b": 3.9}, "pair": [7, "x"]}"#,
        r#"{"values": [], "weights": {}, "pair": [255, "é"]}"#,
    ],
    &[r#"{"text": "hi", "times": 2}"#, r#"{"text": ""}"#],
];

/// What a mutation may splice in.
const TOKENS: &[&str] = &[
    "null",
    "{}",
    "[]",
    "\"\"",
    "1e999",
    "-0",
    "\"\\u0000\"",
    "\"\\ud800\"",
    ",",
    ":",
    "{\"extra\": 1}",
    "true",
    "18446744073709551616",
    "-9223372036854775809",
    "0.1",
    "\"x\"",
    "\"{\\\"id\\\": 1}\"",
    "[[[[[[[[[[[[[[[[",
];

/// A fuzzer's mutations: flip a bit, set a byte, splice a token, delete,
/// duplicate or cut a span.
fn mutate(rng: &mut Rng, mut data: Vec<u8>) -> Vec<u8> {
    for _ in 0..rng.below(4) {
        if data.is_empty() {
            data.extend_from_slice(rng.pick(TOKENS).as_bytes());
            continue;
        }
        let at = rng.below(data.len());
        match rng.below(6) {
            0 => data[at] ^= 1 << rng.below(8),
            1 => data[at] = *rng.pick(b"{}[]\":,\\0123456789-.eE ntfux"),
            2 => {
                let token = rng.pick(TOKENS).as_bytes().to_vec();
                data.splice(at..at, token);
            }
            3 => {
                let end = (at + 1 + rng.below(8)).min(data.len());
                data.drain(at..end);
            }
            4 => {
                let end = (at + 1 + rng.below(16)).min(data.len());
                let span = data[at..end].to_vec();
                data.splice(end..end, span);
            }
            _ => data.truncate(at),
        }
    }
    data
}

/// One call of the tool at `tool` (an index into [`NAMES`]) as the
/// providers send calls, by its arguments.
fn arguments(rng: &mut Rng, tool: usize) -> &'static str {
    let choices = ARGUMENTS[tool % ARGUMENTS.len()];
    choices[rng.below(choices.len())]
}

/// A provider's response holding one call of a tool, for mode 4.
fn response(rng: &mut Rng) -> (u8, Vec<u8>) {
    let tool = rng.below(NAMES.len());
    let name = NAMES[tool];
    let arguments = arguments(rng, tool);
    let as_text = serde_json::to_string(arguments).expect("a string");
    let which = rng.below(4) as u8;
    let body = match which {
        0 => format!(
            r#"{{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{{"index": 0, "finish_reason": "tool_calls", "message": {{"role": "assistant", "content": null, "tool_calls": [{{"id": "call_1", "type": "function", "function": {{"name": "{name}", "arguments": {as_text}}}}}]}}}}]}}"#
        ),
        1 => format!(
            r#"{{"id": "resp_1", "object": "response", "status": "completed", "output": [{{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "{name}", "arguments": {as_text}, "status": "completed"}}]}}"#
        ),
        2 => format!(
            r#"{{"id": "msg_1", "type": "message", "role": "assistant", "stop_reason": "tool_use", "content": [{{"type": "tool_use", "id": "toolu_1", "name": "{name}", "input": {arguments}}}]}}"#
        ),
        _ => format!(
            r#"{{"candidates": [{{"finishReason": "STOP", "content": {{"role": "model", "parts": [{{"functionCall": {{"id": "fc_1", "name": "{name}", "args": {arguments}}}}}]}}}}]}}"#
        ),
    };
    (which, body.into_bytes())
}

/// One input of the dispatch target.
fn dispatch_input(rng: &mut Rng) -> Vec<u8> {
    let mut input = Vec::new();
    match rng.below(10) {
        // Arguments as text, or as a value.
        0..=4 => {
            let mode = if rng.below(5) < 3 { 0 } else { 1 };
            let tool = rng.below(NAMES.len());
            input.push(mode);
            input.push(tool as u8);
            let arguments = arguments(rng, tool).as_bytes().to_vec();
            input.extend(mutate(rng, arguments));
        }
        // A tool name, now and then a long one.
        5 => {
            input.push(2);
            let mut name = rng.pick(NAMES).as_bytes().to_vec();
            if rng.below(50) == 0 {
                name.extend(std::iter::repeat_n(b'x', 1 + rng.below(20_000)));
            }
            input.extend(mutate(rng, name));
        }
        // A list of calls.
        6 => {
            input.push(3);
            let calls: Vec<String> = (0..1 + rng.below(3))
                .map(|i| {
                    let tool = rng.below(NAMES.len());
                    let arguments = arguments(rng, tool);
                    let arguments = if rng.below(2) == 0 {
                        serde_json::to_string(arguments).expect("a string")
                    } else {
                        arguments.to_owned()
                    };
                    format!(
                        r#"{{"id": "call_{i}", "name": "{}", "arguments": {arguments}}}"#,
                        NAMES[tool]
                    )
                })
                .collect();
            input.extend(mutate(rng, format!("[{}]", calls.join(", ")).into_bytes()));
        }
        // A provider's response.
        7 | 8 => {
            input.push(4);
            let (which, body) = response(rng);
            input.push(which);
            input.extend(mutate(rng, body));
        }
        // Random bytes.
        _ => {
            let len = rng.below(64);
            input.extend(rng.bytes(len));
        }
    }
    input
}

const DISPATCH_INPUTS: usize = 70_000;
const EMISSION_INPUTS: usize = 30_000;

#[test]
fn dispatch_survives_mutated_calls() {
    let mut rng = Rng(0x5eed_0001);
    let mut total = Ran::default();
    // One call of a million characters, as the issue's attack sent.
    let mut huge = vec![2];
    huge.extend(std::iter::repeat_n(b'a', 1_000_000));
    targets::dispatch(&huge);
    for _ in 0..DISPATCH_INPUTS {
        let input = dispatch_input(&mut rng);
        let ran = targets::dispatch(&input);
        total.calls += ran.calls;
        total.succeeded += ran.succeeded;
    }
    // The generator reaches both sides: calls that run and calls refused.
    let failed = total.calls - total.succeeded;
    assert!(
        total.calls > DISPATCH_INPUTS / 2,
        "only {} calls ran",
        total.calls
    );
    assert!(
        total.succeeded > total.calls / 10 && failed > total.calls / 10,
        "{total:?}"
    );
    println!("{total:?}");
}

#[test]
fn emission_keeps_every_providers_rules() {
    let mut rng = Rng(0x5eed_0002);
    for _ in 0..EMISSION_INPUTS {
        let len = rng.below(160);
        targets::emission(&rng.bytes(len));
    }
}
