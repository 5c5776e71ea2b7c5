//! Define tools, show what the model sees, run one scripted turn and print
//! the messages to send back.
//!
//! Run with `cargo run -p toolkit-examples --example quickstart`. No network
//! and no model: a scripted turn stands in for the model's answer.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{Block, Image, Provider, Registry, ToolCall, ToolResult, tool, tools};

/// A 1×1 PNG standing in for a real chart.
const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// A city's weather.
#[derive(Serialize)]
struct Weather {
    city: String,
    celsius: f64,
    sky: &'static str,
}

/// Units for temperatures.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// Get the current weather in a city.
#[tool]
async fn weather(
    /// The city's name.
    city: String,
    /// The unit for temperatures (Celsius when left out).
    unit: Option<Unit>,
) -> Weather {
    let celsius = 11.5;
    Weather {
        celsius: match unit {
            Some(Unit::Fahrenheit) => celsius * 9.0 / 5.0 + 32.0,
            _ => celsius,
        },
        city,
        sky: "overcast",
    }
}

/// Draw a chart of the week's temperatures in a city.
#[tool]
fn chart(
    /// The city's name.
    city: String,
) -> Result<ToolResult, toolkit_core::ImageError> {
    let image = Image::from_base64("image/png", PIXEL_PNG)?;
    Ok(ToolResult::blocks([
        Block::text(format!("Temperatures in {city}, this week.")),
        Block::image(image),
    ])
    .with_note("The chart's y axis is in degrees Celsius."))
}

/// Book a table at a restaurant.
#[tool]
async fn book_table(
    /// The restaurant's name.
    restaurant: String,
    /// How many people.
    people: u8,
) -> Result<String, String> {
    Err(format!("{restaurant} has no table for {people} tonight"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::builder()
        .tools(tools![weather, chart, book_table])
        .build()?;

    println!("== The tools, as OpenAI receives them");
    let definitions = registry.tool_list(Provider::OpenAi)?;
    println!("{}", serde_json::to_string_pretty(&definitions)?);

    // What a model might answer: three calls at once.
    let turn = [
        ToolCall::new("call_1", "weather", json!({"city": "Lyon"})),
        ToolCall::new("call_2", "chart", json!({"city": "Lyon"})),
        ToolCall::new(
            "call_3",
            "book_table",
            json!({"restaurant": "Le Bistrot", "people": 4}),
        ),
    ];
    println!("\n== The model calls");
    println!("{}", serde_json::to_string_pretty(&turn)?);

    let outcome = registry.dispatch_turn(&turn).await;

    let options = EmitOptions::default();
    println!("\n== What to send back: OpenAI Chat Completions");
    let openai = emit::openai_chat(&outcome.results, &options);
    println!("{}", serde_json::to_string_pretty(&openai.items)?);
    println!("\n== What to send back: Anthropic Messages");
    let anthropic = emit::anthropic(&outcome.results, &options);
    println!("{}", serde_json::to_string_pretty(&anthropic.items)?);
    Ok(())
}
