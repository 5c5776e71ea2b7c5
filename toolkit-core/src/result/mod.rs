//! What a tool returns.

pub(crate) mod audio;
pub(crate) mod block;
pub(crate) mod call_result;
pub(crate) mod confined;
pub(crate) mod convert;
pub(crate) mod envelope;
pub(crate) mod exact_floats;
pub(crate) mod image;
pub(crate) mod json_form;
pub(crate) mod lazy_text;
pub(crate) mod media;
pub(crate) mod resource;

use std::collections::BTreeMap;
use std::error::Error;
use std::fmt::{self, Write as _};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::result::block::render_text;
use crate::result::lazy_text::{Computed, LazyText};
use crate::{Block, Envelope};

/// The outcome of one tool call: what the model sees, and what only the host
/// sees.
///
/// A result is built in one of three ways, which exclude each other:
/// [`text`](Self::text), [`lazy_text`](Self::lazy_text) or
/// [`blocks`](Self::blocks) ([`error`](Self::error) builds a failed result
/// with no content). The `with_*` methods then add what else the tool wants
/// to say:
///
/// | to say | method | seen by |
/// |---|---|---|
/// | the tool failed | [`error`](Self::error), [`with_error`](Self::with_error) | model, every later step |
/// | the whole task is done | [`with_done`](Self::with_done) | host |
/// | a line to keep in context | [`with_memory`](Self::with_memory) | model, every later step |
/// | show the content at the next step only | [`with_show_once`](Self::with_show_once) | model |
/// | files to show the user | [`with_attachment`](Self::with_attachment) | host |
/// | a remark for the model | [`with_note`](Self::with_note) | model |
/// | host-side data | [`with_attribute`](Self::with_attribute) | host only, never sent |
///
/// ```
/// use toolkit_core::ToolResult;
///
/// let result = ToolResult::text("[500 lines of product data]")
///     .with_show_once()
///     .with_memory("Found 50 products")
///     .with_attribute("elapsed_ms", 42);
/// assert_eq!(result.as_text().unwrap(), "[500 lines of product data]");
/// assert_eq!(result.memory(), Some("Found 50 products"));
/// assert!(!result.is_error());
/// ```
///
/// # JSON form
///
/// A result is saved and loaded with serde (a saved conversation holds its
/// results in this form) as `{"content": [blocks], "error", "cause",
/// "done": {"success"}, "memory", "show_once", "attachments", "note",
/// "attributes"}`; a field that is not set is left out, and `content` is
/// always there. Two things come back otherwise than they were:
///
/// - a [lazy text](Self::lazy_text) is computed when saved and comes back
///   as plain text (a supplier that panicked: no content, and its error);
/// - the typed error ([`error_source`](Self::error_source)) is saved as its
///   message (`cause`) and comes back as an error with that message but of
///   another type: [`downcast_error`](Self::downcast_error) to the original
///   type gives `None`. The message the model reads
///   ([`error_message`](Self::error_message)) is kept exactly.
///
/// ```
/// use toolkit_core::ToolResult;
///
/// let result = ToolResult::lazy_text(|| "computed".to_string()).with_memory("one line");
/// let json = serde_json::to_string(&result)?;
/// assert_eq!(json, r#"{"content":[{"type":"text","text":"computed"}],"memory":"one line"}"#);
/// let loaded: ToolResult = serde_json::from_str(&json)?;
/// assert_eq!(loaded.as_text().unwrap(), "computed");
/// assert_eq!(serde_json::to_string(&loaded)?, json);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct ToolResult {
    body: Body,
    completion: Completion,
    show_once: bool,
    // Most results carry none of these; keeping them behind one pointer
    // keeps the result small, and every call moves it through several
    // async layers (docs/performance.md, "Dispatch").
    extras: Option<Box<Extras>>,
}

#[derive(Clone, Debug)]
enum Body {
    // Most tools answer with one block; holding it inline saves the
    // call a heap allocation.
    One([Block; 1]),
    Blocks(Vec<Block>),
    Lazy(LazyText),
}

#[derive(Clone, Default)]
struct Extras {
    error: Option<String>,
    // The typed error the message was made from, for the host.
    cause: Option<Arc<dyn Error + Send + Sync>>,
    memory: Option<String>,
    attachments: Vec<PathBuf>,
    note: Option<String>,
    attributes: BTreeMap<String, Value>,
}

static NO_ATTRIBUTES: BTreeMap<String, Value> = BTreeMap::new();

/// Whether a tool ended the whole task, and if so how.
///
/// Success exists only inside [`Completion::Done`]: a result cannot claim
/// success without finishing the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
// Exhaustive on purpose: a tool lets the run go on or ends it, nothing else.
pub enum Completion {
    /// The agent goes on (the default).
    #[default]
    Continue,
    /// The tool finished the whole task.
    Done {
        /// Whether the task succeeded.
        success: bool,
    },
}

impl ToolResult {
    fn with_body(body: Body) -> Self {
        Self {
            body,
            completion: Completion::Continue,
            show_once: false,
            extras: None,
        }
    }

    fn extras_mut(&mut self) -> &mut Extras {
        self.extras.get_or_insert_with(Box::default)
    }

    /// A result holding one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::with_body(Body::One([Block::text(text)]))
    }

    /// A result whose text is computed by `supplier` when it is first needed,
    /// at most once even when several threads ask at once, and cached.
    ///
    /// A result whose text is never read never runs the supplier. A supplier
    /// that panics makes the result an error once it runs.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// use toolkit_core::ToolResult;
    ///
    /// let calls = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&calls);
    /// let result = ToolResult::lazy_text(move || {
    ///     counter.fetch_add(1, Ordering::SeqCst);
    ///     "expensive".to_string()
    /// });
    /// assert_eq!(calls.load(Ordering::SeqCst), 0);
    /// assert_eq!(result.as_text().unwrap(), "expensive");
    /// assert_eq!(result.clone().as_text().unwrap(), "expensive");
    /// assert_eq!(calls.load(Ordering::SeqCst), 1);
    /// ```
    pub fn lazy_text(supplier: impl FnOnce() -> String + Send + 'static) -> Self {
        Self::with_body(Body::Lazy(LazyText::new(supplier)))
    }

    /// A result holding `blocks`, in order.
    pub fn blocks(blocks: impl IntoIterator<Item = Block>) -> Self {
        Self::with_body(Body::of(blocks.into_iter().collect()))
    }

    /// A failed result with no content: `message` tells the model what went
    /// wrong.
    pub fn error(message: impl Into<String>) -> Self {
        Self::blocks([]).with_error(message)
    }

    /// A failed result made from an error: the model reads its message
    /// followed by its causes (`the ledger is unavailable: connection reset
    /// by peer`), and the host gets the error back, typed
    /// ([`downcast_error`](Self::downcast_error)).
    ///
    /// A cause whose message the chain already holds is not repeated, for
    /// errors that print their source themselves.
    ///
    /// ```
    /// use toolkit_core::ToolResult;
    ///
    /// #[derive(Debug)]
    /// struct Unavailable(std::io::Error);
    ///
    /// impl std::fmt::Display for Unavailable {
    ///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    ///         f.write_str("the ledger is unavailable")
    ///     }
    /// }
    ///
    /// impl std::error::Error for Unavailable {
    ///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
    ///         Some(&self.0)
    ///     }
    /// }
    ///
    /// let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
    /// let result = ToolResult::from_error(Unavailable(reset));
    /// assert_eq!(
    ///     result.error_message(),
    ///     Some("the ledger is unavailable: connection reset")
    /// );
    /// let typed = result.downcast_error::<Unavailable>().unwrap();
    /// assert_eq!(typed.0.kind(), std::io::ErrorKind::ConnectionReset);
    /// ```
    pub fn from_error(error: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Self {
        Self::from_boxed_error(error.into())
    }

    pub(crate) fn from_boxed_error(error: Box<dyn Error + Send + Sync + 'static>) -> Self {
        let mut result = Self::error(chain_message(&*error));
        result.extras_mut().cause = Some(Arc::from(error));
        result
    }

    /// A structured JSON result.
    pub fn json(value: impl Into<Value>) -> Self {
        Self::with_body(Body::One([Block::json(value)]))
    }

    /// A result holding what `value` serializes to, as structured JSON, or an
    /// error result if it does not serialize.
    ///
    /// Floating-point numbers keep the digits they were written with: an
    /// `f32` `3.9` is sent as `3.9`, not as the `f64` nearest to it
    /// (`3.9000000953674316`), as `serde_json::to_value` would.
    pub fn serialized<T: serde::Serialize + ?Sized>(value: &T) -> Self {
        match crate::result::exact_floats::to_value(value) {
            Ok(value) => Self::json(value),
            Err(error) => Self::error(format!(
                "the tool's output could not be serialized: {error}"
            )),
        }
    }

    /// Marks the result as failed; content already present is kept and shown
    /// after the error.
    pub fn with_error(mut self, message: impl Into<String>) -> Self {
        self.extras_mut().error = Some(message.into());
        self
    }

    /// Marks the whole task as done, successfully or not.
    pub fn with_done(mut self, success: bool) -> Self {
        self.completion = Completion::Done { success };
        self
    }

    /// A short line the agent keeps in the model's context at every later step.
    pub fn with_memory(mut self, memory: impl Into<String>) -> Self {
        self.extras_mut().memory = Some(memory.into());
        self
    }

    /// Shows the content at the next step only; later steps see the memory
    /// line instead. The full content stays in the result.
    pub fn with_show_once(mut self) -> Self {
        self.show_once = true;
        self
    }

    /// Marks the whole task as done: the earlier name of
    /// [`with_done`](Self::with_done), kept for one release.
    #[deprecated(since = "0.2.0", note = "renamed to `with_done`")]
    pub fn finish(self, success: bool) -> Self {
        self.with_done(success)
    }

    /// Shows the content at the next step only: the earlier name of
    /// [`with_show_once`](Self::with_show_once), kept for one release.
    #[deprecated(since = "0.2.0", note = "renamed to `with_show_once`")]
    pub fn show_once(self) -> Self {
        self.with_show_once()
    }

    /// Adds a file to show the user. Attachments are not sent to the model.
    pub fn with_attachment(mut self, path: impl Into<PathBuf>) -> Self {
        self.extras_mut().attachments.push(path.into());
        self
    }

    /// A note for the model, sent with the result where each provider shows
    /// it (see the emission chapter of the guide).
    ///
    /// A blank note (empty, or only whitespace) says nothing and is no note:
    /// it removes any note set before, and no provider receives it (some
    /// reject blank text).
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        let note = note.into();
        if note.trim().is_empty() {
            if let Some(extras) = &mut self.extras {
                extras.note = None;
            }
        } else {
            self.extras_mut().note = Some(note);
        }
        self
    }

    /// Host-side data (timings, raw values, ids). Attributes are never sent to
    /// the model.
    pub fn with_attribute(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.extras_mut()
            .attributes
            .insert(key.into(), value.into());
        self
    }

    /// The content blocks, in order. Computes a lazy text if it has not run.
    pub fn content(&self) -> &[Block] {
        match &self.body {
            Body::One(block) => block,
            Body::Blocks(blocks) => blocks,
            Body::Lazy(lazy) => match lazy.force() {
                Computed::Text(block) => block,
                Computed::Panicked(_) => &[],
            },
        }
    }

    /// The text of a result that holds exactly one text block.
    ///
    /// ```
    /// use toolkit_core::{Block, ToolResult};
    ///
    /// assert_eq!(ToolResult::text("hi").as_text().unwrap(), "hi");
    /// let two = ToolResult::blocks([Block::text("a"), Block::text("b")]);
    /// assert!(two.as_text().is_err());
    /// ```
    pub fn as_text(&self) -> Result<&str, NotSingleText> {
        match self.content() {
            [Block::Text { text }] => Ok(text),
            blocks => Err(NotSingleText {
                kinds: blocks.iter().map(Block::kind).collect(),
            }),
        }
    }

    /// All content as one text: text blocks as they are, JSON compact, images
    /// as `[image: image/png]`, audio as `[audio: audio/wav, 12 KiB]`, an
    /// embedded text resource as its text under `[resource: <uri>]`,
    /// separated by newlines (see [`Block`] for every kind). An error comes first,
    /// as `Error: <message>`.
    pub fn to_text(&self) -> String {
        let content = render_text(self.content());
        match self.error_message() {
            Some(error) if content.is_empty() => format!("Error: {error}"),
            Some(error) => format!("Error: {error}\n{content}"),
            None => content,
        }
    }

    /// The error message if the tool failed. A lazy text whose supplier
    /// panicked counts once it has been computed; this method does not
    /// compute it.
    pub fn error_message(&self) -> Option<&str> {
        if let Some(error) = self
            .extras
            .as_ref()
            .and_then(|extras| extras.error.as_ref())
        {
            return Some(error);
        }
        match &self.body {
            Body::Lazy(lazy) => match lazy.get() {
                Some(Computed::Panicked(message)) => Some(message.as_ref()),
                _ => None,
            },
            Body::One(_) | Body::Blocks(_) => None,
        }
    }

    /// Whether the tool failed (see [`error_message`](Self::error_message)).
    pub fn is_error(&self) -> bool {
        self.error_message().is_some()
    }

    /// The error the tool failed with, typed, when the result was made from
    /// one ([`from_error`](Self::from_error), or a tool returning `Err`).
    /// Only the host sees it; the model reads
    /// [`error_message`](Self::error_message).
    pub fn error_source(&self) -> Option<&(dyn Error + Send + Sync + 'static)> {
        self.extras.as_ref()?.cause.as_deref()
    }

    /// The error the tool failed with, if it is an `E`.
    ///
    /// ```
    /// use toolkit_core::IntoToolResult;
    ///
    /// let failed: Result<String, std::fmt::Error> = Err(std::fmt::Error);
    /// let result = failed.into_tool_result();
    /// assert!(result.downcast_error::<std::fmt::Error>().is_some());
    /// assert!(result.downcast_error::<std::io::Error>().is_none());
    /// ```
    pub fn downcast_error<E: Error + 'static>(&self) -> Option<&E> {
        self.error_source()?.downcast_ref::<E>()
    }

    /// Whether the tool finished the whole task.
    pub fn completion(&self) -> Completion {
        self.completion
    }

    /// Whether the tool finished the whole task.
    pub fn is_done(&self) -> bool {
        matches!(self.completion, Completion::Done { .. })
    }

    /// Whether the task succeeded: `None` unless the tool finished it.
    pub fn success(&self) -> Option<bool> {
        match self.completion {
            Completion::Done { success } => Some(success),
            Completion::Continue => None,
        }
    }

    /// The line kept in the model's context at every later step.
    pub fn memory(&self) -> Option<&str> {
        self.extras.as_ref()?.memory.as_deref()
    }

    /// Whether the content is shown at the next step only.
    pub fn is_show_once(&self) -> bool {
        self.show_once
    }

    /// Files to show the user.
    pub fn attachments(&self) -> &[PathBuf] {
        self.extras
            .as_ref()
            .map_or(&[], |extras| extras.attachments.as_slice())
    }

    /// The note for the model.
    pub fn note(&self) -> Option<&str> {
        self.extras.as_ref()?.note.as_deref()
    }

    /// Host-side data, never sent to the model.
    pub fn attributes(&self) -> &BTreeMap<String, Value> {
        self.extras
            .as_ref()
            .map_or(&NO_ATTRIBUTES, |extras| &extras.attributes)
    }

    /// Whether the content holds at least one image.
    pub fn has_images(&self) -> bool {
        self.content()
            .iter()
            .any(|block| matches!(block, Block::Image { .. }))
    }

    /// The result as `{"ok": bool, "output": string}`, the output cut to
    /// [`Envelope::DEFAULT_LIMIT`] characters.
    pub fn envelope(&self) -> Envelope {
        Envelope::of(self, Envelope::DEFAULT_LIMIT)
    }

    /// The result as an envelope whose output is cut to `limit` characters.
    pub fn envelope_with_limit(&self, limit: usize) -> Envelope {
        Envelope::of(self, limit)
    }

    /// The same result with its content replaced, every other field kept,
    /// the failure of a lazy text that panicked included.
    pub(crate) fn replace_content(&self, blocks: Vec<Block>) -> Self {
        let mut replaced = Self {
            body: Body::of(blocks),
            ..self.clone()
        };
        if let Body::Lazy(lazy) = &self.body
            && let Computed::Panicked(message) = lazy.force()
            && replaced.error_message().is_none()
        {
            replaced = replaced.with_error(message.as_ref());
        }
        replaced
    }
}

impl Body {
    fn of(mut blocks: Vec<Block>) -> Self {
        match blocks.pop() {
            Some(only) if blocks.is_empty() => Self::One([only]),
            Some(last) => {
                blocks.push(last);
                Self::Blocks(blocks)
            }
            None => Self::Blocks(blocks),
        }
    }
}

impl fmt::Debug for ToolResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("ToolResult");
        match &self.body {
            Body::One(block) => s.field("content", block),
            Body::Blocks(blocks) => s.field("content", blocks),
            Body::Lazy(lazy) => s.field("content", lazy),
        };
        let extras = self.extras.as_ref();
        s.field("error", &extras.and_then(|extras| extras.error.as_ref()))
            .field(
                "error_source",
                &extras.and_then(|extras| extras.cause.as_ref()),
            )
            .field("completion", &self.completion)
            .field("memory", &self.memory())
            .field("show_once", &self.show_once)
            .field("attachments", &self.attachments())
            .field("note", &self.note())
            .field("attributes", self.attributes())
            .finish()
    }
}

/// [`ToolResult::as_text`] was asked of a result that is not exactly one text
/// block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotSingleText {
    kinds: Vec<&'static str>,
}

impl NotSingleText {
    /// The kinds of the blocks the result holds, in order.
    pub fn kinds(&self) -> &[&'static str] {
        &self.kinds
    }
}

impl fmt::Display for NotSingleText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kinds.is_empty() {
            f.write_str("the result holds no content, not a single text block")
        } else {
            write!(
                f,
                "the result holds {} block(s) ({}), not a single text block; use content()",
                self.kinds.len(),
                self.kinds.join(", ")
            )
        }
    }
}

impl std::error::Error for NotSingleText {}

/// How many causes an error message names at most: a chain is a few
/// layers deep, and a longer one (or a `source` that loops) must not make
/// the message endless.
const MAX_CAUSES: usize = 16;

/// `error`'s message followed by its causes', each after `: `. A cause
/// whose message is already in the text (an error that prints its source
/// itself) is skipped.
fn chain_message(error: &(dyn Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut cause = error.source();
    for _ in 0..MAX_CAUSES {
        let Some(current) = cause else { break };
        let text = current.to_string();
        if !text.is_empty() && !message.contains(&text) {
            let _ = write!(message, ": {text}");
        }
        cause = current.source();
    }
    message
}

/// The message of a caught panic: the `&str` or `String` it was raised with.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let detail = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    format!("the tool panicked: {detail}")
}
