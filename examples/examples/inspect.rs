//! Prints the example registry's tool definitions exactly as a provider
//! receives them.
//!
//! `cargo run -q -p toolkit-examples --example inspect -- --provider P`, for P
//! in `openai`, `openai-strict`, `responses`, `anthropic`, `gemini`, `mcp`.

use std::process::ExitCode;

use toolkit_core::Provider;

fn main() -> ExitCode {
    let provider = match provider_argument() {
        Ok(provider) => provider,
        Err(message) => {
            eprintln!("inspect: {message}");
            return ExitCode::from(2);
        }
    };
    let registry = match toolkit_examples::registry() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("inspect: {error}");
            return ExitCode::FAILURE;
        }
    };
    match registry.tool_list(provider) {
        Ok(definitions) => {
            let json = serde_json::to_string_pretty(&definitions).expect("definitions serialize");
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("inspect: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The value of `--provider`. `--help` prints the usage and exits
/// successfully.
pub fn provider_argument() -> Result<Provider, String> {
    const USAGE: &str =
        "usage: --provider P (openai, openai-strict, responses, anthropic, gemini, mcp)";
    let mut args = std::env::args().skip(1);
    let value = match args.next() {
        Some(arg) if arg == "--help" || arg == "-h" => {
            println!("{USAGE}");
            std::process::exit(0);
        }
        Some(arg) if arg == "--provider" => args.next().ok_or("--provider needs a value")?,
        Some(arg) => match arg.strip_prefix("--provider=") {
            Some(value) => value.to_owned(),
            None => return Err(format!("unexpected argument `{arg}`; {USAGE}")),
        },
        None => return Err(USAGE.to_owned()),
    };
    if let Some(extra) = args.next() {
        return Err(format!("unexpected argument `{extra}`; {USAGE}"));
    }
    value.parse().map_err(|error| format!("{error}"))
}
