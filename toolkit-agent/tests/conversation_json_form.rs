//! Conversations saved as JSON and loaded back, in every provider: after
//! every change (a turn, results, an observation) the loaded conversation
//! saves to the same JSON and renders the same request, and a run that is
//! saved and loaded between all its steps sends exactly the requests of
//! one that never was, show-once steps, observations, an output budget,
//! images, errors and generated Gemini ids included. Forms that cannot go
//! on are refused with an error that says why, and a form that loads never
//! makes a later step panic. The documented form is pinned in
//! `tests/snapshots/conversation-json-form.json`.

use std::path::PathBuf;

use serde_json::{Value, json};
use toolkit_agent::{Conversation, Observation, ToolChoice};
use toolkit_core::emit::EmitOptions;
use toolkit_core::response::Turn;
use toolkit_core::{Block, Image, OutputBudget, Provider, ToolCallResult, ToolResult};

const PNG: &str = toolkit_example_tools::PIXEL_PNG;

/// A provider's response holding two calls (`tool` and `shot`) for step
/// `step`; Gemini's without ids when `with_ids` is false. The first call of
/// step 2 is cut off mid-arguments where the provider allows it.
fn two_calls(provider: Provider, step: usize, with_ids: bool) -> Turn {
    let (a, b) = (format!("s{step}a"), format!("s{step}b"));
    let args_a = if step == 2 {
        r#"{"text": "a b"#.to_string()
    } else {
        "{}".into()
    };
    let body = match provider {
        Provider::OpenAiResponses => json!({"status": "completed", "output": [
            {"type": "reasoning", "id": format!("rs_{step}"), "summary": []},
            {"type": "function_call", "id": format!("fc_{a}"), "call_id": a, "name": "tool",
             "arguments": args_a, "status": "completed"},
            {"type": "function_call", "id": format!("fc_{b}"), "call_id": b, "name": "shot",
             "arguments": "{}", "status": "completed"}]}),
        Provider::Anthropic => json!({"id": format!("msg_{step}"), "type": "message",
            "role": "assistant", "content": [
                {"type": "thinking", "thinking": "Both.", "signature": "EqQBCgIYAhIM"},
                {"type": "tool_use", "id": a, "name": "tool", "input": {"n": 1.1}},
                {"type": "tool_use", "id": b, "name": "shot", "input": {}}],
            "stop_reason": "tool_use"}),
        Provider::Gemini => {
            let call = |id: &str, name: &str| {
                let mut call = json!({"name": name, "args": {"n": 0.1}});
                if with_ids {
                    call["id"] = json!(id);
                }
                call
            };
            json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": call(&a, "tool"), "thoughtSignature": "CiQBcsjafE1d"},
                {"functionCall": call(&b, "shot")}]}, "finishReason": "STOP"}]})
        }
        _ => json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [
                {"id": a, "type": "function", "function": {"name": "tool", "arguments": args_a}},
                {"id": b, "type": "function", "function": {"name": "shot", "arguments": "{}"}}]}}]}),
    };
    // MCP is not a model API; its conversation is written as Chat.
    let reader = if provider == Provider::Mcp {
        Provider::OpenAi
    } else {
        provider
    };
    reader.read(&body).unwrap()
}

/// The results of step `step`'s two calls: between them, every kind of
/// content and every field a result carries.
fn results(turn: &Turn, step: usize) -> Vec<ToolCallResult> {
    let [a, b] = [&turn.calls[0].id, &turn.calls[1].id];
    let (first, second) = match step {
        0 => (
            ToolResult::text(format!("HEAD{}TAIL", "x".repeat(300))).with_attribute("ms", 12),
            ToolResult::blocks([
                Block::image(Image::from_base64("image/png", PNG).unwrap()),
                Block::text("the page"),
            ])
            .with_note("a screenshot of the whole page"),
        ),
        1 => (
            ToolResult::json(
                json!({"price": 3.9, "weights": [0.1, 1e-7, -0.0, 1.7976931348623157e308]}),
            )
            .with_show_once()
            .with_memory("50 products"),
            ToolResult::from_error(std::io::Error::other("the ledger is unavailable")),
        ),
        _ => (
            ToolResult::lazy_text(|| "computed late".to_string()).with_show_once(),
            ToolResult::text("sent")
                .with_done(true)
                .with_attachment("out/report.pdf"),
        ),
    };
    vec![
        ToolCallResult::new(a.clone(), "tool", first),
        ToolCallResult::new(b.clone(), "shot", second),
    ]
}

/// A conversation set up with every setting it keeps, its long outputs
/// saved in `dir`.
fn configured(provider: Provider, dir: &PathBuf) -> Conversation {
    let mut conversation = Conversation::new(provider);
    conversation.set_instructions("Use the tools.");
    let registry = toolkit_example_tools::registry().unwrap();
    conversation.set_tools(&registry).unwrap();
    conversation.set_tool_choice(ToolChoice::Tool("word_count".into()));
    conversation.set_settings(
        toolkit_agent::Settings::new()
            .parallel_calls(false)
            .max_output_tokens(300)
            .stop(["END"]),
    );
    if provider == Provider::OpenAi {
        conversation.set_strict(true).unwrap();
        let schema = toolkit_agent::AnswerSchema::of::<std::collections::BTreeMap<String, bool>>();
        conversation.set_answer_schema(Some(schema.unwrap().named("verdicts")));
    }
    conversation.set_emit_options(
        EmitOptions::default()
            .with_placeholder("See the next message.")
            .with_gemini_inline_images(provider != Provider::Gemini),
    );
    conversation.set("temperature", json!(0.2));
    conversation.set_output_budget(OutputBudget::new(100, dir));
    conversation
}

/// Saves and loads `conversation`, checks that nothing changed, and
/// returns the loaded one.
fn reloaded(conversation: &Conversation) -> Conversation {
    let saved = serde_json::to_string(conversation).unwrap();
    let loaded: Conversation = serde_json::from_str(&saved).unwrap();
    assert_eq!(serde_json::to_string(&loaded).unwrap(), saved);
    assert_eq!(loaded.request(), conversation.request(), "{saved}");
    assert_eq!(loaded.items(), conversation.items());
    assert_eq!(loaded.provider(), conversation.provider());
    assert_eq!(loaded.history().render(), conversation.history().render());
    loaded
}

/// Three steps, each with an observation, a turn and its results; the
/// request after each. Saved and loaded after every change when `reload`.
fn run(provider: Provider, with_ids: bool, dir: &PathBuf, reload: bool) -> Vec<Value> {
    let _ = std::fs::remove_dir_all(dir);
    let mut conversation = configured(provider, dir);
    conversation.push_user("Find the products, then report.");
    let mut requests = vec![conversation.request()];
    for step in 0..3 {
        let after = |conversation: &mut Conversation| {
            if reload {
                *conversation = reloaded(conversation);
            }
        };
        after(&mut conversation);
        conversation.push_observation(
            Observation::new(format!("PAGE-MAP-{step}")).later(format!("page {step}")),
        );
        after(&mut conversation);
        let turn = two_calls(provider, step, with_ids);
        conversation.push_turn(&turn);
        after(&mut conversation);
        let pushed = conversation.push_results(&turn, results(&turn, step));
        assert!(pushed.unsaved.is_none());
        after(&mut conversation);
        requests.push(conversation.request());
    }
    requests
}

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("toolkit-agent-json-{name}-{}", std::process::id()))
}

#[test]
fn a_run_saved_and_loaded_at_every_change_sends_the_same_requests() {
    for provider in Provider::ALL {
        for with_ids in [true, false] {
            if !with_ids && provider != Provider::Gemini {
                continue;
            }
            let (kept, saved) = (scratch("kept"), scratch("saved"));
            let straight = run(provider, with_ids, &kept, false);
            let reloaded = run(provider, with_ids, &saved, true);
            // The notices name saved files by name only, so the two folders
            // give the same requests.
            assert_eq!(reloaded, straight, "{provider}");
            let last = straight.last().unwrap().to_string();
            assert!(
                last.contains("50 products") && !last.contains("PAGE-MAP-1"),
                "{last}"
            );
            for dir in [kept, saved] {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}

#[test]
fn tool_choices_have_a_stable_form() {
    for (choice, form) in [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::None, json!("none")),
        (ToolChoice::Required, json!("required")),
        (ToolChoice::Tool("search".into()), json!({"tool": "search"})),
    ] {
        assert_eq!(serde_json::to_value(&choice).unwrap(), form);
        assert_eq!(serde_json::from_value::<ToolChoice>(form).unwrap(), choice);
    }
}

/// A small conversation: a show-once step seen once, an observation, a
/// later step.
fn documented() -> Conversation {
    let mut conversation = Conversation::new(Provider::OpenAi);
    conversation.set_instructions("Use the tools.");
    conversation.push_user("List the products, then open the first.");
    conversation.push_observation(Observation::new("[1]<a>Products</a>").later("The start page."));
    for (step, result) in [
        ToolResult::text("[50 products]")
            .with_show_once()
            .with_memory("50 products"),
        ToolResult::json(json!({"opened": 1, "price": 3.9})).with_attribute("ms", 12),
    ]
    .into_iter()
    .enumerate()
    {
        let body = json!({"choices": [{"index": 0, "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": format!("call_{step}"), "type": "function",
                "function": {"name": "browse", "arguments": "{}"}}]}}]});
        let turn = Provider::OpenAi.read(&body).unwrap();
        conversation.push_turn(&turn);
        conversation.push_results(
            &turn,
            vec![ToolCallResult::new(
                format!("call_{step}"),
                "browse",
                result,
            )],
        );
    }
    conversation
}

/// The form's top-level fields, in the order they are written.
const FIELDS: [&str; 14] = [
    "version",
    "provider",
    "instructions",
    "items",
    "tools",
    "other_mode_tools",
    "tool_choice",
    "settings",
    "answer_schema",
    "emit_options",
    "raw_settings",
    "history",
    "latest_results",
    "observation",
];

/// `value` as pretty JSON with every object's keys sorted: serde_json
/// keeps insertion order or sorts depending on the features the build
/// unifies, and the snapshot must not depend on that.
fn sorted(value: &Value, indent: &str) -> String {
    let inner = format!("{indent}  ");
    match value {
        Value::Object(map) if !map.is_empty() => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{inner}{}: {}", json!(key), sorted(&map[key], &inner)))
                .collect();
            format!("{{\n{}\n{indent}}}", fields.join(",\n"))
        }
        Value::Array(items) if !items.is_empty() => {
            let items: Vec<String> = items
                .iter()
                .map(|item| format!("{inner}{}", sorted(item, &inner)))
                .collect();
            format!("[\n{}\n{indent}]", items.join(",\n"))
        }
        other => other.to_string(),
    }
}

#[test]
fn the_documented_form_is_pinned() {
    let conversation = documented();
    let saved = serde_json::to_string(&conversation).unwrap();
    // Written in the documented order, whatever the map type.
    let positions: Vec<usize> = FIELDS
        .iter()
        .filter_map(|field| saved.find(&format!("\"{field}\":")))
        .collect();
    assert!(positions.is_sorted(), "{saved}");
    let form: Value = serde_json::from_str(&saved).unwrap();
    assert!(
        form.as_object()
            .unwrap()
            .keys()
            .all(|key| FIELDS.contains(&key.as_str()))
    );
    let fields: Vec<String> = FIELDS
        .iter()
        .filter_map(|field| {
            Some(format!(
                "  {}: {}",
                json!(field),
                sorted(form.get(*field)?, "  ")
            ))
        })
        .collect();
    let text = format!("{{\n{}\n}}\n", fields.join(",\n"));

    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots/conversation-json-form.json");
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot at {}; create it with UPDATE_SNAPSHOTS=1",
            path.display()
        )
    });
    assert!(
        pinned == text,
        "the form differs from {}:\n--- pinned\n{pinned}\n--- now\n{text}\n(UPDATE_SNAPSHOTS=1 rewrites it)",
        path.display()
    );
}

/// `form` read as a conversation must fail, and say `expected`.
fn refused(form: &Value, expected: &str) {
    match serde_json::from_value::<Conversation>(form.clone()) {
        Ok(_) => panic!("accepted: {form}"),
        Err(error) => assert!(
            error.to_string().contains(expected),
            "`{error}` does not say `{expected}`"
        ),
    }
}

/// `form` with `change` made to it.
fn changed(form: &Value, change: impl FnOnce(&mut Value)) -> Value {
    let mut form = form.clone();
    change(&mut form);
    form
}

#[test]
fn forms_that_cannot_go_on_are_refused_with_a_reason() {
    let form = serde_json::to_value(documented()).unwrap();
    let items = form["items"].as_array().unwrap().len();
    serde_json::from_value::<Conversation>(form.clone()).unwrap();

    refused(
        &changed(&form, |f| f["version"] = json!(2)),
        "saved in form version 2",
    );
    refused(
        &changed(&form, |f| f["version"] = json!("1")),
        "invalid type",
    );
    refused(
        &changed(&form, |f| {
            f.as_object_mut().unwrap().remove("version");
        }),
        "missing field `version`",
    );
    refused(
        &changed(&form, |f| f["provider"] = json!("openai-chat")),
        "unknown provider",
    );
    refused(
        &changed(&form, |f| f["colour"] = json!(1)),
        "unknown field `colour`",
    );
    refused(
        &changed(&form, |f| f["items"][0] = json!("hello")),
        "item 0 is not a JSON object",
    );
    refused(
        &changed(&form, |f| f["tools"] = json!({})),
        "`tools` is not a JSON array",
    );
    refused(
        &changed(&form, |f| f["tool_choice"] = json!("any")),
        "unknown variant `any`",
    );
    refused(
        &changed(&form, |f| f["latest_results"]["end"] = json!(items + 1)),
        "but there are",
    );
    refused(
        &changed(&form, |f| {
            f["latest_results"]["start"] = json!(3);
            f["latest_results"]["end"] = json!(2);
        }),
        "latest results at items 3..2",
    );
    refused(
        &changed(&form, |f| f["latest_results"]["step"] = json!(7)),
        "names step 7, but the history's latest step is 2",
    );
    refused(
        &changed(&form, |f| f["history"]["steps"] = json!([])),
        "the history's latest step is 0",
    );
    refused(
        &changed(&form, |f| f["observation"]["item"] = json!(items)),
        "latest observation at item",
    );
    refused(
        &changed(&form, |f| f["observation"]["item"] = json!(2)),
        "not a user message",
    );
    let latest = form["latest_results"]["start"].as_u64().unwrap();
    refused(
        &changed(&form, |f| {
            f["observation"]["item"] = json!(latest);
            f["items"][latest as usize] = json!({"role": "user", "content": "x"});
        }),
        "among the latest results",
    );
    refused(
        &changed(&form, |f| {
            f["history"]["steps"][0]["calls"][0]["result"]["content"] = json!(null)
        }),
        "invalid type",
    );
    assert!(
        serde_json::from_str::<Conversation>(r#"{"version": 1, "provider": "openai", "items": [{"#)
            .is_err()
    );
}

/// A small deterministic generator of changes.
struct Draws(u64);

impl Draws {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[test]
fn a_form_that_loads_never_makes_a_later_step_panic() {
    for provider in [
        Provider::OpenAi,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::OpenAiResponses,
    ] {
        let dir = scratch(&format!("mutations-{provider}"));
        let mut conversation = configured(provider, &dir);
        conversation.push_user("Go.");
        for step in 0..2 {
            conversation.push_observation(Observation::new(format!("MAP-{step}")));
            let turn = two_calls(provider, step, true);
            conversation.push_turn(&turn);
            let _ = conversation.push_results(&turn, results(&turn, step));
        }
        let form = serde_json::to_value(&conversation).unwrap();
        let items = form["items"].as_array().unwrap().len() as u64;
        let (mut accepted, mut refused) = (0, 0);
        let mut draws = Draws(5);
        for _ in 0..400 {
            let mut form = form.clone();
            for _ in 0..draws.below(3) + 1 {
                let small = json!(draws.below(items + 3));
                match draws.below(7) {
                    0 => form["latest_results"]["start"] = small,
                    1 => form["latest_results"]["end"] = small,
                    2 => form["latest_results"]["step"] = json!(draws.below(4)),
                    3 => form["observation"]["item"] = small,
                    4 => {
                        let keep = draws.below(items) as usize;
                        form["items"].as_array_mut().unwrap().truncate(keep);
                    }
                    5 => {
                        let keep = draws.below(3) as usize;
                        form["history"]["steps"]
                            .as_array_mut()
                            .unwrap()
                            .truncate(keep);
                    }
                    _ => {
                        let field = ["latest_results", "observation"][draws.below(2) as usize];
                        form.as_object_mut().unwrap().remove(field);
                    }
                }
            }
            let Ok(mut loaded) = serde_json::from_value::<Conversation>(form) else {
                refused += 1;
                continue;
            };
            accepted += 1;
            // Every operation that indexes the kept positions.
            let _ = loaded.request();
            loaded.push_observation(Observation::new("MAP-NEXT"));
            let turn = two_calls(provider, 2, true);
            loaded.push_turn(&turn);
            let _ = loaded.push_results(&turn, results(&turn, 2));
            loaded.push_observation(Observation::new("MAP-LAST"));
            let _ = loaded.request();
        }
        assert!(
            accepted > 0 && refused > 0,
            "{accepted} accepted, {refused} refused"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
