//! A conversation's tool search: which tools its requests leave out, the
//! search that finds them, and the tools found so far.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolkit_core::search::ToolIndex;
use toolkit_core::{Registry, ToolResult};

use super::Conversation;
use crate::providers::Dialect;
use crate::search::{NativeSearch, TOOL_SEARCH_TOOL, ToolSearch, local_tool};
use crate::tool_choice::ToolChoice;

/// What a conversation knows of tool search.
#[derive(Debug, Clone, Default)]
pub(super) struct SearchState {
    /// The host's choices, if it made any.
    pub(super) config: Option<ToolSearch>,
    /// The tools deferred on themselves, as the registry said when the
    /// tool list was set.
    pub(super) flagged: BTreeSet<String>,
    /// The tools the model found, in the order first found: they follow
    /// the tools sent from the start, so each request's tool list is the
    /// one before with tools appended.
    pub(super) found: Vec<String>,
    /// The index of the deferred tools, built at the first search after
    /// the list was set.
    index: Option<Arc<ToolIndex>>,
}

/// The saved form of [`SearchState`] (the index is built again).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SearchForm {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    config: Option<ToolSearch>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    deferred_tools: BTreeSet<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    found: Vec<String>,
}

impl SearchState {
    /// The saved form; `None` when there is nothing to save.
    pub(super) fn form(&self) -> Option<SearchForm> {
        (self.config.is_some() || !self.flagged.is_empty() || !self.found.is_empty()).then(|| {
            SearchForm {
                config: self.config.clone(),
                deferred_tools: self.flagged.clone(),
                found: self.found.clone(),
            }
        })
    }

    /// The state a saved form gives.
    pub(super) fn from_form(form: Option<SearchForm>) -> Self {
        let form = form.unwrap_or_default();
        Self {
            config: form.config,
            flagged: form.deferred_tools,
            found: form.found,
            index: None,
        }
    }
}

impl Conversation {
    /// Sets which tools are deferred and how the model finds them (see
    /// [`ToolSearch`]); `None` leaves deferred only the tools
    /// [deferred on themselves](toolkit_core::ToolDef::is_deferred), found
    /// with the provider's own search where it has one. Names are those
    /// models call the tools by. The tools found so far stay found.
    pub fn set_tool_search(&mut self, search: Option<ToolSearch>) {
        self.search.config = search;
        self.search.index = None;
    }

    /// The tool search settings, if any were set.
    pub fn tool_search(&self) -> Option<&ToolSearch> {
        self.search.config.as_ref()
    }

    /// The deferred tools the model found with the conversation's own
    /// search, in the order first found: each is sent in every request
    /// from the one after its search on.
    pub fn found_tools(&self) -> &[String] {
        &self.search.found
    }

    /// Whether the tool named `name` (as models call it) is left out of
    /// requests until found.
    pub fn is_deferred(&self, name: &str) -> bool {
        if matches!(&self.tool_choice, ToolChoice::Tool(chosen) if chosen == name) {
            // A tool the model must call is sent.
            return false;
        }
        let config = self.search.config.as_ref();
        match config.and_then(|config| config.defers(&[name])) {
            Some(deferred) => deferred,
            None => self.search.flagged.contains(name),
        }
    }

    /// Searches the deferred tools with the conversation's own search (a
    /// BM25 index of their names, descriptions and parameters): the names
    /// of the best matches, best first. Each is sent from the next request
    /// on, after the tools found before it.
    pub fn search_tools(&mut self, query: &str) -> Vec<String> {
        let results = self
            .search
            .config
            .as_ref()
            .map_or(crate::search::DEFAULT_MAX_RESULTS, ToolSearch::results);
        let index = self.search_index();
        let names: Vec<String> = index
            .search(query, results)
            .into_iter()
            .map(|found| found.name)
            .collect();
        for name in &names {
            if !self.search.found.contains(name) {
                self.search.found.push(name.clone());
            }
        }
        names
    }

    /// The deferred tools of the list, in its order.
    fn deferred_tools(&self) -> Vec<&Value> {
        let dialect = self.dialect();
        self.tools
            .iter()
            .filter_map(Value::as_array)
            .flatten()
            .filter(|tool| self.is_deferred(dialect.tool_name(tool)))
            .collect()
    }

    fn search_index(&mut self) -> Arc<ToolIndex> {
        if let Some(index) = &self.search.index {
            return Arc::clone(index);
        }
        let dialect = self.dialect();
        let mut index = ToolIndex::new();
        for tool in self.deferred_tools() {
            // The whole definition is read for descriptions and
            // parameters, wherever the API nests them.
            index.add(dialect.tool_name(tool), "", tool);
        }
        let index = Arc::new(index);
        self.search.index = Some(Arc::clone(&index));
        index
    }

    /// Answers a call of [`TOOL_SEARCH_TOOL`]: the tools found, each with
    /// the beginning of its description.
    pub(crate) fn answer_search(&mut self, arguments: &Value) -> ToolResult {
        let query = arguments
            .get("query")
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or("");
        if query.is_empty() {
            return ToolResult::error(
                "give `query`: a few words describing the task, such as `list open pull requests`",
            );
        }
        let names = self.search_tools(query);
        if names.is_empty() {
            return ToolResult::text(format!(
                "No tool matched {query:?}. Try other words for the task."
            ));
        }
        let dialect = self.dialect();
        let deferred = self.deferred_tools();
        let mut text = format!(
            "Found {} tool(s); each can be called from your next turn on:",
            names.len()
        );
        for name in &names {
            let described = deferred
                .iter()
                .find(|tool| dialect.tool_name(tool) == name)
                .map(|tool| summary(description_of(tool)))
                .unwrap_or_default();
            text.push_str(&format!("\n- `{name}`: {described}"));
        }
        ToolResult::text(text)
    }

    /// Whether the requests offer the conversation's own search tool (and
    /// calls of [`TOOL_SEARCH_TOOL`] are the conversation's to answer).
    pub(crate) fn offers_own_search(&self) -> bool {
        let dialect = self.dialect();
        let own: &[Value] = self
            .tools
            .as_ref()
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        let host_has_one = own
            .iter()
            .any(|tool| dialect.tool_name(tool) == TOOL_SEARCH_TOOL);
        !host_has_one && self.native_tool(dialect).is_none() && !self.deferred_tools().is_empty()
    }

    /// The provider's own search tool, when it has one and the host did
    /// not turn it off.
    fn native_tool(&self, dialect: &dyn Dialect) -> Option<Value> {
        let kind = self
            .search
            .config
            .as_ref()
            .map_or(NativeSearch::default(), ToolSearch::native_search);
        dialect.native_search(kind)
    }

    /// The tools a request offers: the conversation's, then `extra` (a
    /// typed run's). With deferred tools: beside the provider's search,
    /// each marked; or those sent from the start, `extra`, the
    /// conversation's search tool and the tools found, in the order first
    /// found.
    pub(super) fn offered_tools(&self, extra: Option<&Vec<Value>>) -> Option<Cow<'_, Value>> {
        let nothing_deferred = self.search.config.is_none() && self.search.flagged.is_empty();
        if extra.is_none() && nothing_deferred {
            // The list as it is, without a copy: the common case.
            return self.tools.as_ref().map(Cow::Borrowed);
        }
        let own = self.tools.as_ref().and_then(Value::as_array);
        if own.is_none() && extra.is_none() {
            return None;
        }
        let own: &[Value] = own.map_or(&[], Vec::as_slice);
        let extra: &[Value] = extra.map_or(&[], Vec::as_slice);
        let dialect = self.dialect();
        let deferred: Vec<bool> = own
            .iter()
            .map(|tool| self.is_deferred(dialect.tool_name(tool)))
            .collect();
        let mut out = Vec::with_capacity(own.len() + extra.len() + 1);
        if !deferred.contains(&true) {
            out.extend(own.iter().cloned());
            out.extend(extra.iter().cloned());
            return Some(Cow::Owned(Value::Array(out)));
        }
        if let Some(native) = self.native_tool(dialect) {
            out.push(native);
            for (tool, deferred) in own.iter().zip(&deferred) {
                let mut tool = tool.clone();
                if *deferred && let Some(object) = tool.as_object_mut() {
                    object.insert("defer_loading".into(), Value::Bool(true));
                }
                out.push(tool);
            }
            out.extend(extra.iter().cloned());
            return Some(Cow::Owned(Value::Array(out)));
        }
        let sent = own.iter().zip(&deferred);
        out.extend(
            sent.clone()
                .filter(|(_, d)| !**d)
                .map(|(tool, _)| tool.clone()),
        );
        out.extend(extra.iter().cloned());
        if self.offers_own_search()
            && let Some(tool) = local_tool(self.tool_provider())
        {
            out.push(tool);
        }
        for name in &self.search.found {
            let found = sent
                .clone()
                .find(|(tool, deferred)| **deferred && dialect.tool_name(tool) == name);
            if let Some((tool, _)) = found {
                out.push(tool.clone());
            }
        }
        Some(Cow::Owned(Value::Array(out)))
    }

    /// Reads which of `registry`'s tools are deferred on themselves; the
    /// index is built again at the next search.
    pub(super) fn read_deferred(&mut self, registry: &Registry) {
        self.search.flagged = registry
            .tools()
            .into_iter()
            .filter(|def| def.is_deferred())
            .map(|def| def.name().to_owned())
            .collect();
        self.search.index = None;
    }
}

/// A tool definition's description, wherever the API puts it.
fn description_of(tool: &Value) -> &str {
    tool.get("description")
        .or_else(|| tool.pointer("/function/description"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The first sentence of a description, at most 200 characters.
fn summary(description: &str) -> String {
    let first = description
        .split_inclusive(". ")
        .next()
        .unwrap_or(description)
        .trim();
    if first.chars().count() <= 200 {
        return first.to_owned();
    }
    let cut: String = first.chars().take(200).collect();
    format!("{cut}...")
}
