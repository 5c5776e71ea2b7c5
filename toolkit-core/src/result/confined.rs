//! Files opened inside a folder, and nowhere else.
//!
//! A tool names a file (a saved output, an image) and the host reads it, so
//! the name must not lead the host outside the folder it allows: not by
//! `..`, not by a link, not by a link swapped in between a check and the
//! open. The file is therefore opened once, one component at a time from
//! the folder, each component refusing to be a link (`O_NOFOLLOW`), and what
//! was opened is then checked on the open handle: folders on the way, a
//! regular file at the end. Nothing is looked up by name twice. The open
//! itself never waits (`O_NONBLOCK`), so a FIFO planted in the folder is
//! refused instead of hanging the host.
//!
//! On Linux each component is opened relative to the handle of the folder
//! above it (through `/proc/self/fd`, `openat` without `unsafe`); elsewhere,
//! and where `/proc` is not mounted, by its path from the folder, every
//! component still refusing to be a link.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a file inside a folder could not be opened.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The folder itself cannot be opened.
    Folder(io::Error),
    /// The path leaves the folder: absolute elsewhere, `..`, or through a
    /// link.
    Outside,
    /// The path names something other than a regular file (a folder, a
    /// FIFO, a device).
    NotAFile,
    /// The file cannot be opened (it does not exist, it is not readable).
    Io(io::Error),
}

/// Opens `path` for reading, relative to `dir` (an absolute `path` must lie
/// under `dir` as given or as resolved), following no link inside `dir`,
/// and returns it if it is a regular file.
pub(crate) fn open_inside(dir: &Path, path: &Path) -> Result<File, Refused> {
    let relative = relative_to(dir, path)?;
    let components = components(&relative)?;
    let folder = File::open(dir).map_err(Refused::Folder)?;
    if !folder.metadata().map_err(Refused::Folder)?.is_dir() {
        return Err(Refused::Folder(io::Error::new(
            io::ErrorKind::NotADirectory,
            "not a folder",
        )));
    }
    let mut current = folder;
    let mut walked = dir.to_path_buf();
    let last = components.len() - 1;
    for (i, name) in components.iter().enumerate() {
        walked.push(name);
        let next = open_no_follow(&current, &walked, name)?;
        let metadata = next.metadata().map_err(Refused::Io)?;
        let fits = if i == last {
            metadata.is_file()
        } else {
            metadata.is_dir()
        };
        if !fits {
            return Err(if i == last {
                Refused::NotAFile
            } else {
                Refused::Outside
            });
        }
        current = next;
    }
    Ok(current)
}

/// `path` relative to `dir`: as is when relative, else with `dir`'s prefix
/// (as given, or resolved) taken off.
fn relative_to(dir: &Path, path: &Path) -> Result<PathBuf, Refused> {
    if path.is_relative() {
        return Ok(path.to_path_buf());
    }
    if let Ok(rest) = path.strip_prefix(dir) {
        return Ok(rest.to_path_buf());
    }
    let real = dir.canonicalize().map_err(Refused::Folder)?;
    path.strip_prefix(&real)
        .map(Path::to_path_buf)
        .map_err(|_| Refused::Outside)
}

/// The names to open one after the other; `.` is skipped, and anything that
/// climbs or restarts (`..`, a root, a drive) leaves the folder.
fn components(relative: &Path) -> Result<Vec<&std::ffi::OsStr>, Refused> {
    let mut names = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(Refused::Outside);
            }
        }
    }
    if names.is_empty() {
        // The folder itself.
        return Err(Refused::NotAFile);
    }
    Ok(names)
}

/// Opens `name` inside the folder open as `parent` (whose path from the
/// allowed folder is `path`'s parent), refusing a link.
fn open_no_follow(parent: &File, path: &Path, name: &std::ffi::OsStr) -> Result<File, Refused> {
    let target = at(parent, name).unwrap_or_else(|| path.to_path_buf());
    let mut options = OpenOptions::new();
    options.read(true);
    no_follow(&mut options);
    options.open(&target).map_err(|error| {
        if is_link_refused(&error) {
            Refused::Outside
        } else {
            Refused::Io(error)
        }
    })
}

/// The path that opens `name` relative to the open folder `parent`, without
/// looking the folder up by name again: `/proc/self/fd/<fd>/<name>`.
#[cfg(target_os = "linux")]
fn at(parent: &File, name: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::sync::OnceLock;

    static PROC_FD: OnceLock<bool> = OnceLock::new();
    let mounted = *PROC_FD.get_or_init(|| Path::new("/proc/self/fd").is_dir());
    mounted.then(|| {
        let mut path = PathBuf::from(format!("/proc/self/fd/{}", parent.as_raw_fd()));
        path.push(name);
        path
    })
}

#[cfg(not(target_os = "linux"))]
fn at(_parent: &File, _name: &std::ffi::OsStr) -> Option<PathBuf> {
    None
}

#[cfg(unix)]
fn no_follow(options: &mut OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt;
    // The flags are the C library's: their values differ between systems
    // and architectures (O_NOFOLLOW is 0o400000 on x86-64 Linux but
    // 0o100000 on AArch64 Linux), so they come from `libc`, not from here.
    options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
}

#[cfg(not(unix))]
fn no_follow(_options: &mut OpenOptions) {}

/// Whether an open failed because the last component is a link.
#[cfg(unix)]
fn is_link_refused(error: &io::Error) -> bool {
    // Linux and macOS say ELOOP; FreeBSD says EMLINK, NetBSD EFTYPE.
    let codes: &[i32] = &[
        libc::ELOOP,
        #[cfg(any(target_os = "freebsd", target_os = "dragonfly"))]
        libc::EMLINK,
        #[cfg(target_os = "netbsd")]
        libc::EFTYPE,
    ];
    error
        .raw_os_error()
        .is_some_and(|code| codes.contains(&code))
}

#[cfg(not(unix))]
fn is_link_refused(_error: &io::Error) -> bool {
    false
}
