//! A conversation's JSON form: saved, and loaded back to go on elsewhere.
//!
//! The form is versioned (`"version": 1`) so that a later change can read
//! older forms. Loading checks what the conversation will rely on when it
//! goes on (the positions it keeps into its items, the step they belong
//! to), so that a corrupt or hand-edited form is an error here, not a panic
//! at the next step.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use toolkit_core::emit::EmitOptions;
use toolkit_core::{History, Provider};

use super::search::{SearchForm, SearchState};
use super::{Conversation, LatestResults, OtherMode, ShownObservation, ToolChoice};
use crate::answer::AnswerSchema;
use crate::providers::is_user;
use crate::settings::Settings;

/// The form this crate writes, and the only one it reads.
const VERSION: u64 = 1;

#[derive(Serialize)]
struct Written<'a> {
    version: u64,
    provider: Provider,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    items: &'a [Value],
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    other_mode_tools: Option<&'a OtherMode>,
    tool_choice: &'a ToolChoice,
    settings: &'a Settings,
    #[serde(skip_serializing_if = "Option::is_none")]
    answer_schema: Option<&'a AnswerSchema>,
    emit_options: &'a EmitOptions,
    raw_settings: &'a Map<String, Value>,
    history: &'a History,
    #[serde(skip_serializing_if = "Option::is_none")]
    latest_results: Option<LatestForm>,
    #[serde(skip_serializing_if = "Option::is_none")]
    observation: Option<ObservationForm>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_search: Option<SearchForm>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a conversation: {\"version\": 1, ...}"
)]
struct Read {
    // Read first and checked as it is read: a form of another version is
    // refused as such, before its fields are judged.
    #[serde(rename = "version")]
    _version: Version,
    provider: Provider,
    #[serde(default)]
    instructions: Option<String>,
    items: Vec<Value>,
    #[serde(default)]
    tools: Option<Value>,
    #[serde(default)]
    other_mode_tools: Option<OtherMode>,
    #[serde(default)]
    tool_choice: ToolChoice,
    #[serde(default)]
    settings: Settings,
    #[serde(default)]
    answer_schema: Option<AnswerSchema>,
    #[serde(default)]
    emit_options: EmitOptions,
    #[serde(default)]
    raw_settings: Map<String, Value>,
    #[serde(default)]
    history: History,
    #[serde(default)]
    latest_results: Option<LatestForm>,
    #[serde(default)]
    observation: Option<ObservationForm>,
    #[serde(default)]
    tool_search: Option<SearchForm>,
}

/// Where the latest step's results sit: items `start..end`.
#[derive(Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "{\"step\", \"start\", \"end\", \"gemini_call_ids\"}"
)]
struct LatestForm {
    step: usize,
    start: usize,
    end: usize,
    gemini_call_ids: bool,
}

/// Where the latest observation sits, and the line it becomes.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, expecting = "{\"item\", \"later\"}")]
struct ObservationForm {
    item: usize,
    later: String,
}

/// The form's version, read only if it is [`VERSION`].
struct Version;

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match u64::deserialize(deserializer)? {
            VERSION => Ok(Version),
            other => Err(D::Error::custom(format!(
                "the conversation was saved in form version {other}; this toolkit-agent reads version {VERSION}"
            ))),
        }
    }
}

/// `{"version": 1, "provider", "instructions"?, "items", "tools"?,
/// "other_mode_tools"?, "tool_choice", "settings", "answer_schema"?,
/// "emit_options", "raw_settings", "history", "latest_results"?,
/// "observation"?, "tool_search"?}`.
impl Serialize for Conversation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.written(&self.items, &self.history)
            .serialize(serializer)
    }
}

impl Conversation {
    /// The form, with `items` and `history` in place of the
    /// conversation's own: whole, or a journal's record of what changed.
    fn written<'a>(&'a self, items: &'a [Value], history: &'a History) -> Written<'a> {
        // Every field named: one added to the conversation must be given a
        // place in the form (or a reason to stay out of it) here.
        let Conversation {
            provider,
            instructions,
            // Given: whole, or those changed.
            items: _,
            tools,
            other_mode_tools,
            tool_choice,
            typed,
            answer,
            options,
            settings,
            history: _,
            latest,
            observation,
            // Where this process's store stands, not the conversation's.
            tracker: _,
            search,
        } = self;
        Written {
            version: VERSION,
            provider: *provider,
            instructions: instructions.as_deref(),
            items,
            tools: tools.as_ref(),
            other_mode_tools: other_mode_tools.as_ref(),
            tool_choice,
            settings: typed,
            answer_schema: answer.as_ref(),
            emit_options: options,
            raw_settings: settings,
            history,
            latest_results: latest.as_ref().map(|latest| LatestForm {
                step: latest.step,
                start: latest.items.start,
                end: latest.items.end,
                gemini_call_ids: latest.gemini_ids,
            }),
            observation: observation.as_ref().map(|shown| ObservationForm {
                item: shown.item,
                later: shown.later.clone(),
            }),
            tool_search: search.form(),
        }
    }
}

impl<'de> Deserialize<'de> for Conversation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let conversation = Conversation::from_read(Read::deserialize(deserializer)?);
        conversation.check().map_err(D::Error::custom)?;
        Ok(conversation)
    }
}

impl Conversation {
    fn from_read(read: Read) -> Self {
        Conversation {
            provider: read.provider,
            instructions: read.instructions,
            items: read.items,
            tools: read.tools,
            other_mode_tools: read.other_mode_tools,
            tool_choice: read.tool_choice,
            typed: read.settings,
            answer: read.answer_schema,
            options: read.emit_options,
            settings: read.raw_settings,
            history: read.history,
            latest: read.latest_results.map(|latest| LatestResults {
                step: latest.step,
                items: latest.start..latest.end,
                gemini_ids: latest.gemini_call_ids,
            }),
            observation: read.observation.map(|shown| ShownObservation {
                item: shown.item,
                later: shown.later,
            }),
            search: SearchState::from_form(read.tool_search),
            tracker: super::Tracker::default(),
        }
    }
}

/// What changed in a conversation since its last save: the form, its
/// items from `items_from` on and its history's steps after `steps_from`.
/// Everything else is small, and written whole.
pub(crate) struct Changes<'a> {
    conversation: &'a Conversation,
    items_from: usize,
    history: History,
}

impl<'a> Changes<'a> {
    /// The changes since the save the tracker counts from; all of it
    /// when `whole`.
    pub(crate) fn of(conversation: &'a Conversation, whole: bool) -> Self {
        let (items_from, steps_from) = if whole {
            (0, 0)
        } else {
            let tracker = &conversation.tracker;
            (
                tracker.items_from.min(conversation.items.len()),
                tracker.steps_from.min(conversation.history.len()),
            )
        };
        Changes {
            conversation,
            items_from,
            history: conversation.history.since(steps_from),
        }
    }
}

/// `{"items_from", "steps_from", "conversation": form}`.
impl Serialize for Changes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Form<'a> {
            items_from: usize,
            steps_from: usize,
            conversation: Written<'a>,
        }
        let conversation = self.conversation;
        Form {
            items_from: self.items_from,
            steps_from: conversation.history.len() - self.history.len(),
            conversation: conversation
                .written(&conversation.items[self.items_from..], &self.history),
        }
        .serialize(serializer)
    }
}

/// [`Changes`] as read back, to apply to the conversation they were
/// taken from.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a conversation's changes: {\"items_from\", \"steps_from\", \"conversation\"}"
)]
pub(crate) struct ReadChanges {
    items_from: usize,
    steps_from: usize,
    conversation: Read,
}

impl Conversation {
    /// Applies `changes` taken from this conversation as it is now.
    pub(crate) fn apply(&mut self, changes: ReadChanges) -> Result<(), String> {
        let ReadChanges {
            items_from,
            steps_from,
            conversation,
        } = changes;
        if items_from > self.items.len() {
            return Err(format!(
                "the changes start at item {items_from}, but there are {} items",
                self.items.len()
            ));
        }
        if steps_from != 0 && steps_from != self.history.len() {
            return Err(format!(
                "the changes add steps after step {steps_from}, but the history has {}",
                self.history.len()
            ));
        }
        let mut later = Conversation::from_read(conversation);
        let mut items = std::mem::take(&mut self.items);
        items.truncate(items_from);
        items.append(&mut later.items);
        later.items = items;
        if steps_from != 0 {
            let mut history = std::mem::take(&mut self.history);
            history.append(later.history);
            later.history = history;
        }
        later.check()?;
        *self = later;
        Ok(())
    }
}

impl Conversation {
    /// Whether the conversation can go on: what the next steps index or
    /// splice lies within the items, and belongs to the history.
    fn check(&self) -> Result<(), String> {
        let count = self.items.len();
        if let Some(at) = self.items.iter().position(|item| !item.is_object()) {
            return Err(format!(
                "item {at} is not a JSON object; every message, input item or content is one"
            ));
        }
        if let Some(tools) = &self.tools
            && !tools.is_array()
        {
            return Err("`tools` is not a JSON array of tool definitions".into());
        }
        if let Some(latest) = &self.latest {
            let range = &latest.items;
            if range.start > range.end || range.end > count {
                return Err(format!(
                    "`latest_results` places the latest results at items {}..{}, but there are {count} items",
                    range.start, range.end
                ));
            }
            if latest.step != self.history.len() {
                return Err(format!(
                    "`latest_results` names step {}, but the history's latest step is {}",
                    latest.step,
                    self.history.len()
                ));
            }
        }
        if let Some(shown) = &self.observation {
            if shown.item >= count {
                return Err(format!(
                    "`observation` places the latest observation at item {}, but there are {count} items",
                    shown.item
                ));
            }
            if self
                .latest
                .as_ref()
                .is_some_and(|latest| latest.items.contains(&shown.item))
            {
                return Err(format!(
                    "`observation` places the latest observation at item {}, among the latest results",
                    shown.item
                ));
            }
            if !is_user(&self.items[shown.item]) {
                return Err(format!(
                    "`observation` places the latest observation at item {}, which is not a user message",
                    shown.item
                ));
            }
        }
        Ok(())
    }
}
