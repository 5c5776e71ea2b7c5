//! Each launched session's profile folder (a private temporary one, or a
//! persistent one the host names), and the processes that use it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::error::BrowserError;

/// A profile folder: a fresh, private one removed when dropped, or a
/// persistent one of the host's, of which only Chromium's lock folder is
/// removed.
///
/// A fresh folder per session is what lets two sessions run side by side:
/// Chromium locks its profile, and chromiumoxide's default
/// (`$TMPDIR/chromiumoxide-runner`) is shared by every process.
#[derive(Debug)]
pub(crate) struct ProfileDir {
    path: PathBuf,
    /// A persistent profile: kept when the session ends.
    keep: bool,
}

/// The preferences every profile starts with: no preloading ("Preload
/// pages" off). Speculation rules (prefetch, prerender) and link preloading
/// fetch pages nobody asked for, in the browser process, where the
/// navigation guard's interception never sees them: the page could reach a
/// disallowed site without any action. Off, Chromium loads nothing
/// speculatively.
const PREFERENCES: &str = r#"{"net":{"network_prediction_options":2}}"#;

impl ProfileDir {
    fn write_preferences(&self) -> Result<(), BrowserError> {
        let default = self.path.join("Default");
        std::fs::create_dir_all(&default)
            .and_then(|()| std::fs::write(default.join("Preferences"), PREFERENCES))
            .map_err(|e| BrowserError::Io {
                detail: format!("cannot write the profile's preferences: {e}"),
            })
    }

    /// The persistent profile folder `dir`, created (readable by this user
    /// only) when missing, with the session's preferences merged into the
    /// ones Chromium kept there: a profile of an earlier run must not load
    /// pages ahead of time either.
    pub(crate) fn persistent(dir: &Path) -> Result<Self, BrowserError> {
        use std::os::unix::fs::DirBuilderExt;
        let failed = |e: std::io::Error| BrowserError::Io {
            detail: format!("cannot prepare the profile folder {}: {e}", dir.display()),
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir.join("Default"))
            .map_err(failed)?;
        let file = dir.join("Default").join("Preferences");
        let mut prefs: serde_json::Value = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| serde_json::json!({}));
        let ours: serde_json::Value =
            serde_json::from_str(PREFERENCES).unwrap_or_else(|_| serde_json::json!({}));
        merge(&mut prefs, &ours);
        let text = serde_json::to_vec(&prefs).map_err(|e| failed(std::io::Error::other(e)))?;
        std::fs::write(&file, text).map_err(failed)?;
        Ok(Self {
            path: dir.to_path_buf(),
            keep: true,
        })
    }

    /// Creates a profile folder (see [`private`](Self::private)) with the
    /// session's preferences in it.
    pub(crate) fn create(parent: Option<&Path>) -> Result<Self, BrowserError> {
        let profile = Self::private(parent, "toolkit-browser")?;
        profile.write_preferences()?;
        Ok(profile)
    }

    /// Creates `<prefix>-<pid>-<n>-<nanos>` under `parent` (the system's
    /// temporary folder by default), readable by this user only.
    pub(crate) fn private(parent: Option<&Path>, prefix: &str) -> Result<Self, BrowserError> {
        use std::os::unix::fs::DirBuilderExt;
        static COUNTER: AtomicU64 = AtomicU64::new(0);

        let parent = parent.map_or_else(std::env::temp_dir, Path::to_path_buf);
        std::fs::create_dir_all(&parent).map_err(|e| BrowserError::Io {
            detail: format!("cannot create {}: {e}", parent.display()),
        })?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        // A few attempts: `create` (not `create_dir_all`) fails on an
        // existing folder, so a name can never be shared by two sessions.
        let mut last_error = None;
        for _ in 0..8 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = parent.join(format!("{prefix}-{}-{n}-{nanos:09}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Self { path, keep: false }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(e) => {
                    return Err(BrowserError::Io {
                        detail: format!("cannot create {}: {e}", path.display()),
                    });
                }
            }
        }
        Err(BrowserError::Io {
            detail: format!(
                "cannot create a profile folder in {}: {}",
                parent.display(),
                last_error.map_or_else(String::new, |e| e.to_string())
            ),
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the folder is kept when the session ends.
    pub(crate) fn keeps(&self) -> bool {
        self.keep
    }

    /// Removes what an ended session leaves of a profile: the whole folder
    /// (see [`remove_path`](Self::remove_path)), or, for a persistent one
    /// (`keep`), only the folder of its singleton socket.
    pub(crate) fn release(path: &Path, keep: bool, patience: Duration) -> Result<(), BrowserError> {
        if keep {
            remove_singleton_folder(path);
            Ok(())
        } else {
            Self::remove_path(path, patience)
        }
    }

    /// Removes the folder, retrying for a short while: Chromium's helper
    /// processes can still be writing (crash reports, caches) for a few
    /// milliseconds after the main process has exited.
    pub(crate) fn remove_path(path: &Path, patience: Duration) -> Result<(), BrowserError> {
        remove_singleton_folder(path);
        let deadline = Instant::now() + patience;
        loop {
            match std::fs::remove_dir_all(path) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(BrowserError::Io {
                        detail: format!("cannot remove {}: {e}", path.display()),
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

/// Removes the folder that holds a profile's singleton socket, which
/// Chromium makes beside the profile (`$TMPDIR/org.chromium.Chromium.XXXXXX`,
/// linked from the profile's `SingletonSocket`) and removes itself only on
/// a graceful exit: every killed or crashed browser would leave one behind.
///
/// Only a real folder (not a link), owned by the profile's owner and
/// named as Chromium names it, is touched: the singleton's two entries by
/// name, then the folder only if that left it empty. After a graceful exit
/// Chromium has removed the folder itself, and another user may have put
/// something of that name in the shared temporary folder since.
fn remove_singleton_folder(profile: &Path) {
    use std::os::unix::fs::MetadataExt;

    let Ok(socket) = std::fs::read_link(profile.join("SingletonSocket")) else {
        return;
    };
    let Some(folder) = socket.parent().filter(|folder| folder.is_absolute()) else {
        return;
    };
    let chromium_named = folder
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| name.starts_with("org.chromium.") || name.starts_with("com.google."));
    let (Ok(owner), Ok(found)) = (
        std::fs::symlink_metadata(profile),
        std::fs::symlink_metadata(folder),
    ) else {
        return;
    };
    if !chromium_named || !found.is_dir() || found.uid() != owner.uid() {
        return;
    }
    for entry in ["SingletonSocket", "SingletonCookie"] {
        let _ = std::fs::remove_file(folder.join(entry));
    }
    let _ = std::fs::remove_dir(folder);
}

impl Drop for ProfileDir {
    fn drop(&mut self) {
        // Best effort: a graceful close has already removed it; after a
        // kill, the helpers die within milliseconds.
        let _ = Self::release(&self.path, self.keep, Duration::from_millis(200));
    }
}

/// Sets every value of `ours` in `into`, objects merged key by key.
fn merge(into: &mut serde_json::Value, ours: &serde_json::Value) {
    match (into, ours) {
        (serde_json::Value::Object(into), serde_json::Value::Object(ours)) => {
            for (key, value) in ours {
                let slot = into.entry(key.clone()).or_insert(serde_json::Value::Null);
                if slot.is_object() && value.is_object() {
                    merge(slot, value);
                } else {
                    *slot = value.clone();
                }
            }
        }
        (into, ours) => *into = ours.clone(),
    }
}

/// The ids of the live (non-zombie) processes whose command line mentions
/// `needle`. Chromium passes `--user-data-dir` to its helper processes, so
/// the profile path finds every process of one session. Linux only; empty
/// elsewhere.
pub fn processes_mentioning(needle: &Path) -> Vec<u32> {
    let needle = needle.as_os_str().as_encoded_bytes();
    if needle.is_empty() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    let numbered = entries.flatten().filter_map(|entry| {
        let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
        Some((pid, entry))
    });
    for (pid, entry) in numbered {
        // A zombie keeps its /proc entry but has an empty command line, so
        // it never matches: only processes that still run count.
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if cmdline.windows(needle.len()).any(|w| w == needle) && !is_zombie(pid) {
            pids.push(pid);
        }
    }
    pids
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // The state follows the parenthesised command name, which may
            // itself contain spaces or parentheses.
            let rest = &stat[stat.rfind(')')? + 1..];
            rest.split_whitespace().next().map(|s| s == "Z" || s == "X")
        })
        .unwrap_or(true)
}
