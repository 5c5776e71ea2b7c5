//! What the agent examples share: the model their flags name, the task
//! the rest of their words make, and the line that sums a run up.

use toolkit_agent::{HttpModel, HttpModelBuilder, Outcome};
use toolkit_core::Provider;

/// The model the flags name (`--dialect`, `--model`, `--base-url`,
/// `--key-env`). A local endpoint (127.0.0.1, localhost) is asked without
/// a key unless `--key-env` names one.
pub fn model_builder(
    provider: Provider,
    model: &str,
    base_url: Option<&str>,
    key_env: Option<&str>,
) -> HttpModelBuilder {
    let mut builder = HttpModel::for_provider(provider, model);
    if let Some(url) = base_url {
        builder = builder.base_url(url);
        let local = url.contains("://127.0.0.1") || url.contains("://localhost");
        if local && key_env.is_none() {
            builder = builder.no_key();
        }
    }
    if let Some(name) = key_env {
        builder = builder.key_env(name);
    }
    builder
}

/// The task the words after the flags make: a model and a task are both
/// required.
pub fn task(model: &str, words: &[String]) -> Result<String, String> {
    if model.is_empty() || words.is_empty() {
        return Err("--model and a task are required".into());
    }
    Ok(words.join(" "))
}

/// How a run ended, in one line.
pub fn stopped(outcome: &Outcome) -> String {
    format!(
        "stopped: {} after {} step(s); done: {}; tokens: {} in, {} out",
        outcome.stop,
        outcome.steps,
        outcome.done,
        outcome.usage.input_tokens,
        outcome.usage.output_tokens
    )
}
