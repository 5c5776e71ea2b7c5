//! Downloads of a launched browser: saved by the browser into a private
//! folder of the session under names of its own (the download's id), and
//! followed through the browser's download events.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex as StdMutex};

use chromiumoxide::cdp::browser_protocol::browser::{
    DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
};
use futures_util::StreamExt;
use serde_json::json;

use super::Session;
use super::devtools::RawCommand;
use crate::browser::downloads::{Download, DownloadState, file_name, sniff};
use crate::browser::lock_ignoring_poison;
use crate::error::BrowserError;
use crate::profile::ProfileDir;

/// The session's downloads folder and what was downloaded into it.
pub(crate) struct Downloads {
    folder: ProfileDir,
    log: Arc<DownloadLog>,
}

/// Every download of the session, oldest first, with what the model was
/// last told of each.
#[derive(Default)]
pub(crate) struct DownloadLog {
    entries: StdMutex<Vec<Entry>>,
    changed: tokio::sync::Notify,
}

struct Entry {
    guid: String,
    download: Download,
    /// The state the model was last told of, if any.
    reported: Option<DownloadState>,
}

impl Session {
    /// Makes the browser save every download into a new private folder
    /// (`Browser.setDownloadBehavior`, `allowAndName`: each file is named
    /// by the download's id, never by the page) and starts following the
    /// download events.
    pub(crate) async fn start_downloads(&mut self) -> Result<(), BrowserError> {
        let parent = self.config.profile_parent.clone();
        let folder = ProfileDir::private(parent.as_deref(), "toolkit-browser-downloads")?;
        let log = Arc::new(DownloadLog::default());
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
        // Both end with the connection (their channels close).
        tokio::spawn(async move {
            while let Some(event) = begin.next().await {
                record.begin(&event, &dir);
            }
        });
        let record = Arc::clone(&log);
        tokio::spawn(async move {
            while let Some(event) = progress.next().await {
                record.progress(&event);
            }
        });
        self.downloads = Some(Downloads { folder, log });
        Ok(())
    }

    /// The session's download folder and log, for a launched browser.
    pub(crate) fn downloads(&self) -> Option<(PathBuf, Arc<DownloadLog>)> {
        self.downloads
            .as_ref()
            .map(|d| (d.folder.path().to_path_buf(), Arc::clone(&d.log)))
    }
}

impl DownloadLog {
    fn begin(&self, event: &EventDownloadWillBegin, dir: &Path) {
        let mut entries = lock_ignoring_poison(&self.entries);
        if entries.iter().any(|e| e.guid == event.guid) {
            return;
        }
        let taken: Vec<&str> = entries.iter().map(|e| e.download.name.as_str()).collect();
        let name = file_name(&event.suggested_filename, &event.url, &taken);
        entries.push(Entry {
            guid: event.guid.clone(),
            download: Download {
                name,
                url: event.url.clone(),
                path: dir.join(&event.guid),
                bytes: 0,
                mime: None,
                state: DownloadState::InProgress,
            },
            reported: None,
        });
        drop(entries);
        self.changed.notify_waiters();
    }

    fn progress(&self, event: &EventDownloadProgress) {
        let mut entries = lock_ignoring_poison(&self.entries);
        if let Some(entry) = entries.iter_mut().find(|e| e.guid == event.guid) {
            // Byte counts are whole numbers sent as JSON numbers.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let received = event.received_bytes.max(0.0) as u64;
            entry.download.bytes = received;
            entry.download.state = match event.state {
                DownloadProgressState::InProgress => DownloadState::InProgress,
                DownloadProgressState::Completed => DownloadState::Completed,
                DownloadProgressState::Canceled => DownloadState::Canceled,
            };
            if entry.download.state == DownloadState::Completed {
                entry.download.mime = Some(sniff(&entry.download.path, &entry.download.name));
            }
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
