//! What can go wrong, in words a model can act on.

use std::fmt;
use std::time::Duration;

/// The command that installs Chromium on Debian and Ubuntu, quoted by
/// [`BrowserError::NoBrowser`].
pub const INSTALL_HINT: &str =
    "apt-get update && apt-get install -y --no-install-recommends chromium";

/// Everything a browser session can fail with. The `Display` text of each
/// variant is written for the model that drives the browser: it says what
/// happened and what to do next, so a tool can hand it over as is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BrowserError {
    /// No Chromium or Chrome executable was configured or found.
    NoBrowser {
        /// Where it was looked for.
        detail: String,
    },
    /// The browser could not be started or connected to.
    Launch {
        /// The underlying reason.
        detail: String,
    },
    /// The session was closed with [`Browser::close`](crate::Browser::close).
    Closed,
    /// The browser process is gone (it crashed or was killed) or the
    /// DevTools connection broke. [`Browser::restart`](crate::Browser::restart)
    /// starts a fresh one.
    Disconnected {
        /// What was observed.
        detail: String,
    },
    /// The current tab's page crashed: the renderer process that ran it
    /// ended (out of memory, killed). The browser itself still runs.
    Crashed,
    /// An element number that does not exist (any more) on the current page.
    StaleElement {
        /// The number the caller asked for.
        index: u32,
    },
    /// The element exists but a click at it would land elsewhere, or it has
    /// no visible area.
    NotClickable {
        /// The element's number.
        index: u32,
        /// Why, in words (what covers it, or that it has no size).
        reason: String,
    },
    /// Text was to be typed into an element that does not take text.
    NotEditable {
        /// The element's number.
        index: u32,
        /// A short description of the element (`<button>`, `<input
        /// type=checkbox>`, `disabled <input>`).
        element: String,
    },
    /// No open tab has this id.
    NoSuchTab {
        /// The id asked for.
        id: String,
        /// The ids of the open tabs.
        open: Vec<String>,
    },
    /// The current tab has no earlier page to go back to.
    NoHistory,
    /// A navigation failed (DNS, connection refused, bad URL...).
    Navigation {
        /// The URL that failed to load.
        url: String,
        /// Chromium's reason (`net::ERR_CONNECTION_REFUSED`).
        detail: String,
    },
    /// Something took longer than its time limit.
    Timeout {
        /// What was being done.
        action: String,
        /// The limit.
        after: Duration,
    },
    /// An argument the caller passed makes no sense (an unknown key name,
    /// a negative number of pages...).
    InvalidInput {
        /// What is wrong and what is accepted.
        detail: String,
    },
    /// A script on the page threw, or the page answered in an unexpected
    /// shape.
    Script {
        /// The exception's message.
        detail: String,
    },
    /// The DevTools protocol returned an error.
    Protocol {
        /// The protocol's message.
        detail: String,
    },
    /// A local file operation (the temporary profile) failed.
    Io {
        /// What failed.
        detail: String,
    },
    /// A navigation was stopped by the [`SafetyPolicy`](crate::SafetyPolicy):
    /// the page was never loaded.
    Blocked {
        /// The URL that was refused (after redirects, the hop that was).
        url: String,
        /// Why (`localhost is not an allowed domain (allowed: 127.0.0.1)`).
        reason: String,
        /// What was done about it, as a sentence (`The tab went back to
        /// "Search" (https://...)`), if anything.
        then: Option<String>,
    },
    /// The tab showed the browser's error page (`chrome-error:`, after a
    /// page failed to load), where links, forms and scripts do nothing:
    /// the tab went back to the page it showed before, as it was, or, with
    /// no page before it, was replaced by a new one.
    ErrorPage {
        /// The URL that failed to load, when the browser names it.
        failed: Option<String>,
        /// What the action itself ran into, if it failed too.
        cause: Option<String>,
        /// What was done about it and what is left to do, as a sentence
        /// (`the tab went back to "Order" (https://...), as it was; nothing
        /// else was done`).
        then: String,
    },
    /// The [`SafetyPolicy`](crate::SafetyPolicy) does not allow what was
    /// asked (a file outside the files folder, an unknown secret...).
    Refused {
        /// What was refused and why, for the model.
        detail: String,
    },
}

impl BrowserError {
    /// Whether the browser itself is unusable: the session must be
    /// restarted before anything else can work.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::Closed | Self::Disconnected { .. })
    }

    pub(crate) fn protocol(detail: impl fmt::Display) -> Self {
        Self::Protocol {
            detail: detail.to_string(),
        }
    }

    pub(crate) fn script(detail: impl fmt::Display) -> Self {
        Self::Script {
            detail: detail.to_string(),
        }
    }

    pub(crate) fn invalid(detail: impl fmt::Display) -> Self {
        Self::InvalidInput {
            detail: detail.to_string(),
        }
    }
}

impl fmt::Display for BrowserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoBrowser { detail } => write!(
                f,
                "no Chromium or Chrome browser was found ({detail}); install one with \
                 `{INSTALL_HINT}`, or set the CHROME environment variable to its path"
            ),
            Self::Launch { detail } => write!(f, "the browser could not be started: {detail}"),
            Self::Closed => {
                f.write_str("the browser session has been closed; restart the browser to continue")
            }
            Self::Disconnected { detail } => write!(
                f,
                "the browser is no longer running ({detail}); the page and its element numbers \
                 are lost: restart the browser, then navigate again"
            ),
            Self::Crashed => f.write_str(
                "the page crashed (the browser process that ran it ended) and its element \
                 numbers are lost; navigate to a page to go on (the tab is replaced)",
            ),
            Self::StaleElement { index } => write!(
                f,
                "element [{index}] no longer exists on the page (the page changed since the map \
                 was made); look at the new page map and use a number from it"
            ),
            Self::NotClickable { index, reason } => write!(
                f,
                "element [{index}] cannot be clicked: {reason}; look at the new page map (close \
                 the covering dialog or scroll) and try again"
            ),
            Self::NotEditable { index, element } => write!(
                f,
                "element [{index}] is {element}, which does not take typed text; pick a text \
                 field from the page map"
            ),
            Self::NoSuchTab { id, open } => {
                write!(f, "there is no open tab with id `{id}`")?;
                if open.is_empty() {
                    f.write_str("; no tab is open")
                } else {
                    write!(f, "; the open tabs are {}", open.join(", "))
                }
            }
            Self::NoHistory => f.write_str("this tab has no previous page to go back to"),
            Self::Navigation { url, detail } => {
                write!(f, "the page {url} could not be loaded: {detail}")
            }
            Self::Timeout { action, after } => {
                write!(
                    f,
                    "{action} did not finish within {:.1}s",
                    after.as_secs_f64()
                )
            }
            Self::InvalidInput { detail } => f.write_str(detail),
            Self::Script { detail } => write!(f, "a script on the page failed: {detail}"),
            Self::Protocol { detail } => write!(f, "the browser refused the command: {detail}"),
            Self::Io { detail } => write!(f, "a local file operation failed: {detail}"),
            Self::Blocked { url, reason, then } => {
                write!(
                    f,
                    "the navigation to {url} was blocked: {reason}; the page was not loaded, \
                     so stay on the allowed sites"
                )?;
                match then {
                    Some(then) => write!(f, ". {then}."),
                    None => Ok(()),
                }
            }
            Self::ErrorPage {
                failed,
                cause,
                then,
            } => {
                match cause {
                    Some(cause) => write!(f, "{cause}; the tab then showed")?,
                    None => f.write_str("the tab showed")?,
                }
                f.write_str(" the browser's error page")?;
                if let Some(failed) = failed {
                    write!(f, " for {failed}")?;
                }
                write!(f, ", where links, forms and scripts do nothing, so {then}")
            }
            Self::Refused { detail } => f.write_str(detail),
        }
    }
}

impl std::error::Error for BrowserError {}

#[cfg(test)]
mod tests {
    use super::BrowserError;

    #[test]
    fn an_error_page_names_the_failed_url_and_what_was_done() {
        let error = BrowserError::ErrorPage {
            failed: Some("http://127.0.0.1:9/".into()),
            cause: Some("the page http://127.0.0.1:9/ could not be loaded: refused".into()),
            then: "the tab went back to \"Order\" (http://127.0.0.1/order), as it was; nothing \
                   else was done"
                .into(),
        };
        assert_eq!(
            error.to_string(),
            "the page http://127.0.0.1:9/ could not be loaded: refused; the tab then showed the \
             browser's error page for http://127.0.0.1:9/, where links, forms and scripts do \
             nothing, so the tab went back to \"Order\" (http://127.0.0.1/order), as it was; \
             nothing else was done"
        );
        let bare = BrowserError::ErrorPage {
            failed: None,
            cause: None,
            then: "it was replaced".into(),
        };
        assert!(
            bare.to_string()
                .starts_with("the tab showed the browser's error page, where"),
            "{bare}"
        );
        assert!(!bare.is_fatal());
    }
}
