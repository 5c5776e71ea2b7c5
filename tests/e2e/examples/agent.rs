//! Runs the example registry's tools as an agent against any endpoint and
//! prints each step and the outcome.
//!
//! ```text
//! cargo run -q -p toolkit-e2e --example agent -- \
//!     --base-url http://127.0.0.1:8080/v1 --model gemma "Convert 20 C to F"
//! ```
//!
//! Flags: `--dialect openai|responses|anthropic|gemini` (default openai;
//! `--provider` is the same flag),
//! `--max-steps N` (default 10), `--key-env VAR` (default: the provider's,
//! none for a local `--base-url` on 127.0.0.1 or localhost), `--stream`
//! (the model's text printed as it arrives).
//!
//! Traces: `--otlp URL` sends the run's spans to an OpenTelemetry
//! collector's OTLP/HTTP traces URL (Phoenix:
//! `http://127.0.0.1:6006/v1/traces`), as the service `toolkit-agent`;
//! `--capture-content` records messages, arguments and results in them
//! (off by default). `--mcp-command "CMD ARGS"` adds the tools of an MCP
//! server started as a child process (named `mcp`, so its tools are
//! `mcp_...`), for example the `serve` example of toolkit-mcp, which takes
//! `--otlp URL` too; built with toolkit-mcp's `opentelemetry` feature
//! (`cargo build -p toolkit-mcp --example serve --features opentelemetry`),
//! it continues the run's trace, which this example's client sends in each
//! request's `_meta`:
//!
//! ```text
//! cargo run -q -p toolkit-e2e --example agent -- \
//!     --base-url http://127.0.0.1:8080/v1 --model gemma \
//!     --otlp http://127.0.0.1:6006/v1/traces --capture-content \
//!     --mcp-command "target/debug/examples/serve --otlp http://127.0.0.1:6006/v1/traces" \
//!     "Convert 20 C to F"
//! ```
//!
//! A small local model: `--tools a,b,c` keeps only those tools of the
//! example registry, `--tool-choice required|auto|none` sets the tool
//! choice, and `--prefill TEXT` ends every request with an assistant
//! message holding `TEXT`, which llama-server continues, `--one-call`
//! allows one call a step, and `--max-output-tokens N` bounds each answer
//! (default 512). `scripts/local-model`
//! starts llama-server with Gemma 3 270M and runs this example with the
//! settings under which that model writes calls:
//!
//! ```text
//! scripts/local-model "Convert 20 C to F"
//! ```

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use toolkit_agent::{Agent, Event, HttpModel, Limits, Model, ModelFuture, OnProgress, ToolChoice};
use toolkit_core::Provider;
use toolkit_mcp::McpClient;

#[path = "shared/run.rs"]
mod shared;

struct Options {
    base_url: Option<String>,
    model: String,
    provider: Provider,
    max_steps: usize,
    key_env: Option<String>,
    stream: bool,
    otlp: Option<String>,
    capture_content: bool,
    mcp_command: Option<Vec<String>>,
    tools: Option<Vec<String>>,
    tool_choice: ToolChoice,
    prefill: Option<String>,
    max_output_tokens: u32,
    one_call: bool,
    task: String,
}

fn parse() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        base_url: None,
        model: String::new(),
        provider: Provider::OpenAi,
        max_steps: 10,
        key_env: None,
        stream: false,
        otlp: None,
        capture_content: false,
        mcp_command: None,
        tools: None,
        tool_choice: ToolChoice::Auto,
        prefill: None,
        max_output_tokens: 512,
        one_call: false,
        task: String::new(),
    };
    let mut task = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--base-url" => options.base_url = Some(value("--base-url")?),
            "--model" => options.model = value("--model")?,
            "--dialect" | "--provider" => {
                options.provider = value(&arg)?.parse().map_err(|e| format!("{e}"))?
            }
            "--max-steps" => {
                options.max_steps = value("--max-steps")?
                    .parse()
                    .map_err(|_| "--max-steps takes a number".to_owned())?
            }
            "--key-env" => options.key_env = Some(value("--key-env")?),
            "--stream" => options.stream = true,
            "--otlp" => options.otlp = Some(value("--otlp")?),
            "--capture-content" => options.capture_content = true,
            "--mcp-command" => {
                let words: Vec<String> = value("--mcp-command")?
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect();
                if words.is_empty() {
                    return Err("--mcp-command needs a command".into());
                }
                options.mcp_command = Some(words);
            }
            "--tools" => {
                let names = value("--tools")?
                    .split(',')
                    .map(|name| name.trim().to_owned())
                    .filter(|name| !name.is_empty())
                    .collect();
                options.tools = Some(names);
            }
            "--tool-choice" => {
                options.tool_choice = match value("--tool-choice")?.as_str() {
                    "auto" => ToolChoice::Auto,
                    "required" => ToolChoice::Required,
                    "none" => ToolChoice::None,
                    other => {
                        return Err(format!(
                            "--tool-choice takes auto, required or none, not `{other}`"
                        ));
                    }
                }
            }
            "--prefill" => options.prefill = Some(value("--prefill")?),
            "--max-output-tokens" => {
                options.max_output_tokens = value("--max-output-tokens")?
                    .parse()
                    .map_err(|_| "--max-output-tokens takes a number".to_owned())?
            }
            "--one-call" => options.one_call = true,
            "-h" | "--help" => return Err(String::new()),
            _ => task.push(arg),
        }
    }
    options.task = shared::task(&options.model, &task)?;
    Ok(options)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let options = match parse() {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("agent: {message}");
            }
            eprintln!(
                "usage: agent --model NAME [--base-url URL] [--dialect openai|responses|anthropic|gemini] [--max-steps N] [--key-env VAR] [--stream] [--otlp URL] [--capture-content] [--mcp-command \"CMD ARGS\"] [--tools A,B] [--tool-choice auto|required|none] [--prefill TEXT] [--max-output-tokens N] [--one-call] TASK"
            );
            return ExitCode::from(2);
        }
    };
    // Installed first, so that every span of the run is exported; dropped
    // last, after the MCP server's connection is closed.
    let export = match &options.otlp {
        Some(endpoint) => match toolkit_examples::otlp::install(endpoint, "toolkit-agent") {
            Ok(export) => Some(export),
            Err(error) => {
                eprintln!("agent: {}", chain(&error));
                return ExitCode::FAILURE;
            }
        },
        None => None,
    };
    toolkit_core::telemetry::capture_content(options.capture_content);
    let code = run(options).await;
    drop(export);
    code
}

async fn run(options: Options) -> ExitCode {
    let builder = shared::model_builder(
        options.provider,
        &options.model,
        options.base_url.as_deref(),
        options.key_env.as_deref(),
    );
    let model = match builder.build() {
        Ok(model) => Prefilled {
            model,
            prefill: options.prefill.clone(),
        },
        Err(error) => {
            eprintln!("agent: {}", chain(&error));
            return ExitCode::FAILURE;
        }
    };
    let registry = match toolkit_examples::registry() {
        Ok(registry) => Arc::new(registry),
        Err(error) => {
            eprintln!("agent: {}", chain(&error));
            return ExitCode::FAILURE;
        }
    };
    if let Some(keep) = &options.tools {
        let names: Vec<String> = registry.names().collect();
        for name in keep {
            if !names.contains(name) {
                eprintln!(
                    "agent: --tools: no tool `{name}`; the tools are {}",
                    names.join(", ")
                );
                return ExitCode::from(2);
            }
        }
        for name in names.iter().filter(|name| !keep.contains(name)) {
            registry.set_enabled(name, false);
        }
    }
    let mcp = match &options.mcp_command {
        Some(words) => {
            let connected = McpClient::command("mcp", &words[0], &words[1..])
                .connect()
                .await;
            let client = match connected {
                Ok(client) => client,
                Err(error) => {
                    eprintln!("agent: {}", chain(&error));
                    return ExitCode::FAILURE;
                }
            };
            match client.attach(&registry).await {
                Ok(synced) => {
                    for refused in &synced.refused {
                        eprintln!("agent: `{}` left out: {}", refused.original, refused.error);
                    }
                }
                Err(error) => {
                    eprintln!("agent: {}", chain(&error));
                    return ExitCode::FAILURE;
                }
            }
            Some(client)
        }
        None => None,
    };
    let agent = Agent::builder(model, registry.clone())
        .instructions(
            "You are a careful assistant. Use the tools; call `done` when the task is done.",
        )
        .limits(Limits::default().max_steps(options.max_steps))
        .streaming(options.stream)
        .tool_choice(options.tool_choice.clone())
        // A bound on each answer, so a small local model that rambles
        // cannot hold a step for minutes.
        .configure(move |conversation| {
            let settings = conversation.settings_mut();
            settings.max_output_tokens = Some(options.max_output_tokens);
            if options.one_call {
                settings.parallel_calls = Some(false);
            }
        })
        .build();
    let agent = match agent {
        Ok(agent) => agent,
        Err(error) => {
            eprintln!("agent: {}", chain(&error));
            return ExitCode::FAILURE;
        }
    };
    let (run, mut events) = agent.run(options.task.as_str()).events();
    let printer = async {
        let mut stdout = std::io::stdout();
        // Whether a line of streamed text is still open.
        let mut open = false;
        while let Some(event) = events.recv().await {
            match &event {
                Event::TextDelta { .. } => {
                    if !open {
                        print!("  says: ");
                        open = true;
                    }
                    print!("{event}");
                    let _ = stdout.flush();
                }
                // The call line shows the arguments whole; reasoning is
                // not the answer.
                Event::ArgumentsDelta { .. } | Event::ReasoningDelta { .. } => {}
                // Printed as it came.
                Event::Text { .. } if options.stream => {}
                _ => {
                    if open {
                        println!();
                        open = false;
                    }
                    println!("{event}");
                }
            }
        }
    };
    let (outcome, ()) = tokio::join!(run, printer);
    if let Some(client) = &mcp {
        // The server process ends here, and flushes its own spans.
        client.close().await;
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("agent: {}", chain(&error));
            return ExitCode::FAILURE;
        }
    };
    println!("{}", shared::stopped(&outcome));
    if let Some(answer) = &outcome.answer {
        println!("answer: {answer}");
    }
    ExitCode::SUCCESS
}

/// The error and each of its causes, as one line: an error that wraps
/// another says what failed, its source why.
fn chain(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        line.push_str(": ");
        line.push_str(&cause.to_string());
        source = cause.source();
    }
    line
}

/// The endpoint's model, each request ending with an assistant message that
/// holds the `--prefill` text when one is given. llama-server continues
/// such a message: with Qwen2.5's call tag there, a small model that would
/// otherwise write prose first is already inside a call, and the server
/// reads what it writes as the call's name and arguments.
struct Prefilled {
    model: HttpModel,
    prefill: Option<String>,
}

impl Prefilled {
    fn request(&self, request: &Value) -> Option<Value> {
        let prefill = self.prefill.as_ref()?;
        let mut request = request.clone();
        let messages = request.get_mut("messages")?.as_array_mut()?;
        messages.push(json!({"role": "assistant", "content": prefill}));
        Some(request)
    }
}

impl Model for Prefilled {
    fn provider(&self) -> Provider {
        self.model.provider()
    }

    fn complete<'a>(&'a self, request: &'a Value) -> ModelFuture<'a> {
        Box::pin(async move {
            match self.request(request) {
                Some(prefilled) => self.model.complete(&prefilled).await,
                None => self.model.complete(request).await,
            }
        })
    }

    fn stream<'a>(&'a self, request: &'a Value, progress: OnProgress<'a>) -> ModelFuture<'a> {
        Box::pin(async move {
            match self.request(request) {
                Some(prefilled) => self.model.stream(&prefilled, progress).await,
                None => self.model.stream(request, progress).await,
            }
        })
    }
}
