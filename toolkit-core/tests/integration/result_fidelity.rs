//! What a tool returns reaches the model as the tool meant it: numbers with
//! the digits they were written with, errors with their causes (and the
//! host with the typed error), no blank notes, and calls read only from
//! their own shape.

use std::io;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{
    CallContext, IntoToolResult, Json, Registry, ToolCall, ToolCallResult, ToolDef, ToolResult,
    tool, tools,
};

use crate::fuzz_bounded::targets::significant;

/// Every provider's output of one turn, by name.
fn emit_everywhere(turn: &[ToolCallResult]) -> Vec<(&'static str, Value)> {
    let options = EmitOptions::default();
    vec![
        ("openai_chat", emit::openai_chat(turn, &options).to_json()),
        (
            "openai_responses",
            emit::openai_responses(turn, &options).to_json(),
        ),
        ("anthropic", emit::anthropic(turn, &options).to_json()),
        ("gemini", emit::gemini(turn, &options).to_json()),
        ("mcp", emit::mcp(turn, &options).to_json()),
        ("envelope", emit::envelope(turn, &options).to_json()),
    ]
}

// ---------------------------------------------------------------------------
// Numbers as written
// ---------------------------------------------------------------------------

/// A product's rating.
#[derive(Serialize, JsonSchema)]
struct Rating {
    /// The stars.
    rating: f32,
    /// The weight.
    weight: f32,
    /// A precise figure.
    precise: f64,
    /// Some more.
    more: Vec<f32>,
}

fn rating() -> Rating {
    Rating {
        rating: 3.9,
        weight: 0.1,
        precise: 0.1 + 0.2,
        more: vec![1.1, -7.3e-8, 16_777_216.0, f32::MAX],
    }
}

/// Rates a product.
#[tool(catalogue = false)]
fn rate() -> Rating {
    rating()
}

/// Rates a product, as JSON.
#[tool(catalogue = false)]
async fn rate_json() -> Json<Rating> {
    Json(rating())
}

/// Rates a product, or fails.
#[tool(catalogue = false)]
fn rate_or_fail() -> Result<Rating, io::Error> {
    Ok(rating())
}

/// Every number of `value`, with the text it is written as.
fn numbers(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Number(number) => out.push(number.to_string()),
        Value::Array(items) => items.iter().for_each(|item| numbers(item, out)),
        Value::Object(map) => map.values().for_each(|item| numbers(item, out)),
        Value::String(text) => {
            // JSON sent as text, as most providers take it.
            if let Ok(inner) = serde_json::from_str::<Value>(text)
                && !inner.is_string()
            {
                numbers(&inner, out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn f32_and_f64_are_sent_as_written_by_every_provider() {
    let registry = Registry::builder()
        .tools(tools![rate, rate_json, rate_or_fail])
        .build()
        .unwrap();
    let expected = [
        "3.9",
        "0.1",
        "0.30000000000000004",
        "1.1",
        "-7.3e-8",
        "16777216",
        "3.4028235e38",
    ];
    for name in ["rate", "rate_json", "rate_or_fail"] {
        let outcome = registry.dispatch((name, "{}")).await;
        assert!(!outcome.result.is_error(), "{name}: {:?}", outcome.result);
        let turn = [ToolCallResult::new("call_1", name, outcome.result)];
        for (provider, emitted) in emit_everywhere(&turn) {
            if provider == "envelope" {
                // Cut to 200 characters: checked whole below.
                continue;
            }
            let mut found = Vec::new();
            numbers(&emitted, &mut found);
            // Every number has the digits it was written with, however the
            // exponent is spelled (`3.4028235e38`, `3.4028235e+38`).
            for text in &found {
                assert!(
                    expected
                        .iter()
                        .any(|want| significant(want) == significant(text)),
                    "{name} / {provider}: {text} carries float noise: {emitted}"
                );
            }
            for want in expected {
                let as_float: f64 = want.parse().unwrap();
                assert!(
                    found
                        .iter()
                        .any(|text| text.parse::<f64>().unwrap() == as_float
                            && significant(text) == significant(want)),
                    "{name} / {provider}: {want} missing from {found:?}"
                );
            }
        }
    }
    // The values read back as the same `f32`s.
    let value = ToolResult::serialized(&rating()).content()[0].clone();
    let toolkit_core::Block::Json { value } = value else {
        panic!("not JSON")
    };
    assert_eq!(value["rating"].as_f64().unwrap() as f32, 3.9_f32);
    assert_eq!(value["rating"].to_string(), "3.9");
    assert_eq!(value["weight"].to_string(), "0.1");
    let envelope = ToolResult::serialized(&rating()).envelope_with_limit(1000);
    assert!(
        envelope.output.contains(r#""rating":3.9,"weight":0.1"#),
        "{}",
        envelope.output
    );
}

// ---------------------------------------------------------------------------
// Errors keep their cause
// ---------------------------------------------------------------------------

#[derive(Debug, thiserror::Error)]
enum LedgerError {
    #[error("the ledger is unavailable")]
    Unavailable(#[source] io::Error),
    #[error("the entry is refused")]
    Refused,
}

fn reset() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, "connection reset by peer")
}

const CHAIN: &str = "the ledger is unavailable: connection reset by peer";

/// Posts an entry.
#[tool(catalogue = false)]
fn post_entry(
    /// The amount, in cents.
    amount: i64,
) -> Result<String, LedgerError> {
    match amount {
        0 => Err(LedgerError::Refused),
        _ => Err(LedgerError::Unavailable(reset())),
    }
}

/// Posts an entry and answers with its receipt.
#[tool(catalogue = false)]
async fn post_entry_json(
    /// The amount, in cents.
    amount: i64,
) -> Result<Json<Vec<i64>>, LedgerError> {
    let _ = amount;
    Err(LedgerError::Unavailable(reset()))
}

/// A receipt.
#[derive(Serialize, JsonSchema)]
struct Receipt {
    /// Its number.
    number: u32,
}

/// Posts an entry and answers with a receipt.
#[tool(catalogue = false)]
fn post_entry_receipt(
    /// The amount, in cents.
    amount: i64,
) -> Result<Receipt, LedgerError> {
    let _ = amount;
    Err(LedgerError::Unavailable(reset()))
}

/// Posts an entry through a chain of contexts.
#[tool(catalogue = false)]
async fn post_entry_anyhow(
    /// The amount, in cents.
    amount: i64,
) -> Result<String, anyhow::Error> {
    use anyhow::Context as _;
    let _ = amount;
    Err(LedgerError::Unavailable(reset())).context("posting the entry failed")
}

/// A failure that is only `Display`: no causes, no `Error` impl.
#[derive(Debug)]
struct Closed;

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the ledger is closed today")
    }
}

/// Posts an entry to a ledger that may be closed.
#[tool(catalogue = false)]
fn post_entry_closed(
    /// The amount, in cents.
    amount: i64,
) -> Result<String, Closed> {
    let _ = amount;
    Err(Closed)
}

fn post_entry_runtime() -> ToolDef {
    ToolDef::builder("post_entry_runtime")
        .description("Posts an entry.")
        .input_schema(serde_json::json!({
            "type": "object",
            "properties": {"amount": {"type": "integer", "description": "The amount, in cents."}},
            "required": ["amount"]
        }))
        .handler(|_: Value, _: CallContext| async {
            Err::<String, _>(LedgerError::Unavailable(reset()))
        })
}

#[tokio::test]
async fn the_model_reads_the_cause_and_the_host_gets_the_typed_error() {
    let registry = Registry::builder()
        .tools(tools![
            post_entry,
            post_entry_json,
            post_entry_receipt,
            post_entry_anyhow
        ])
        .tool(post_entry_runtime())
        .build()
        .unwrap();
    for name in [
        "post_entry",
        "post_entry_json",
        "post_entry_receipt",
        "post_entry_runtime",
    ] {
        let outcome = registry.dispatch((name, r#"{"amount": 5}"#)).await;
        assert_eq!(outcome.result.error_message(), Some(CHAIN), "{name}");
        // The tool ran as designed: not a dispatch failure.
        assert!(outcome.error.is_none(), "{name}");
        let typed = outcome
            .downcast_error::<LedgerError>()
            .unwrap_or_else(|| panic!("{name}: no typed error"));
        let LedgerError::Unavailable(cause) = typed else {
            panic!("{name}: {typed:?}")
        };
        assert_eq!(cause.kind(), io::ErrorKind::ConnectionReset);
        assert!(outcome.tool_error().is_some());

        // What every provider gives the model.
        let turn = [ToolCallResult::new("call_1", name, outcome.result.clone())];
        for (provider, emitted) in emit_everywhere(&turn) {
            assert!(
                emitted.to_string().contains(CHAIN),
                "{name} / {provider}: {emitted}"
            );
        }
    }

    let refused = registry.dispatch(("post_entry", r#"{"amount": 0}"#)).await;
    assert_eq!(refused.result.error_message(), Some("the entry is refused"));
    assert!(matches!(
        refused.downcast_error::<LedgerError>(),
        Some(LedgerError::Refused)
    ));

    let chained = registry
        .dispatch(("post_entry_anyhow", r#"{"amount": 5}"#))
        .await;
    assert_eq!(
        chained.result.error_message(),
        Some(format!("posting the entry failed: {CHAIN}").as_str())
    );
    assert!(chained.tool_error().is_some());

    // An error type with `Display` only still reaches the model as its
    // message; there is no typed error to give back.
    let closed = Registry::builder()
        .tools(tools![post_entry_closed])
        .build()
        .unwrap()
        .dispatch(("post_entry_closed", r#"{"amount": 5}"#))
        .await;
    assert_eq!(
        closed.result.error_message(),
        Some("the ledger is closed today")
    );
    assert!(closed.error.is_none() && closed.tool_error().is_none());

    // A failure outside the tool has no tool error.
    let unknown = registry.dispatch(("post_entri", "{}")).await;
    assert!(unknown.error.is_some());
    assert!(unknown.tool_error().is_none());
}

#[test]
fn the_conversion_keeps_the_chain_and_the_type() {
    let failed: Result<String, LedgerError> = Err(LedgerError::Unavailable(reset()));
    let result = failed.into_tool_result();
    assert_eq!(result.error_message(), Some(CHAIN));
    assert!(result.downcast_error::<LedgerError>().is_some());
    assert!(result.downcast_error::<io::Error>().is_none());

    // An error that prints its source itself is not repeated.
    #[derive(Debug, thiserror::Error)]
    #[error("reading the ledger: {0}")]
    struct Reading(#[from] io::Error);
    let failed: Result<(), Reading> = Err(reset().into());
    assert_eq!(
        failed.into_tool_result().error_message(),
        Some("reading the ledger: connection reset by peer")
    );

    // Plain messages still work, with no typed error to speak of.
    let failed: Result<String, String> = Err("no such account".into());
    assert_eq!(
        failed.into_tool_result().error_message(),
        Some("no such account")
    );
    let failed: Result<String, &str> = Err("no such account");
    assert_eq!(
        failed.into_tool_result().error_message(),
        Some("no such account")
    );

    let direct = ToolResult::from_error(LedgerError::Unavailable(reset()));
    assert_eq!(direct.error_message(), Some(CHAIN));
    assert!(format!("{direct:?}").contains("Unavailable"));
    // Kept through clones and what the step history shows.
    assert!(direct.clone().downcast_error::<LedgerError>().is_some());
}

// ---------------------------------------------------------------------------
// Blank notes
// ---------------------------------------------------------------------------

/// Whether `value` holds a text that is blank: an empty or whitespace-only
/// string anywhere (Anthropic rejects blank text blocks).
fn blank_texts(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::String(text) if text.trim().is_empty() => out.push(path.to_owned()),
        Value::String(text) if text.ends_with('\n') || text.ends_with(' ') => {
            out.push(format!("{path} (trailing blank)"))
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                blank_texts(item, &format!("{path}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                blank_texts(item, &format!("{path}.{key}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn blank_notes_are_dropped_everywhere() {
    for blank in ["", "   ", "\n\t ", "\u{3000}"] {
        let results = [
            ToolResult::text("3 hits").with_note(blank),
            ToolResult::blocks([]).with_note(blank),
            ToolResult::error("failed").with_note(blank),
            ToolResult::text("3 hits")
                .with_note("a real note")
                .with_note(blank),
            ToolResult::json(json!({"hits": 3})).with_note(blank),
        ];
        for result in results {
            assert_eq!(result.note(), None, "{blank:?}");
            let turn = [ToolCallResult::new("call_1", "search", result)];
            for (provider, emitted) in emit_everywhere(&turn) {
                if provider == "envelope" {
                    // Plain text for the host, not a message: nothing after
                    // the output.
                    let output = emitted[0]["output"].as_str().unwrap();
                    assert_eq!(output, output.trim_end(), "{blank:?}: {emitted}");
                    continue;
                }
                let mut found = Vec::new();
                blank_texts(&emitted, provider, &mut found);
                assert!(found.is_empty(), "{blank:?}: {found:?} in {emitted}");
            }
            // A blank note does not split OpenAI Chat into two messages.
            let chat = emit::openai_chat(&turn, &EmitOptions::default()).items;
            assert_eq!(chat.len(), 1, "{blank:?}: {chat:?}");
        }
    }
    // A note that is not blank is kept as written.
    assert_eq!(
        ToolResult::text("x").with_note("  spaced  ").note(),
        Some("  spaced  ")
    );
}

// ---------------------------------------------------------------------------
// ToolCall reads its own shape only
// ---------------------------------------------------------------------------

#[test]
fn tool_call_refuses_foreign_shapes() {
    let own: ToolCall = serde_json::from_value(
        json!({"id": "call_1", "name": "search", "arguments": "{\"query\":\"rust\"}"}),
    )
    .unwrap();
    assert_eq!(own.arguments_text(), Some("{\"query\":\"rust\"}"));
    assert_eq!(own.arguments(), &json!({"query": "rust"}));
    let as_object: ToolCall = serde_json::from_value(
        json!({"id": "call_1", "name": "search", "arguments": {"query": "rust"}}),
    )
    .unwrap();
    assert_eq!(as_object.arguments(), &json!({"query": "rust"}));
    assert_eq!(as_object.arguments_text(), None);
    let round_trip: ToolCall =
        serde_json::from_value(serde_json::to_value(&as_object).unwrap()).unwrap();
    assert_eq!(round_trip, as_object);

    let foreign = [
        (
            "Anthropic tool_use",
            json!({"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"query": "rust"}}),
        ),
        (
            "Responses function_call",
            json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "search",
                   "arguments": "{\"query\":\"rust\"}", "status": "completed"}),
        ),
        (
            "Chat tool call",
            json!({"id": "call_1", "type": "function",
                   "function": {"name": "search", "arguments": "{}"}}),
        ),
        (
            "Gemini functionCall",
            json!({"id": "fc_1", "name": "search", "args": {"query": "rust"}}),
        ),
        (
            "an extra key",
            json!({"id": "call_1", "name": "search", "arguments": {}, "extra": 1}),
        ),
    ];
    for (what, value) in foreign {
        let parsed = serde_json::from_value::<ToolCall>(value.clone());
        assert!(parsed.is_err(), "{what} read as {parsed:?}");
        let parsed = serde_json::from_str::<ToolCall>(&value.to_string());
        assert!(parsed.is_err(), "{what} read from text as {parsed:?}");
    }

    let duplicate = r#"{"id": "call_1", "id": "call_2", "name": "search", "arguments": {}}"#;
    assert!(serde_json::from_str::<ToolCall>(duplicate).is_err());
}
