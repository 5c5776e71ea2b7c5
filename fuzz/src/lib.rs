//! The fuzz targets of `toolkit-core`, as plain functions of bytes.
//!
//! - [`dispatch`]: the bytes as a tool call (text or parsed arguments, a
//!   tool name, a list of `ToolCall`s, a provider's response whose calls
//!   are run) against tools with nested argument types.
//! - [`emission`]: the bytes as a turn of results (text, JSON with `f32`s,
//!   images, errors with causes, notes, lazy text that may panic, ...)
//!   emitted for every provider and replayed through the step history.
//!
//! Each returns normally when every rule holds and panics otherwise, as a
//! fuzzer expects. `cargo fuzz run dispatch` / `cargo fuzz run emission`
//! (nightly) runs them for as long as wanted; the test suite runs both for
//! a bounded number of generated inputs (`toolkit-core/tests/integration/fuzz_bounded.rs`,
//! which includes this file).

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Once, OnceLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{
    Block, CallContext, CallOutcome, History, Image, Json, Provider, Registry, ToolCall,
    ToolCallResult, ToolDef, ToolResult, tool, tools,
};

// ---------------------------------------------------------------------------
// Tools with nested types
// ---------------------------------------------------------------------------

/// An event.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// Its title.
    pub title: String,
    /// When it happens.
    pub slot: Slot,
    /// Who comes.
    pub attendees: Vec<Attendee>,
    /// What kind of event it is.
    #[serde(default)]
    pub kind: Kind,
    /// Labels and their weights.
    #[serde(default)]
    pub labels: BTreeMap<String, i32>,
}

/// A time slot.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Slot {
    /// Minutes past midnight.
    pub start: u32,
    /// How long, in minutes.
    pub minutes: u16,
    /// The time zone, if not UTC.
    pub timezone: Option<String>,
}

/// Someone who comes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Attendee {
    /// Their name.
    pub name: String,
    /// Their address.
    pub email: Option<String>,
}

/// What kind of event.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Kind {
    /// A meeting.
    #[default]
    Meeting,
    /// A call.
    Call {
        /// The number to dial.
        number: String,
    },
    /// A trip.
    Trip {
        /// From where.
        from: String,
        /// To where.
        to: String,
    },
}

/// A unit of temperature.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
    /// Kelvin.
    Kelvin,
}

/// Why a conversion failed.
#[derive(Debug)]
pub struct ConvertError(std::io::Error);

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the conversion table is unavailable")
    }
}

impl std::error::Error for ConvertError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Creates an event.
#[tool(catalogue = false)]
pub async fn create_event(
    /// The event.
    event: Event,
) -> Json<Event> {
    Json(event)
}

/// Updates a contact.
#[tool(catalogue = false)]
pub fn update_contact(
    /// The contact.
    id: u64,
    /// The new nickname; `null` clears it.
    nickname: Option<Option<String>>,
    /// Fields to change, as JSON.
    patch: Value,
    /// Whether to tell the contact.
    notify: Option<bool>,
) -> String {
    format!("{id} {nickname:?} {patch} {notify:?}")
}

/// Converts a temperature.
#[tool(catalogue = false)]
pub async fn convert(
    /// The value.
    value: f64,
    /// From this unit.
    from: Unit,
    /// To this unit.
    to: Unit,
) -> Result<f32, ConvertError> {
    if value == 13.0 && from == to {
        // A tool that panics: the registry must catch it.
        expected_panic("thirteen".into());
    }
    if value < -1e6 {
        return Err(ConvertError(std::io::Error::other(
            "the table server hung up",
        )));
    }
    Ok(value as f32)
}

/// A tally.
#[derive(Serialize, JsonSchema)]
pub struct Tally {
    /// The sum.
    pub sum: f32,
    /// The count.
    pub count: usize,
    /// The pair back.
    pub pair: (u8, char),
}

/// Tallies values.
#[tool(catalogue = false)]
pub fn tally(
    /// The values.
    values: Vec<i128>,
    /// Weights by name.
    weights: HashMap<String, f32>,
    /// A pair.
    pair: (u8, char),
) -> Tally {
    Tally {
        sum: weights.values().sum(),
        count: values.len(),
        pair,
    }
}

fn echo() -> ToolDef {
    ToolDef::builder("echo")
        .description("Echoes its arguments.")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
            "required": ["text"],
            "additionalProperties": false,
        }))
        .handler(|arguments: Value, _: CallContext| async move { arguments })
}

/// The names calls are made with: every tool's, and some that are not.
pub const NAMES: &[&str] = &[
    "create_event",
    "update_contact",
    "convert",
    "tally",
    "echo",
    "creat_event",
    "",
];

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        Registry::builder()
            .tools(tools![create_event, update_contact, convert, tally])
            .tool(echo())
            .build()
            .expect("the fuzz tools are valid")
    })
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    })
}

// ---------------------------------------------------------------------------
// Panics the code under test must catch
// ---------------------------------------------------------------------------

thread_local! {
    /// Set just before a panic the code under test is expected to catch.
    static EXPECTED: Cell<bool> = const { Cell::new(false) };
}

/// Panics as a tool or a lazy text may, quietly: the code under test catches
/// it, and neither the default hook (a message, maybe a backtrace, for each
/// of thousands of inputs) nor libFuzzer's (which aborts on any panic, caught
/// or not) sees it.
fn expected_panic(message: String) -> ! {
    EXPECTED.with(|expected| expected.set(true));
    panic!("{message}")
}

/// Puts a hook before the current one that lets expected panics pass
/// silently; every other panic (a broken rule) reaches the current hook.
fn quiet_expected_panics() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !EXPECTED.with(|expected| expected.replace(false)) {
                previous(info);
            }
        }));
    });
}

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

/// The providers whose responses can be read.
const READABLE: [Provider; 4] = [
    Provider::OpenAi,
    Provider::OpenAiResponses,
    Provider::Anthropic,
    Provider::Gemini,
];

/// How many calls one input ran, and how many of them succeeded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ran {
    /// Calls run.
    pub calls: usize,
    /// Calls whose result is not an error.
    pub succeeded: usize,
}

impl Ran {
    fn of<'a>(results: impl IntoIterator<Item = &'a ToolResult>) -> Self {
        results
            .into_iter()
            .fold(Self::default(), |ran, result| Self {
                calls: ran.calls + 1,
                succeeded: ran.succeeded + usize::from(!result.is_error()),
            })
    }
}

/// Runs `data` as a call. The first byte chooses how the rest is read:
/// text arguments, parsed arguments, a tool name, a list of `ToolCall`s,
/// or a provider's response; for arguments, the next byte chooses the tool.
pub fn dispatch(data: &[u8]) -> Ran {
    quiet_expected_panics();
    let Some((&mode, rest)) = data.split_first() else {
        return Ran::default();
    };
    let registry = registry();
    runtime().block_on(async {
        match mode % 5 {
            0 => {
                let (name, arguments) = tool_and_rest(rest);
                let text = String::from_utf8_lossy(arguments);
                let outcome = registry.dispatch((name, text.as_ref())).await;
                check_outcome(name, &outcome);
                // Arguments accepted as text are accepted as the same
                // value, with the same answer: the two ways in agree.
                if !outcome.result.is_error()
                    && let Ok(value) = serde_json::from_str::<Value>(&text)
                {
                    let again = registry.dispatch((name, &value)).await;
                    assert_eq!(
                        again.result.is_error(),
                        outcome.result.is_error(),
                        "{name}: {text} accepted as text, not as a value: {:?}",
                        again.result.error_message()
                    );
                }
                Ran::of([&outcome.result])
            }
            1 => {
                let (name, arguments) = tool_and_rest(rest);
                let Ok(value) = serde_json::from_slice::<Value>(arguments) else {
                    return Ran::default();
                };
                let outcome = registry.dispatch((name, &value)).await;
                check_outcome(name, &outcome);
                Ran::of([&outcome.result])
            }
            2 => {
                let name = String::from_utf8_lossy(rest);
                let outcome = registry.dispatch((name.as_ref(), "{}")).await;
                check_outcome(&name, &outcome);
                if !NAMES[..5].contains(&name.as_ref()) {
                    // An unknown name is answered briefly, however long.
                    let message = outcome.result.error_message().unwrap_or_default();
                    assert!(message.chars().count() < 400, "{message}");
                }
                Ran::of([&outcome.result])
            }
            3 => {
                let Ok(calls) = serde_json::from_slice::<Vec<ToolCall>>(rest) else {
                    return Ran::default();
                };
                check_turn(&calls, registry.dispatch_turn(&calls).await)
            }
            _ => {
                let Some((&which, body)) = rest.split_first() else {
                    return Ran::default();
                };
                let provider = READABLE[usize::from(which) % READABLE.len()];
                let Ok(turn) = provider.read_slice(body) else {
                    return Ran::default();
                };
                check_turn(&turn.calls, registry.dispatch_turn(&turn.calls).await)
            }
        }
    })
}

fn tool_and_rest(rest: &[u8]) -> (&'static str, &[u8]) {
    match rest.split_first() {
        Some((&which, arguments)) => (NAMES[usize::from(which) % NAMES.len()], arguments),
        None => (NAMES[0], rest),
    }
}

/// Every call failed outside the tool carries the typed error that its
/// result tells the model; every result can be emitted.
fn check_outcome(name: &str, outcome: &CallOutcome) {
    // No name the macro generates (`__createEventToolArguments`) ever
    // reaches the model.
    if let Some(message) = outcome.result.error_message() {
        assert!(
            !message.contains("ToolArguments") && !message.contains("__toolkit"),
            "{name}: {message}"
        );
    }
    if let Some(error) = &outcome.error {
        assert!(
            outcome.result.is_error(),
            "{name}: {error} with no error result"
        );
        assert_eq!(
            outcome.result.error_message(),
            Some(error.to_string().as_str()),
            "{name}"
        );
        assert!(outcome.tool_error().is_none(), "{name}");
    } else if outcome.result.is_error() && name == "convert" {
        // The tool's own error, with its cause and its type.
        let message = outcome.result.error_message().unwrap_or_default();
        assert_eq!(
            message,
            "the conversion table is unavailable: the table server hung up"
        );
        assert!(outcome.downcast_error::<ConvertError>().is_some());
    }
    check_emitted(&[ToolCallResult::new("call_1", name, outcome.result.clone())]);
}

fn check_turn(calls: &[ToolCall], outcome: toolkit_core::TurnOutcome) -> Ran {
    assert_eq!(outcome.results.len(), calls.len());
    for (call, result) in calls.iter().zip(&outcome.results) {
        assert_eq!(result.call_id, call.id);
        assert_eq!(result.tool_name, call.name);
    }
    for (index, error) in &outcome.errors {
        let result = &outcome.results[*index].result;
        assert_eq!(result.error_message(), Some(error.to_string().as_str()));
    }
    check_emitted(&outcome.results);
    Ran::of(outcome.results.iter().map(|call| &call.result))
}

// ---------------------------------------------------------------------------
// Emission
// ---------------------------------------------------------------------------

/// A reader of the fuzzer's bytes that yields zeros once they run out.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&first, rest)) => {
                self.0 = rest;
                first
            }
            None => 0,
        }
    }

    fn below(&mut self, n: u8) -> u8 {
        self.byte() % n
    }

    fn f32(&mut self) -> f32 {
        f32::from_bits(u32::from_le_bytes([
            self.byte(),
            self.byte(),
            self.byte(),
            self.byte(),
        ]))
    }

    /// A short text from an alphabet with the characters that matter:
    /// blanks of every kind, quotes, braces, non-ASCII.
    fn text(&mut self) -> String {
        const ALPHABET: &[char] = &[
            'a', 'b', 'Z', '0', ' ', ' ', '\n', '\t', '\u{3000}', '"', '\\', '{', '}', 'é', '😀',
            '`',
        ];
        let len = self.below(24);
        (0..len)
            .map(|_| ALPHABET[usize::from(self.byte()) % ALPHABET.len()])
            .collect()
    }
}

/// The smallest valid PNG.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// Structured output with single-precision numbers.
#[derive(Serialize)]
struct Readings {
    values: Vec<f32>,
}

/// One result built from the bytes, and the `f32`s it holds as JSON.
fn result(bytes: &mut Bytes<'_>) -> (ToolResult, Vec<f32>) {
    let mut floats = Vec::new();
    let mut result = match bytes.below(7) {
        0 => ToolResult::text(bytes.text()),
        1 => {
            let count = bytes.below(5);
            let blocks: Vec<Block> = (0..count)
                .map(|_| match bytes.below(4) {
                    0 => Block::text(bytes.text()),
                    1 => Block::json(json!({"text": bytes.text(), "n": bytes.byte()})),
                    2 => Block::image(Image::from_base64("image/png", PNG_BASE64).expect("valid")),
                    _ => Block::image(
                        Image::from_path("image/png", format!("{}.png", bytes.text()))
                            .expect("an image type"),
                    ),
                })
                .collect();
            ToolResult::blocks(blocks)
        }
        2 => {
            let text = bytes.text();
            if bytes.below(2) == 0 {
                ToolResult::lazy_text(move || text)
            } else {
                ToolResult::lazy_text(move || expected_panic(text))
            }
        }
        3 => {
            let count = bytes.below(6);
            floats = (0..count)
                .map(|_| bytes.f32())
                .filter(|value| value.is_finite())
                .collect();
            ToolResult::serialized(&Readings {
                values: floats.clone(),
            })
        }
        4 => ToolResult::from_error(ConvertError(std::io::Error::other(bytes.text()))),
        5 => ToolResult::error(bytes.text()),
        _ => ToolResult::blocks([]),
    };
    for _ in 0..bytes.below(6) {
        result = match bytes.below(7) {
            0 => result.with_error(bytes.text()),
            1 => result.with_note(bytes.text()),
            2 => result.with_memory(bytes.text()),
            3 => result.with_show_once(),
            4 => result.with_done(bytes.below(2) == 0),
            5 => result.with_attribute(bytes.text(), bytes.byte()),
            _ => result.with_attachment(bytes.text()),
        };
    }
    (result, floats)
}

/// Emits `data` as a turn of one to four results for every provider, and
/// replays it through the step history.
pub fn emission(data: &[u8]) {
    quiet_expected_panics();
    let mut bytes = Bytes(data);
    let count = 1 + bytes.below(4);
    let mut turn = Vec::new();
    let mut floats = Vec::new();
    for i in 0..count {
        let (result, values) = result(&mut bytes);
        turn.push(ToolCallResult::new(format!("call_{i}"), "tool", result));
        floats.push(values);
    }
    check_emitted(&turn);
    check_floats(&turn, &floats);

    // The step history: a failure stays a failure at every later step, and
    // what the model sees of a step follows the same rules (checked with
    // the strictest providers, to keep the run short).
    let mut history = History::new();
    history
        .record(turn.clone())
        .expect("no budget, nothing to save");
    history
        .record(turn.clone())
        .expect("no budget, nothing to save");
    for step in 1..=2 {
        let view = history.view(step);
        assert_eq!(view.len(), turn.len());
        let failed: Vec<bool> = view.iter().map(|call| call.result.is_error()).collect();
        for (seen, recorded) in failed.iter().zip(&turn) {
            assert_eq!(*seen, recorded.result.is_error());
        }
        check_openai_chat(&view);
        check_anthropic(&view, &failed);
    }
    let _ = history.render();
}

/// Whether a text is blank: some providers reject blank text.
fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// The rules every provider's output of `turn` must keep.
pub fn check_emitted(turn: &[ToolCallResult]) {
    if turn.is_empty() {
        return;
    }
    // Emitting reads lazy content, which settles whether the result failed.
    check_openai_chat(turn);
    let failed: Vec<bool> = turn.iter().map(|call| call.result.is_error()).collect();
    check_openai_responses(turn);
    check_anthropic(turn, &failed);
    check_gemini(turn, &failed);
    check_mcp(turn, &failed);
    check_envelope(turn, &failed);
}

/// OpenAI Chat: a tool message per call, in order, none blank, then at
/// most one user message.
fn check_openai_chat(turn: &[ToolCallResult]) {
    let n = turn.len();
    let chat = emit::openai_chat(turn, &EmitOptions::default()).items;
    assert!(chat.len() == n || chat.len() == n + 1, "{chat:?}");
    for (message, call) in chat.iter().zip(turn) {
        assert_eq!(message["role"], "tool");
        assert_eq!(message["tool_call_id"], call.call_id.as_str());
        let content = message["content"].as_str().expect("text content");
        assert!(!blank(content), "blank tool message: {message}");
    }
    if let Some(user) = chat.get(n) {
        assert_eq!(user["role"], "user");
        assert!(!user["content"].as_array().expect("parts").is_empty());
    }
}

/// OpenAI Responses: an output per call, in order, none blank.
fn check_openai_responses(turn: &[ToolCallResult]) {
    let responses = emit::openai_responses(turn, &EmitOptions::default()).items;
    assert_eq!(responses.len(), turn.len());
    for (item, call) in responses.iter().zip(turn) {
        assert_eq!(item["call_id"], call.call_id.as_str());
        match &item["output"] {
            Value::String(text) => assert!(!blank(text), "{item}"),
            Value::Array(parts) => {
                assert!(!parts.is_empty());
                for part in parts {
                    if let Some(text) = part["text"].as_str() {
                        assert!(!blank(text), "blank part: {item}");
                    }
                }
            }
            other => panic!("output {other}"),
        }
    }
}

/// Anthropic: one user message of tool_result blocks, in order, no blank
/// text, `is_error` exactly for failures.
fn check_anthropic(turn: &[ToolCallResult], failed: &[bool]) {
    let anthropic = emit::anthropic(turn, &EmitOptions::default()).items;
    assert_eq!(anthropic.len(), 1);
    let blocks = anthropic[0]["content"].as_array().expect("blocks");
    assert_eq!(blocks.len(), turn.len());
    for ((block, call), failed) in blocks.iter().zip(turn).zip(failed) {
        assert_eq!(block["tool_use_id"], call.call_id.as_str());
        assert_eq!(block.get("is_error").is_some(), *failed, "{block}");
        let content = block["content"].as_array().expect("content");
        assert!(!content.is_empty());
        for part in content {
            if part["type"] == "text" {
                assert!(!blank(part["text"].as_str().expect("text")), "{block}");
            }
        }
    }
}

/// Gemini: a function response per call, each an object, failures under
/// `error`.
fn check_gemini(turn: &[ToolCallResult], failed: &[bool]) {
    let gemini = emit::gemini(turn, &EmitOptions::default()).items;
    let parts = gemini[0]["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), turn.len());
    for ((part, call), failed) in parts.iter().zip(turn).zip(failed) {
        let response = &part["functionResponse"];
        assert_eq!(response["name"], call.tool_name.as_str());
        assert!(response["response"].is_object());
        assert_eq!(response["response"].get("error").is_some(), *failed);
    }
}

/// MCP: a result per call, `isError` exactly for failures.
fn check_mcp(turn: &[ToolCallResult], failed: &[bool]) {
    let mcp = emit::mcp(turn, &EmitOptions::default()).items;
    assert_eq!(mcp.len(), turn.len());
    for (item, failed) in mcp.iter().zip(failed) {
        assert_eq!(item["isError"], *failed);
        assert!(!item["content"].as_array().expect("content").is_empty());
    }
}

/// The envelope: bounded, `ok` exactly for successes.
fn check_envelope(turn: &[ToolCallResult], failed: &[bool]) {
    let options = EmitOptions::default();
    let envelopes = emit::envelope(turn, &options).items;
    for (envelope, failed) in envelopes.iter().zip(failed) {
        assert_eq!(envelope["ok"], !*failed);
        let output = envelope["output"].as_str().expect("output");
        assert!(output.chars().count() <= options.envelope_limit());
    }
}

/// The significant digits of a number's text (the integration tests'
/// checks of float fidelity use it too).
pub fn significant(text: &str) -> String {
    let mantissa = text.split(['e', 'E']).next().unwrap_or("");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    digits
        .trim_start_matches('0')
        .trim_end_matches('0')
        .to_owned()
}

/// `f32`s reach the model with the digits of their shortest form, and read
/// back as themselves.
fn check_floats(turn: &[ToolCallResult], floats: &[Vec<f32>]) {
    let gemini = emit::gemini(turn, &EmitOptions::default()).items;
    let parts = gemini[0]["parts"].as_array().expect("parts");
    for ((part, call), values) in parts.iter().zip(turn).zip(floats) {
        if values.is_empty() || call.result.is_error() || call.result.content().len() != 1 {
            continue;
        }
        let Some(sent) = part["functionResponse"]["response"]["output"]["values"].as_array() else {
            continue;
        };
        assert_eq!(sent.len(), values.len());
        for (number, &value) in sent.iter().zip(values) {
            let text = number.to_string();
            assert_eq!(text.parse::<f32>().ok(), Some(value), "{text}");
            assert_eq!(
                significant(&text),
                significant(&format!("{value:e}")),
                "{text}"
            );
        }
    }
}
