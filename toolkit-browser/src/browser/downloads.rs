//! Files the pages download: where they are, what they are, and reading
//! their text (a PDF's extracted text with the `pdf` feature).
//!
//! A launched session has a private downloads folder (mode `0700`,
//! removed with the session); the browser saves each download there under
//! the download's id, so no name a page suggests ever becomes a path. The
//! model knows a download by the page's suggested name, cleaned up
//! (see `session/downloads.rs`), and reads it only through [`Browser::read_download`],
//! which opens nothing but the files of that folder.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::session::{Cancel, Download, DownloadState, remove_written, sniff_bytes};
use super::{Browser, Inner};
use crate::error::BrowserError;

/// The largest download [`Browser::read_download`] reads.
pub const MAX_DOWNLOAD_READ_BYTES: u64 = 16 << 20;

/// A download's text, as [`Browser::read_download`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DownloadText {
    /// The download.
    pub download: Download,
    /// Its text: the file itself for text, the extracted text of a PDF.
    pub text: String,
}

impl Browser {
    /// Every file the pages downloaded in this session (a launched one),
    /// oldest first. A connected session's browser is the user's: its
    /// downloads are left as they are, and this is empty.
    pub async fn downloads(&self) -> Vec<Download> {
        match self.download_log().await {
            Some((_, log)) => log.all(),
            None => Vec::new(),
        }
    }

    /// The session's downloads folder, for a launched session that is
    /// running. It is removed with the session: copy out what should stay.
    pub async fn downloads_dir(&self) -> Option<PathBuf> {
        self.download_log().await.map(|(dir, _)| dir)
    }

    /// The downloads the model has not been told of, or whose state
    /// changed since: downloads running are waited for, up to `patience`.
    pub(crate) async fn download_news(&self, patience: Duration) -> Vec<Download> {
        match self.download_log().await {
            Some((_, log)) => log.news(patience).await,
            None => Vec::new(),
        }
    }

    /// Cancels the downloads the session's download events found over a
    /// limit, as they come: the task that follows the events holds no
    /// session, so a task of the handle does it, taking the session as
    /// soon as the action holding it (if any) lets it go. It ends with the
    /// session (the channel closes), holding the handle only while it
    /// cancels.
    pub(super) fn cancel_over_limit(
        &self,
        mut asked: tokio::sync::mpsc::UnboundedReceiver<Cancel>,
    ) {
        let inner: std::sync::Weak<Inner> = std::sync::Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            while let Some(cancel) = asked.recv().await {
                let Some(inner) = inner.upgrade() else {
                    break;
                };
                let browser = Browser { inner };
                let Ok(mut session) = browser.session().await else {
                    remove_written(&cancel.path);
                    continue;
                };
                // A download that ended meanwhile has nothing to cancel;
                // its file is removed all the same (by its event).
                let canceled = session.cancel_download(&cancel.guid).await.is_ok();
                remove_written(&cancel.path);
                if canceled && let Some((_, log)) = session.downloads() {
                    log.canceled(&cancel.guid);
                }
            }
        });
    }

    async fn download_log(&self) -> Option<(PathBuf, std::sync::Arc<super::session::DownloadLog>)> {
        let session = self.session().await.ok()?;
        session.downloads()
    }

    /// The text of the download named `name` (as [`Download::name`] gives
    /// it): a text file as it is, a PDF's extracted text (with the `pdf`
    /// feature, on by default).
    ///
    /// Only files of the session's downloads folder are read: the file is
    /// opened, then the path the system says was opened must lie directly
    /// in that folder (links cannot lead out of it).
    ///
    /// # Errors
    ///
    /// [`BrowserError::InvalidInput`] for an unknown name (listing the
    /// known ones), a download not complete, a file larger than
    /// [`MAX_DOWNLOAD_READ_BYTES`], or one that holds no text;
    /// [`BrowserError::Refused`] when what was opened is not in the
    /// folder; [`BrowserError::Io`] when it cannot be read.
    pub async fn read_download(&self, name: &str) -> Result<DownloadText, BrowserError> {
        let Some((dir, log)) = self.download_log().await else {
            return Err(BrowserError::invalid(
                "this session keeps no downloads (it is connected to a browser it did not launch)",
            ));
        };
        let all = log.all();
        let Some(download) = all.iter().rev().find(|d| d.name == name).cloned() else {
            let names: Vec<String> = all.iter().map(|d| format!("{:?}", d.name)).collect();
            return Err(BrowserError::invalid(if names.is_empty() {
                format!("there is no download named {name:?}: nothing was downloaded yet")
            } else {
                format!(
                    "there is no download named {name:?}; the downloads are {}",
                    names.join(", ")
                )
            }));
        };
        match download.state {
            DownloadState::Completed => {}
            DownloadState::InProgress => {
                return Err(BrowserError::invalid(format!(
                    "{name:?} is still downloading ({} bytes so far); wait, then read it",
                    download.bytes
                )));
            }
            DownloadState::Canceled => {
                let why = match &download.refused {
                    Some(reason) => format!(" ({reason})"),
                    None => String::new(),
                };
                return Err(BrowserError::invalid(format!(
                    "the download of {name:?} was canceled{why}: there is no file to read"
                )));
            }
        }
        let path = download.path.clone();
        let shown = download.name.clone();
        let text = tokio::task::spawn_blocking(move || read_text(&dir, &path, &shown))
            .await
            .map_err(|e| BrowserError::Io {
                detail: format!("reading the download failed: {e}"),
            })??;
        Ok(DownloadText { download, text })
    }
}

/// Opens `path`, checks that the file opened lies directly in `dir`, and
/// reads its text.
fn read_text(dir: &Path, path: &Path, name: &str) -> Result<String, BrowserError> {
    let io = |e: std::io::Error| BrowserError::Io {
        detail: format!("the download {name:?} cannot be read: {e}"),
    };
    let folder = std::fs::canonicalize(dir).map_err(io)?;
    let file = std::fs::File::open(path).map_err(io)?;
    let opened = opened_path(&file, path).map_err(io)?;
    if opened.parent() != Some(folder.as_path()) {
        return Err(BrowserError::Refused {
            detail: format!("{name:?} is not a file of the downloads folder; nothing was read"),
        });
    }
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(BrowserError::Refused {
            detail: format!("{name:?} is not a file; nothing was read"),
        });
    }
    if meta.len() > MAX_DOWNLOAD_READ_BYTES {
        return Err(BrowserError::invalid(format!(
            "{name:?} has {} bytes, more than the {} MiB a download can be read with",
            meta.len(),
            MAX_DOWNLOAD_READ_BYTES >> 20
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_DOWNLOAD_READ_BYTES)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.starts_with(b"%PDF-") {
        return pdf_text(&bytes, name);
    }
    if bytes.contains(&0) {
        return Err(BrowserError::invalid(format!(
            "{name:?} is a binary file ({}), not text: it cannot be read",
            sniff_bytes(&bytes, name)
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        BrowserError::invalid(format!(
            "{name:?} is not UTF-8 text: it cannot be read as text"
        ))
    })
}

/// The path of the file `file` is, as the system names it
/// (`/proc/self/fd`), so that the check is on what was opened; without
/// `/proc`, the canonical path of `path` when it is that same file.
fn opened_path(file: &std::fs::File, path: &Path) -> std::io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    if let Ok(target) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
        return Ok(target);
    }
    let canonical = std::fs::canonicalize(path)?;
    let (named, opened) = (std::fs::metadata(&canonical)?, file.metadata()?);
    if (named.dev(), named.ino()) == (opened.dev(), opened.ino()) {
        Ok(canonical)
    } else {
        Err(std::io::Error::other(
            "the file changed while it was opened",
        ))
    }
}

/// The text of the PDF `bytes`, named `name` in errors: a download, or
/// the PDF a tab shows.
#[cfg(feature = "pdf")]
pub(crate) fn pdf_text(bytes: &[u8], name: &str) -> Result<String, BrowserError> {
    super::pdf::text(bytes, name)
}

#[cfg(not(feature = "pdf"))]
pub(crate) fn pdf_text(_bytes: &[u8], name: &str) -> Result<String, BrowserError> {
    Err(BrowserError::invalid(format!(
        "{name:?} is a PDF, and reading PDFs is not enabled here (the `pdf` feature)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_directly_in_the_folder_are_read() {
        let root = std::env::temp_dir().join(format!("toolkit-dl-{}", std::process::id()));
        let dir = root.join("downloads");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(root.join("outside.txt"), "outside").unwrap();
        std::fs::write(dir.join("inside"), "inside").unwrap();
        std::os::unix::fs::symlink(root.join("outside.txt"), dir.join("link")).unwrap();
        assert_eq!(read_text(&dir, &dir.join("inside"), "a").unwrap(), "inside");
        let refused = read_text(&dir, &dir.join("link"), "b").unwrap_err();
        assert!(matches!(refused, BrowserError::Refused { .. }), "{refused}");
        std::fs::write(dir.join("bin"), b"\x00\x01\x02").unwrap();
        let binary = read_text(&dir, &dir.join("bin"), "c").unwrap_err();
        assert!(binary.to_string().contains("binary"), "{binary}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
