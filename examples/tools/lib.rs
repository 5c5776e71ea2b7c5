//! The example registry the examples share: a small document-and-calendar
//! assistant whose tools, between them, use every feature of `#[tool]`.
//!
//! A package of its own, on toolkit-core alone, so that every crate's
//! tests can use the registry without seeing the examples package (whose
//! `otlp` feature and examples reach further up the layers); the examples
//! package re-exports it (`toolkit_examples::registry`).

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolkit_core::{Block, Image, Registry, RegistryError, ToolResult, tool, tools};

/// A 1×1 PNG standing in for a rendered page.
pub const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// The documents the assistant can search: host state, handed to tools that
/// ask for it and never shown in a schema.
#[derive(Debug, Default)]
pub struct DocumentIndex {
    documents: BTreeMap<String, Document>,
}

#[derive(Debug)]
struct Document {
    body: String,
    tags: Vec<String>,
    year: u16,
}

impl DocumentIndex {
    /// A few documents to search.
    pub fn sample() -> Self {
        let mut documents = BTreeMap::new();
        for (title, body, tags, year) in [
            (
                "The Rust Book",
                "ownership borrowing lifetimes",
                &["rust", "book"][..],
                2018,
            ),
            (
                "Async Rust",
                "futures executors tokio",
                &["rust", "async"][..],
                2023,
            ),
            (
                "Tokio Tutorial",
                "tokio tasks channels",
                &["async"][..],
                2021,
            ),
        ] {
            documents.insert(
                title.to_owned(),
                Document {
                    body: body.to_owned(),
                    tags: tags.iter().map(|t| (*t).to_owned()).collect(),
                    year,
                },
            );
        }
        Self { documents }
    }
}

/// Result ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Best match first.
    Relevance,
    /// Newest first.
    Newest,
}

/// Why a search failed.
#[derive(Debug)]
pub struct SearchError(String);

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SearchError {}

/// Search the document index.
///
/// Returns matching titles, one per line.
#[tool(title = "Search documents", read_only, idempotent)]
pub async fn search(
    /// The full-text query.
    query: String,
    /// Maximum number of hits.
    limit: Option<u32>,
    /// Tags to filter by; a document must have all of them.
    tags: Vec<String>,
    /// Result ordering.
    order: Order,
    #[tool(state)] index: Arc<DocumentIndex>,
) -> Result<String, SearchError> {
    if query.trim().is_empty() {
        return Err(SearchError("the query is empty".into()));
    }
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut hits: Vec<(&String, &Document, usize)> = index
        .documents
        .iter()
        .filter(|(_, doc)| tags.iter().all(|tag| doc.tags.contains(tag)))
        .map(|(title, doc)| {
            let text = format!("{} {}", title.to_lowercase(), doc.body);
            let score = words.iter().filter(|w| text.contains(w.as_str())).count();
            (title, doc, score)
        })
        .filter(|(_, _, score)| *score > 0)
        .collect();
    match order {
        Order::Relevance => hits.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0))),
        Order::Newest => hits.sort_by_key(|hit| std::cmp::Reverse(hit.1.year)),
    }
    let limit = limit.unwrap_or(10) as usize;
    let titles: Vec<&str> = hits.iter().take(limit).map(|(t, ..)| t.as_str()).collect();
    Ok(if titles.is_empty() {
        format!("No document matches {query:?}.")
    } else {
        titles.join("\n")
    })
}

/// A time slot in the calendar.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct Slot {
    /// Start, as an ISO 8601 date and time, such as `2026-11-23T10:00`.
    pub start: String,
    /// Length in minutes.
    pub minutes: u16,
}

/// Someone invited to an event.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct Attendee {
    /// Full name.
    pub name: String,
    /// Email address, if known.
    pub email: Option<String>,
}

/// A calendar event to create.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct NewEvent {
    /// A short title.
    pub title: String,
    /// When it takes place.
    pub slot: Slot,
    /// Who is invited.
    pub attendees: Vec<Attendee>,
}

/// The event as stored.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Created {
    id: String,
    event: NewEvent,
}

/// Create a calendar event.
///
/// Returns the stored event with its id, as JSON.
#[tool(title = "Create a calendar event", destructive = false)]
pub async fn create_event(
    /// The event to create.
    event: NewEvent,
) -> Created {
    let id = format!(
        "evt-{}",
        event.title.len() * 7 + usize::from(event.slot.minutes)
    );
    Created { id, event }
}

/// Render a web page and return a screenshot of it.
#[tool]
pub async fn screenshot(
    /// The page's address.
    url: String,
) -> Result<ToolResult, toolkit_core::ImageError> {
    let image = Image::from_base64("image/png", PIXEL_PNG)?;
    Ok(ToolResult::blocks([
        Block::text(format!("Screenshot of {url}.")),
        Block::image(image),
    ])
    .with_note("Viewport 1280x720, scrolled to the top.")
    .with_memory(format!("Took a screenshot of {url}")))
}

/// Fetch a web page's text.
#[tool(read_only, open_world)]
pub async fn fetch(
    /// The page's address.
    url: String,
) -> Result<String, std::io::Error> {
    // The examples run without a network: every fetch fails, which is how
    // they show an error reaching the model.
    Err(std::io::Error::new(
        std::io::ErrorKind::ConnectionRefused,
        format!("could not connect to {url}: this example has no network"),
    ))
}

/// Temperature units.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// Convert a temperature between units.
///
/// # Arguments
///
/// * `value` - The temperature to convert.
/// * `from` - Its unit.
/// * `to` - The unit wanted.
#[tool]
pub fn convert_temperature(value: f64, from: Unit, to: Unit) -> String {
    let celsius = match from {
        Unit::Celsius => value,
        Unit::Fahrenheit => (value - 32.0) * 5.0 / 9.0,
    };
    let converted = match to {
        Unit::Celsius => celsius,
        Unit::Fahrenheit => celsius * 9.0 / 5.0 + 32.0,
    };
    format!("{converted:.1}")
}

/// Count the words of a text.
#[tool]
pub fn word_count(
    /// The text.
    text: String,
) -> usize {
    text.split_whitespace().count()
}

/// Declare the task done and report to the user.
#[tool]
pub fn done(
    /// What was done, for the user.
    summary: String,
    /// Whether the task succeeded.
    success: bool,
) -> ToolResult {
    ToolResult::text(summary).with_done(success)
}

/// The example registry: every tool above, with the document index as state.
pub fn registry() -> Result<Registry, RegistryError> {
    Registry::builder()
        .tools(tools![
            search,
            create_event,
            screenshot,
            fetch,
            convert_temperature,
            word_count,
            done,
        ])
        .state(Arc::new(DocumentIndex::sample()))
        .build()
}
