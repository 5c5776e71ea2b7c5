//! Runs one assistant turn of tool calls with the example registry and prints
//! what to append to the conversation for a provider.
//!
//! ```sh
//! echo '[{"id": "call_1", "name": "word_count", "arguments": {"text": "a b c"}}]' |
//!   cargo run -q -p toolkit-examples --example replay -- --provider anthropic
//! ```
//!
//! `arguments` is an object, or a string of JSON as OpenAI sends it.

use std::io::Read;
use std::process::ExitCode;

use toolkit_core::emit::{self, EmitOptions};
use toolkit_core::{Provider, ToolCall};

#[path = "inspect.rs"]
#[allow(dead_code)]
mod inspect;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let provider = match inspect::provider_argument() {
        Ok(provider) => provider,
        Err(message) => {
            eprintln!("replay: {message}");
            return ExitCode::from(2);
        }
    };
    let mut input = String::new();
    if let Err(error) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("replay: cannot read standard input: {error}");
        return ExitCode::FAILURE;
    }
    let calls: Vec<ToolCall> = match serde_json::from_str(&input) {
        Ok(calls) => calls,
        Err(error) => {
            eprintln!(
                "replay: standard input must be a JSON array of {{\"id\", \"name\", \"arguments\"}}: {error}"
            );
            return ExitCode::from(2);
        }
    };
    let registry = match toolkit_examples::registry() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("replay: {error}");
            return ExitCode::FAILURE;
        }
    };
    let turn = registry.dispatch_turn(&calls).await;
    for (index, error) in &turn.errors {
        eprintln!("replay: call {} failed: {error}", calls[*index].id);
    }
    let options = EmitOptions::default();
    let emitted = match provider {
        Provider::OpenAiResponses => emit::openai_responses(&turn.results, &options),
        Provider::Anthropic => emit::anthropic(&turn.results, &options),
        Provider::Gemini => emit::gemini(&turn.results, &options),
        Provider::Mcp => emit::mcp(&turn.results, &options),
        _ => emit::openai_chat(&turn.results, &options),
    };
    for problem in &emitted.problems {
        eprintln!("replay: {problem}");
    }
    let json = serde_json::to_string_pretty(&emitted.items).expect("JSON values serialize");
    println!("{json}");
    ExitCode::SUCCESS
}
