//! Small tools the agent's tests give their models: one of each kind of
//! approval and effect, and one whose argument is a free-form map.

use std::collections::HashMap;

use toolkit_core::tool;

/// Echoes a text.
#[tool]
pub fn echo(
    /** The text. */
    text: String,
) -> String {
    text
}

/// Deletes a file.
#[tool(destructive)]
pub fn delete_file(
    /** The path. */
    path: String,
) -> String {
    format!("deleted {path}")
}

/// Sends a message to a person.
#[tool(needs_approval)]
pub fn send_message(
    /** The text. */
    text: String,
) -> String {
    format!("sent: {text}")
}

/// Takes a free-form map.
#[tool]
pub fn tag(
    /** Tags. */
    tags: HashMap<String, String>,
) -> String {
    format!("{} tags", tags.len())
}
