//! Finding tools by what they do: a BM25 index over tools' names,
//! descriptions and parameter documentation, for catalogs too large to
//! send whole to a model.
//!
//! An agent keeps [deferred](crate::ToolBuilder::deferred) tools out of its
//! requests and offers a search tool instead; this index answers that
//! tool where the provider has no search of its own (the guide's "Tool
//! search" chapter, `docs/tool-search.md`).
//!
//! ```
//! use serde_json::json;
//! use toolkit_core::search::ToolIndex;
//!
//! let mut index = ToolIndex::new();
//! index.add(
//!     "issues_create",
//!     "Create an issue in a repository.",
//!     &json!({"type": "object", "properties": {
//!         "title": {"type": "string", "description": "The title of the issue."}}}),
//! );
//! index.add(
//!     "repos_list_for_org",
//!     "List the repositories of an organization.",
//!     &json!({"type": "object", "properties": {
//!         "org": {"type": "string", "description": "The organization name."}}}),
//! );
//! let found = index.search("open a new issue titled 'crash'", 5);
//! assert_eq!(found[0].name, "issues_create");
//! ```
//!
//! Words are matched after light normalisation: lower case, `camelCase`,
//! `snake_case` and `kebab-case` split into words, common English words
//! left out, plural endings removed. A tool's name counts twice, its
//! description and its parameters' names and descriptions once.

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

use crate::ToolDef;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation.
const B: f64 = 0.75;
/// How many times a name's words count, against once for the rest: a
/// tool's name is the densest statement of what it does.
const NAME_WEIGHT: usize = 2;
/// How deep parameter schemas are walked for names and descriptions.
const SCHEMA_DEPTH: usize = 8;

/// Words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "for",
    "from", "have", "i", "if", "in", "into", "is", "it", "its", "me", "my", "need", "of", "on",
    "or", "our", "please", "so", "some", "that", "the", "their", "them", "then", "this", "to",
    "up", "us", "want", "was", "we", "what", "when", "which", "will", "with", "would", "you",
    "your",
];

/// Verbs for the same action, each to the word tools' descriptions use
/// most (`show` and `list`, `change` and `update`): a request says what to
/// do in a person's words, a description in an API's. Sorted by the first
/// word, after stemming.
const ACTIONS: &[(&str, &str)] = &[
    ("abort", "cancel"),
    ("activate", "enable"),
    ("alter", "update"),
    ("approve", "accept"),
    ("browse", "list"),
    ("change", "update"),
    ("deactivate", "disable"),
    ("destroy", "delete"),
    ("display", "get"),
    ("edit", "update"),
    ("enumerate", "list"),
    ("erase", "delete"),
    ("execute", "run"),
    ("fetch", "get"),
    ("find", "search"),
    ("look", "get"),
    ("make", "create"),
    ("modify", "update"),
    ("new", "create"),
    ("obtain", "get"),
    ("remove", "delete"),
    ("retrieve", "get"),
    ("show", "list"),
    ("stop", "cancel"),
    ("submit", "send"),
    ("view", "get"),
];

/// A BM25 index over tools: [`add`](Self::add) each, then
/// [`search`](Self::search).
#[derive(Clone, Default)]
pub struct ToolIndex {
    names: Vec<String>,
    /// Each document's length in words.
    lengths: Vec<u32>,
    /// Each word's postings: the documents holding it, with its count.
    postings: HashMap<String, Vec<(u32, u32)>>,
    total_length: u64,
}

/// A tool the search found, best first.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolMatch {
    /// The tool's name, as it was added.
    pub name: String,
    /// Its BM25 score for the query: comparable within one search only.
    pub score: f64,
}

impl ToolIndex {
    /// An empty index.
    pub fn new() -> Self {
        Self::default()
    }

    /// An index of `tools`, each under the name models call it by.
    pub fn of_tools<'a>(tools: impl IntoIterator<Item = &'a ToolDef>) -> Self {
        let mut index = Self::new();
        for def in tools {
            let parameters = def.schema().canonical_value().cloned();
            index.add(
                def.name(),
                def.description(),
                parameters.as_ref().unwrap_or(&Value::Null),
            );
        }
        index
    }

    /// Adds a tool: its name, its description, and its parameter schema
    /// (any JSON: the names under every `properties` and every
    /// `description` are read).
    pub fn add(&mut self, name: &str, description: &str, parameters: &Value) {
        let mut words = Vec::new();
        for _ in 0..NAME_WEIGHT {
            words.extend(tokens(name));
        }
        words.extend(tokens(description));
        schema_words(parameters, 0, &mut words);
        let document = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        let mut counts: HashMap<String, u32> = HashMap::new();
        for word in &words {
            *counts.entry(word.clone()).or_insert(0) += 1;
        }
        for (word, count) in counts {
            self.postings
                .entry(word)
                .or_default()
                .push((document, count));
        }
        let length = u32::try_from(words.len()).unwrap_or(u32::MAX);
        self.lengths.push(length);
        self.total_length += u64::from(length);
        self.names.push(name.to_owned());
    }

    /// How many tools the index holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the index holds no tool.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The `limit` tools that best match `query`, best first; tools that
    /// share no word with the query are never returned, and equal scores
    /// keep the order the tools were added in.
    pub fn search(&self, query: &str, limit: usize) -> Vec<ToolMatch> {
        if self.names.is_empty() || limit == 0 {
            return Vec::new();
        }
        let count = self.names.len() as f64;
        let average = (self.total_length as f64 / count).max(1.0);
        let mut words = tokens(query);
        words.sort_unstable();
        words.dedup();
        let mut scores = vec![0.0f64; self.names.len()];
        for word in &words {
            let Some(postings) = self.postings.get(word) else {
                continue;
            };
            let frequency = postings.len() as f64;
            let idf = (1.0 + (count - frequency + 0.5) / (frequency + 0.5)).ln();
            for &(document, times) in postings {
                let times = f64::from(times);
                let length = f64::from(self.lengths[document as usize]);
                let norm = K1 * (1.0 - B + B * length / average);
                scores[document as usize] += idf * times * (K1 + 1.0) / (times + norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, score)| *score > 0.0)
            .collect();
        // Stable: equal scores stay in the order the tools were added.
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ranked
            .into_iter()
            .take(limit)
            .map(|(document, score)| ToolMatch {
                name: self.names[document].clone(),
                score,
            })
            .collect()
    }
}

impl fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.names.len())
            .field("words", &self.postings.len())
            .finish()
    }
}

/// The names under each `properties` and each `description` of a schema.
fn schema_words(schema: &Value, depth: usize, words: &mut Vec<String>) {
    if depth > SCHEMA_DEPTH {
        return;
    }
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("description", Value::String(text)) => words.extend(tokens(text)),
                    ("properties", Value::Object(properties)) => {
                        for (name, property) in properties {
                            words.extend(tokens(name));
                            schema_words(property, depth + 1, words);
                        }
                    }
                    _ => schema_words(value, depth + 1, words),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                schema_words(item, depth + 1, words);
            }
        }
        _ => {}
    }
}

/// The words of `text` as the index compares them: split at anything not
/// a letter or digit and at `camelCase` humps, lower-cased, common words
/// left out, plural endings removed.
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower {
                push_word(&mut words, &mut word);
            }
            previous_lower = c.is_lowercase();
            word.extend(c.to_lowercase());
        } else {
            previous_lower = false;
            push_word(&mut words, &mut word);
        }
    }
    push_word(&mut words, &mut word);
    words
}

fn push_word(words: &mut Vec<String>, word: &mut String) {
    if word.is_empty() {
        return;
    }
    let taken = std::mem::take(word);
    if STOP_WORDS.binary_search(&taken.as_str()).is_ok() {
        return;
    }
    let word = stem(taken);
    words.push(
        match ACTIONS.binary_search_by(|(variant, _)| (*variant).cmp(word.as_str())) {
            Ok(at) => ACTIONS[at].1.to_owned(),
            Err(_) => word,
        },
    );
}

/// The singular of a plural, roughly: `repositories` and `repository`,
/// `labels` and `label`, `branches` and `branch` compare equal.
fn stem(mut word: String) -> String {
    let chars = word.chars().count();
    if chars > 4 && word.ends_with("ies") {
        word.truncate(word.len() - 3);
        word.push('y');
    } else if chars > 4
        && (word.ends_with("ches")
            || word.ends_with("shes")
            || word.ends_with("sses")
            || word.ends_with("uses")
            || word.ends_with("xes"))
    {
        word.truncate(word.len() - 2);
    } else if chars > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        word.truncate(word.len() - 1);
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_are_sorted_for_the_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(ACTIONS.windows(2).all(|pair| pair[0].0 < pair[1].0));
    }

    #[test]
    fn words_for_one_action_compare_equal() {
        assert_eq!(tokens("Show the branches"), tokens("list branch"));
        assert_eq!(tokens("change a webhook"), tokens("update webhook"));
        assert_eq!(tokens("Removes it"), tokens("delete"));
    }

    #[test]
    fn words_split_lowered_and_singular() {
        assert_eq!(
            tokens("listReposForOrg: the self-hosted_runners, Branches & 2FA statuses"),
            [
                "list", "repo", "org", "self", "hosted", "runner", "branch", "2fa", "status"
            ]
        );
        assert_eq!(tokens("Repositories"), tokens("repository"));
        assert_eq!(tokens("ÉTAT des Lieux"), ["état", "des", "lieux"]);
        assert!(tokens("").is_empty());
        assert!(tokens("!!! ... ---").is_empty());
    }

    #[test]
    fn ranks_by_name_description_and_parameters() {
        let mut index = ToolIndex::new();
        index.add("send_email", "Send an email message.", &json!({}));
        index.add(
            "create_event",
            "Add an event to the calendar.",
            &json!({"properties": {"attendees": {"type": "array",
                "description": "Who is invited, by email address."}}}),
        );
        index.add("get_weather", "The forecast for a city.", &Value::Null);
        let found = index.search("email", 5);
        let names: Vec<&str> = found.iter().map(|m| m.name.as_str()).collect();
        // The name and the description beat one parameter's description.
        assert_eq!(names, ["send_email", "create_event"]);
        assert!(found[0].score > found[1].score);
        assert_eq!(index.search("invited attendees", 5)[0].name, "create_event");
        assert_eq!(index.search("forecast", 1)[0].name, "get_weather");
    }

    #[test]
    fn no_shared_word_finds_nothing() {
        let mut index = ToolIndex::new();
        index.add("a_tool", "Does one thing.", &Value::Null);
        assert!(index.search("zebra", 5).is_empty());
        assert!(index.search("", 5).is_empty());
        assert!(index.search("thing", 0).is_empty());
        assert!(ToolIndex::new().search("thing", 5).is_empty());
    }

    #[test]
    fn equal_scores_keep_the_order_added() {
        let mut index = ToolIndex::new();
        for name in ["second_copy", "first_copy", "third_copy"] {
            index.add(name, "Copies.", &Value::Null);
        }
        let names: Vec<String> = index
            .search("copy", 3)
            .into_iter()
            .map(|m| m.name)
            .collect();
        assert_eq!(names, ["second_copy", "first_copy", "third_copy"]);
    }

    #[test]
    fn deep_or_odd_schemas_neither_panic_nor_hang() {
        let mut deep = json!({"description": "bottom"});
        // Eight times the depth read: deeper values are serde_json's own
        // recursion to bound (its parser stops at 128 levels), not the
        // index's.
        for _ in 0..SCHEMA_DEPTH * 8 {
            deep = json!({"properties": {"x": deep}});
        }
        let mut index = ToolIndex::new();
        index.add("deep", "", &deep);
        index.add("odd", "", &json!([1, "two", null, {"properties": 3}]));
        assert_eq!(index.len(), 2);
        // The bottom is past the depth read.
        assert!(index.search("bottom", 5).is_empty());
    }
}
