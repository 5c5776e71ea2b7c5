//! Downloads: what every action says about the files the page downloaded
//! meanwhile, and `read_download`.

use std::time::Duration;

use toolkit_core::{ToolResult, tool};

use super::content::{page_of, part_text};
use super::{EXTRACT_PAGE_CHARS, Reply, act};
use crate::browser::Browser;
use crate::browser::{Download, DownloadState};

/// How long an action waits for a download it started to finish before
/// replying (a larger file is reported as still running, and its end in a
/// later reply).
const DOWNLOAD_PATIENCE: Duration = Duration::from_secs(10);

/// The reply, with a sentence about each download that began, ended or
/// was canceled since the last reply.
pub(crate) async fn report(browser: &Browser, reply: Reply) -> Reply {
    let news = browser.download_news(DOWNLOAD_PATIENCE).await;
    if news.is_empty() {
        return reply;
    }
    let lines: Vec<String> = news.iter().map(line).collect();
    let sentence = format!("Downloads: {}.", lines.join("; "));
    let reply = reply.say(sentence);
    let done: Vec<String> = news
        .iter()
        .filter(|d| d.state == DownloadState::Completed)
        .map(|d| format!("{:?}", d.name))
        .collect();
    if done.is_empty() {
        reply
    } else {
        reply.say(format!(
            "Read a download's text with read_download (name {}).",
            done.join(" or ")
        ))
    }
}

/// How the model is told of one download.
fn line(download: &Download) -> String {
    let mime = download.mime.as_deref().unwrap_or("unknown type");
    match download.state {
        DownloadState::Completed => format!(
            "{:?} was saved ({}, {mime})",
            download.name,
            size(download.bytes)
        ),
        DownloadState::InProgress => format!(
            "{:?} is still downloading ({} so far)",
            download.name,
            size(download.bytes)
        ),
        DownloadState::Canceled => match &download.refused {
            Some(reason) => format!("the download of {:?} was stopped: {reason}", download.name),
            None => format!("the download of {:?} was canceled", download.name),
        },
    }
}

fn size(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)] // shown with one decimal
    let b = bytes as f64;
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", b / 1024.0),
        _ => format!("{:.1} MiB", b / 1_048_576.0),
    }
}

/// Read a file the page downloaded, by the name the download was reported
/// with: a text file's text, or the text of a PDF, 10000 characters at a
/// time. A longer text says where the next part starts.
#[tool(catalogue = false)]
pub async fn read_download(
    /// The download's name, as the reply that reported it gave it (such
    /// as "report.pdf").
    name: String,
    /// The character offset to start reading at (default 0), as the
    /// previous part gave it.
    start: Option<u32>,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |_| {
        let read = browser.read_download(&name).await?;
        let text = read.text.trim_end();
        let start = start.unwrap_or(0) as usize;
        let part = page_of(text, start, EXTRACT_PAGE_CHARS);
        let shown = format!("{:?}", read.download.name);
        if part.total == 0 {
            return Ok(Reply::text(format!("The download {shown} holds no text."))
                .memory(format!("Read the download {shown}: no text")));
        }
        let body = part_text(
            &part,
            start,
            &format!("the download {shown}"),
            "read_download",
        )?;
        Ok(Reply::text(body).with_show_once().memory(format!(
            "Read characters {start}-{} of {} of the download {shown}",
            part.end, part.total
        )))
    })
    .await
}
