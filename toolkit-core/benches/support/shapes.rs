//! The other shapes of tool the dispatch benchmarks measure beside the
//! guide's `search`: a `#[tool]` taking a struct, and a run-time tool with
//! `search`'s schema, with what their hand-written paths parse into.

// Each benchmark uses part of this module.
#![allow(dead_code)]

use serde_json::{Value, json};
use toolkit_core::{CallContext, ToolDef};

/// Where a booking goes: a struct parameter.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct Slot {
    /// The day, `YYYY-MM-DD`.
    day: String,
    /// The hour, 0 to 23.
    hour: u8,
    /// Who comes.
    guests: Vec<String>,
}

/// Books a room.
#[toolkit_core::tool]
pub async fn book(
    /// The room's name.
    room: String,
    /// When, and for whom.
    slot: Slot,
) -> String {
    booked(&room, &slot)
}

/// What `book` answers.
pub fn booked(room: &str, slot: &Slot) -> String {
    format!(
        "{room} on {} at {}:00 for {} guests",
        slot.day,
        slot.hour,
        slot.guests.len()
    )
}

/// The hand-written path's arguments for `book`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BookArguments {
    /// The room's name.
    pub room: String,
    /// When, and for whom.
    pub slot: Slot,
}

/// The arguments of every call of `book`.
pub const BOOK_ARGUMENTS: &str =
    r#"{"room": "Lovelace", "slot": {"day": "2026-12-01", "hour": 14, "guests": ["Ada", "Alan"]}}"#;
/// What `book` answers to [`BOOK_ARGUMENTS`].
pub const BOOKED: &str = "Lovelace on 2026-12-01 at 14:00 for 2 guests";

/// The run-time tool's handler: what `search` does, from JSON arguments.
pub async fn search_json(arguments: Value) -> String {
    let query = arguments["query"].as_str().unwrap_or_default();
    let limit = arguments["limit"].as_u64().unwrap_or(10);
    let tags = arguments["tags"].as_array().map_or(0, Vec::len);
    let order = arguments["order"].as_str().unwrap_or("relevance");
    format!("{query}: {limit} hits at most, {tags} tags, by {order}")
}

/// `search` defined at run time: the same schema, `search_json` as the
/// handler.
pub fn runtime_tool() -> ToolDef {
    ToolDef::builder("search_json")
        .description("Search the document index.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The full-text query."},
                "limit": {"type": "integer", "minimum": 0, "maximum": 4294967295u64},
                "tags": {"type": "array", "items": {"type": "string"}},
                "order": {"type": "string", "enum": ["relevance", "newest"]}
            },
            "required": ["query", "tags", "order"],
            "additionalProperties": false
        }))
        .handler(|arguments: Value, _: CallContext| search_json(arguments))
}
