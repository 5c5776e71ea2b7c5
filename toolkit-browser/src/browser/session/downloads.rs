//! Downloads of a launched browser: saved by the browser into a private
//! folder of the session under names of its own (the download's id),
//! followed through the browser's download events, and held to the
//! configured limits (bytes per file, files per session): one over a
//! limit is canceled and what it wrote removed.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use chromiumoxide::cdp::browser_protocol::browser::{
    DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
};
use futures_util::StreamExt;
use serde_json::json;
use tokio::sync::mpsc;

use super::Session;
use super::devtools::RawCommand;
use crate::browser::lock_ignoring_poison;
use crate::error::BrowserError;
use crate::profile::ProfileDir;

/// The session's downloads folder and what was downloaded into it.
pub(crate) struct Downloads {
    folder: ProfileDir,
    log: Arc<DownloadLog>,
    /// The downloads to cancel, until the [`Browser`](crate::Browser)
    /// takes them to act on (see [`Session::take_download_cancels`]).
    cancels: Option<mpsc::UnboundedReceiver<Cancel>>,
}

/// A download over a limit, for the browser to cancel
/// (`Browser.cancelDownload`) and its file to be removed.
pub(crate) struct Cancel {
    /// The download's id.
    pub(crate) guid: String,
    /// Its file.
    pub(crate) path: PathBuf,
}

/// Every download of the session, oldest first, with what the model was
/// last told of each.
pub(crate) struct DownloadLog {
    entries: StdMutex<Vec<Entry>>,
    changed: tokio::sync::Notify,
    /// The most bytes one download may write.
    max_bytes: u64,
    /// The most downloads the session keeps.
    max_count: u32,
    cancels: mpsc::UnboundedSender<Cancel>,
}

struct Entry {
    guid: String,
    download: Download,
    /// The state the model was last told of, if any.
    reported: Option<DownloadState>,
    /// Refused for being one download too many (not counted).
    over_count: bool,
    /// When a cancel was last asked for (see `CANCEL_AGAIN`).
    cancel_asked: Option<Instant>,
}

/// How long a refused download may go on running before its cancel is
/// asked for again: the first can fail (the browser busy, a command timed
/// out), and one left at that would let the download run to its end.
const CANCEL_AGAIN: Duration = Duration::from_secs(1);

impl Session {
    /// Makes the browser save every download into a new private folder
    /// (`Browser.setDownloadBehavior`, `allowAndName`: each file is named
    /// by the download's id, never by the page) and starts following the
    /// download events.
    pub(crate) async fn start_downloads(&mut self) -> Result<(), BrowserError> {
        let parent = self.config.profile_parent.clone();
        let folder = ProfileDir::private(parent.as_deref(), "toolkit-browser-downloads")?;
        let (log, cancels) =
            DownloadLog::new(self.config.max_download_bytes, self.config.max_downloads);
        let log = Arc::new(log);
        let begin = self.cdp.event_listener::<EventDownloadWillBegin>().await;
        let progress = self.cdp.event_listener::<EventDownloadProgress>().await;
        let (Ok(mut begin), Ok(mut progress)) = (begin, progress) else {
            return Err(BrowserError::protocol(
                "cannot follow the browser's downloads",
            ));
        };
        self.browser_exec(
            RawCommand {
                method: "Browser.setDownloadBehavior",
                params: json!({
                    "behavior": "allowAndName",
                    "downloadPath": folder.path(),
                    "eventsEnabled": true,
                }),
            },
            "setting where downloads go",
        )
        .await?;
        let dir = folder.path().to_path_buf();
        let record = Arc::clone(&log);
        // One task for both kinds of event, a beginning taken first: the
        // browser sends a download's beginning before its progress, and
        // two tasks could see a small file's completion before its
        // beginning, which would leave it in progress for good. It ends
        // with the connection (the channels close).
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    biased;
                    event = begin.next() => match event {
                        Some(event) => record.begin(&event, &dir),
                        None => break,
                    },
                    event = progress.next() => match event {
                        Some(event) => record.progress(&event),
                        None => break,
                    },
                }
            }
        });
        self.downloads = Some(Downloads {
            folder,
            log,
            cancels: Some(cancels),
        });
        Ok(())
    }

    /// The downloads to cancel for being over a limit, once: the browser
    /// handle acts on them, since the event task cannot send commands.
    pub(crate) fn take_download_cancels(&mut self) -> Option<mpsc::UnboundedReceiver<Cancel>> {
        self.downloads.as_mut()?.cancels.take()
    }

    /// Cancels the download `guid` (`Browser.cancelDownload`).
    pub(crate) async fn cancel_download(&mut self, guid: &str) -> Result<(), BrowserError> {
        self.browser_exec(
            RawCommand {
                method: "Browser.cancelDownload",
                params: json!({ "guid": guid }),
            },
            "canceling a download",
        )
        .await
        .map(drop)
    }

    /// The session's download folder and log, for a launched browser.
    pub(crate) fn downloads(&self) -> Option<(PathBuf, Arc<DownloadLog>)> {
        self.downloads
            .as_ref()
            .map(|d| (d.folder.path().to_path_buf(), Arc::clone(&d.log)))
    }
}

impl DownloadLog {
    fn new(max_bytes: u64, max_count: u32) -> (Self, mpsc::UnboundedReceiver<Cancel>) {
        let (cancels, asked) = mpsc::unbounded_channel();
        let log = Self {
            entries: StdMutex::default(),
            changed: tokio::sync::Notify::new(),
            max_bytes,
            max_count,
            cancels,
        };
        (log, asked)
    }

    fn begin(&self, event: &EventDownloadWillBegin, dir: &Path) {
        let mut entries = lock_ignoring_poison(&self.entries);
        if entries.iter().any(|e| e.guid == event.guid) {
            return;
        }
        let taken: Vec<&str> = entries.iter().map(|e| e.download.name.as_str()).collect();
        let name = file_name(&event.suggested_filename, &event.url, &taken);
        let kept = entries.iter().filter(|e| !e.over_count).count();
        let over_count = kept >= self.max_count as usize;
        let path = dir.join(&event.guid);
        // Told as canceled only once the browser says it is (see
        // `progress`), so that what the model reads is done.
        let refused = over_count.then(|| {
            let _ = self.cancels.send(Cancel {
                guid: event.guid.clone(),
                path: path.clone(),
            });
            format!(
                "the session already has {kept} downloads, the most it keeps, so it was \
                 canceled and what it wrote was removed"
            )
        });
        entries.push(Entry {
            guid: event.guid.clone(),
            download: Download {
                name,
                url: event.url.clone(),
                path,
                bytes: 0,
                mime: None,
                state: DownloadState::InProgress,
                refused,
            },
            reported: None,
            over_count,
            cancel_asked: over_count.then(Instant::now),
        });
        drop(entries);
        self.changed.notify_waiters();
    }

    fn progress(&self, event: &EventDownloadProgress) {
        let mut entries = lock_ignoring_poison(&self.entries);
        if let Some(entry) = entries.iter_mut().find(|e| e.guid == event.guid) {
            // Byte counts are whole numbers sent as JSON numbers.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let (received, total) = (
                event.received_bytes.max(0.0) as u64,
                event.total_bytes.max(0.0) as u64,
            );
            let download = &mut entry.download;
            download.bytes = received;
            let state = match event.state {
                DownloadProgressState::InProgress => DownloadState::InProgress,
                DownloadProgressState::Completed => DownloadState::Completed,
                DownloadProgressState::Canceled => DownloadState::Canceled,
            };
            // What was really written, once there is a whole file.
            let written = match state {
                DownloadState::Completed => {
                    std::fs::metadata(&download.path).map_or(0, |m| m.len())
                }
                _ => 0,
            };
            let over = received.max(total).max(written) > self.max_bytes;
            if over && download.refused.is_none() {
                download.refused = Some(format!(
                    "it passed the limit of {} for one download, so it was canceled and what \
                     it wrote was removed",
                    limit_text(self.max_bytes)
                ));
            }
            let again = entry
                .cancel_asked
                .is_none_or(|asked| asked.elapsed() >= CANCEL_AGAIN);
            if download.refused.is_some() && state == DownloadState::InProgress && again {
                entry.cancel_asked = Some(Instant::now());
                let _ = self.cancels.send(Cancel {
                    guid: entry.guid.clone(),
                    path: download.path.clone(),
                });
            }
            if download.refused.is_some() {
                // Refused: running until the browser has canceled it (or
                // completed it before the cancel reached it), then
                // canceled, with what it wrote removed.
                if state != DownloadState::InProgress {
                    remove_written(&download.path);
                    download.state = DownloadState::Canceled;
                }
            } else {
                download.state = state;
                if state == DownloadState::Completed {
                    download.mime = Some(sniff(&download.path, &download.name));
                }
            }
        }
        drop(entries);
        self.changed.notify_waiters();
    }

    /// Marks the refused download `guid` canceled once the browser has
    /// canceled it and what it wrote is removed, for a browser that sends
    /// no event for it afterwards.
    pub(crate) fn canceled(&self, guid: &str) {
        let mut entries = lock_ignoring_poison(&self.entries);
        if let Some(entry) = entries
            .iter_mut()
            .find(|e| e.guid == guid && e.download.refused.is_some())
        {
            entry.download.state = DownloadState::Canceled;
        }
        drop(entries);
        self.changed.notify_waiters();
    }

    /// Every download, oldest first.
    pub(crate) fn all(&self) -> Vec<Download> {
        lock_ignoring_poison(&self.entries)
            .iter()
            .map(|e| e.download.clone())
            .collect()
    }

    /// Waits (up to `patience`) for the downloads the model has not been
    /// told of to finish, then returns those whose state it has not been
    /// told yet, marking them told.
    pub(crate) async fn news(&self, patience: std::time::Duration) -> Vec<Download> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let waiting = lock_ignoring_poison(&self.entries)
                .iter()
                .any(|e| e.reported.is_none() && e.download.state == DownloadState::InProgress);
            if !waiting || tokio::time::timeout_at(deadline, changed).await.is_err() {
                break;
            }
        }
        let mut entries = lock_ignoring_poison(&self.entries);
        entries
            .iter_mut()
            .filter(|e| e.reported != Some(e.download.state))
            .map(|e| {
                e.reported = Some(e.download.state);
                e.download.clone()
            })
            .collect()
    }
}

/// The longest file name shown for a download, in characters.
const MAX_NAME_CHARS: usize = 100;

/// A file a page downloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Download {
    /// The name the page suggested, cleaned up (no folders, no control
    /// characters, at most 100 characters) and unique in the session: the
    /// name the model reads it by.
    pub name: String,
    /// The address it was downloaded from.
    pub url: String,
    /// Where the file is (in the session's downloads folder, named by the
    /// download's id).
    pub path: PathBuf,
    /// The bytes received so far (all of them, once completed).
    pub bytes: u64,
    /// The file's type, told from its first bytes and then its name once
    /// it is complete (the browser's download events carry no type).
    pub mime: Option<String>,
    /// Whether it is still running, complete or canceled.
    pub state: DownloadState,
    /// Why the session canceled it, when it did: it passed the size limit
    /// ([`BrowserConfigBuilder::max_download_bytes`](crate::BrowserConfigBuilder::max_download_bytes);
    /// what it wrote is removed) or was one download too many
    /// ([`BrowserConfigBuilder::max_downloads`](crate::BrowserConfigBuilder::max_downloads)).
    /// Its state is then [`DownloadState::Canceled`].
    pub refused: Option<String>,
}

/// Removes what a download wrote: its file, or the partial file the
/// browser writes before renaming it (`<id>.crdownload`).
pub(crate) fn remove_written(path: &Path) {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".crdownload");
    for file in [path, Path::new(&partial)] {
        let _ = std::fs::remove_file(file);
    }
}

/// A byte limit as the model reads it: whole MiB or KiB when it is one.
fn limit_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// How far a download got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DownloadState {
    /// Still receiving.
    InProgress,
    /// Saved whole.
    Completed,
    /// Canceled by the browser or the page, or by the session for being
    /// over a limit ([`Download::refused`] says which).
    Canceled,
}

/// The name a download is shown by: the last part of what the page
/// suggested (or of the URL's path), without control characters, leading
/// dots or spaces, at most 100 characters (the extension kept), and not
/// one of `taken` (a second `report.pdf` is `report (2).pdf`).
fn file_name(suggested: &str, url: &str, taken: &[&str]) -> String {
    let from_url = url::Url::parse(url)
        .ok()
        .and_then(|u| u.path_segments()?.next_back().map(str::to_owned))
        .unwrap_or_default();
    let raw = if suggested.trim().is_empty() {
        from_url.as_str()
    } else {
        suggested
    };
    let last = raw.rsplit(['/', '\\']).next().unwrap_or_default();
    let clean: String = last
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .trim_start_matches(['.', ' '])
        .to_owned();
    let clean = if clean.is_empty() {
        "download".to_owned()
    } else {
        clean
    };
    let (stem, ext) = match clean.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && ext.chars().count() <= 10 => {
            (stem.to_owned(), format!(".{ext}"))
        }
        _ => (clean.clone(), String::new()),
    };
    let room = MAX_NAME_CHARS.saturating_sub(ext.chars().count()).max(1);
    let stem: String = stem.chars().take(room).collect();
    let mut name = format!("{stem}{ext}");
    let mut n = 2;
    while taken.contains(&name.as_str()) {
        name = format!("{stem} ({n}){ext}");
        n += 1;
    }
    name
}

/// The type of the file at `path`, from its first bytes, then its name.
fn sniff(path: &Path, name: &str) -> String {
    let mut head = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(8192).read_to_end(&mut head);
    }
    sniff_bytes(&head, name)
}

pub(crate) fn sniff_bytes(head: &[u8], name: &str) -> String {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"%PDF-", "application/pdf"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"GIF8", "image/gif"),
        (b"PK\x03\x04", "application/zip"),
        (b"\x1f\x8b", "application/gzip"),
    ];
    if let Some((_, mime)) = MAGIC.iter().find(|(magic, _)| head.starts_with(magic)) {
        return (*mime).to_owned();
    }
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let text = !head.contains(&0)
        && match std::str::from_utf8(head) {
            Ok(_) => true,
            // The sample may end inside a character.
            Err(e) => e.error_len().is_none(),
        };
    let by_name = match ext.as_str() {
        "csv" => "text/csv",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "xml" => "application/xml",
        "md" => "text/markdown",
        "txt" | "log" => "text/plain",
        _ => "",
    };
    match (text, by_name) {
        (true, "") => "text/plain".to_owned(),
        (true, mime) => mime.to_owned(),
        (false, _) => "application/octet-stream".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cleaned_and_unique() {
        let name = |s: &str| file_name(s, "http://h/files/x.bin", &[]);
        assert_eq!(name("../../etc/passwd"), "passwd");
        assert_eq!(name("..\\win\\evil.txt"), "evil.txt");
        assert_eq!(name(" .hidden"), "hidden");
        assert_eq!(name("a\u{0}b\nc.txt"), "abc.txt");
        assert_eq!(name(""), "x.bin");
        assert_eq!(file_name("..", "http://h/", &[]), "download");
        let long = format!("{}.pdf", "n".repeat(300));
        let cut = name(&long);
        assert_eq!(cut.chars().count(), MAX_NAME_CHARS);
        assert!(cut.ends_with(".pdf"));
        assert_eq!(
            file_name("report.pdf", "", &["report.pdf", "report (2).pdf"]),
            "report (3).pdf"
        );
    }

    #[test]
    fn limits_are_shown_in_round_units() {
        assert_eq!(limit_text(256 << 20), "256 MiB");
        assert_eq!(limit_text(64 << 10), "64 KiB");
        assert_eq!(limit_text(1000), "1000 bytes");
    }

    #[test]
    fn types_come_from_content_then_name() {
        assert_eq!(sniff_bytes(b"%PDF-1.4", "a.txt"), "application/pdf");
        assert_eq!(sniff_bytes(b"a,b\n1,2", "t.csv"), "text/csv");
        assert_eq!(sniff_bytes("héllo".as_bytes(), "notes"), "text/plain");
        assert_eq!(sniff_bytes(b"\0\x01", "x.txt"), "application/octet-stream");
    }
}
