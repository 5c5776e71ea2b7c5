//! The browser toolbox as an agent, against any model endpoint: each step
//! shows the model the current page map, the model calls browser actions,
//! and the results go back, until it calls `done` or the step limit.
//!
//! ```text
//! cargo run -p toolkit-e2e --example browser_agent -- \
//!     --base-url http://127.0.0.1:8080/v1 --model gemma \
//!     --start-url http://127.0.0.1:8000/ "Sign up as Ada Lovelace"
//! ```
//!
//! Flags:
//! - `--dialect openai|responses|anthropic|gemini` (default openai);
//! - `--base-url URL` (default: the provider's own), `--key-env VAR`
//!   (default: the provider's variable; none for a local base URL);
//! - `--max-steps N` (default 10), `--max-tokens N` (default 512);
//! - `--tool-choice auto|required` (default auto; `required` helps small
//!   models that otherwise answer in prose);
//! - `--start-url URL`: opened before the first step;
//! - `--allow-domain PATTERN` (repeatable; default: the start URL's host):
//!   every navigation, redirects included, outside these is refused;
//! - `--record DIR`: writes the run's record, `DIR/run.html` (every call
//!   with a screenshot of the page it found, the element it acts on
//!   outlined, and its result) and `DIR/run.gif` (a frame per call).
//!
//! Each step prints the page map's size, the model's calls and their
//! results. Needs Chromium (`apt-get install -y --no-install-recommends
//! chromium`, or set `CHROME`).

use std::error::Error;
use std::process::ExitCode;

use std::path::PathBuf;
use toolkit_agent::{Agent, Event, HttpModel, Limits, Model, Observation, Outcome, ToolChoice};

use toolkit_browser::{Browser, BrowserConfig, PageMap, Recorder, SafetyPolicy};
use toolkit_core::Provider;

#[path = "shared/run.rs"]
mod shared;

/// What the command line asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The endpoint's base URL.
    pub base_url: Option<String>,
    /// The model's name.
    pub model: String,
    /// The endpoint's dialect.
    pub provider: Provider,
    /// Model turns at most.
    pub max_steps: usize,
    /// Tokens per answer at most.
    pub max_tokens: u32,
    /// `required` forces a call every turn.
    pub tool_choice: ToolChoice,
    /// The variable holding the key.
    pub key_env: Option<String>,
    /// The page opened before the first step.
    pub start_url: Option<String>,
    /// Where the browser may go.
    pub allow_domains: Vec<String>,
    /// The folder the run's record is written to.
    pub record: Option<PathBuf>,
    /// The task.
    pub task: String,
}

/// The usage line.
pub const USAGE: &str = "usage: agent --model NAME [--base-url URL] \
    [--dialect openai|responses|anthropic|gemini] [--max-steps N] [--max-tokens N] \
    [--tool-choice auto|required] [--key-env VAR] [--start-url URL] \
    [--allow-domain PATTERN]... [--record DIR] TASK";

impl Options {
    /// Reads the flags (without the program's name).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut args = args.into_iter();
        let mut options = Self {
            base_url: None,
            model: String::new(),
            provider: Provider::OpenAi,
            max_steps: 10,
            max_tokens: 512,
            tool_choice: ToolChoice::Auto,
            key_env: None,
            start_url: None,
            allow_domains: Vec::new(),
            record: None,
            task: String::new(),
        };
        let mut task = Vec::new();
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or(format!("{arg} needs a value"));
            match arg.as_str() {
                "--base-url" => options.base_url = Some(value()?),
                "--model" => options.model = value()?,
                "--dialect" | "--provider" => {
                    options.provider = value()?.parse().map_err(|e| format!("{e}"))?;
                }
                "--max-steps" => options.max_steps = number(&arg, &value()?)?,
                "--max-tokens" => options.max_tokens = number(&arg, &value()?)?,
                "--tool-choice" => {
                    options.tool_choice = match value()?.as_str() {
                        "auto" => ToolChoice::Auto,
                        "required" => ToolChoice::Required,
                        other => return Err(format!("--tool-choice auto|required, not {other}")),
                    }
                }
                "--key-env" => options.key_env = Some(value()?),
                "--start-url" => options.start_url = Some(value()?),
                "--allow-domain" => options.allow_domains.push(value()?),
                "--record" => options.record = Some(PathBuf::from(value()?)),
                "-h" | "--help" => return Err(String::new()),
                _ => task.push(arg),
            }
        }
        options.task = shared::task(&options.model, &task)?;
        Ok(options)
    }
}

fn number<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{flag} takes a number, not {text:?}"))
}

/// Launches Chromium with `config`, runs the agent on `options.task` with
/// the endpoint the options name, and hands each progress line to `print`.
/// The browser is closed before this returns, whatever the outcome.
pub async fn run(
    options: &Options,
    config: BrowserConfig,
    print: &mut (dyn FnMut(String) + Send),
) -> Result<Outcome, Box<dyn Error + Send + Sync>> {
    run_with(model(options)?, options, config, print).await
}

/// [`run`] with any model.
pub async fn run_with(
    model: impl Model,
    options: &Options,
    config: BrowserConfig,
    print: &mut (dyn FnMut(String) + Send),
) -> Result<Outcome, Box<dyn Error + Send + Sync>> {
    let policy = policy(options)?;
    let browser = Browser::launch(config).await?;
    let outcome = drive(options, model, policy, &browser, print).await;
    let closed = browser.close().await;
    let outcome = outcome?;
    closed?;
    Ok(outcome)
}

fn model(options: &Options) -> Result<HttpModel, Box<dyn Error + Send + Sync>> {
    let builder = shared::model_builder(
        options.provider,
        &options.model,
        options.base_url.as_deref(),
        options.key_env.as_deref(),
    );
    Ok(builder.build()?)
}

/// Only the allowed domains: those given, else the start URL's host.
fn policy(options: &Options) -> Result<SafetyPolicy, Box<dyn Error + Send + Sync>> {
    let mut allowed = options.allow_domains.clone();
    if allowed.is_empty()
        && let Some(start) = &options.start_url
    {
        let url = url::Url::parse(start)?;
        let host = url.host_str().ok_or("--start-url has no host")?;
        allowed.push(match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        });
    }
    let mut policy = SafetyPolicy::builder();
    if !allowed.is_empty() {
        policy = policy.allow_domains(allowed);
    }
    Ok(policy.build()?)
}

async fn drive(
    options: &Options,
    model: impl Model,
    policy: SafetyPolicy,
    browser: &Browser,
    print: &mut (dyn FnMut(String) + Send),
) -> Result<Outcome, Box<dyn Error + Send + Sync>> {
    if let Some(start) = &options.start_url {
        policy.check_url(start)?;
        browser.navigate(start).await?;
    }
    let mut registry = toolkit_browser::registry(browser.clone(), policy).build()?;
    let recorder = options
        .record
        .as_ref()
        .map(|dir| Recorder::new(dir, browser.clone()));
    if let Some(recorder) = &recorder {
        registry = recorder.wrap(registry)?;
    }
    let max_tokens = options.max_tokens;
    let session = browser.clone();
    let agent = Agent::builder(model, registry)
        .instructions(
            "You control a web browser. Each step shows the current page: its URL, title \
             and interactive elements, each with a [number]. Act with the tools, naming \
             elements by their number. Call `done` when the task is finished.",
        )
        .limits(Limits::default().max_steps(options.max_steps))
        .tool_choice(options.tool_choice.clone())
        .observe(move |step| {
            let browser = session.clone();
            async move {
                let map = match browser.page_map().await {
                    Ok(map) => map,
                    Err(error) => return Some(Observation::new(format!("No page map: {error}"))),
                };
                Some(observation(step, &map))
            }
        })
        // A bound on each answer, so a small local model that rambles
        // cannot hold a step for minutes.
        .configure(move |conversation| {
            conversation.settings_mut().max_output_tokens = Some(max_tokens);
        })
        .build()?;
    let (run, mut events) = agent.run(options.task.as_str()).events();
    let printer = async {
        while let Some(event) = events.recv().await {
            match &event {
                Event::Observed { text, .. } => print(format!(
                    "  page map: {} elements, {} characters",
                    elements(text),
                    text.len()
                )),
                _ => print(event.to_string()),
            }
        }
    };
    let (outcome, ()) = tokio::join!(run, printer);
    if let Some(recorder) = &recorder {
        // Written whatever the outcome: a failed run is the one worth
        // looking at.
        let files = recorder.finish().await?;
        print(format!(
            "record: {} step(s) in {} and {}",
            files.steps,
            files.html.display(),
            files.gif.display()
        ));
    }
    let outcome = outcome?;
    print(shared::stopped(&outcome));
    if let Some(answer) = &outcome.answer {
        print(format!("answer: {answer}"));
    }
    Ok(outcome)
}

/// The page map as the model sees it at `step`, and the line it shrinks to
/// once a newer map is shown.
fn observation(step: usize, map: &PageMap) -> Observation {
    Observation::new(format!("Current page (step {step}):\n{}", map.render())).later(format!(
        "(Page at step {step}: {} \"{}\", {} elements; the current page is shown further on.)",
        map.url,
        map.title,
        map.elements.len()
    ))
}

/// How many elements a rendered page map lists (`[n]` or `*[n]` lines).
fn elements(map: &str) -> usize {
    map.lines()
        .filter(|line| line.starts_with('[') || line.starts_with("*["))
        .count()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("agent: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut print = |line: String| println!("{line}");
    match run(&options, BrowserConfig::default(), &mut print).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("agent: {error}");
            ExitCode::FAILURE
        }
    }
}
