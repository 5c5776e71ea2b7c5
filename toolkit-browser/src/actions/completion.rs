//! Ending the task: `done`.

use toolkit_core::{ToolResult, tool};

use super::{Reply, build};
use crate::browser::Browser;
use crate::error::BrowserError;
use crate::safety::SafetyPolicy;

/// Finish the task: give the final answer for the user, say whether the
/// task succeeded, and name files to show the user (in the files folder).
///
/// Call it alone, as the last action, once the task is complete, or when
/// it cannot be completed (success false, saying why).
#[tool(catalogue = false)]
pub async fn done(
    /// The final answer or report for the user.
    text: String,
    /// Whether the task was completed (default true).
    success: Option<bool>,
    /// Files to show the user, as paths relative to the files folder.
    files: Option<Vec<String>>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    // The task's end needs no page, so it does not wait for the action
    // lock; only the policy's files folder.
    let policy = browser.policy();
    let outcome = finish(
        &policy,
        text,
        success.unwrap_or(true),
        files.unwrap_or_default(),
    );
    build(&policy, outcome.unwrap_or_else(Reply::from))
}

fn finish(
    policy: &SafetyPolicy,
    text: String,
    success: bool,
    files: Vec<String>,
) -> Result<Reply, BrowserError> {
    // Every file is checked before the task is marked done: a bad name is
    // an error the model can correct, not a task ended without its files.
    let mut paths = Vec::with_capacity(files.len());
    for file in &files {
        paths.push(policy.resolve_file(file)?);
    }
    let mut reply = Reply::text(text).with_done(success);
    for path in paths {
        reply = reply.attach(path);
    }
    Ok(reply)
}
