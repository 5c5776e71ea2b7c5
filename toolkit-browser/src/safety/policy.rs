//! The safety policy: where the browser may go, which secrets the model may
//! type without seeing them, and which folder files may come from.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use url::Url;

use super::domains::{self, DomainPattern, PatternError};
use super::redact::Redactor;
use super::secrets::{Secret, Typed, placeholder, typed_parts};
use crate::error::BrowserError;

/// The schemes a page may always be on: web pages, blank pages, the
/// browser's own error pages (where a failed or blocked navigation lands),
/// and `blob:` documents, which are checked by the origin that made them.
const ALWAYS_ALLOWED: &[&str] = &["http", "https", "about", "chrome-error", "blob"];

/// What the browser tools may do, set by the host.
///
/// - **Allowed domains.** Without any, every http and https site is
///   allowed. With some, every page load of every tab and frame is
///   checked: the `navigate` action, and also navigations caused by
///   clicks, key presses, scripts, redirects, form posts and new tabs (see
///   [`Browser::set_policy`]).
/// - **Schemes.** `file:`, `data:`, `javascript:`, `chrome:` and every other
///   scheme besides http, https and `about:` are refused unless allowed
///   with [`allow_scheme`](SafetyPolicyBuilder::allow_scheme). A tab
///   may come to show the browser's error page (`chrome-error:`), but no
///   URL the model gives opens it, nor `about:srcdoc`.
/// - **Secrets.** The model types `<secret>name</secret>` in the `input`
///   action; the real value goes into the page, and every text a browser
///   tool returns, the page map included, shows the placeholder instead.
/// - **Files.** `upload_file` and the attachments of `done` accept only files
///   inside [`files_dir`](SafetyPolicyBuilder::files_dir); without it, both
///   refuse every file.
///
/// Cheap to clone. Its `Debug` output names secrets but never shows their
/// values.
///
/// ```
/// use toolkit_browser::SafetyPolicy;
///
/// let policy = SafetyPolicy::builder()
///     .allow_domains(["*.example.com", "127.0.0.1:8080"])
///     .secret("password", "hunter2")
///     .secret_for("api_key", "k-123", ["api.example.com"])
///     .files_dir(std::env::temp_dir())
///     .build()?;
/// assert!(policy.check_url("https://www.example.com/a").is_ok());
/// assert!(policy.check_url("https://evil.net/").is_err());
/// assert!(policy.check_url("file:///etc/passwd").is_err());
/// assert_eq!(policy.redact("pw is hunter2"), "pw is <secret>password</secret>");
/// # Ok::<(), toolkit_browser::PolicyError>(())
/// ```
///
/// [`Browser::set_policy`]: crate::Browser::set_policy
#[derive(Clone, Default)]
pub struct SafetyPolicy {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    domains: Option<Vec<DomainPattern>>,
    schemes: Vec<String>,
    secrets: Vec<Secret>,
    redactor: Redactor,
    files_dir: Option<PathBuf>,
}

impl fmt::Debug for SafetyPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("SafetyPolicy")
            .field(
                "allowed_domains",
                &inner.domains.as_deref().map(domains::list),
            )
            .field("allowed_schemes", &inner.schemes)
            .field(
                "secrets",
                &inner.secrets.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .field("files_dir", &inner.files_dir)
            .finish()
    }
}

impl SafetyPolicy {
    /// A builder starting from the default: every http and https site, no
    /// other scheme, no secrets, no files.
    pub fn builder() -> SafetyPolicyBuilder {
        SafetyPolicyBuilder::default()
    }

    /// The allowed domains, or `None` when every site is allowed.
    pub fn allowed_domains(&self) -> Option<&[DomainPattern]> {
        self.inner.domains.as_deref()
    }

    /// Whether page loads must be checked as they happen (some
    /// domains are allowed, not all).
    pub fn restricts_domains(&self) -> bool {
        self.inner.domains.is_some()
    }

    /// The folder files may be uploaded from and attached out of.
    pub fn files_dir(&self) -> Option<&Path> {
        self.inner.files_dir.as_deref()
    }

    /// The names of the secrets, in the order they were added.
    pub fn secret_names(&self) -> Vec<&str> {
        self.inner.secrets.iter().map(|s| s.name.as_str()).collect()
    }

    /// Whether the browser may show `url` as a page.
    ///
    /// # Errors
    ///
    /// Why not, in words for the model (`localhost is not an allowed
    /// domain (allowed: 127.0.0.1)`).
    pub fn check_url(&self, url: &str) -> Result<(), String> {
        let parsed = match Url::parse(url.trim()) {
            Ok(parsed) => parsed,
            Err(e) => return Err(format!("`{url}` is not a valid URL ({e})")),
        };
        let scheme = parsed.scheme();
        let scheme_allowed = |s: &str| ALWAYS_ALLOWED.contains(&s) || self.allows_scheme(s);
        if !scheme_allowed(scheme) {
            return Err(format!(
                "{scheme}: URLs are not allowed; only web pages (http and https) can be opened"
            ));
        }
        // `about:version`, `about:settings`... are the browser's own pages
        // under another name; only the blank page is a page of its own.
        if scheme == "about"
            && !matches!(parsed.path(), "blank" | "srcdoc")
            && !self.allows_scheme("about")
        {
            return Err(format!(
                "{} is one of the browser's own pages, which cannot be opened; only web pages \
                 (http and https) and about:blank can",
                url.trim()
            ));
        }
        // A blob: URL belongs to the origin that made it.
        let web = if scheme == "blob" {
            match parsed.origin() {
                url::Origin::Tuple(s, host, port) => {
                    Url::parse(&format!("{s}://{host}:{port}/")).ok()
                }
                url::Origin::Opaque(_) => None,
            }
        } else if scheme == "http" || scheme == "https" {
            Some(parsed.clone())
        } else {
            None
        };
        let (Some(patterns), Some(web)) = (&self.inner.domains, web) else {
            return Ok(());
        };
        if domains::any_matches(patterns, &web) {
            Ok(())
        } else {
            Err(format!(
                "{} is not an allowed domain (allowed: {})",
                domains::site_of(&web),
                domains::list(patterns)
            ))
        }
    }

    /// Whether the browser may be sent to `url` on request (a URL the
    /// model gives to open, in the current tab or a new one). Stricter
    /// than [`check_url`](Self::check_url), which says what a page may be
    /// on: a tab may come to show the browser's error page
    /// (`chrome-error:`) or `about:srcdoc`, but nobody may open them. The
    /// scheme judged is the one of the URL as parsed, the way the browser
    /// reads it; what does not parse is refused.
    ///
    /// # Errors
    ///
    /// Why not, in words for the model.
    pub(crate) fn check_destination(&self, url: &str) -> Result<(), String> {
        let trimmed = url.trim();
        let parsed = match Url::parse(trimmed) {
            Ok(parsed) => parsed,
            Err(e) => return Err(format!("`{trimmed}` is not a valid URL ({e})")),
        };
        let scheme = parsed.scheme();
        let opens = match scheme {
            "http" | "https" | "blob" => true,
            // `about:version` and the like: `check_url` says they are the
            // browser's own pages.
            "about" => parsed.path() != "srcdoc" || self.allows_scheme("about"),
            other => self.allows_scheme(other),
        };
        if !opens {
            return Err(format!(
                "{scheme}: URLs cannot be opened; only web pages (http and https) can, and \
                 about:blank"
            ));
        }
        self.check_url(trimmed)
    }

    fn allows_scheme(&self, scheme: &str) -> bool {
        self.inner.schemes.iter().any(|s| s == scheme)
    }

    /// `text` with every secret value (also percent-encoded, as a GET form
    /// puts it in a URL, and JSON-escaped) replaced by its placeholder
    /// `<secret>name</secret>`.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.inner.redactor.redact(text)
    }

    pub(crate) fn redactor(&self) -> &Redactor {
        &self.inner.redactor
    }

    /// The secret values, for masking them in screenshots.
    pub(crate) fn secret_values(&self) -> Vec<String> {
        self.inner.secrets.iter().map(|s| s.value.clone()).collect()
    }

    /// Whether any secret is configured (nothing needs redacting otherwise).
    pub fn has_secrets(&self) -> bool {
        !self.inner.redactor.is_empty()
    }

    /// The text to type for `text`, with each `<secret>name</secret>`
    /// replaced by the secret's value, on a page at `url`.
    ///
    /// # Errors
    ///
    /// [`BrowserError::Refused`] for an unknown secret name (listing the
    /// known ones), a secret that may not be used on `url`'s site, or any
    /// secret when the policy does not allow `url` (an opaque origin,
    /// `null`, is not allowed).
    pub fn resolve_secrets(&self, text: &str, url: &str) -> Result<String, BrowserError> {
        let mut out = String::with_capacity(text.len());
        for piece in typed_parts(text) {
            match piece {
                Typed::Text(t) => out.push_str(t),
                Typed::Secret(name) => {
                    // No secret goes to a page the policy does not allow
                    // (one loaded before the policy changed, a frame with
                    // no site of its own), whatever its own sites.
                    if let Err(reason) = self.check_url(url) {
                        return Err(BrowserError::Refused {
                            detail: format!(
                                "the secret {} is typed only on allowed sites, and this field                                  is not on one ({reason}); nothing was typed",
                                placeholder(name)
                            ),
                        });
                    }
                    let secret = self
                        .inner
                        .secrets
                        .iter()
                        .find(|s| s.name == name)
                        .ok_or_else(|| unknown_secret(name, &self.secret_names()))?;
                    if let Some(allowed) = &secret.domains {
                        let here = Url::parse(url).ok();
                        let ok = here
                            .as_ref()
                            .is_some_and(|u| domains::any_matches(allowed, u));
                        if !ok {
                            let site = here.as_ref().map_or_else(
                                || url.to_owned(),
                                |u| {
                                    let s = domains::site_of(u);
                                    if s.is_empty() { url.to_owned() } else { s }
                                },
                            );
                            return Err(BrowserError::Refused {
                                detail: format!(
                                    "the secret {} may only be typed on {}, and this page is on \
                                     {site}; nothing was typed",
                                    placeholder(name),
                                    domains::list(allowed)
                                ),
                            });
                        }
                    }
                    out.push_str(&secret.value);
                }
            }
        }
        Ok(out)
    }

    /// The real path of `path` (absolute, or relative to the files folder),
    /// if it names a file inside the files folder.
    ///
    /// # Errors
    ///
    /// [`BrowserError::Refused`] without a files folder, for a path outside
    /// it (links are followed before checking), or for a missing file.
    pub fn resolve_file(&self, path: &str) -> Result<PathBuf, BrowserError> {
        let refused = |detail: String| BrowserError::Refused { detail };
        let Some(dir) = self.files_dir() else {
            return Err(refused(
                "files are not enabled: the host allows no folder to take files from".into(),
            ));
        };
        // Messages name the folder but not where it is: the model has no
        // business knowing the host's file system.
        let root = dir
            .canonicalize()
            .map_err(|_| refused("the files folder cannot be read".into()))?;
        let asked = Path::new(path.trim());
        let joined = if asked.is_absolute() {
            asked.to_path_buf()
        } else {
            root.join(asked)
        };
        let real = joined
            .canonicalize()
            .map_err(|_| refused(format!("there is no file `{path}` in the files folder")))?;
        if !real.starts_with(&root) {
            return Err(refused(format!(
                "`{path}` is outside the files folder; only files inside it can be used"
            )));
        }
        if !real.is_file() {
            return Err(refused(format!("`{path}` is not a file")));
        }
        Ok(real)
    }

    /// Opens the file `path` names (as [`resolve_file`](Self::resolve_file)
    /// checks it) and checks that what was opened is that file: a path
    /// swapped for a link to another file between the check and the
    /// opening is refused. What is read from the returned file is what was
    /// checked, whatever happens to the path afterwards.
    ///
    /// # Errors
    ///
    /// As [`resolve_file`](Self::resolve_file), and
    /// [`BrowserError::Refused`] when the file changed under the check.
    pub(crate) fn open_file(&self, path: &str) -> Result<(std::fs::File, PathBuf), BrowserError> {
        use std::os::unix::fs::MetadataExt;
        let real = self.resolve_file(path)?;
        let changed = || BrowserError::Refused {
            detail: format!("`{path}` changed while it was being opened; nothing was used"),
        };
        let file = std::fs::File::open(&real).map_err(|_| changed())?;
        let opened = file.metadata().map_err(|_| changed())?;
        // Checked again after opening: the same path, still inside the
        // folder, still naming the very file (device and inode) opened.
        let again = self.resolve_file(path).map_err(|_| changed())?;
        let named = std::fs::metadata(&again).map_err(|_| changed())?;
        if again != real || named.dev() != opened.dev() || named.ino() != opened.ino() {
            return Err(changed());
        }
        Ok((file, real))
    }
}

fn unknown_secret(name: &str, known: &[&str]) -> BrowserError {
    let detail = if known.is_empty() {
        format!(
            "there is no secret named `{name}`: the host configured no secrets; nothing was typed"
        )
    } else {
        format!(
            "there is no secret named `{name}`; the secrets are {}; nothing was typed",
            known
                .iter()
                .map(|n| placeholder(n))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    BrowserError::Refused { detail }
}

/// Builds a [`SafetyPolicy`]; every problem is reported at
/// [`build`](Self::build).
#[derive(Default)]
pub struct SafetyPolicyBuilder {
    domains: Option<Vec<String>>,
    schemes: Vec<String>,
    secrets: Vec<(String, String, Option<Vec<String>>)>,
    files_dir: Option<PathBuf>,
}

impl fmt::Debug for SafetyPolicyBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SafetyPolicyBuilder")
            .field("domains", &self.domains)
            .field("schemes", &self.schemes)
            .field(
                "secrets",
                &self.secrets.iter().map(|s| &s.0).collect::<Vec<_>>(),
            )
            .field("files_dir", &self.files_dir)
            .finish()
    }
}

impl SafetyPolicyBuilder {
    /// Allows these domains (see [`DomainPattern`]); once any is given,
    /// every other site is refused. Calling it again adds more.
    pub fn allow_domains<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.domains
            .get_or_insert_with(Vec::new)
            .extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Allows pages with this scheme (`"data"`, `"file"`, `"chrome"`...),
    /// which are refused by default.
    pub fn allow_scheme(mut self, scheme: impl Into<String>) -> Self {
        let scheme: String = scheme.into();
        self.schemes
            .push(scheme.trim_end_matches(':').to_ascii_lowercase());
        self
    }

    /// A secret the model can type as `<secret>name</secret>` on any site.
    pub fn secret(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.secrets.push((name.into(), value.into(), None));
        self
    }

    /// A secret that may be typed only on these domains (patterns as for
    /// [`allow_domains`](Self::allow_domains)).
    pub fn secret_for<I, S>(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
        domains: I,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let domains = domains.into_iter().map(Into::into).collect();
        self.secrets
            .push((name.into(), value.into(), Some(domains)));
        self
    }

    /// The folder `upload_file` takes files from and `done` attaches files
    /// out of. Paths the model gives are relative to it (absolute paths
    /// must lie inside it).
    pub fn files_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.files_dir = Some(dir.into());
        self
    }

    /// Checks everything and builds the policy.
    ///
    /// # Errors
    ///
    /// [`PolicyError`] listing every bad domain pattern, secret name or
    /// value, and scheme.
    pub fn build(self) -> Result<SafetyPolicy, PolicyError> {
        let mut problems = Vec::new();
        let mut parse_all = |patterns: &[String]| -> Vec<DomainPattern> {
            patterns
                .iter()
                .filter_map(|p| match DomainPattern::parse(p) {
                    Ok(p) => Some(p),
                    Err(e) => {
                        problems.push(e.to_string());
                        None
                    }
                })
                .collect()
        };
        let domains = self.domains.as_deref().map(&mut parse_all);
        let mut secrets = Vec::new();
        for (name, value, scope) in &self.secrets {
            let domains = scope.as_deref().map(&mut parse_all);
            secrets.push(Secret {
                name: name.clone(),
                value: value.clone(),
                domains,
            });
        }
        for (i, secret) in secrets.iter().enumerate() {
            let name = &secret.name;
            let valid = !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            if !valid {
                problems.push(format!(
                    "`{name}` is not a secret name: use 1 to 64 letters, digits, `_`, `-` or `.`"
                ));
            }
            if secret.value.is_empty() {
                problems.push(format!("the secret `{name}` has an empty value"));
            }
            if secrets[..i].iter().any(|s| s.name == *name) {
                problems.push(format!("two secrets are named `{name}`"));
            }
        }
        for scheme in &self.schemes {
            let valid = scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
            if !valid {
                problems.push(format!("`{scheme}` is not a URL scheme"));
            }
        }
        if !problems.is_empty() {
            return Err(PolicyError { problems });
        }
        let redactor = Redactor::new(&secrets);
        Ok(SafetyPolicy {
            inner: Arc::new(Inner {
                domains,
                schemes: self.schemes,
                secrets,
                redactor,
                files_dir: self.files_dir,
            }),
        })
    }
}

/// Why a [`SafetyPolicy`] could not be built: every problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    problems: Vec<String>,
}

impl PolicyError {
    /// The problems, in words.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl From<PatternError> for PolicyError {
    fn from(error: PatternError) -> Self {
        Self {
            problems: vec![error.to_string()],
        }
    }
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => f.write_str(one),
            many => {
                write!(f, "{} problems:", many.len())?;
                for problem in many {
                    write!(f, "\n- {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for PolicyError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_other_than_the_web_are_refused_unless_allowed() {
        let policy = SafetyPolicy::default();
        assert!(policy.check_url("https://anything.net/").is_ok());
        assert!(policy.check_url("about:blank").is_ok());
        for bad in [
            "file:///etc/passwd",
            "data:text/html,<b>x</b>",
            "javascript:alert(1)",
            "chrome://settings",
            "view-source:http://a.b/",
        ] {
            let why = policy.check_url(bad).unwrap_err();
            assert!(why.contains("not allowed"), "{bad}: {why}");
        }
        let data = SafetyPolicy::builder()
            .allow_scheme("data:")
            .build()
            .unwrap();
        assert!(data.check_url("data:text/html,x").is_ok());
    }

    #[test]
    fn only_web_pages_and_the_blank_page_are_destinations() {
        let policy = SafetyPolicy::default();
        assert!(policy.check_destination("https://anything.net/").is_ok());
        assert!(policy.check_destination("about:blank").is_ok());
        for bad in [
            "chrome-error://chromewebdata/",
            "CHROME-ERROR://chromewebdata/",
            "about:srcdoc",
            "about:version",
            "file:///etc/passwd",
            " javascript:alert(1)",
            "data:text/html,x",
            "mailto:a@b.c",
            "view-source:http://a.b/",
            "http://",
            "",
        ] {
            assert!(policy.check_destination(bad).is_err(), "{bad}");
        }
        let why = policy
            .check_destination("chrome-error://chromewebdata/")
            .unwrap_err();
        assert!(
            why.starts_with("chrome-error: URLs cannot be opened"),
            "{why}"
        );
        let data = SafetyPolicy::builder()
            .allow_scheme("data")
            .build()
            .unwrap();
        assert!(data.check_destination("data:text/html,x").is_ok());
    }

    #[test]
    fn domains_restrict_web_pages_and_blob_urls() {
        let policy = SafetyPolicy::builder()
            .allow_domains(["127.0.0.1"])
            .build()
            .unwrap();
        assert!(policy.check_url("http://127.0.0.1:9000/x").is_ok());
        let why = policy.check_url("http://localhost:9000/x").unwrap_err();
        assert_eq!(
            why,
            "localhost:9000 is not an allowed domain (allowed: 127.0.0.1)"
        );
        assert!(policy.check_url("blob:http://127.0.0.1:9000/uuid").is_ok());
        assert!(policy.check_url("blob:http://evil.net/uuid").is_err());
        assert!(policy.check_url("not a url").is_err());
    }

    #[test]
    fn every_spelling_of_a_host_is_judged_as_the_browser_reads_it() {
        let policy = SafetyPolicy::builder()
            .allow_domains(["127.0.0.1", "*.example.com"])
            .build()
            .unwrap();
        // Other spellings of an allowed host are that host.
        for same in [
            "http://127.1:9000/",
            "http://0x7f.0.0.1/",
            "http://2130706433/",
            "http://127.0.0.1./",
            "HTTP://WWW.EXAMPLE.COM/",
            "https://www.example.com./",
            "https://user:pass@www.example.com/",
            "https://www.example.com:443@127.0.0.1/",
        ] {
            assert!(policy.check_url(same).is_ok(), "{same}");
        }
        // A host that only looks allowed is not.
        for other in [
            "http://127.0.0.1.evil.net/",
            "http://127.0.0.1@evil.net/",
            "https://www.example.com@evil.net/",
            "https://www.example.com%2F@evil.net/",
            "https://evil.net\\@www.example.com/",
            "https://evil.net#@www.example.com/",
            "https://example.com.evil.net/",
            "https://wwwexample.com/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::1]/",
            "http://0.0.0.0/",
            "https://xn--exmple-cua.com/",
            "https://ex\u{e4}mple.com/",
        ] {
            assert!(policy.check_url(other).is_err(), "{other}");
        }
        // Schemes that carry a web address inside are refused outright.
        for wrapped in [
            "view-source:https://www.example.com/",
            "filesystem:https://www.example.com/temporary/x",
            "blob:https://evil.net/uuid",
        ] {
            assert!(policy.check_url(wrapped).is_err(), "{wrapped}");
        }
    }

    #[test]
    fn secrets_resolve_by_name_and_scope() {
        let policy = SafetyPolicy::builder()
            .secret("pw", "hunter2")
            .secret_for("key", "k-1", ["*.example.com"])
            .build()
            .unwrap();
        assert_eq!(
            policy
                .resolve_secrets("a <secret>pw</secret> b", "http://x.net/")
                .unwrap(),
            "a hunter2 b"
        );
        assert_eq!(
            policy
                .resolve_secrets("<secret>key</secret>", "https://www.example.com/")
                .unwrap(),
            "k-1"
        );
        let scoped = policy
            .resolve_secrets("<secret>key</secret>", "http://127.0.0.1:80/")
            .unwrap_err()
            .to_string();
        assert!(
            scoped.contains("may only be typed on *.example.com"),
            "{scoped}"
        );
        assert!(!scoped.contains("k-1"));
        let narrow = SafetyPolicy::builder()
            .allow_domains(["*.example.com"])
            .secret("pw", "hunter2")
            .build()
            .unwrap();
        for elsewhere in ["http://127.0.0.1/", "null", "data:text/html,x"] {
            let refused = narrow
                .resolve_secrets("<secret>pw</secret>", elsewhere)
                .unwrap_err()
                .to_string();
            assert!(refused.contains("typed only on allowed sites"), "{refused}");
        }
        assert_eq!(narrow.resolve_secrets("plain", "null").unwrap(), "plain");
        let unknown = policy
            .resolve_secrets("<secret>nope</secret>", "http://x.net/")
            .unwrap_err()
            .to_string();
        assert!(
            unknown.contains("<secret>pw</secret>, <secret>key</secret>"),
            "{unknown}"
        );
        let debug = format!("{policy:?}");
        assert!(
            !debug.contains("hunter2") && debug.contains("pw"),
            "{debug}"
        );
    }

    #[test]
    fn bad_settings_are_all_reported() {
        let error = SafetyPolicy::builder()
            .allow_domains(["ok.com", "*bad"])
            .secret("", "x")
            .secret("a", "")
            .secret("a", "y")
            .allow_scheme("1x")
            .build()
            .unwrap_err();
        assert_eq!(error.problems().len(), 5, "{error}");
    }

    #[test]
    fn files_must_lie_inside_the_folder() {
        let root = std::env::temp_dir().join(format!("tk-policy-{}", std::process::id()));
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), "a").unwrap();
        let policy = SafetyPolicy::builder().files_dir(&root).build().unwrap();
        let real = policy.resolve_file("sub/a.txt").unwrap();
        assert!(real.ends_with("sub/a.txt"));
        assert!(policy.resolve_file(real.to_str().unwrap()).is_ok());
        for bad in ["../../etc/passwd", "/etc/passwd", "missing.txt", "sub"] {
            assert!(policy.resolve_file(bad).is_err(), "{bad}");
        }
        assert!(SafetyPolicy::default().resolve_file("a.txt").is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}
