//! Sessions in a folder: each a snapshot, replaced atomically now and
//! then, and a journal of what each save added since.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Read as _, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

use super::{SessionStore, StoreError};
use crate::session::{Session, SessionChanges, SessionError, is_valid_id, new_mark};

/// The store format [`FileStore`] writes, and the latest it reads: a
/// session's snapshot says which it was written in, and a later one is
/// refused with [`StoreError::Format`]. Sessions saved before there was a
/// store format (a plain `{id}.json` holding the session's JSON form) are
/// read as they are, and written in this format at their next save.
pub const STORE_FORMAT: u32 = 1;

/// How long the journal may grow before the next save writes a snapshot
/// instead: this many times the snapshot, and never less than
/// [`MIN_JOURNAL`]. A record holds little more than what its step added,
/// so each snapshot is some times the one before: over a run, the
/// snapshots written add up to a small multiple of the last, and the
/// records to about what the steps added (a 200-step run of 50 KB
/// results writes under twice what it stores).
const JOURNAL_FACTOR: u64 = 2;

/// Below this, a journal grows before it is folded into a snapshot:
/// small sessions are not rewritten at every save.
const MIN_JOURNAL: u64 = 1024 * 1024;

/// Sessions as files in a folder: each a snapshot, `{id}.json`, and a
/// journal, `{id}.log`, of what each save added since.
///
/// A save appends one record to the journal, with one flush
/// (`fdatasync`): what the step added (its items and results, where the
/// run stands, the pending calls), not the whole transcript again, so a
/// save late in a long run costs what one early in it does. Each record
/// is framed with its length and a checksum: a record a crash cut short
/// is seen and ignored, and cut off at the next save. When the journal
/// outgrows twice the snapshot, the save writes a new snapshot instead,
/// atomically (to a temporary file, flushed, renamed over the old one,
/// and the folder flushed) and starts the journal over. A crash at any
/// moment leaves the session as a save left it, whole; a save that
/// returned is never lost. Loading reads the snapshot and applies the
/// journal after it.
///
/// The snapshot's first line names the [store format](STORE_FORMAT); a
/// session saved by an earlier version (`{id}.json` alone, the session's
/// JSON form) loads as it is. Read a stored session through
/// [`load`](SessionStore::load): the snapshot alone may be behind.
///
/// Ids are checked before they touch a path: only `A-Z a-z 0-9 _ -`, so an
/// id never names a file outside the folder.
///
/// A crash in the middle of a snapshot leaves its temporary file behind
/// (`.{id}.json.{process}-{n}.tmp`), never read. Writers are not
/// coordinated (several processes may save into one folder), so a store
/// cannot tell a file left by a crash from one another process is writing
/// now: [`new`](Self::new) removes those not written to for
/// [`STALE_TEMPORARY_AGE`] (an hour), far longer than any save takes. A
/// store that sees the files of a session changed by another writer since
/// it last wrote them saves that session whole; two processes saving one
/// session at once still overwrite each other, as with any store: the
/// host keeps a session to one process at a time.
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
    /// What this process last wrote or read of each session, shared by
    /// the store's clones.
    stored: Arc<Mutex<HashMap<String, Arc<AsyncMutex<Stored>>>>>,
}

/// What the files of one session hold, as this process last wrote or read
/// them.
#[derive(Debug, Default)]
struct Stored {
    /// The mark of the session they hold, when known: changes based on it
    /// are appended; others save the session whole.
    mark: Option<u64>,
    /// The snapshot's journal: its records carry it, so that records left
    /// from before a snapshot are never read after it.
    chain: u64,
    /// The last record's number in the chain.
    seq: u64,
    /// The bytes of the journal that are the chain's records.
    journal: u64,
    /// The snapshot's length and time, to see another writer's.
    snapshot: Option<(u64, Option<SystemTime>)>,
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
            stored: Arc::default(),
        })
    }

    /// The folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    fn files(&self, id: &str) -> Result<Files, StoreError> {
        if !is_valid_id(id) {
            return Err(StoreError::Session(SessionError::Id(id.to_owned())));
        }
        Ok(Files {
            folder: Arc::clone(&self.folder),
            snapshot: self.folder.join(format!("{id}.json")),
            journal: self.folder.join(format!("{id}.log")),
        })
    }

    /// What this process knows of session `id`'s files, held while they
    /// are written or read.
    async fn lock(&self, id: &str) -> OwnedMutexGuard<Stored> {
        let entry = {
            let mut stored = self.stored.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(stored.entry(id.to_owned()).or_default())
        };
        entry.lock_owned().await
    }

    /// Writes `session` as the snapshot, starting a new journal.
    async fn snapshot(
        &self,
        session: &Session,
        mut stored: OwnedMutexGuard<Stored>,
        mark: Option<u64>,
    ) -> Result<(), StoreError> {
        let files = self.files(session.id())?;
        let json = session.to_json().map_err(StoreError::Session)?;
        run_blocking(move || {
            // Known only once the snapshot is in place.
            stored.mark = None;
            let chain = new_mark();
            let header =
                format!("{{\"store_format\":{STORE_FORMAT},\"chain\":\"{chain:016x}\"}}\n");
            write_atomically(
                &files.folder,
                &files.snapshot,
                &[header.as_bytes(), json.as_bytes()],
            )?;
            let snapshot = fs::metadata(&files.snapshot).ok();
            *stored = Stored {
                mark: None,
                chain,
                seq: 0,
                journal: 0,
                snapshot: snapshot.map(|m| (m.len(), m.modified().ok())),
            };
            // The old journal's records name the old chain: never read
            // again, so emptying it needs no flush. Until it is emptied,
            // nothing is appended.
            match fs::OpenOptions::new().write(true).open(&files.journal) {
                Ok(file) if file.set_len(0).is_err() => return Ok(()),
                Err(error) if error.kind() != io::ErrorKind::NotFound => return Ok(()),
                _ => {}
            }
            stored.mark = mark;
            Ok(())
        })
        .await
    }
}

/// The paths of one session's files.
struct Files {
    folder: Arc<PathBuf>,
    snapshot: PathBuf,
    journal: PathBuf,
}

impl SessionStore for FileStore {
    fn save<'a>(&'a self, session: &'a Session) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.files(session.id())?;
            let stored = self.lock(session.id()).await;
            self.snapshot(session, stored, None).await
        })
    }

    fn save_changes<'a>(
        &'a self,
        changes: &'a SessionChanges<'a>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let session = changes.session();
            let files = self.files(session.id())?;
            let stored = self.lock(session.id()).await;
            let appendable = stored.mark.is_some() && stored.mark == changes.base();
            if !appendable {
                return self.snapshot(session, stored, Some(changes.mark())).await;
            }
            let record = changes.to_json().map_err(StoreError::Session)?;
            let bound =
                (stored.snapshot.map_or(0, |(len, _)| len) * JOURNAL_FACTOR).max(MIN_JOURNAL);
            if stored.journal + (FRAME_HEADER + record.len()) as u64 > bound {
                return self.snapshot(session, stored, Some(changes.mark())).await;
            }
            let mark = changes.mark();
            let (stored, appended) = run_blocking(move || {
                let mut stored = stored;
                let appended = append(&files, &mut stored, record.as_bytes(), mark);
                Ok((stored, appended))
            })
            .await?;
            match appended? {
                Appended::Yes => Ok(()),
                Appended::ChangedElsewhere => {
                    self.snapshot(session, stored, Some(changes.mark())).await
                }
            }
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Session>, StoreError>> {
        Box::pin(async move {
            let files = self.files(id)?;
            let stored = self.lock(id).await;
            let (mut stored, loaded) = run_blocking(move || {
                let mut stored = stored;
                let loaded = read(&files, &mut stored);
                Ok((stored, loaded))
            })
            .await?;
            stored.mark = None;
            let Some((mut session, journaled)) = loaded? else {
                return Ok(None);
            };
            // A file copied or renamed under another id would otherwise be
            // saved back over the session it names.
            if session.id() != id {
                return Err(StoreError::Session(SessionError::Misplaced {
                    wanted: id.to_owned(),
                    found: session.id().to_owned(),
                }));
            }
            // The next save appends to what was read; a session stored
            // before the journal is written whole first.
            if journaled {
                let mark = new_mark();
                session.mark_saved(mark);
                stored.mark = Some(mark);
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

fn write_atomically(folder: &Path, path: &Path, parts: &[&[u8]]) -> Result<(), StoreError> {
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
    let written = parts
        .iter()
        .try_for_each(|part| file.write_all(part))
        .and_then(|()| file.sync_all())
        .map_err(|e| io("writing", e));
    if let Err(error) = written {
        let _ = fs::remove_file(&temporary);
        return Err(error);
    }
    fs::rename(&temporary, path).map_err(|e| io("replacing", e))?;
    // The rename is durable once the folder's entry is.
    sync_folder(folder).map_err(|e| io("flushing the folder of", e))
}

fn sync_folder(folder: &Path) -> io::Result<()> {
    File::open(folder).and_then(|dir| dir.sync_all())
}

/// A record's frame before its JSON: the JSON's length and the CRC-32 of
/// what follows it (`u32` each), the chain and the record's number in it
/// (`u64` each), all little-endian.
const FRAME_HEADER: usize = 24;

/// What an append did.
enum Appended {
    Yes,
    /// The files are not as this process left them: another writer's.
    ChangedElsewhere,
}

/// Appends one record to the session's journal, flushed to disk before it
/// returns.
fn append(
    files: &Files,
    stored: &mut Stored,
    record: &[u8],
    mark: u64,
) -> Result<Appended, StoreError> {
    let io = |what: &str, source: io::Error| StoreError::Io {
        what: format!("{what} {}", files.journal.display()),
        source,
    };
    let snapshot = fs::metadata(&files.snapshot)
        .ok()
        .map(|m| (m.len(), m.modified().ok()));
    if snapshot.is_none() || snapshot != stored.snapshot {
        return Ok(Appended::ChangedElsewhere);
    }
    let Ok(length) = u32::try_from(record.len()) else {
        // Too long for a frame: the session is saved whole instead.
        return Ok(Appended::ChangedElsewhere);
    };
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let (mut file, created) = match options.open(&files.journal) {
        Ok(file) => (file, true),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => (
            fs::OpenOptions::new()
                .write(true)
                .open(&files.journal)
                .map_err(|e| io("opening", e))?,
            false,
        ),
        Err(error) => return Err(io("creating", error)),
    };
    let on_disk = file.metadata().map_err(|e| io("reading", e))?.len();
    if on_disk < stored.journal {
        return Ok(Appended::ChangedElsewhere);
    }
    let seq = stored.seq + 1;
    let mut frame = Vec::with_capacity(FRAME_HEADER + record.len());
    frame.extend_from_slice(&length.to_le_bytes());
    frame.extend_from_slice(&[0; 4]);
    frame.extend_from_slice(&stored.chain.to_le_bytes());
    frame.extend_from_slice(&seq.to_le_bytes());
    frame.extend_from_slice(record);
    let checksum = crc32(&frame[8..]);
    frame[4..8].copy_from_slice(&checksum.to_le_bytes());
    // A tail a crash cut short (or records not of this chain) is cut off
    // by writing over it; the flush makes the new length durable too.
    let written = (|| {
        if on_disk > stored.journal {
            file.set_len(stored.journal)?;
        }
        file.seek(SeekFrom::Start(stored.journal))?;
        file.write_all(&frame)?;
        file.sync_data()
    })();
    if let Err(error) = written {
        // What was written may or may not be on disk: the next save
        // writes the session whole.
        let _ = file.set_len(stored.journal);
        stored.mark = None;
        return Err(io("appending to", error));
    }
    stored.journal += frame.len() as u64;
    stored.seq = seq;
    stored.mark = Some(mark);
    if created {
        // The new file's entry in the folder must be durable too.
        if let Err(error) = sync_folder(&files.folder) {
            stored.mark = None;
            return Err(io("flushing the folder of", error));
        }
    }
    Ok(Appended::Yes)
}

/// The stored session: its snapshot and the journal after it, and
/// whether the next save may append (a snapshot in the current form).
fn read(files: &Files, stored: &mut Stored) -> Result<Option<(Session, bool)>, StoreError> {
    let io = |path: &Path, source: io::Error| StoreError::Io {
        what: format!("reading {}", path.display()),
        source,
    };
    let mut text = String::new();
    match File::open(&files.snapshot) {
        Ok(mut file) => {
            file.read_to_string(&mut text)
                .map_err(|e| io(&files.snapshot, e))?;
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io(&files.snapshot, error)),
    }
    let snapshot = fs::metadata(&files.snapshot)
        .ok()
        .map(|m| (m.len(), m.modified().ok()));
    const PREFIX: &str = "{\"store_format\":";
    if !text.starts_with(PREFIX) {
        // Saved before the store had a format: the session's JSON form.
        let session = Session::from_json(&text).map_err(StoreError::Session)?;
        *stored = Stored {
            snapshot,
            ..Stored::default()
        };
        return Ok(Some((session, false)));
    }
    let (header, json) = text.split_once('\n').unwrap_or((&text, ""));
    let header: Header = serde_json::from_str(header)
        .map_err(|error| StoreError::Session(SessionError::Json(error)))?;
    if header.store_format > STORE_FORMAT {
        return Err(StoreError::Format {
            what: files.snapshot.display().to_string(),
            found: header.store_format,
        });
    }
    let chain = u64::from_str_radix(&header.chain, 16).map_err(|_| {
        StoreError::Session(SessionError::Json(serde::de::Error::custom(format!(
            "the snapshot's chain `{}` is not 16 hexadecimal digits",
            header.chain
        ))))
    })?;
    let mut session = Session::from_json(json).map_err(StoreError::Session)?;
    let journal = match fs::read(&files.journal) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(error) => return Err(io(&files.journal, error)),
    };
    let mut at = 0;
    let mut seq = 0;
    while let Some((record, next)) = frame_at(&journal, at, chain, seq + 1) {
        let record = std::str::from_utf8(record).map_err(|_| {
            StoreError::Session(SessionError::Json(serde::de::Error::custom(format!(
                "record {} of {} is not UTF-8",
                seq + 1,
                files.journal.display()
            ))))
        })?;
        session.apply_changes(record).map_err(StoreError::Session)?;
        seq += 1;
        at = next;
    }
    *stored = Stored {
        mark: None,
        chain,
        seq,
        journal: at as u64,
        snapshot,
    };
    Ok(Some((session, true)))
}

/// The record framed at `at`, and where the next begins, when it is whole,
/// its checksum right, and it is record `seq` of `chain`: the end of the
/// journal otherwise (a tail a crash cut short, or records from before
/// the snapshot).
fn frame_at(journal: &[u8], at: usize, chain: u64, seq: u64) -> Option<(&[u8], usize)> {
    let header = journal.get(at..at.checked_add(FRAME_HEADER)?)?;
    let length = u32::from_le_bytes(header[0..4].try_into().ok()?) as usize;
    let checksum = u32::from_le_bytes(header[4..8].try_into().ok()?);
    let end = at.checked_add(FRAME_HEADER)?.checked_add(length)?;
    let framed = journal.get(at + 8..end)?;
    if crc32(framed) != checksum {
        return None;
    }
    let record_chain = u64::from_le_bytes(framed[0..8].try_into().ok()?);
    let record_seq = u64::from_le_bytes(framed[8..16].try_into().ok()?);
    (record_chain == chain && record_seq == seq).then(|| (&framed[16..], end))
}

/// A snapshot's first line.
#[derive(serde::Deserialize)]
struct Header {
    store_format: u32,
    chain: String,
}

/// CRC-32 (IEEE 802.3, as zlib and PNG use), to see a torn record.
fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut n = 0;
        while n < 256 {
            let mut c = n as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[n] = c;
            n += 1;
        }
        table
    };
    let mut crc = !0u32;
    for &byte in bytes {
        crc = TABLE[((crc ^ u32::from(byte)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}
