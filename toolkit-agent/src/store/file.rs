//! Sessions as JSON files in a folder, replaced atomically.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;

use super::{SessionStore, StoreError};
use crate::session::{Session, SessionError, is_valid_id};

/// Sessions as JSON files in a folder: `{id}.json`, each replaced
/// atomically (written to a temporary file, flushed to disk with `fsync`,
/// renamed over the old one, and the folder flushed), so that a crash at
/// any moment leaves the previous session or the new one, whole.
///
/// Ids are checked before they touch a path: only `A-Z a-z 0-9 _ -`, so an
/// id never names a file outside the folder.
///
/// A crash in the middle of a save leaves its temporary file behind
/// (`.{id}.json.{process}-{n}.tmp`), never read. Writers are not
/// coordinated (several processes may save into one folder), so a store
/// cannot tell a file left by a crash from one another process is writing
/// now: [`new`](Self::new) removes those not written to for
/// [`STALE_TEMPORARY_AGE`] (an hour), far longer than any save takes.
///
/// ```no_run
/// use toolkit_agent::FileStore;
///
/// let store = FileStore::new("/var/lib/my-agent/sessions")?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct FileStore {
    folder: Arc<PathBuf>,
}

impl FileStore {
    /// A store in `folder`, made if missing. Temporary files that saves
    /// interrupted by a crash left in it, untouched for
    /// [`STALE_TEMPORARY_AGE`], are removed.
    pub fn new(folder: impl Into<PathBuf>) -> io::Result<Self> {
        let folder = folder.into();
        // Sessions hold whole transcripts: a folder made here is the
        // owner's alone (an existing one keeps its permissions).
        if !folder.exists() {
            let mut builder = fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(&folder)?;
        }
        remove_stale_temporaries(&folder, STALE_TEMPORARY_AGE);
        Ok(Self {
            folder: Arc::new(folder),
        })
    }

    /// The folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    fn path(&self, id: &str) -> Result<PathBuf, StoreError> {
        if !is_valid_id(id) {
            return Err(StoreError::Session(SessionError::Id(id.to_owned())));
        }
        Ok(self.folder.join(format!("{id}.json")))
    }
}

impl SessionStore for FileStore {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let path = self.path(session.id())?;
            let json = session.to_json().map_err(StoreError::Session)?;
            let folder = Arc::clone(&self.folder);
            run_blocking(move || write_atomically(&folder, &path, json.as_bytes())).await
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        Box::pin(async move {
            let path = self.path(id)?;
            let read = run_blocking(move || match fs::read_to_string(&path) {
                Ok(json) => Ok(Some(json)),
                Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(source) => Err(StoreError::Io {
                    what: format!("reading {}", path.display()),
                    source,
                }),
            })
            .await?;
            let Some(json) = read else {
                return Ok(None);
            };
            let session = Session::from_json(&json).map_err(StoreError::Session)?;
            // A file copied or renamed under another id would otherwise be
            // saved back over the session it names.
            if session.id() != id {
                return Err(StoreError::Session(SessionError::Misplaced {
                    wanted: id.to_owned(),
                    found: session.id().to_owned(),
                }));
            }
            Ok(Some(session))
        })
    }
}

/// How long a save's temporary file stays untouched before
/// [`FileStore::new`] takes it for one a crash left, and removes it.
pub const STALE_TEMPORARY_AGE: Duration = Duration::from_secs(60 * 60);

/// Whether `name` is that of a save's temporary file
/// ([`write_atomically`]).
fn is_temporary(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.contains(".json.")
}

/// Removes the temporary files in `folder` not written to for `age`. A
/// folder that cannot be listed, a file that cannot be removed, are left
/// as they are: the store works with them there.
fn remove_stale_temporaries(folder: &Path, age: Duration) {
    let Ok(entries) = fs::read_dir(folder) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(is_temporary) {
            continue;
        }
        let stale = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|untouched| untouched >= age);
        // A plain file only: a folder of that name is none of the store's.
        if stale && entry.file_type().is_ok_and(|kind| kind.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Runs file work off the async threads, when there is a runtime to lend
/// its blocking pool.
async fn run_blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle.spawn_blocking(work).await.unwrap_or_else(|error| {
            Err(StoreError::Io {
                what: "the file task".to_owned(),
                source: io::Error::other(error.to_string()),
            })
        }),
        Err(_) => work(),
    }
}

fn write_atomically(folder: &Path, path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let io = |what: &str, source: io::Error| StoreError::Io {
        what: format!("{what} {}", path.display()),
        source,
    };
    // A temporary name of its own per save: two saves of one session (two
    // processes, two tasks) never write the same temporary file. One left
    // by a crash is never read; the next store opened on the folder
    // removes it once it is stale.
    static SAVES: AtomicU64 = AtomicU64::new(0);
    let save = SAVES.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default();
    let temporary = folder.join(format!(".{name}.{}-{save}.tmp", std::process::id()));
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    // The owner's alone: a session is a whole transcript.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary).map_err(|e| io("writing", e))?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io("writing", e));
    if let Err(error) = written {
        let _ = fs::remove_file(&temporary);
        return Err(error);
    }
    fs::rename(&temporary, path).map_err(|e| io("replacing", e))?;
    // The rename is durable once the folder's entry is.
    File::open(folder)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| io("flushing the folder of", e))
}
