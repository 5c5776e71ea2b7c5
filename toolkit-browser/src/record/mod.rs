//! The record of a run: for every call, a screenshot of the page as the
//! call found it, with the element it acts on outlined, the call and its
//! result, written as one self-contained HTML page and an animated GIF
//! (the `record` feature).
//!
//! A [`Recorder`] sits between the host and the registry: [`Recorder::wrap`]
//! gives a registry with the same tools, each call of which is recorded, so
//! any host records a run by handing that registry to its loop
//! (`toolkit_agent::Agent`, its own `run_turn`, an MCP server).

mod animation;
mod page;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex as StdMutex};

use serde_json::Value;
use tokio::sync::Mutex;
use toolkit_core::text::cut;
use toolkit_core::{CallContext, CallOutcome, Cancellation, Origin, Registry, ToolCall, ToolDef};

use crate::browser::{Browser, lock_ignoring_poison};
use crate::page::pictures::{bounds, in_view};

/// At most this many calls are recorded; later calls of the run still run
/// and are counted at the end of the record.
pub const MAX_RECORDED_STEPS: usize = 200;

/// The GIF's frames are scaled down to at most this width, in pixels
/// (a 1280×800 viewport becomes 800×500).
pub const MAX_GIF_WIDTH: u32 = 800;

/// The HTML page stays under about this many bytes: once the screenshots
/// embedded so far reach it, later steps show their text only.
pub const MAX_HTML_BYTES: usize = 32 * 1024 * 1024;

/// The most characters of a call's arguments, and of its result, a step
/// shows.
pub const MAX_STEP_TEXT_CHARS: usize = 4000;

/// What went wrong writing a record. [`Io`](Self::Io) returns the I/O
/// error from [`source`](std::error::Error::source); the others say why in
/// their message.
#[derive(Debug)]
#[non_exhaustive]
pub enum RecordError {
    /// A tool of the registry could not be wrapped (its schema cannot be
    /// read), or the wrapped registry did not build.
    Tools(String),
    /// Writing a file of the record failed.
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A screenshot could not be decoded, or the GIF not encoded.
    Image(String),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tools(why) => write!(f, "the registry cannot be recorded: {why}"),
            // The I/O error, the source, says why.
            Self::Io { path, .. } => write!(f, "cannot write {}", path.display()),
            Self::Image(why) => write!(f, "cannot make the record's pictures: {why}"),
        }
    }
}

impl std::error::Error for RecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The files [`Recorder::finish`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecordFiles {
    /// `run.html`: every step with its screenshot, call and result.
    pub html: PathBuf,
    /// `run.gif`: one frame per step, then the page at the end.
    pub gif: PathBuf,
    /// How many calls were recorded.
    pub steps: usize,
}

/// Records the calls a run makes through a registry: for each, a
/// screenshot of the page as the call found it (the element it names by
/// `index` outlined with its number), the call (tool and arguments) and
/// its result, redacted as the browser's policy redacts results.
///
/// ```no_run
/// use toolkit_browser::{Browser, BrowserConfig, Recorder, SafetyPolicy};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let browser = Browser::launch(BrowserConfig::default()).await?;
/// let policy = SafetyPolicy::builder().allow_domains(["*.example.com"]).build()?;
/// let recorder = Recorder::new("runs/today", browser.clone());
/// let registry = recorder.wrap(toolkit_browser::registry(browser.clone(), policy).build()?)?;
/// registry.dispatch(("navigate", r#"{"url": "https://www.example.com"}"#)).await;
/// // ... the run: give `registry` to the agent loop ...
/// let files = recorder.finish().await?;
/// println!("{} and {}", files.html.display(), files.gif.display());
/// # Ok(())
/// # }
/// ```
///
/// Calls are recorded one at a time, in the order they start: the
/// recorder holds each call from its screenshot to its result, so the
/// screenshot of a call is never taken while another one acts. (The
/// browser's actions run one at a time anyway; other tools of a wrapped
/// registry lose their concurrency while recorded.)
#[derive(Clone)]
pub struct Recorder {
    shared: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    browser: Browser,
    /// Held by a call from its screenshot to its result.
    turn: Mutex<()>,
    record: StdMutex<Record>,
}

#[derive(Default)]
struct Record {
    steps: Vec<Step>,
    /// Calls past [`MAX_RECORDED_STEPS`].
    left_out: usize,
}

/// One recorded call.
struct Step {
    tool: String,
    arguments: String,
    result: String,
    is_error: bool,
    /// The page the call found (its URL, redacted).
    url: String,
    /// The screenshot before the call, or why there is none.
    picture: Result<Vec<u8>, String>,
    /// The element the call named, when it was outlined.
    outlined: Option<u32>,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("dir", &self.shared.dir)
            .field("steps", &self.steps())
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder of calls on `browser`'s pages, writing its files into
    /// `dir` (made when the record is written).
    pub fn new(dir: impl Into<PathBuf>, browser: Browser) -> Self {
        Self {
            shared: Arc::new(Shared {
                dir: dir.into(),
                browser,
                turn: Mutex::new(()),
                record: StdMutex::new(Record::default()),
            }),
        }
    }

    /// The folder the record is written to.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// How many calls have been recorded so far.
    pub fn steps(&self) -> usize {
        lock_ignoring_poison(&self.shared.record).steps.len()
    }

    /// A registry with the same tools as `registry` (names, descriptions,
    /// schemas, annotations: every provider is sent the same tool list),
    /// each of whose calls runs in `registry` and is recorded. The calls
    /// keep their cancellation; values a run gives its tools
    /// (`RunState`) and the host's log and question channels do not reach
    /// `registry`'s tools (the browser's actions use neither).
    ///
    /// # Errors
    ///
    /// [`RecordError::Tools`] when a tool's schema cannot be read or the
    /// new registry does not build (neither happens for a registry that
    /// built).
    pub fn wrap(&self, registry: Registry) -> Result<Registry, RecordError> {
        let inner = Arc::new(registry);
        let mut builder = Registry::builder();
        for def in inner.tools() {
            builder = builder.tool(self.wrapped(&inner, &def)?);
        }
        // What a call's span captures is redacted as the browser's
        // registry redacts it.
        let browser = self.shared.browser.clone();
        builder
            .redact_captured(move |text| browser.policy().redact(text).into_owned())
            .build()
            .map_err(|e| RecordError::Tools(e.to_string()))
    }

    fn wrapped(&self, inner: &Arc<Registry>, def: &ToolDef) -> Result<ToolDef, RecordError> {
        let canonical = def
            .schema()
            .canonical()
            .map_err(|e| RecordError::Tools(format!("{}: {e}", def.name())))?;
        let schema: Value = serde_json::from_str(canonical)
            .map_err(|e| RecordError::Tools(format!("{}: {e}", def.name())))?;
        let mut tool = ToolDef::builder(def.original_name())
            .wire_name(def.name())
            .description(def.description())
            .input_schema(schema)
            .param_order(def.params())
            .annotations(def.annotations())
            .needs_approval(def.needs_approval());
        if let Some(title) = def.title() {
            tool = tool.title(title);
        }
        if let Some(output) = def.output_schema() {
            tool = tool.output_schema(output.to_value());
        }
        // A tool from elsewhere stays one: its hints are believed only
        // where the host trusts it.
        if let Origin::Runtime {
            source: Some(source),
        } = def.origin()
        {
            tool = tool.source(source);
        }
        let name = def.name().to_owned();
        let inner = Arc::clone(inner);
        let recorder = self.clone();
        Ok(tool.handler(move |arguments: Value, call: CallContext| {
            let (inner, recorder) = (Arc::clone(&inner), recorder.clone());
            let call = (ToolCall::new(call.call_id(), name.clone(), arguments), call);
            async move {
                let (tool_call, context) = call;
                let outcome = recorder
                    .run(&inner, &tool_call, context.cancellation())
                    .await;
                outcome.result
            }
        }))
    }

    /// Runs `call` in `registry` and records it: for hosts that run calls
    /// themselves rather than through a [wrapped](Self::wrap) registry.
    pub async fn run(
        &self,
        registry: &Registry,
        call: &ToolCall,
        cancellation: &Cancellation,
    ) -> CallOutcome {
        let _turn = self.shared.turn.lock().await;
        if self.steps() >= MAX_RECORDED_STEPS {
            lock_ignoring_poison(&self.shared.record).left_out += 1;
            return registry.dispatch(call).cancellation(cancellation).await;
        }
        let (picture, outlined) = self.picture(call.arguments()).await;
        let url = match self.shared.browser.current_url().await {
            Some(url) => self.redact(&url),
            None => String::new(),
        };
        let outcome = registry.dispatch(call).cancellation(cancellation).await;
        let step = Step {
            tool: call.name.clone(),
            // Redacted whole, then cut: a cut through a secret could leave
            // a piece too short to be recognised.
            arguments: cut(&self.redact(&call.arguments_json()), MAX_STEP_TEXT_CHARS).into_owned(),
            result: cut(&self.redact(&outcome.result.to_text()), MAX_STEP_TEXT_CHARS).into_owned(),
            is_error: outcome.result.is_error(),
            url,
            picture,
            outlined,
        };
        lock_ignoring_poison(&self.shared.record).steps.push(step);
        outcome
    }

    /// The screenshot before a call: with the element named by `index`
    /// outlined, when it is on the page and in view.
    async fn picture(&self, arguments: &Value) -> (Result<Vec<u8>, String>, Option<u32>) {
        let browser = &self.shared.browser;
        let index = arguments
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| u32::try_from(i).ok());
        let element = match index {
            Some(index) => browser.element(index).await.ok(),
            None => None,
        };
        let (width, height) = browser.config().viewport();
        let in_view = element
            .as_ref()
            .is_some_and(|e| in_view(bounds(e), i64::from(width), i64::from(height)));
        let shot = match &element {
            Some(element) if in_view => {
                browser
                    .outlined_screenshot(std::slice::from_ref(element))
                    .await
            }
            _ => browser.screenshot().await,
        };
        let picture = shot.map_err(|e| self.redact(&e.to_string()));
        let outlined = element
            .filter(|_| in_view && picture.is_ok())
            .map(|e| e.index);
        (picture, outlined)
    }

    fn redact(&self, text: &str) -> String {
        self.shared.browser.policy().redact(text).into_owned()
    }

    /// Takes a last screenshot (the page at the end) and writes
    /// `run.html` and `run.gif` into the recorder's folder. May be called
    /// again later: each call writes the record as it is then.
    ///
    /// # Errors
    ///
    /// [`RecordError::Io`] when the folder or a file cannot be written,
    /// [`RecordError::Image`] when the GIF cannot be made.
    pub async fn finish(&self) -> Result<RecordFiles, RecordError> {
        let end = {
            let _turn = self.shared.turn.lock().await;
            self.shared
                .browser
                .screenshot()
                .await
                .map_err(|e| self.redact(&e.to_string()))
        };
        let (html, pictures) = {
            let record = lock_ignoring_poison(&self.shared.record);
            let html = page::render(&record.steps, record.left_out, &end);
            let pictures: Vec<Option<Vec<u8>>> = record
                .steps
                .iter()
                .map(|s| s.picture.as_ref().ok().cloned())
                .chain(std::iter::once(end.ok()))
                .collect();
            (html, pictures)
        };
        // Decoding, scaling and encoding a few hundred frames is seconds of
        // work: off the async workers.
        let frames = tokio::task::spawn_blocking(move || {
            let frames: Vec<Option<&[u8]>> = pictures.iter().map(Option::as_deref).collect();
            animation::encode(&frames)
        })
        .await
        .map_err(|e| RecordError::Image(format!("the GIF encoder stopped: {e}")))??;
        let dir = &self.shared.dir;
        let io = |path: &Path| {
            let path = path.to_owned();
            move |error| RecordError::Io { path, error }
        };
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io(dir))?;
        }
        let html_path = dir.join("run.html");
        write_private(&html_path, html.as_bytes()).map_err(io(&html_path))?;
        let gif_path = dir.join("run.gif");
        write_private(&gif_path, &frames).map_err(io(&gif_path))?;
        Ok(RecordFiles {
            html: html_path,
            gif: gif_path,
            steps: self.steps(),
        })
    }
}

/// A call's arguments as one line of JSON.
/// Writes `bytes` to `path`, readable by this user only: a record holds
/// screenshots and text of signed-in pages. An existing file is narrowed
/// to `0600` before it is written.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.set_len(0)?;
    file.write_all(bytes)
}
