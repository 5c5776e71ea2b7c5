//! What a tool returns: every field, every conversion, lazy text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use serde_json::json;
use toolkit_core::{Block, Completion, Envelope, IntoToolResult, Json, ToolResult};
use toolkit_tests::fixtures::{PNG_BASE64, png};

#[test]
fn text_result_has_one_text_block() {
    let result = ToolResult::text("hello");
    assert_eq!(result.content(), [Block::text("hello")]);
    assert_eq!(result.as_text(), Ok("hello"));
    assert!(!result.is_error());
    assert_eq!(result.completion(), Completion::Continue);
}

#[test]
fn blocks_keep_their_order() {
    let blocks = vec![
        Block::text("a"),
        Block::image(png()),
        Block::json(json!({"k": 1})),
        Block::text("b"),
    ];
    let result = ToolResult::blocks(blocks.clone());
    assert_eq!(result.content(), blocks.as_slice());
    assert_eq!(result.to_text(), "a\n[image: image/png]\n{\"k\":1}\nb");
}

#[test]
fn blocks_of_any_count_keep_every_field() {
    for count in 0..4 {
        let blocks: Vec<Block> = (0..count).map(|i| Block::text(i.to_string())).collect();
        let result = ToolResult::blocks(blocks.clone())
            .with_error("partial")
            .with_memory("m")
            .with_done(false);
        assert_eq!(result.content(), blocks.as_slice(), "{count} block(s)");
        assert_eq!(result.error_message(), Some("partial"));
        assert_eq!(result.memory(), Some("m"));
        assert_eq!(result.success(), Some(false));
        let copy = result.clone().with_note("n");
        assert_eq!(copy.content(), blocks.as_slice());
        assert_eq!(result.note(), None, "a clone's extras are its own");
    }
}

#[test]
fn single_text_of_anything_else_is_an_error_not_a_panic() {
    let two = ToolResult::blocks([Block::text("a"), Block::text("b")]);
    let error = two.as_text().unwrap_err();
    assert_eq!(error.kinds(), ["text", "text"]);
    assert!(error.to_string().contains("2 block(s)"), "{error}");

    let image = ToolResult::blocks([Block::image(png())]);
    assert_eq!(image.as_text().unwrap_err().kinds(), ["image"]);

    let json = ToolResult::json(json!([1]));
    assert_eq!(json.as_text().unwrap_err().kinds(), ["json"]);

    let empty = ToolResult::error("boom");
    assert!(empty.as_text().unwrap_err().kinds().is_empty());
}

#[test]
fn error_is_kept_and_shown_first() {
    let failed = ToolResult::error("disk full");
    assert!(failed.is_error());
    assert_eq!(failed.error_message(), Some("disk full"));
    assert_eq!(failed.to_text(), "Error: disk full");

    let partial = ToolResult::text("wrote 3 of 5 files").with_error("disk full");
    assert_eq!(partial.content(), [Block::text("wrote 3 of 5 files")]);
    assert_eq!(partial.to_text(), "Error: disk full\nwrote 3 of 5 files");
}

#[test]
fn success_exists_only_with_done() {
    let ongoing = ToolResult::text("clicked");
    assert!(!ongoing.is_done());
    assert_eq!(ongoing.success(), None);

    let won = ToolResult::text("booked").with_done(true);
    assert!(won.is_done());
    assert_eq!(won.success(), Some(true));
    assert_eq!(won.completion(), Completion::Done { success: true });

    let lost = ToolResult::text("sold out").with_done(false);
    assert!(lost.is_done());
    assert_eq!(lost.success(), Some(false));
}

#[test]
fn every_other_field_is_kept() {
    let result = ToolResult::text("[500 lines]")
        .with_memory("Found 50 products")
        .with_show_once()
        .with_attachment("report.pdf")
        .with_attachment("data.csv")
        .with_note("Prices are in EUR.")
        .with_attribute("elapsed_ms", 42)
        .with_attribute("raw", json!({"rows": 500}));
    assert_eq!(result.memory(), Some("Found 50 products"));
    assert!(result.is_show_once());
    assert_eq!(
        result.attachments(),
        [std::path::PathBuf::from("report.pdf"), "data.csv".into()]
    );
    assert_eq!(result.note(), Some("Prices are in EUR."));
    assert_eq!(result.attributes()["elapsed_ms"], json!(42));
    assert_eq!(result.attributes()["raw"], json!({"rows": 500}));

    let plain = ToolResult::text("x");
    assert_eq!(plain.memory(), None);
    assert!(!plain.is_show_once());
    assert!(plain.attachments().is_empty());
    assert_eq!(plain.note(), None);
    assert!(plain.attributes().is_empty());
}

#[test]
fn lazy_text_runs_once_under_a_race() {
    const THREADS: usize = 32;
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let result = ToolResult::lazy_text(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        // Long enough that every thread arrives while the supplier runs.
        std::thread::sleep(std::time::Duration::from_millis(50));
        "computed".to_string()
    });
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            // Each thread holds its own clone: clones share the cache.
            let result = result.clone();
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                result.as_text().map(str::to_owned)
            })
        })
        .collect();
    for handle in handles {
        assert_eq!(handle.join().unwrap().as_deref(), Ok("computed"));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(result.as_text(), Ok("computed"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn lazy_text_never_read_never_runs() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let result = ToolResult::lazy_text(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        "unused".to_string()
    })
    .with_memory("kept")
    .with_done(true);
    // Everything but the content can be read without computing it.
    assert_eq!(result.memory(), Some("kept"));
    assert!(!result.is_error());
    assert_eq!(result.success(), Some(true));
    assert!(format!("{result:?}").contains("not computed"));
    let clone = result.clone();
    drop(result);
    drop(clone);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn lazy_text_that_panics_becomes_an_error() {
    let result = ToolResult::lazy_text(|| panic!("index corrupted"));
    assert!(!result.is_error(), "not known before it runs");
    assert!(result.content().is_empty());
    assert_eq!(
        result.error_message(),
        Some("the tool panicked: index corrupted")
    );
    assert!(!result.envelope().ok);
    // Asking again neither panics nor runs anything.
    assert!(result.as_text().is_err());
}

#[test]
fn conversions_from_text() {
    assert_eq!(String::from("s").into_tool_result().as_text(), Ok("s"));
    assert_eq!("s".into_tool_result().as_text(), Ok("s"));
    assert_eq!(Cow::Borrowed("s").into_tool_result().as_text(), Ok("s"));
}

#[test]
fn conversion_from_unit_is_empty_success() {
    let result = ().into_tool_result();
    assert!(result.content().is_empty());
    assert!(!result.is_error());
}

#[test]
fn conversions_from_blocks_images_and_results() {
    let image = png().into_tool_result();
    assert_eq!(image.content(), [Block::image(png())]);

    let block = Block::text("b").into_tool_result();
    assert_eq!(block.as_text(), Ok("b"));

    let blocks = vec![Block::text("a"), Block::image(png())].into_tool_result();
    assert_eq!(blocks.content().len(), 2);

    let whole = ToolResult::text("x").with_done(true).into_tool_result();
    assert_eq!(whole.success(), Some(true));
}

#[test]
fn conversions_to_structured_json() {
    #[derive(serde::Serialize)]
    struct Hit {
        title: String,
        score: f32,
    }
    let hits = Json(vec![Hit {
        title: "Rust".into(),
        score: 0.5,
    }])
    .into_tool_result();
    assert_eq!(
        hits.content(),
        [Block::json(json!([{"title": "Rust", "score": 0.5}]))]
    );

    let value = json!({"ok": true}).into_tool_result();
    assert_eq!(value.content(), [Block::json(json!({"ok": true}))]);

    assert_eq!(
        ToolResult::serialized(&[1, 2]).content(),
        [Block::json(json!([1, 2]))]
    );
}

#[test]
fn json_that_cannot_serialize_is_an_error_result() {
    let mut map = HashMap::new();
    map.insert((1, 2), "tuple keys are not JSON object keys");
    let result = Json(map).into_tool_result();
    assert!(result.is_error());
    assert!(
        result
            .error_message()
            .unwrap()
            .contains("could not be serialized"),
        "{result:?}"
    );
}

#[test]
fn conversions_from_option_and_result() {
    assert_eq!(Some("x").into_tool_result().as_text(), Ok("x"));
    assert!(None::<String>.into_tool_result().content().is_empty());

    let ok: Result<&str, String> = Ok("fine");
    assert_eq!(ok.into_tool_result().as_text(), Ok("fine"));

    let failed: Result<String, std::io::Error> = Err(std::io::Error::other("disk full"));
    let result = failed.into_tool_result();
    assert_eq!(result.error_message(), Some("disk full"));
    assert!(result.content().is_empty());

    let nested: Result<Json<Vec<u8>>, String> = Ok(Json(vec![1]));
    assert_eq!(
        nested.into_tool_result().content(),
        [Block::json(json!([1]))]
    );
}

/// An error with a cause, as `thiserror`'s `#[source]` makes one.
#[derive(Debug)]
struct Chained(std::io::Error);

impl fmt::Display for Chained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("fetch failed")
    }
}

impl std::error::Error for Chained {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

#[test]
fn error_conversion_keeps_the_cause_chain() {
    let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
    let failed: Result<String, Chained> = Err(Chained(refused));
    let result = failed.into_tool_result();
    assert_eq!(
        result.error_message(),
        Some("fetch failed: connection refused")
    );
    assert!(result.downcast_error::<Chained>().is_some());
}

#[test]
fn envelope_contract() {
    let ok = ToolResult::text("3 hits").envelope();
    assert_eq!(
        serde_json::to_value(&ok).unwrap(),
        json!({"ok": true, "output": "3 hits"})
    );

    let failed = ToolResult::error("no such file").envelope();
    assert_eq!(
        (failed.ok, failed.output.as_str()),
        (false, "Error: no such file")
    );

    // Cut at 200 characters by default, on a character boundary, visibly.
    let long = ToolResult::text("ü".repeat(1000)).envelope();
    assert_eq!(long.output.chars().count(), Envelope::DEFAULT_LIMIT);
    assert!(long.output.ends_with(toolkit_core::text::CUT_MARK));
    assert!(long.output.starts_with("üüü"));

    let custom = ToolResult::text("abcdefghijklmnopqrstuvwxyz").envelope_with_limit(10);
    assert_eq!(custom.output.chars().count(), 10);
    assert!(custom.output.ends_with(toolkit_core::text::CUT_MARK));

    let exact = ToolResult::text("x".repeat(200)).envelope();
    assert_eq!(exact.output, "x".repeat(200), "nothing cut at the limit");

    let noted = ToolResult::text("ok").with_note("cached").envelope();
    assert_eq!(noted.output, "ok\ncached");

    let image = ToolResult::blocks([Block::image(png())]).envelope();
    assert_eq!(image.output, "[image: image/png]");
}

#[test]
fn blocks_serialize_with_a_type_tag() {
    let blocks = vec![
        Block::text("a"),
        Block::image(png()),
        Block::json(json!({"k": 1})),
    ];
    let value = serde_json::to_value(&blocks).unwrap();
    assert_eq!(
        value,
        json!([
            {"type": "text", "text": "a"},
            {"type": "image", "image": {"mime_type": "image/png", "data": PNG_BASE64}},
            {"type": "json", "value": {"k": 1}},
        ])
    );
    let back: Vec<Block> = serde_json::from_value(value).unwrap();
    assert_eq!(back, blocks);
}
