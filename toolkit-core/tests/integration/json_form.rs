//! Results and histories saved as JSON and loaded back: every kind of
//! content, every field a result can carry, over many generated results,
//! comes back so that saving it again writes the same JSON and every
//! emitter writes the same messages; numbers in JSON blocks come back
//! exactly; corrupt forms are errors, never panics. The documented form is
//! pinned in `tests/snapshots/history-json-form.json`.

use serde_json::{Value, json};
use toolkit_core::emit::{self, EmitOptions, Emitted};
use toolkit_core::{Block, History, Image, OutputBudget, Provider, ToolCallResult, ToolResult};
use toolkit_tests::fixtures::{ScratchDir, blob_resource, png, resource_link, text_resource, wav};

use crate::snapshots::check_snapshot;

/// A small deterministic generator: the same results at every run, spread
/// over every combination the tests ask for.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        // PCG's multiplier and increment; the high bits are the best mixed.
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self) -> bool {
        self.below(2) == 0
    }

    fn text(&mut self) -> String {
        const PIECES: [&str; 8] = [
            "plain",
            "ünïcödé ✓",
            "line\nbreak",
            "\"quoted\" \\ back",
            "",
            "  ",
            "tab\there",
            "🦀 emoji",
        ];
        (0..self.below(3) + 1)
            .map(|_| PIECES[self.below(PIECES.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A number of any kind JSON holds, floats drawn from every exponent.
    fn number(&mut self) -> Value {
        match self.below(6) {
            0 => json!(self.next() as i64 - (1 << 30)),
            1 => json!(u64::MAX - self.below(10)),
            2 => json!(i64::MIN + self.below(10) as i64),
            3 => {
                let bits = (self.next() << 32) | self.next();
                let value = f64::from_bits(bits);
                if value.is_finite() {
                    json!(value)
                } else {
                    json!(0.1)
                }
            }
            4 => json!(
                [
                    0.1,
                    -0.0,
                    5e-324,
                    1.7976931348623157e308,
                    3.9000000953674316
                ][self.below(5) as usize]
            ),
            _ => {
                // What a tool's `f32` becomes (`ToolResult::serialized`).
                let value = f32::from_bits(self.next() as u32);
                let value = if value.is_finite() { value } else { 3.9 };
                ToolResult::serialized(&value).content()[0]
                    .clone()
                    .into_json()
            }
        }
    }

    fn json(&mut self, depth: u32) -> Value {
        match self.below(if depth == 0 { 4 } else { 6 }) {
            0 => Value::Null,
            1 => json!(self.chance()),
            2 => self.number(),
            3 => json!(self.text()),
            4 => Value::Array((0..self.below(4)).map(|_| self.json(depth - 1)).collect()),
            _ => Value::Object(
                (0..self.below(4))
                    .map(|i| (format!("k{i}_{}", self.text()), self.json(depth - 1)))
                    .collect(),
            ),
        }
    }

    fn block(&mut self) -> Block {
        match self.below(8) {
            0 => Block::text(self.text()),
            1 => Block::image(png()),
            2 => Block::image(Image::from_path("image/png", "shots/page.png").unwrap()),
            3 => Block::audio(wav()),
            4 => Block::resource(text_resource()),
            5 => Block::resource(blob_resource()),
            6 => Block::resource_link(resource_link()),
            _ => Block::json(self.json(3)),
        }
    }

    /// A result with a random body and a random set of every other field.
    fn result(&mut self) -> ToolResult {
        let mut result = match self.below(6) {
            0 => ToolResult::text(self.text()),
            1 => ToolResult::json(self.json(3)),
            2 => ToolResult::blocks((0..self.below(4)).map(|_| self.block()).collect::<Vec<_>>()),
            3 => {
                let text = self.text();
                let result = ToolResult::lazy_text(move || text);
                // Saved whether or not anyone has read it yet.
                if self.chance() {
                    let _ = result.content();
                }
                result
            }
            4 => ToolResult::lazy_text(|| panic!("the index is gone")),
            _ => ToolResult::from_error(std::io::Error::other(self.text())),
        };
        if self.chance() {
            result = result.with_error(self.text());
        }
        if self.chance() {
            result = result.with_done(self.chance());
        }
        if self.chance() {
            result = result.with_memory(self.text());
        }
        if self.chance() {
            result = result.with_show_once();
        }
        for i in 0..self.below(3) {
            result = result.with_attachment(format!("out/report-{i}.pdf"));
        }
        if self.chance() {
            result = result.with_note(self.text());
        }
        for i in 0..self.below(3) {
            result = result.with_attribute(format!("attr{i}"), self.json(2));
        }
        result
    }
}

trait IntoJson {
    fn into_json(self) -> Value;
}

impl IntoJson for Block {
    fn into_json(self) -> Value {
        match self {
            Block::Json { value } => value,
            other => panic!("not a JSON block: {other:?}"),
        }
    }
}

/// What every emitter writes for `calls` (the envelope's included).
fn emitted(calls: &[ToolCallResult]) -> Vec<Emitted> {
    let options = EmitOptions::default();
    vec![
        emit::openai_chat(calls, &options),
        emit::openai_responses(calls, &options),
        emit::anthropic(calls, &options),
        emit::gemini(calls, &options),
        emit::mcp(calls, &options),
        emit::envelope(calls, &options),
    ]
}

fn save<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("the form is written")
}

#[test]
fn every_kind_of_result_comes_back_the_same() {
    let mut draws = Draws(7);
    for round in 0..2_000 {
        let original = draws.result();
        let saved = save(&original);
        let loaded: ToolResult = serde_json::from_str(&saved)
            .unwrap_or_else(|error| panic!("round {round}: {error}\n{saved}"));
        assert_eq!(save(&loaded), saved, "round {round}");

        assert_eq!(loaded.content(), original.content(), "round {round}");
        assert_eq!(
            loaded.error_message(),
            original.error_message(),
            "round {round}"
        );
        assert_eq!(loaded.completion(), original.completion(), "round {round}");
        assert_eq!(loaded.memory(), original.memory(), "round {round}");
        assert_eq!(
            loaded.is_show_once(),
            original.is_show_once(),
            "round {round}"
        );
        assert_eq!(
            loaded.attachments(),
            original.attachments(),
            "round {round}"
        );
        assert_eq!(loaded.note(), original.note(), "round {round}");
        assert_eq!(loaded.attributes(), original.attributes(), "round {round}");
        assert_eq!(loaded.to_text(), original.to_text(), "round {round}");
        assert_eq!(
            loaded.error_source().map(ToString::to_string),
            original.error_source().map(ToString::to_string),
            "round {round}"
        );

        let call = |result| vec![ToolCallResult::new("call_1", "tool", result)];
        assert_eq!(
            emitted(&call(loaded)),
            emitted(&call(original)),
            "round {round}: {saved}"
        );
    }
}

#[test]
fn numbers_in_json_blocks_come_back_exactly() {
    let mut draws = Draws(11);
    for _ in 0..20_000 {
        let value = draws.number();
        let original = ToolResult::json(json!({"n": value, "list": [value]}));
        let loaded: ToolResult = serde_json::from_str(&save(&original)).unwrap();
        let [Block::Json { value: back }] = loaded.content() else {
            panic!("one JSON block");
        };
        assert_eq!(back["n"], value);
        // Equal as JSON text too: `-0.0` is not `0.0`, `1.0` is not `1`.
        assert_eq!(back["n"].to_string(), value.to_string());
        if let Some(float) = value.as_f64() {
            assert_eq!(back["n"].as_f64().unwrap().to_bits(), float.to_bits());
        }
    }
}

#[test]
fn a_lazy_text_comes_back_as_plain_text() {
    let result = ToolResult::lazy_text(|| "computed".to_string());
    let loaded: ToolResult = serde_json::from_str(&save(&result)).unwrap();
    assert_eq!(loaded.as_text().unwrap(), "computed");

    let failed = ToolResult::lazy_text(|| panic!("the index is gone"));
    let loaded: ToolResult = serde_json::from_str(&save(&failed)).unwrap();
    assert!(loaded.content().is_empty());
    assert_eq!(
        loaded.error_message(),
        Some("the tool panicked: the index is gone")
    );
}

#[derive(Debug)]
struct Unavailable;

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the ledger is unavailable")
    }
}

impl std::error::Error for Unavailable {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&RESET)
    }
}

static RESET: Reset = Reset;

#[derive(Debug)]
struct Reset;

impl std::fmt::Display for Reset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection reset")
    }
}

impl std::error::Error for Reset {}

#[test]
fn a_typed_error_comes_back_as_its_message_not_its_type() {
    let result = ToolResult::from_error(Unavailable);
    let saved = save(&result);
    assert_eq!(
        serde_json::from_str::<Value>(&saved).unwrap(),
        json!({"content": [], "error": "the ledger is unavailable: connection reset",
               "cause": "the ledger is unavailable"})
    );
    let loaded: ToolResult = serde_json::from_str(&saved).unwrap();
    assert_eq!(
        loaded.error_message(),
        Some("the ledger is unavailable: connection reset")
    );
    assert_eq!(
        loaded.error_source().unwrap().to_string(),
        "the ledger is unavailable"
    );
    assert!(result.downcast_error::<Unavailable>().is_some());
    assert!(loaded.downcast_error::<Unavailable>().is_none());
}

/// Four steps through a budget of 30 characters: a long output (saved and
/// shortened), a show-once output with a memory line (saved), a failure,
/// and a short plain text.
fn budgeted_history(dir: &ScratchDir) -> History {
    let mut history = History::with_budget(OutputBudget::new(30, dir));
    let steps = [
        vec![
            ToolCallResult::new(
                "c1",
                "search",
                ToolResult::text("0123456789".repeat(5)).with_attribute("hits", 50),
            ),
            ToolCallResult::new("c2", "shot", ToolResult::blocks([Block::image(png())])),
        ],
        vec![ToolCallResult::new(
            "c3",
            "list",
            // Keys in order: serde_json may keep insertion order or sort.
            ToolResult::json(json!({"price": 3.9, "products": 50}))
                .with_show_once()
                .with_memory("Found 50 products"),
        )],
        vec![ToolCallResult::new(
            "c4",
            "open",
            ToolResult::from_error(Unavailable),
        )],
        vec![ToolCallResult::new(
            "c5",
            "submit",
            ToolResult::text("sent")
                .with_done(true)
                .with_note("the user will read it")
                .with_attachment("out/report.pdf"),
        )],
    ];
    for calls in steps {
        history.record(calls).unwrap();
    }
    history
}

/// What the model sees of each step, as every emitter writes it.
fn seen(history: &History) -> Vec<Vec<Emitted>> {
    (1..=history.len())
        .map(|number| emitted(&history.view(number)))
        .collect()
}

#[test]
fn a_history_comes_back_with_its_budget_and_saved_files() {
    let dir = ScratchDir::new("json-form-history");
    let history = budgeted_history(&dir);
    let saved = save(&history);
    let loaded: History = serde_json::from_str(&saved).unwrap();
    assert_eq!(save(&loaded), saved);
    assert_eq!(loaded.len(), history.len());
    assert_eq!(loaded.render(), history.render());
    assert_eq!(seen(&loaded), seen(&history));
    for number in 1..=history.len() {
        for index in 0..2 {
            assert_eq!(
                loaded.saved_file(number, index),
                history.saved_file(number, index)
            );
        }
    }
    assert!(loaded.saved_file(1, 0).is_some() && loaded.saved_file(2, 0).is_some());

    // The loaded history goes on with the same budget: a step recorded
    // now is saved as the original's would be.
    let mut original = history;
    let mut loaded = loaded;
    let long = || {
        vec![ToolCallResult::new(
            "c6",
            "search",
            ToolResult::text("x".repeat(40)),
        )]
    };
    original.record(long()).unwrap();
    loaded.record(long()).unwrap();
    assert_eq!(loaded.render().replace("-2.txt", ".txt"), original.render());
    assert!(loaded.saved_file(5, 0).is_some());
}

#[test]
fn the_documented_form_is_pinned() {
    let dir = ScratchDir::new("json-form-snapshot");
    let history = budgeted_history(&dir);
    let mut text = serde_json::to_string_pretty(&history).unwrap();
    // The folder differs from run to run; the snapshot names it `$DIR`.
    let folder = serde_json::to_string(&*dir.to_string_lossy()).unwrap();
    text = text.replace(folder.trim_matches('"'), "$DIR");
    text.push('\n');
    check_snapshot("history-json-form", &text);
}

#[test]
fn providers_and_options_have_a_stable_form() {
    for provider in Provider::ALL {
        let saved = save(&provider);
        assert_eq!(saved, format!("\"{}\"", provider.as_str()));
        assert_eq!(serde_json::from_str::<Provider>(&saved).unwrap(), provider);
    }
    let options = EmitOptions::default()
        .with_image_dir("/srv/shots")
        .with_placeholder("See below.")
        .with_gemini_inline_images(false)
        .with_gemini_call_ids(false)
        .with_mcp_revision(emit::McpRevision::V2026_07_28)
        .with_envelope_limit(500);
    assert_eq!(
        serde_json::to_value(&options).unwrap(),
        json!({"image_dir": "/srv/shots", "placeholder": "See below.",
               "gemini_inline_images": false, "gemini_call_ids": false,
               "mcp_revision": "2026-07-28", "envelope_limit": 500})
    );
    assert_eq!(
        serde_json::from_str::<EmitOptions>(&save(&options)).unwrap(),
        options
    );
    assert_eq!(
        serde_json::from_str::<EmitOptions>("{}").unwrap(),
        EmitOptions::default()
    );
}

/// `text` read as `T` must fail, and say `expected` somewhere.
fn refused<T: serde::de::DeserializeOwned>(text: &str, expected: &str) {
    match serde_json::from_str::<T>(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(error) => assert!(
            error.to_string().contains(expected),
            "{text}: `{error}` does not say `{expected}`"
        ),
    }
}

#[test]
fn corrupt_forms_are_clear_errors() {
    refused::<ToolResult>("{}", "missing field `content`");
    refused::<ToolResult>(r#"{"content": [], "colour": 1}"#, "unknown field `colour`");
    refused::<ToolResult>(r#"{"content": "text"}"#, "invalid type");
    refused::<ToolResult>(
        r#"{"content": [{"type": "video"}]}"#,
        "unknown variant `video`",
    );
    refused::<ToolResult>(r#"{"content": [{"type": "text"}]}"#, "missing field `text`");
    refused::<ToolResult>(
        r#"{"content": [{"type": "image", "image": {"mime_type": "image/png", "data": "not base64!"}}]}"#,
        "not valid base64",
    );
    refused::<ToolResult>(
        r#"{"content": [{"type": "image", "image": {"mime_type": "image/png", "data": "R0lGODlhAQABAAAAACw="}}]}"#,
        "holds image/gif data",
    );
    refused::<ToolResult>(
        r#"{"content": [{"type": "image", "image": {"mime_type": "text/plain", "path": "a.png"}}]}"#,
        "not an image MIME type",
    );
    refused::<ToolResult>(r#"{"content": [], "cause": "x"}"#, "no `error`");
    refused::<ToolResult>(r#"{"content": [], "done": true}"#, "invalid type");
    refused::<ToolResult>(
        r#"{"content": [], "done": {"success": true, "why": 1}}"#,
        "unknown field",
    );
    refused::<ToolResult>(r#"{"content": [], "attributes": []}"#, "invalid type");
    refused::<ToolResult>(r#"{"content": [{"type": "text", "text": "cut"#, "EOF");

    refused::<ToolCallResult>(
        r#"{"call_id": "c1", "result": {"content": []}}"#,
        "missing field `tool_name`",
    );
    refused::<History>(
        r#"{"steps": [{"calls": [{"call_id": "c1", "tool_name": "t",
        "result": {"content": []}, "shortened": []}]}]}"#,
        "no `saved_file`",
    );
    refused::<History>(
        r#"{"steps": [], "budget": {"max_chars": -1, "dir": "/tmp"}}"#,
        "invalid value",
    );
    refused::<History>(r#"{"steps": [[]]}"#, "expected a step");
    refused::<Provider>(r#""openai-chat""#, "unknown provider `openai-chat`");
    refused::<EmitOptions>(r#"{"mcp_revision": "2024-01-01"}"#, "unknown variant");
    refused::<EmitOptions>(r#"{"image_folder": "/srv"}"#, "unknown field");
}

#[test]
fn arbitrary_bytes_never_panic() {
    // Mutations of a valid form: every one reads as a result or is refused.
    let valid = save(&budgeted_history(&ScratchDir::new("json-form-mutations")));
    let mut draws = Draws(3);
    for _ in 0..3_000 {
        let mut bytes = valid.clone().into_bytes();
        for _ in 0..draws.below(4) + 1 {
            let at = draws.below(bytes.len() as u64) as usize;
            match draws.below(3) {
                0 => bytes[at] = b"{}[]\",:0-e.tn\\"[draws.below(14) as usize],
                1 => {
                    bytes.remove(at);
                }
                _ => bytes.truncate(at),
            }
            if bytes.is_empty() {
                break;
            }
        }
        let _ = serde_json::from_slice::<History>(&bytes);
    }
}
