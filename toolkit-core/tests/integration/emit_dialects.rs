//! Emission to every dialect, judged by code this project did not write:
//! `async-openai` for OpenAI, `rmcp` for MCP, and types written from the
//! providers' documentation for Anthropic and Gemini.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolkit_core::emit::{self, EmitOptions, McpRevision};
use toolkit_core::{Audio, Block, EmbeddedResource, IntoToolResult, ToolCallResult, ToolResult};
use toolkit_tests::fixtures::{
    PNG_BASE64, blob_resource, png, resource_link, text_resource, three_call_turn, wav,
};
use toolkit_tests::judges::{anthropic, gemini};
use toolkit_tests::sdk_judges;

const DATA_URL: &str = "data:image/png;base64,";

fn options() -> EmitOptions {
    EmitOptions::default()
}

fn call(id: &str, name: &str, result: ToolResult) -> ToolCallResult {
    ToolCallResult::new(id, name, result)
}

// ---------------------------------------------------------------- OpenAI Chat

#[test]
fn openai_chat_three_call_turn() {
    let emitted = emit::openai_chat(&three_call_turn(), &options());
    assert!(emitted.problems.is_empty());
    for item in &emitted.items {
        sdk_judges::openai_chat_message(item).unwrap();
    }
    let roles: Vec<&str> = emitted
        .items
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["tool", "tool", "tool", "user"],
        "tool messages first"
    );
    let ids: Vec<&str> = emitted.items[..3]
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3"], "call order");

    assert_eq!(emitted.items[0]["content"], "Found 2 photos.");
    assert_eq!(
        emitted.items[1]["content"], "Viewport 1280x720.",
        "the note"
    );
    assert_eq!(emitted.items[2]["content"], "Error: 404 Not Found");

    let parts = emitted.items[3]["content"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(
        parts[0],
        json!({"type": "text", "text": "Output of tool call call_2 (screenshot):"}),
        "labelled with the call id and tool name"
    );
    assert_eq!(
        parts[1],
        json!({"type": "text", "text": "The page after login."})
    );
    assert_eq!(parts[2]["type"], "image_url");
    assert_eq!(
        parts[2]["image_url"]["url"],
        format!("{DATA_URL}{PNG_BASE64}")
    );
}

#[test]
fn openai_chat_images_without_note_use_the_placeholder() {
    let turn = [call(
        "c1",
        "shot",
        ToolResult::blocks([Block::image(png())]),
    )];
    let items = emit::openai_chat(&turn, &options()).items;
    assert_eq!(items[0]["content"], EmitOptions::DEFAULT_PLACEHOLDER);
    assert_eq!(
        items[0]["content"],
        "Tool execution completed successfully. Content in next message."
    );

    let custom = options().with_placeholder("See the next message.");
    let items = emit::openai_chat(&turn, &custom).items;
    assert_eq!(items[0]["content"], "See the next message.");
}

#[test]
fn openai_chat_user_content_follows_every_tool_message_in_call_order() {
    let shot = |text: &str| ToolResult::blocks([Block::text(text), Block::image(png())]);
    let turn = [
        call("a", "first", shot("one")),
        call("b", "plain", ToolResult::text("two")),
        call("c", "third", shot("three")),
        call("d", "failing", shot("four").with_error("partly failed")),
    ];
    let items = emit::openai_chat(&turn, &options()).items;
    for item in &items {
        sdk_judges::openai_chat_message(item).unwrap();
    }
    let roles: Vec<&str> = items.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["tool", "tool", "tool", "tool", "user"]);
    assert_eq!(
        items[3]["content"],
        format!("Error: partly failed\n{}", EmitOptions::DEFAULT_PLACEHOLDER),
        "the error stays in the tool message"
    );
    let texts: Vec<&str> = items[4]["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|part| part["text"].as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "Output of tool call a (first):",
            "one",
            "Output of tool call c (third):",
            "three",
            "Output of tool call d (failing):",
            "four",
        ]
    );
}

#[test]
fn openai_chat_note_without_content_stays_in_the_tool_message() {
    let turn = [call(
        "c1",
        "save",
        ToolResult::blocks([]).with_note("saved"),
    )];
    let items = emit::openai_chat(&turn, &options()).items;
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["content"], "(no output)\nsaved");
}

// ----------------------------------------------------------- OpenAI Responses

#[test]
fn openai_responses_three_call_turn() {
    let emitted = emit::openai_responses(&three_call_turn(), &options());
    assert!(emitted.problems.is_empty());
    for item in &emitted.items {
        sdk_judges::openai_function_call_output(item).unwrap();
    }
    let ids: Vec<&str> = emitted
        .items
        .iter()
        .map(|i| i["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3"]);
    assert_eq!(emitted.items[0]["output"], "Found 2 photos.");
    assert_eq!(
        emitted.items[1]["output"],
        json!([
            {"type": "input_text", "text": "The page after login."},
            {"type": "input_image", "image_url": format!("{DATA_URL}{PNG_BASE64}"), "detail": "auto"},
            {"type": "input_text", "text": "Viewport 1280x720."},
        ])
    );
    assert_eq!(emitted.items[2]["output"], "Error: 404 Not Found");
}

// ------------------------------------------------------------------ Anthropic

#[test]
fn anthropic_three_call_turn() {
    let emitted = emit::anthropic(&three_call_turn(), &options());
    assert!(emitted.problems.is_empty());
    assert_eq!(
        emitted.items.len(),
        1,
        "one user message for the whole turn"
    );
    anthropic::check_user_message(&emitted.items[0]).unwrap();
    let message = &emitted.items[0];
    assert_eq!(message["role"], "user");
    let blocks = message["content"].as_array().unwrap();
    let ids: Vec<&str> = blocks
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3"]);
    assert!(blocks.iter().all(|b| b["type"] == "tool_result"));

    assert_eq!(
        blocks[0]["content"],
        json!([{"type": "text", "text": "Found 2 photos."}])
    );
    assert!(blocks[0].get("is_error").is_none());
    assert_eq!(
        blocks[1]["content"],
        json!([
            {"type": "text", "text": "The page after login."},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_BASE64}},
            {"type": "text", "text": "Viewport 1280x720."},
        ])
    );
    assert_eq!(blocks[2]["is_error"], true);
    assert_eq!(
        blocks[2]["content"],
        json!([{"type": "text", "text": "Error: 404 Not Found"}])
    );
}

#[test]
fn anthropic_never_sends_empty_text() {
    let turn = [
        call("a", "quiet", ().into_tool_result()),
        call("b", "blank", ToolResult::text("")),
    ];
    let message = &emit::anthropic(&turn, &options()).items[0];
    anthropic::check_user_message(message).unwrap();
    assert_eq!(message["content"][0]["content"][0]["text"], "(no output)");
    assert_eq!(message["content"][1]["content"][0]["text"], "(no output)");
}

// --------------------------------------------------------------------- Gemini

#[test]
fn gemini_three_call_turn() {
    let emitted = emit::gemini(&three_call_turn(), &options());
    assert!(emitted.problems.is_empty());
    assert_eq!(emitted.items.len(), 1);
    gemini::check_content(&emitted.items[0]).unwrap();
    let parts = emitted.items[0]["parts"].as_array().unwrap();
    let responses: Vec<&Value> = parts.iter().map(|p| &p["functionResponse"]).collect();
    let ids: Vec<&str> = responses
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3"]);
    let names: Vec<&str> = responses
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search", "screenshot", "fetch"]);

    assert_eq!(
        responses[0]["response"],
        json!({"output": "Found 2 photos."})
    );
    assert_eq!(
        responses[1]["response"],
        json!({
            "output": "The page after login.",
            "note": "Viewport 1280x720.",
            "image_1": {"$ref": "call_2_image_1.png"},
        })
    );
    assert_eq!(
        responses[1]["parts"],
        json!([{"inlineData": {
            "mimeType": "image/png",
            "data": PNG_BASE64,
            "displayName": "call_2_image_1.png",
        }}])
    );
    assert_eq!(responses[2]["response"], json!({"error": "404 Not Found"}));
}

#[test]
fn gemini_before_3_sends_images_in_a_separate_content() {
    let options = options()
        .with_gemini_inline_images(false)
        .with_gemini_call_ids(false);
    let emitted = emit::gemini(&three_call_turn(), &options);
    assert_eq!(emitted.items.len(), 2);
    for item in &emitted.items {
        gemini::check_content(item).unwrap();
    }
    let responses = emitted.items[0]["parts"].as_array().unwrap();
    assert!(
        responses
            .iter()
            .all(|p| p["functionResponse"].get("id").is_none())
    );
    assert!(
        responses
            .iter()
            .all(|p| p["functionResponse"].get("parts").is_none())
    );
    assert_eq!(
        emitted.items[1],
        json!({"role": "user", "parts": [
            {"text": "Images returned by tool call call_2 (screenshot):"},
            {"inlineData": {"mimeType": "image/png", "data": PNG_BASE64}},
        ]})
    );
}

#[test]
fn gemini_image_only_results_still_answer() {
    let turn = [call(
        "c1",
        "shot",
        ToolResult::blocks([Block::image(png())]),
    )];
    let inline = emit::gemini(&turn, &options()).items;
    gemini::check_content(&inline[0]).unwrap();
    assert_eq!(
        inline[0]["parts"][0]["functionResponse"]["response"],
        json!({"image_1": {"$ref": "c1_image_1.png"}})
    );
    let apart = emit::gemini(&turn, &options().with_gemini_inline_images(false)).items;
    assert_eq!(
        apart[0]["parts"][0]["functionResponse"]["response"],
        json!({"output": EmitOptions::DEFAULT_PLACEHOLDER})
    );
}

// ------------------------------------------------------------------------ MCP

#[test]
fn mcp_three_call_turn() {
    let emitted = emit::mcp(&three_call_turn(), &options());
    assert!(emitted.problems.is_empty());
    assert_eq!(emitted.items.len(), 3);
    for item in &emitted.items {
        sdk_judges::mcp_call_tool_result(item).unwrap();
    }
    assert_eq!(
        emitted.items[0],
        json!({"content": [{"type": "text", "text": "Found 2 photos."}], "isError": false})
    );
    assert_eq!(
        emitted.items[1],
        json!({"content": [
            {"type": "text", "text": "The page after login."},
            {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"},
            {"type": "text", "text": "Viewport 1280x720."},
        ], "isError": false})
    );
    assert_eq!(
        emitted.items[2],
        json!({"content": [{"type": "text", "text": "Error: 404 Not Found"}], "isError": true})
    );
}

#[test]
fn mcp_revisions() {
    let turn = [
        call("1", "object", ToolResult::json(json!({"n": 1}))),
        call("2", "array", ToolResult::json(json!([1, 2]))),
    ];
    let old = emit::mcp(&turn, &options()).items;
    assert_eq!(old[0]["structuredContent"], json!({"n": 1}));
    assert!(
        old[1].get("structuredContent").is_none(),
        "2025-11-25: objects only"
    );
    assert!(old[0].get("resultType").is_none());

    let new = emit::mcp(
        &turn,
        &options().with_mcp_revision(McpRevision::V2026_07_28),
    )
    .items;
    for item in &new {
        sdk_judges::mcp_call_tool_result(item).unwrap();
        assert_eq!(item["resultType"], "complete");
    }
    assert_eq!(new[1]["structuredContent"], json!([1, 2]));
    assert_eq!(
        new[1]["content"],
        json!([{"type": "text", "text": "[1,2]"}]),
        "text mirror"
    );
}

// ------------------------------------------------------------------- Envelope

#[test]
fn envelope_three_call_turn() {
    let items = emit::envelope(&three_call_turn(), &options()).items;
    assert_eq!(
        items,
        [
            json!({"ok": true, "output": "Found 2 photos."}),
            json!({"ok": true, "output": "The page after login.\n[image: image/png]\nViewport 1280x720."}),
            json!({"ok": false, "output": "Error: 404 Not Found"}),
        ]
    );
    let short = emit::envelope(&three_call_turn(), &options().with_envelope_limit(12)).items;
    assert_eq!(short[1]["output"], "The page af…");
}

// ------------------------------------------------------- across every dialect

fn every_dialect(
    turn: &[ToolCallResult],
    options: &EmitOptions,
) -> Vec<(&'static str, Vec<Value>)> {
    vec![
        ("openai_chat", emit::openai_chat(turn, options).items),
        (
            "openai_responses",
            emit::openai_responses(turn, options).items,
        ),
        ("anthropic", emit::anthropic(turn, options).items),
        ("gemini", emit::gemini(turn, options).items),
        ("mcp", emit::mcp(turn, options).items),
        ("envelope", emit::envelope(turn, options).items),
    ]
}

#[test]
fn structured_json_goes_where_each_provider_expects_it() {
    let turn = [call(
        "c1",
        "stats",
        ToolResult::json(json!({"hits": 3, "tags": ["a"]})),
    )];
    let serialized = r#"{"hits":3,"tags":["a"]}"#;
    let o = options();
    assert_eq!(emit::openai_chat(&turn, &o).items[0]["content"], serialized);
    assert_eq!(
        emit::openai_responses(&turn, &o).items[0]["output"],
        serialized
    );
    assert_eq!(
        emit::anthropic(&turn, &o).items[0]["content"][0]["content"][0]["text"],
        serialized
    );
    assert_eq!(
        emit::gemini(&turn, &o).items[0]["parts"][0]["functionResponse"]["response"]["output"],
        json!({"hits": 3, "tags": ["a"]}),
        "native JSON"
    );
    let mcp = &emit::mcp(&turn, &o).items[0];
    assert_eq!(mcp["structuredContent"], json!({"hits": 3, "tags": ["a"]}));
    assert_eq!(mcp["content"][0]["text"], serialized);
}

#[test]
fn host_only_fields_go_nowhere() {
    let result = ToolResult::text("visible")
        .with_attribute("secret_key", "host-only-value")
        .with_attachment("/home/user/attachment-file.pdf")
        .with_memory("memory-line")
        .with_done(true);
    let turn = [call("c1", "done", result)];
    for (dialect, items) in every_dialect(&turn, &options()) {
        let text = serde_json::to_string(&items).unwrap();
        assert!(text.contains("visible"), "{dialect}");
        for hidden in [
            "secret_key",
            "host-only-value",
            "attachment-file",
            "memory-line",
        ] {
            assert!(!text.contains(hidden), "{dialect} leaked {hidden}: {text}");
        }
    }
}

#[test]
fn block_order_is_kept_everywhere() {
    let result = ToolResult::blocks([
        Block::text("first"),
        Block::image(png()),
        Block::json(json!({"second": true})),
        Block::text("third"),
    ]);
    let turn = [call("c1", "mixed", result)];
    for (dialect, items) in every_dialect(&turn, &options()) {
        let text = serde_json::to_string(&items).unwrap();
        let at = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("{dialect}: {needle} missing in {text}"))
        };
        assert!(at("first") < at("second"), "{dialect}");
        assert!(at("second") < at("third"), "{dialect}");
        if dialect != "envelope" && dialect != "gemini" {
            assert!(at("first") < at(&PNG_BASE64[..20]), "{dialect}");
            assert!(at(&PNG_BASE64[..20]) < at("second"), "{dialect}");
        }
    }
}

#[test]
fn an_empty_turn_emits_nothing() {
    for (dialect, items) in every_dialect(&[], &options()) {
        assert!(items.is_empty(), "{dialect}");
    }
}

#[test]
fn lazy_text_runs_once_across_dialects() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let result = ToolResult::lazy_text(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        "computed".into()
    });
    let turn = [call("c1", "lazy", result)];
    for (dialect, items) in every_dialect(&turn, &options()) {
        assert!(
            serde_json::to_string(&items).unwrap().contains("computed"),
            "{dialect}"
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_panicking_lazy_text_is_emitted_as_an_error() {
    let turn = [call("c1", "lazy", ToolResult::lazy_text(|| panic!("boom")))];
    let o = options();
    assert_eq!(emit::mcp(&turn, &o).items[0]["isError"], true);
    assert_eq!(
        emit::anthropic(&turn, &o).items[0]["content"][0]["is_error"],
        true
    );
    assert_eq!(
        emit::openai_chat(&turn, &o).items[0]["content"],
        "Error: the tool panicked: boom"
    );
    assert_eq!(emit::envelope(&turn, &o).items[0]["ok"], false);
}

// ------------------------------------------- audio, resources and resource links

/// Text, WAV audio, a text resource, a binary resource and a link.
fn media_result() -> ToolResult {
    ToolResult::blocks([
        Block::text("Recorded:"),
        Block::audio(wav()),
        Block::resource(text_resource()),
        Block::resource(blob_resource()),
        Block::resource_link(resource_link()),
    ])
}

const RESOURCE_TEXT: &str = "[resource: file:///notes/plan.md]\n- ship on Friday";
const BLOB_TEXT: &str = "[resource: file:///shots/page.png, image/png, 69 B]";
const LINK_TEXT: &str = "[resource link: Today's log, file:///logs/today.log, text/plain, 51 KiB: The server log since midnight]";

#[test]
fn media_and_resources_reach_mcp_as_mcp_content() {
    let turn = [call("c1", "record", media_result())];
    for revision in [McpRevision::V2025_11_25, McpRevision::V2026_07_28] {
        let items = emit::mcp(&turn, &options().with_mcp_revision(revision)).items;
        sdk_judges::mcp_call_tool_result(&items[0]).unwrap();
        assert_eq!(
            items[0]["content"],
            json!([
                {"type": "text", "text": "Recorded:"},
                {"type": "audio", "data": wav().data(), "mimeType": "audio/wav"},
                {"type": "resource", "resource": {
                    "uri": "file:///notes/plan.md", "mimeType": "text/markdown", "text": "- ship on Friday"}},
                {"type": "resource", "resource": {
                    "uri": "file:///shots/page.png", "mimeType": "image/png", "blob": PNG_BASE64}},
                {"type": "resource_link", "uri": "file:///logs/today.log", "name": "today.log",
                 "title": "Today's log", "description": "The server log since midnight",
                 "mimeType": "text/plain", "size": 52_000},
            ])
        );
    }
}

#[test]
fn openai_chat_takes_wav_in_the_user_message_and_resources_as_text() {
    let turn = [call("c1", "record", media_result())];
    let items = emit::openai_chat(&turn, &options()).items;
    for item in &items {
        sdk_judges::openai_chat_message(item).unwrap();
    }
    assert_eq!(
        items.len(),
        2,
        "the audio moves the content to a user message"
    );
    assert_eq!(items[0]["content"], EmitOptions::DEFAULT_PLACEHOLDER);
    let parts = items[1]["content"].as_array().unwrap();
    let kinds: Vec<&str> = parts.iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["text", "text", "input_audio", "text", "text", "text"]
    );
    assert_eq!(
        parts[2]["input_audio"],
        json!({"data": wav().data(), "format": "wav"})
    );
    assert_eq!(parts[3]["text"], RESOURCE_TEXT);
    assert_eq!(parts[4]["text"], BLOB_TEXT);
    assert_eq!(parts[5]["text"], LINK_TEXT);

    // Audio OpenAI cannot read stays in the tool message, as text.
    let ogg = Audio::from_bytes("audio/ogg", b"OggS\0\x02").unwrap();
    let turn = [call(
        "c2",
        "record",
        ToolResult::blocks([Block::audio(ogg)]),
    )];
    let items = emit::openai_chat(&turn, &options()).items;
    sdk_judges::openai_chat_message(&items[0]).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["content"], "[audio: audio/ogg, 6 B]");
}

#[test]
fn openai_responses_and_the_envelope_read_media_and_resources_as_text() {
    let turn = [call("c1", "record", media_result())];
    let text =
        format!("Recorded:\n[audio: audio/wav, 52 B]\n{RESOURCE_TEXT}\n{BLOB_TEXT}\n{LINK_TEXT}");
    let items = emit::openai_responses(&turn, &options()).items;
    sdk_judges::openai_function_call_output(&items[0]).unwrap();
    assert_eq!(items[0]["output"], text);

    let envelope = &emit::envelope(&turn, &options().with_envelope_limit(1000)).items[0];
    assert_eq!(envelope["output"], text);
}

#[test]
fn anthropic_takes_text_and_pdf_resources_as_documents() {
    let pdf =
        EmbeddedResource::from_bytes("file:///docs/spec.pdf", "application/pdf", b"%PDF-1.7\n")
            .unwrap();
    let blank = EmbeddedResource::from_text("file:///empty.txt", " ");
    let mut blocks = media_result().content().to_vec();
    blocks.push(Block::resource(pdf));
    blocks.push(Block::resource(blank));
    let turn = [call("c1", "record", ToolResult::blocks(blocks))];
    let items = emit::anthropic(&turn, &options()).items;
    anthropic::check_user_message(&items[0]).unwrap();
    assert_eq!(
        items[0]["content"][0]["content"],
        json!([
            {"type": "text", "text": "Recorded:"},
            {"type": "text", "text": "[audio: audio/wav, 52 B]"},
            {"type": "document", "title": "file:///notes/plan.md",
             "source": {"type": "text", "media_type": "text/plain", "data": "- ship on Friday"}},
            {"type": "text", "text": BLOB_TEXT},
            {"type": "text", "text": LINK_TEXT},
            {"type": "document", "title": "file:///docs/spec.pdf",
             "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjcK"}},
            {"type": "text", "text": "[resource: file:///empty.txt]\n "},
        ])
    );
}

#[test]
fn gemini_takes_audio_in_a_user_content_after_the_responses() {
    for inline in [true, false] {
        let o = options().with_gemini_inline_images(inline);
        let turn = [
            call("c1", "record", media_result()),
            call("c2", "listen", ToolResult::blocks([Block::audio(wav())])),
        ];
        let items = emit::gemini(&turn, &o).items;
        for item in &items {
            gemini::check_content(item).unwrap();
        }
        assert_eq!(items.len(), 2, "inline images {inline}");
        let response = &items[0]["parts"][0]["functionResponse"]["response"];
        assert_eq!(
            response["output"],
            format!("Recorded:\n{RESOURCE_TEXT}\n{BLOB_TEXT}\n{LINK_TEXT}")
        );
        assert_eq!(
            items[0]["parts"][1]["functionResponse"]["response"],
            json!({"output": EmitOptions::DEFAULT_PLACEHOLDER}),
            "an audio-only result still answers"
        );
        assert_eq!(
            items[1]["parts"],
            json!([
                {"text": "Audio returned by tool call c1 (record):"},
                {"inlineData": {"mimeType": "audio/wav", "data": wav().data()}},
                {"text": "Audio returned by tool call c2 (listen):"},
                {"inlineData": {"mimeType": "audio/wav", "data": wav().data()}},
            ])
        );
    }
}
