//! Pinned tool catalogs: a fingerprint of each of a server's tools, kept
//! in a lock file the host holds, so that a tool whose definition changes
//! after it was approved (or a tool that appears) is held back until the
//! host pins it again.
//!
//! A fingerprint is SHA-256 over the canonical JSON of the parts of a tool
//! a model reads or a call depends on: name, description, input schema,
//! output schema, annotations. Canonical JSON is written without spaces,
//! object keys sorted by their UTF-16 code units (as RFC 8785 sorts them),
//! arrays in order, strings and numbers as `serde_json` writes them; so a
//! server that only reorders keys or whitespace changes nothing, and any
//! change of content changes the hash. SHA-256, because the hash must stay
//! the same across builds, platforms and Rust releases (std's hashers
//! promise none of that) and because a server must not be able to craft a
//! changed definition with the fingerprint of the approved one.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex as StdMutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The one format this crate writes; a file of a later one is refused
/// rather than read as if it were this.
pub(super) const FORMAT: &str = "toolkit-mcp.pins";
pub(super) const VERSION: u64 = 1;

/// A part of a tool's definition a fingerprint covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub enum ToolPart {
    /// `name`.
    Name,
    /// `description`.
    Description,
    /// `inputSchema`.
    InputSchema,
    /// `outputSchema`.
    OutputSchema,
    /// `annotations`.
    Annotations,
}

impl ToolPart {
    /// Every part, in the order fingerprints list them.
    const ALL: [Self; 5] = [
        Self::Name,
        Self::Description,
        Self::InputSchema,
        Self::OutputSchema,
        Self::Annotations,
    ];

    /// The part's key in MCP's tool definition and in the lock file.
    pub fn key(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::Description => "description",
            Self::InputSchema => "inputSchema",
            Self::OutputSchema => "outputSchema",
            Self::Annotations => "annotations",
        }
    }
}

impl fmt::Display for ToolPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Why a tool of the server is held back from the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub enum HeldReason {
    /// The lock file pins no tool of this name for this server.
    New,
    /// The tool's definition is not the one pinned: these parts differ.
    Changed(Vec<ToolPart>),
}

impl fmt::Display for HeldReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::New => f.write_str("new: not pinned"),
            Self::Changed(parts) => {
                f.write_str("changed since it was pinned: ")?;
                for (i, part) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{part}")?;
                }
                Ok(())
            }
        }
    }
}

/// A server's tool held back from the registry until it is pinned again
/// ([`McpClient::pin`](super::McpClient::pin)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub struct Held {
    /// The name it would have in the registry (`{prefix}_{name}`, portable).
    pub name: String,
    /// Its name at the server.
    pub original: String,
    /// Why it is held back.
    pub reason: HeldReason,
}

/// One tool's fingerprint: the whole, and each part's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Fingerprint {
    fingerprint: String,
    parts: BTreeMap<String, String>,
}

impl Fingerprint {
    /// The fingerprint of a tool, as the server described it.
    pub(super) fn of(tool: &Value) -> Self {
        let mut whole = serde_json::Map::new();
        let mut parts = BTreeMap::new();
        for part in ToolPart::ALL {
            let value = tool.get(part.key()).cloned().unwrap_or(Value::Null);
            parts.insert(part.key().to_owned(), digest(&value));
            whole.insert(part.key().to_owned(), value);
        }
        Self {
            fingerprint: digest(&Value::Object(whole)),
            parts,
        }
    }

    /// The parts of `self` that differ from `pinned`.
    fn changed_from(&self, pinned: &Self) -> Vec<ToolPart> {
        ToolPart::ALL
            .into_iter()
            .filter(|part| self.parts.get(part.key()) != pinned.parts.get(part.key()))
            .collect()
    }
}

/// `sha256:` and the hex SHA-256 of `value`'s canonical JSON.
fn digest(value: &Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    let hash = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Writes `value` as canonical JSON.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The lock file: per server (by the client's name), per tool (by its name
/// at the server), the fingerprint pinned.
#[derive(Debug, Default, Serialize, Deserialize)]
struct LockFile {
    format: String,
    version: u64,
    servers: BTreeMap<String, ServerPins>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct ServerPins {
    tools: BTreeMap<String, Fingerprint>,
}

/// Lock files are read, changed and replaced one at a time in a process,
/// so that two clients pinning into one file keep each other's servers.
static WRITING: StdMutex<()> = StdMutex::new(());

/// One server's pins, and where they are kept.
pub(super) struct Pins {
    path: PathBuf,
    server: String,
    /// The pinned tools, by name at the server; `None` while the file
    /// holds nothing for this server, whose first listing is then pinned.
    pinned: StdMutex<Option<HashMap<String, Fingerprint>>>,
}

impl fmt::Debug for Pins {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pins").field("path", &self.path).finish()
    }
}

impl Pins {
    /// The pins of `server` in the lock file at `path` (none when the file
    /// does not exist yet).
    pub(super) fn load(path: PathBuf, server: &str) -> Result<Self, String> {
        let file = read(&path)?;
        let pinned = file
            .servers
            .get(server)
            .map(|pins| pins.tools.clone().into_iter().collect());
        Ok(Self {
            path,
            server: server.to_owned(),
            pinned: StdMutex::new(pinned),
        })
    }

    fn pinned(&self) -> std::sync::MutexGuard<'_, Option<HashMap<String, Fingerprint>>> {
        self.pinned.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the lock file holds this server's tools yet.
    pub(super) fn holds_server(&self) -> bool {
        self.pinned().is_some()
    }

    /// Why `tool` (as the server described it) is held back, or `None`
    /// when it is the tool pinned.
    pub(super) fn vet(&self, original: &str, tool: &Value) -> Option<HeldReason> {
        let pinned = self.pinned();
        let pinned = pinned.as_ref()?;
        let Some(approved) = pinned.get(original) else {
            return Some(HeldReason::New);
        };
        let now = Fingerprint::of(tool);
        (now.fingerprint != approved.fingerprint)
            .then(|| HeldReason::Changed(now.changed_from(approved)))
    }

    /// Pins exactly `tools` (as the server described them) for this
    /// server, replacing what was pinned, in memory and in the lock file.
    pub(super) fn pin<'a>(&self, tools: impl IntoIterator<Item = &'a Value>) -> Result<(), String> {
        let pinned: HashMap<String, Fingerprint> = tools
            .into_iter()
            .map(|tool| {
                let name = tool["name"].as_str().unwrap_or_default().to_owned();
                (name, Fingerprint::of(tool))
            })
            .collect();
        {
            let _writing = WRITING.lock().unwrap_or_else(PoisonError::into_inner);
            // Read again: another client may have pinned its server since.
            let mut file = read(&self.path)?;
            file.servers.insert(
                self.server.clone(),
                ServerPins {
                    tools: pinned.clone().into_iter().collect(),
                },
            );
            write(&self.path, &file)?;
        }
        *self.pinned() = Some(pinned);
        Ok(())
    }
}

/// The lock file at `path`, empty when there is none yet.
fn read(path: &Path) -> Result<LockFile, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(LockFile {
                format: FORMAT.to_owned(),
                version: VERSION,
                servers: BTreeMap::new(),
            });
        }
        Err(error) => {
            return Err(format!(
                "the lock file {} cannot be read: {error}",
                path.display()
            ));
        }
    };
    let file: LockFile = serde_json::from_str(&text).map_err(|error| {
        format!(
            "the lock file {} is not a lock file of pinned tools: {error}",
            path.display()
        )
    })?;
    if file.format != FORMAT || file.version != VERSION {
        return Err(format!(
            "the lock file {} is of format `{}` version {}; this build reads `{FORMAT}` version {VERSION}",
            path.display(),
            file.format,
            file.version
        ));
    }
    Ok(file)
}

/// Replaces the lock file at `path` at once: written beside it, flushed,
/// then renamed over it, so that a reader never sees half a file and a
/// failure leaves the old one whole.
fn write(path: &Path, file: &LockFile) -> Result<(), String> {
    let failed = |error: std::io::Error| {
        format!(
            "the lock file {} cannot be written: {error}",
            path.display()
        )
    };
    let mut text = serde_json::to_string_pretty(file).map_err(|error| error.to_string())?;
    text.push('\n');
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pins".to_owned());
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut out = std::fs::File::create(&temporary)?;
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(failed(error));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_spacing_change_nothing() {
        let one = json!({"name": "a", "inputSchema": {"type": "object", "properties": {"x": {}, "b": {}}}});
        let two: Value = serde_json::from_str(
            r#"{ "inputSchema": { "properties": { "b": {}, "x": {} }, "type": "object" }, "name": "a" }"#,
        )
        .unwrap();
        assert_eq!(Fingerprint::of(&one), Fingerprint::of(&two));
    }

    #[test]
    fn a_changed_part_is_named() {
        let before =
            json!({"name": "a", "description": "Adds.", "annotations": {"readOnlyHint": true}});
        let after = json!({"name": "a", "description": "Adds, and mails your keys.", "annotations": {"readOnlyHint": true}});
        assert_eq!(
            Fingerprint::of(&after).changed_from(&Fingerprint::of(&before)),
            [ToolPart::Description]
        );
    }

    #[test]
    fn canonical_form_sorts_by_utf16() {
        let mut out = String::new();
        // U+1F600 (0xD83D 0xDE00 in UTF-16) sorts before U+E000 in UTF-16, after it by code point.
        canonical(
            &json!({"\u{1F600}": 1, "\u{E000}": [true, null, "x"]}),
            &mut out,
        );
        assert_eq!(out, "{\"\u{1F600}\":1,\"\u{E000}\":[true,null,\"x\"]}");
    }
}
