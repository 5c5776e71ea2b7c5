//! Running the model's JavaScript: `evaluate`, off unless the host adds it.

use toolkit_core::{ToolResult, tool};

use super::{Reply, act, check_navigation, effects_sentence, stop_if_fatal};
use crate::browser::Browser;
use toolkit_core::text::cut;

/// The most characters of a script's result returned to the model.
const MAX_RESULT_CHARS: usize = 20_000;

/// Run JavaScript in the current page and return its value as JSON
/// (a promise is awaited). Use it only when no other action can do the job.
///
/// The code is one expression; for statements, wrap them in a function:
/// (() => { ...; return value; })()
///
/// # Off by default
///
/// Not among the [default actions](super::default_actions): running code the
/// model wrote is the host's decision. Add it with
/// `.tools(tools![toolkit_browser::actions::evaluate])`. The page's own
/// scripts see what it does; navigations it causes obey the policy, and
/// its result is redacted like every other.
#[tool(catalogue = false)]
pub async fn evaluate(
    /// The JavaScript expression to run.
    code: String,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |policy| {
        let before = browser.current_tab().await?;
        let value = browser.evaluate_settled(&code).await;
        stop_if_fatal(&value)?;
        let note = check_navigation(&browser, &policy, Some(&before.id)).await?;
        let (value, effects) = value?;
        let shown = match &value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        // Redacted whole before it is cut: a cut could split a secret.
        let shown = policy.redact(&shown).into_owned();
        let total = shown.chars().count();
        let mut text = format!("Result: {}", cut(&shown, MAX_RESULT_CHARS));
        if total > MAX_RESULT_CHARS {
            text.push_str(&format!(" [cut: the result has {total} characters]"));
        }
        Ok(Reply::text(text)
            .with_show_once()
            .say(effects_sentence(&browser, &effects).await?)
            .say(note)
            .memory(format!("Ran a script; it returned {}", cut(&shown, 80))))
    })
    .await
}
