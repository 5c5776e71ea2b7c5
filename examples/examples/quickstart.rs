//! Tools return what they naturally have; toolkit turns one turn of results
//! into the messages each provider accepts.
//!
//! Run with `cargo run -p toolkit-examples --example quickstart`.

use serde::Serialize;
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{Block, Image, IntoToolResult, Json, ToolCallResult, ToolResult};

/// A 1×1 PNG standing in for a real screenshot.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

#[derive(Serialize)]
struct Hit {
    title: String,
    score: f64,
}

/// Search returns structured data.
fn search(query: &str) -> Json<Vec<Hit>> {
    Json(vec![Hit {
        title: format!("The Rust book, on {query}"),
        score: 0.92,
    }])
}

/// A screenshot returns text and an image, with a note for the model.
fn screenshot() -> Result<ToolResult, toolkit_core::ImageError> {
    let image = Image::from_base64("image/png", PIXEL_PNG)?;
    Ok(
        ToolResult::blocks([Block::text("The login page."), Block::image(image)])
            .with_note("Viewport 1280x720.")
            .with_attribute("capture_ms", 18),
    )
}

/// Fetching fails; the model is told why.
fn fetch(url: &str) -> Result<String, std::io::Error> {
    Err(std::io::Error::other(format!("{url}: connection refused")))
}

fn main() {
    // One assistant turn: the model asked for three calls at once. A real
    // host takes these from the provider's response.
    let scripted_turn = [
        ("call_1", "search"),
        ("call_2", "screenshot"),
        ("call_3", "fetch"),
    ];
    let results: Vec<ToolCallResult> = scripted_turn
        .iter()
        .map(|&(id, name)| {
            let result = match name {
                "search" => search("ownership").into_tool_result(),
                "screenshot" => screenshot().into_tool_result(),
                _ => fetch("http://127.0.0.1:9/").into_tool_result(),
            };
            ToolCallResult::new(id, name, result)
        })
        .collect();

    let options = EmitOptions::default();
    let dialects = [
        (
            "OpenAI Chat Completions",
            emit::openai_chat(&results, &options),
        ),
        (
            "OpenAI Responses",
            emit::openai_responses(&results, &options),
        ),
        ("Anthropic Messages", emit::anthropic(&results, &options)),
        ("Gemini", emit::gemini(&results, &options)),
        ("MCP", emit::mcp(&results, &options)),
        ("Envelope", emit::envelope(&results, &options)),
    ];
    for (name, emitted) in dialects {
        println!("== {name}");
        let json = serde_json::to_string_pretty(&emitted.items).expect("JSON values serialize");
        println!("{json}");
        for problem in &emitted.problems {
            eprintln!("problem: {problem}");
        }
    }
}
