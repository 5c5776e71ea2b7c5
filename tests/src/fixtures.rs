//! Inputs shared by the tests.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use toolkit_core::{
    Audio, Block, EmbeddedResource, Image, ResourceLink, ToolCallResult, ToolResult,
};

/// A valid 1×1 PNG, base64.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// The bytes of [`PNG_BASE64`].
pub fn png_bytes() -> Vec<u8> {
    STANDARD
        .decode(PNG_BASE64)
        .expect("fixture is valid base64")
}

/// [`PNG_BASE64`] as an image.
pub fn png() -> Image {
    Image::from_base64("image/png", PNG_BASE64).expect("fixture is a valid PNG")
}

/// A WAV file of eight samples of silence (8 kHz, 8-bit, mono).
pub fn wav_bytes() -> Vec<u8> {
    let mut wav = Vec::with_capacity(52);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&44u32.to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&8u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&8u32.to_le_bytes());
    wav.resize(52, 128);
    wav
}

/// [`wav_bytes`] as audio.
pub fn wav() -> Audio {
    Audio::wav(&wav_bytes()).expect("fixture is valid audio")
}

/// An embedded text resource: a short Markdown note.
pub fn text_resource() -> EmbeddedResource {
    EmbeddedResource::from_text("file:///notes/plan.md", "- ship on Friday")
        .with_mime_type("text/markdown")
        .expect("fixture has a valid MIME type")
}

/// An embedded binary resource: [`png_bytes`] under a URI.
pub fn blob_resource() -> EmbeddedResource {
    EmbeddedResource::from_bytes("file:///shots/page.png", "image/png", &png_bytes())
        .expect("fixture has a valid MIME type")
}

/// A link to a log file, with every optional field set.
pub fn resource_link() -> ResourceLink {
    ResourceLink::new("file:///logs/today.log", "today.log")
        .with_title("Today's log")
        .with_description("The server log since midnight")
        .with_mime_type("text/plain")
        .with_size(52_000)
}

/// One parallel turn of three calls: plain text; text plus a PNG with a
/// note; an error.
pub fn three_call_turn() -> Vec<ToolCallResult> {
    vec![
        ToolCallResult::new("call_1", "search", ToolResult::text("Found 2 photos.")),
        ToolCallResult::new(
            "call_2",
            "screenshot",
            ToolResult::blocks([Block::text("The page after login."), Block::image(png())])
                .with_note("Viewport 1280x720."),
        ),
        ToolCallResult::new("call_3", "fetch", ToolResult::error("404 Not Found")),
    ]
}

/// Runs `work` on a thread of its own and waits for it at most `limit`, so
/// that code which hangs fails its test instead of stopping the suite.
///
/// # Panics
///
/// When `work` has not finished within `limit` (the thread is left
/// behind), or panicked.
pub fn within<T: Send + 'static>(
    limit: std::time::Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    receiver
        .recv_timeout(limit)
        .expect("did not finish: a hang, not an error")
}

/// A fresh, empty folder under the system's temporary folder, named for
/// the test and the process, removed with all it holds when dropped, so
/// that test runs leave nothing behind (a failing test neither: drop runs
/// while a panic unwinds).
///
/// It reads as the [`Path`](std::path::Path) it is, and converts into a
/// `PathBuf` where an API takes `impl Into<PathBuf>`.
#[derive(Debug)]
pub struct ScratchDir(std::path::PathBuf);

impl ScratchDir {
    /// Creates `toolkit-{name}-{pid}`, emptying what an earlier,
    /// killed run of the same process id may have left.
    ///
    /// # Panics
    ///
    /// When the folder cannot be created.
    pub fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("toolkit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("the scratch folder can be created");
        Self(path)
    }
}

impl std::ops::Deref for ScratchDir {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for ScratchDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl From<&ScratchDir> for std::path::PathBuf {
    fn from(dir: &ScratchDir) -> Self {
        dir.0.clone()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
