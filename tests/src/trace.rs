//! A `tracing` subscriber that keeps every span and event, for tests that
//! check what the crates trace: names, fields, parents.
//!
//! Written against `tracing`'s own `Subscriber` trait rather than
//! `tracing-subscriber`, so that the tests add no crate to the build.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_core::span::Current;

/// Every span and event seen, shared by the clones of one recorder.
///
/// ```
/// use toolkit_tests::trace::Recorder;
///
/// let recorder = Recorder::default();
/// tracing::subscriber::with_default(recorder.clone(), || {
///     let outer = tracing::info_span!("outer", "kind" = "a");
///     let _in = outer.enter();
///     tracing::info_span!("inner").in_scope(|| tracing::info!(n = 1, "hello"));
/// });
/// let inner = recorder.span("inner");
/// assert_eq!(recorder.parent(&inner).unwrap().name, "outer");
/// assert_eq!(inner.events[0].fields["message"], "hello");
/// ```
#[derive(Clone)]
pub struct Recorder {
    state: Arc<Mutex<State>>,
}

impl Default for Recorder {
    fn default() -> Self {
        undecided_everywhere();
        Self {
            state: Arc::default(),
        }
    }
}

/// Installs, once, a global subscriber that records nothing but answers
/// every callsite "sometimes".
///
/// `tracing` caches whether a callsite is wanted when it is first reached.
/// While at most one subscriber exists it asks only the subscriber of the
/// thread that reaches the callsite: a test running calls on a thread with
/// none would make `execute_tool` "never wanted" for the whole process, and
/// another test's recorder would then see no span. With this one always
/// registered, a callsite is never cached as unwanted, and each span asks
/// its own thread's subscriber.
fn undecided_everywhere() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Fails only if the process set a global subscriber itself, which
        // then decides for every thread without a recorder.
        let _ = tracing::subscriber::set_global_default(Undecided);
    });
}

struct Undecided;

impl Subscriber for Undecided {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::sometimes()
    }

    fn enabled(&self, _: &Metadata<'_>) -> bool {
        false
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[derive(Default)]
struct State {
    spans: Vec<SpanRecord>,
    // Events outside any span.
    loose: Vec<EventRecord>,
    // The spans each thread is in, innermost last.
    entered: HashMap<ThreadId, Vec<u64>>,
    // Each span's metadata, by id - 1: what `Span::current` answers with.
    metadata: Vec<&'static Metadata<'static>>,
}

impl State {
    /// The span this thread is in, the innermost it entered.
    fn innermost(&self) -> Option<u64> {
        self.entered
            .get(&std::thread::current().id())
            .and_then(|stack| stack.last().copied())
    }

    /// The parent of a new span or an event: the one it names, else, when
    /// it is contextual, the span the thread is in.
    fn parent(&self, named: Option<&Id>, contextual: bool) -> Option<u64> {
        match named {
            Some(parent) => Some(parent.into_u64()),
            None if contextual => self.innermost(),
            None => None,
        }
    }
}

/// One span: its static name, fields as text, parent and events.
#[derive(Debug, Clone)]
pub struct SpanRecord {
    /// The span's id (1 for the first).
    pub id: u64,
    /// Its static name.
    pub name: &'static str,
    /// Its target (the module that made it).
    pub target: String,
    /// The id of its parent, if it has one.
    pub parent: Option<u64>,
    /// Every field given a value, as text (strings as they are, other
    /// values as `Debug` writes them).
    pub fields: BTreeMap<String, String>,
    /// The events recorded inside it.
    pub events: Vec<EventRecord>,
}

impl SpanRecord {
    /// A field's value, if it was given one.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields.get(name).map(String::as_str)
    }

    /// The name an exporter shows: `otel.name` if set, else the static name.
    pub fn otel_name(&self) -> &str {
        self.field("otel.name").unwrap_or(self.name)
    }
}

/// One event: its fields as text (`message` for the text).
#[derive(Debug, Clone)]
pub struct EventRecord {
    /// Every field, as text.
    pub fields: BTreeMap<String, String>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Recorder {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every span so far, in the order they were made.
    pub fn spans(&self) -> Vec<SpanRecord> {
        self.state().spans.clone()
    }

    /// How many spans were made.
    pub fn span_count(&self) -> usize {
        self.state().spans.len()
    }

    /// The spans whose exported name (or static name) is `name`.
    pub fn spans_named(&self, name: &str) -> Vec<SpanRecord> {
        self.spans()
            .into_iter()
            .filter(|span| span.otel_name() == name || span.name == name)
            .collect()
    }

    /// The one span named `name`; panics, listing the names seen, if there
    /// is not exactly one.
    pub fn span(&self, name: &str) -> SpanRecord {
        let mut found = self.spans_named(name);
        if found.len() != 1 {
            let seen: Vec<String> = self
                .spans()
                .iter()
                .map(|s| s.otel_name().to_owned())
                .collect();
            panic!("{} spans named `{name}`; spans seen: {seen:?}", found.len());
        }
        found.remove(0)
    }

    /// The parent of `span`.
    pub fn parent(&self, span: &SpanRecord) -> Option<SpanRecord> {
        let parent = span.parent?;
        self.spans().into_iter().find(|s| s.id == parent)
    }

    /// Whether `ancestor` is `span`'s parent, or its parent's, and so on.
    pub fn is_within(&self, span: &SpanRecord, ancestor: &SpanRecord) -> bool {
        let mut current = self.parent(span);
        while let Some(parent) = current {
            if parent.id == ancestor.id {
                return true;
            }
            current = self.parent(&parent);
        }
        false
    }

    /// Every field value of every span and event, one per line: what a
    /// test searches for text that must not have been recorded.
    pub fn all_text(&self) -> String {
        let state = self.state();
        let spans = state.spans.iter().flat_map(|span| {
            span.fields
                .values()
                .chain(span.events.iter().flat_map(|event| event.fields.values()))
        });
        let loose = state.loose.iter().flat_map(|event| event.fields.values());
        spans.chain(loose).cloned().collect::<Vec<_>>().join("\n")
    }

    /// Forgets everything recorded (a benchmark clears between rounds).
    pub fn clear(&self) {
        let mut state = self.state();
        state.spans.clear();
        state.metadata.clear();
        state.loose.clear();
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let mut state = self.state();
        let id = state.spans.len() as u64 + 1;
        let parent = state.parent(attributes.parent(), attributes.is_contextual());
        let mut fields = BTreeMap::new();
        attributes.record(&mut Fields(&mut fields));
        state.metadata.push(attributes.metadata());
        state.spans.push(SpanRecord {
            id,
            name: attributes.metadata().name(),
            target: attributes.metadata().target().to_owned(),
            parent,
            fields,
            events: Vec::new(),
        });
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut state = self.state();
        if let Some(record) = state.spans.get_mut(span.into_u64() as usize - 1) {
            values.record(&mut Fields(&mut record.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut state = self.state();
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let parent = state.parent(event.parent(), event.is_contextual());
        let record = EventRecord { fields };
        match parent.and_then(|id| state.spans.get_mut(id as usize - 1)) {
            Some(span) => span.events.push(record),
            None => state.loose.push(record),
        }
    }

    // So that code inside a span finds it (`tracing::Span::current`), as
    // with any full subscriber.
    fn current_span(&self) -> Current {
        let state = self.state();
        let innermost = state.innermost();
        match innermost.and_then(|id| Some((id, *state.metadata.get(id as usize - 1)?))) {
            Some((id, metadata)) => Current::new(Id::from_u64(id), metadata),
            None => Current::none(),
        }
    }

    fn enter(&self, span: &Id) {
        self.state()
            .entered
            .entry(std::thread::current().id())
            .or_default()
            .push(span.into_u64());
    }

    fn exit(&self, span: &Id) {
        let mut state = self.state();
        if let Some(stack) = state.entered.get_mut(&std::thread::current().id())
            && let Some(at) = stack.iter().rposition(|&id| id == span.into_u64())
        {
            stack.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Recorder;

    fn reach() {
        tracing::info_span!("reached_first_elsewhere").in_scope(|| {});
    }

    /// The callsite is first reached on a thread with no subscriber while
    /// a recorder exists: its span is still recorded on the recorder's
    /// thread.
    #[test]
    fn a_callsite_first_reached_without_a_subscriber_is_still_recorded() {
        let recorder = Recorder::default();
        let dispatch = tracing::Dispatch::new(recorder.clone());
        std::thread::spawn(reach).join().unwrap();
        tracing::dispatcher::with_default(&dispatch, reach);
        assert_eq!(recorder.spans_named("reached_first_elsewhere").len(), 1);
    }

    /// Code inside a span finds it, and none outside.
    #[test]
    fn the_current_span_is_the_innermost_entered() {
        let recorder = Recorder::default();
        tracing::subscriber::with_default(recorder.clone(), || {
            assert!(tracing::Span::current().is_none());
            tracing::info_span!("outer").in_scope(|| {
                tracing::info_span!("inner").in_scope(|| {
                    let current = tracing::Span::current();
                    assert_eq!(current.metadata().unwrap().name(), "inner");
                });
                assert_eq!(tracing::Span::current().metadata().unwrap().name(), "outer");
            });
        });
    }
}
