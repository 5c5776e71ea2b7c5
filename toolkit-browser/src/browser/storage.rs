//! The browser's storage state, saved to a file and loaded back: every
//! cookie and the localStorage and sessionStorage of each open tab's
//! origin, so that a later session starts signed in.
//!
//! The file is the host's: it is written only by [`Browser::save_storage_state`]
//! (created readable by its owner only, `0600`, and moved into place whole)
//! and read by [`Browser::load_storage_state`]; no action of the model
//! touches it. A value that holds one of the policy's secrets is written
//! with the secret as its placeholder (`<secret>name</secret>`) and marked
//! `"redacted": true`; loading puts the policy's value back, on the sites
//! the policy allows that secret on.

use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Browser;
use super::session::{OriginItems, web_origin};
use crate::error::BrowserError;
use crate::safety::SafetyPolicy;

/// The version of the file format this crate writes and reads.
const VERSION: u32 = 1;

/// The largest storage state file read (a browser's cookies and storage
/// are kilobytes; a larger file is no state this crate wrote).
const MAX_STATE_BYTES: u64 = 64 << 20;

/// The file's contents.
#[derive(Serialize, Deserialize)]
struct StorageState {
    version: u32,
    cookies: Vec<StoredCookie>,
    origins: Vec<StoredOrigin>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredCookie {
    name: String,
    value: String,
    /// As the browser gives it: a leading dot for a cookie of the domain
    /// and its subdomains, none for a cookie of that host only.
    domain: String,
    path: String,
    /// Seconds since the epoch; absent for a cookie of the browsing
    /// session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires: Option<f64>,
    #[serde(default)]
    http_only: bool,
    #[serde(default)]
    secure: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    same_site: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    redacted: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StoredOrigin {
    origin: String,
    #[serde(default)]
    local_storage: Vec<StoredItem>,
    #[serde(default)]
    session_storage: Vec<StoredItem>,
}

#[derive(Serialize, Deserialize)]
struct StoredItem {
    name: String,
    value: String,
    #[serde(default, skip_serializing_if = "is_false")]
    redacted: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's signature
fn is_false(b: &bool) -> bool {
    !*b
}

impl Browser {
    /// Saves the browser's storage state to `path`: every cookie (httpOnly
    /// ones too), and the localStorage and sessionStorage of the origin of
    /// each open tab's page. Load it into another session with
    /// [`load_storage_state`](Self::load_storage_state).
    ///
    /// The file is created readable and writable by its owner only
    /// (`0600`; an existing file is replaced, never given wider
    /// permissions than it had) and moved into place whole, so a reader
    /// never sees half a file. Values holding one of the
    /// [policy](Self::set_policy)'s secrets are written with the secret as
    /// its placeholder. A cookie or item whose placeholder would not load
    /// back as the same value (it holds a piece of a secret, or an
    /// encoded copy, or a secret the policy keeps off its site) is left
    /// out rather than written in clear or changed.
    ///
    /// Storage of origins no tab shows (a site visited earlier, a frame
    /// from another site) is not saved: the browser gives it only to a
    /// document of its origin.
    ///
    /// # Errors
    ///
    /// [`BrowserError::Io`] when the file cannot be written, the errors of
    /// a dead browser otherwise.
    pub async fn save_storage_state(&self, path: impl AsRef<Path>) -> Result<(), BrowserError> {
        let _lock = self.action_lock().await;
        let policy = self.policy();
        let (cookies, origins) = {
            let mut session = self.live().await?;
            (session.all_cookies().await?, session.tab_storage().await?)
        };
        let state = StorageState {
            version: VERSION,
            cookies: cookies
                .iter()
                .filter_map(|c| stored_cookie(c, &policy))
                .collect(),
            origins: origins
                .into_iter()
                .map(|o| StoredOrigin {
                    local_storage: stored_items(o.local, &policy, &o.origin),
                    session_storage: stored_items(o.session, &policy, &o.origin),
                    origin: o.origin,
                })
                .collect(),
        };
        let text = serde_json::to_vec_pretty(&state).map_err(|e| BrowserError::Io {
            detail: format!("cannot write the storage state: {e}"),
        })?;
        let path = path.as_ref().to_path_buf();
        tokio::task::spawn_blocking(move || write_private(&path, &text))
            .await
            .map_err(|e| BrowserError::Io {
                detail: format!("writing the storage state failed: {e}"),
            })?
    }

    /// Loads a storage state saved by
    /// [`save_storage_state`](Self::save_storage_state): its cookies into
    /// the browser, each origin's localStorage into the profile, and its
    /// sessionStorage into the current tab. Secrets written as
    /// placeholders get the [policy](Self::set_policy)'s values back, so
    /// set the policy first.
    ///
    /// localStorage can only be written from a document of its origin: the
    /// current tab visits each origin, every request answered by the
    /// browser itself with an empty page (nothing reaches the site), and
    /// ends on `about:blank` with no history. Load the state right after
    /// launching, before the agent's first step.
    ///
    /// # Errors
    ///
    /// [`BrowserError::Io`] when the file cannot be read,
    /// [`BrowserError::InvalidInput`] when it is no storage state,
    /// [`BrowserError::Refused`] when it names a secret the policy does
    /// not have, puts one on a site the policy does not allow it on, or
    /// holds storage of an origin the policy does not let the browser
    /// open (nothing is loaded then), the errors of a dead browser
    /// otherwise.
    pub async fn load_storage_state(&self, path: impl AsRef<Path>) -> Result<(), BrowserError> {
        let path = path.as_ref().to_path_buf();
        let text = tokio::task::spawn_blocking(move || read_bounded(&path))
            .await
            .map_err(|e| BrowserError::Io {
                detail: format!("reading the storage state failed: {e}"),
            })??;
        let state: StorageState = serde_json::from_slice(&text)
            .map_err(|e| BrowserError::invalid(format!("the file is not a storage state: {e}")))?;
        if state.version != VERSION {
            return Err(BrowserError::invalid(format!(
                "the storage state is of version {}; this crate reads version {VERSION}",
                state.version
            )));
        }
        let _lock = self.action_lock().await;
        let policy = self.policy();
        // Every value is resolved before anything is loaded: a state that
        // cannot be loaded whole is not loaded at all.
        let cookies = state
            .cookies
            .iter()
            .map(|c| cookie_param(c, &policy))
            .collect::<Result<Vec<_>, _>>()?;
        let origins = state
            .origins
            .iter()
            .map(|o| origin_items(o, &policy))
            .collect::<Result<Vec<_>, _>>()?;
        let mut session = self.live().await?;
        session.set_cookies(cookies).await?;
        session.seed_storage(&origins).await
    }
}

/// `text` as it may be written: redacted, and whether it had to be;
/// `None` when the redacted text would not load back as `text` for a
/// page at `url` (a piece of a secret, an encoded or re-cased copy, a
/// secret the policy keeps off that site), since a restored value must
/// be the value that was saved.
fn protect(text: &str, policy: &SafetyPolicy, url: &str) -> Option<(String, bool)> {
    let redacted = policy.redact(text);
    if redacted == text {
        return Some((text.to_owned(), false));
    }
    let restored = policy.resolve_secrets(&redacted, url).ok()?;
    (restored == text).then(|| (redacted.into_owned(), true))
}

/// `text` as it is loaded: placeholders of a redacted value resolved for
/// a page at `url`.
fn restore(
    text: &str,
    redacted: bool,
    url: &str,
    policy: &SafetyPolicy,
) -> Result<String, BrowserError> {
    if !redacted {
        return Ok(text.to_owned());
    }
    policy.resolve_secrets(text, url).map_err(|e| match e {
        BrowserError::Refused { detail } => BrowserError::Refused {
            detail: format!("the storage state cannot be loaded for {url}: {detail}"),
        },
        other => other,
    })
}

/// A cookie as it is written; `None` for one left out (see [`protect`]).
fn stored_cookie(cookie: &Value, policy: &SafetyPolicy) -> Option<StoredCookie> {
    let text = |key: &str| cookie[key].as_str().unwrap_or_default().to_owned();
    let secure = cookie["secure"].as_bool().unwrap_or(false);
    let url = format!(
        "{}://{}{}",
        if secure { "https" } else { "http" },
        text("domain").trim_start_matches('.'),
        text("path")
    );
    let (name, name_redacted) = protect(&text("name"), policy, &url)?;
    let (value, value_redacted) = protect(&text("value"), policy, &url)?;
    let session = cookie["session"].as_bool().unwrap_or(false);
    Some(StoredCookie {
        name,
        value,
        domain: text("domain"),
        path: text("path"),
        expires: cookie["expires"].as_f64().filter(|_| !session),
        http_only: cookie["httpOnly"].as_bool().unwrap_or(false),
        secure: cookie["secure"].as_bool().unwrap_or(false),
        same_site: cookie["sameSite"].as_str().map(str::to_owned),
        redacted: name_redacted || value_redacted,
    })
}

/// An origin's items as they are written, those left out dropped (see
/// [`protect`]).
fn stored_items(
    items: Vec<(String, String)>,
    policy: &SafetyPolicy,
    origin: &str,
) -> Vec<StoredItem> {
    items
        .into_iter()
        .filter_map(|(name, value)| {
            let (name, name_redacted) = protect(&name, policy, origin)?;
            let (value, value_redacted) = protect(&value, policy, origin)?;
            Some(StoredItem {
                name,
                value,
                redacted: name_redacted || value_redacted,
            })
        })
        .collect()
}

/// The protocol's `CookieParam` for a stored cookie. A host-only cookie
/// (no leading dot) is set through its URL, which keeps it host-only; a
/// domain cookie through its domain.
fn cookie_param(cookie: &StoredCookie, policy: &SafetyPolicy) -> Result<Value, BrowserError> {
    let host = cookie.domain.trim_start_matches('.');
    if host.is_empty() {
        return Err(BrowserError::invalid(format!(
            "the cookie {:?} of the storage state has no domain",
            cookie.name
        )));
    }
    let scheme = if cookie.secure { "https" } else { "http" };
    let path = if cookie.path.starts_with('/') {
        cookie.path.as_str()
    } else {
        "/"
    };
    let url = format!("{scheme}://{host}{path}");
    if cookie.redacted && cookie.domain.starts_with('.') {
        // A domain cookie goes to every subdomain too: its secret must be
        // allowed there as well, not only on the domain itself.
        let below = format!("{scheme}://subdomain.{host}{path}");
        restore(&cookie.name, true, &below, policy)?;
        restore(&cookie.value, true, &below, policy)?;
    }
    let mut param = json!({
        "name": restore(&cookie.name, cookie.redacted, &url, policy)?,
        "value": restore(&cookie.value, cookie.redacted, &url, policy)?,
        "path": path,
        "secure": cookie.secure,
        "httpOnly": cookie.http_only,
    });
    if cookie.domain.starts_with('.') {
        param["domain"] = json!(cookie.domain);
    } else {
        param["url"] = json!(url);
    }
    if let Some(expires) = cookie.expires {
        param["expires"] = json!(expires);
    }
    if let Some(same_site) = &cookie.same_site {
        param["sameSite"] = json!(same_site);
    }
    Ok(param)
}

fn origin_items(origin: &StoredOrigin, policy: &SafetyPolicy) -> Result<OriginItems, BrowserError> {
    let Some(normal) = web_origin(&origin.origin) else {
        return Err(BrowserError::invalid(format!(
            "{:?} in the storage state is not the origin of a web page",
            origin.origin
        )));
    };
    // The origin is visited to write its storage: it must be one the
    // policy lets the browser open.
    policy
        .check_url(&normal)
        .map_err(|reason| BrowserError::Refused {
            detail: format!("the storage state cannot be loaded for {normal}: {reason}"),
        })?;
    let items = |list: &[StoredItem]| {
        list.iter()
            .map(|item| {
                Ok((
                    restore(&item.name, item.redacted, &normal, policy)?,
                    restore(&item.value, item.redacted, &normal, policy)?,
                ))
            })
            .collect::<Result<Vec<_>, BrowserError>>()
    };
    Ok(OriginItems {
        local: items(&origin.local_storage)?,
        session: items(&origin.session_storage)?,
        origin: normal,
    })
}

fn io_error(what: &str, path: &Path, e: &std::io::Error) -> BrowserError {
    BrowserError::Io {
        detail: format!("cannot {what} {}: {e}", path.display()),
    }
}

/// Writes `bytes` to `path` through a new file beside it, created with
/// mode `0600` (or narrower: an existing file's own permissions, when it
/// allows less), synced, then renamed over `path`.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), BrowserError> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mode = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o600,
        Err(_) => 0o600,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| BrowserError::invalid(format!("{} names no file", path.display())))?;
    let mut opened = None;
    for n in 0..16u32 {
        let candidate = dir.join(format!(
            ".{}.{}-{n}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&candidate)
        {
            Ok(file) => {
                opened = Some((candidate, file));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_error("create a file beside", path, &e)),
        }
    }
    let Some((temp, mut file)) = opened else {
        return Err(BrowserError::Io {
            detail: format!("cannot create a file beside {}", path.display()),
        });
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(io_error("write", path, &e));
    }
    Ok(())
}

/// The file's bytes, refused past [`MAX_STATE_BYTES`].
fn read_bounded(path: &Path) -> Result<Vec<u8>, BrowserError> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| io_error("open", path, &e))?;
    let mut bytes = Vec::new();
    file.take(MAX_STATE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("read", path, &e))?;
    if bytes.len() as u64 > MAX_STATE_BYTES {
        return Err(BrowserError::invalid(format!(
            "{} is larger than a storage state can be ({} MiB)",
            path.display(),
            MAX_STATE_BYTES >> 20
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_written_as_placeholders_and_come_back() {
        let policy = SafetyPolicy::builder()
            .secret_for("pw", "hunter2-long", ["127.0.0.1"])
            .build()
            .unwrap();
        let items = stored_items(
            vec![
                ("token".into(), "hunter2-long".into()),
                ("plain".into(), "<secret>pw</secret>".into()),
                // Neither would load back as it was: left out.
                ("piece".into(), "my hunter2-lo".into()),
                ("loud".into(), "HUNTER2-LONG".into()),
            ],
            &policy,
            "http://127.0.0.1:8080",
        );
        let text = serde_json::to_string(&items).unwrap();
        assert!(!text.to_lowercase().contains("hunter2"), "{text}");
        assert_eq!(items.len(), 2, "{text}");
        assert!(items[0].redacted && !items[1].redacted);
        // Saved for a site the secret is kept off: left out too.
        let other = stored_items(
            vec![("token".into(), "hunter2-long".into())],
            &policy,
            "http://evil.test",
        );
        assert!(other.is_empty());
        let origin = StoredOrigin {
            origin: "http://127.0.0.1:8080".into(),
            local_storage: items,
            session_storage: Vec::new(),
        };
        let loaded = origin_items(&origin, &policy).unwrap();
        assert_eq!(loaded.local[0].1, "hunter2-long");
        assert_eq!(loaded.local[1].1, "<secret>pw</secret>");
        let elsewhere = StoredOrigin {
            origin: "http://evil.test".into(),
            ..origin
        };
        let refused = origin_items(&elsewhere, &policy).err().unwrap();
        assert!(
            refused.to_string().contains("may only be typed"),
            "{refused}"
        );
    }

    #[test]
    fn host_only_cookies_stay_host_only() {
        let policy = SafetyPolicy::default();
        let cookie = |domain: &str| StoredCookie {
            name: "sid".into(),
            value: "v".into(),
            domain: domain.into(),
            path: "/app".into(),
            expires: Some(2e9),
            http_only: true,
            secure: true,
            same_site: Some("Lax".into()),
            redacted: false,
        };
        let host = cookie_param(&cookie("shop.example.com"), &policy).unwrap();
        assert_eq!(host["url"], "https://shop.example.com/app");
        assert!(host.get("domain").is_none());
        assert_eq!(host["httpOnly"], true);
        let domain = cookie_param(&cookie(".example.com"), &policy).unwrap();
        assert_eq!(domain["domain"], ".example.com");
        assert!(domain.get("url").is_none());
        assert!(cookie_param(&cookie(""), &policy).is_err());
    }

    #[test]
    fn a_domain_cookie_with_a_secret_needs_its_subdomains_allowed() {
        let cookie = |domain: &str| StoredCookie {
            name: "sid".into(),
            value: "<secret>pw</secret>".into(),
            domain: domain.into(),
            path: "/".into(),
            expires: None,
            http_only: true,
            secure: true,
            same_site: None,
            redacted: true,
        };
        let exact = SafetyPolicy::builder()
            .secret_for("pw", "hunter2-long", ["example.com"])
            .build()
            .unwrap();
        // Sent to example.com only: allowed.
        let host = cookie_param(&cookie("example.com"), &exact).unwrap();
        assert_eq!(host["value"], "hunter2-long");
        // Sent to every subdomain too, where the secret is not allowed.
        assert!(cookie_param(&cookie(".example.com"), &exact).is_err());
        let wide = SafetyPolicy::builder()
            .secret_for("pw", "hunter2-long", ["example.com", "*.example.com"])
            .build()
            .unwrap();
        let domain = cookie_param(&cookie(".example.com"), &wide).unwrap();
        assert_eq!(domain["value"], "hunter2-long");
    }

    #[test]
    fn written_files_are_private_and_never_wider() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("toolkit-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        write_private(&path, b"{}").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
        write_private(&path, b"{\"a\":1}").unwrap();
        assert_eq!(mode(&path), 0o400);
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\":1}");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(left.len(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
