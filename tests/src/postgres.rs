//! A throwaway Postgres server for tests: Debian's `postgresql` binaries
//! (`initdb`, `pg_ctl`), a temporary data folder, trust authentication on
//! 127.0.0.1, a free port; no system service. Stopped and removed when
//! dropped.
//!
//! `initdb` refuses to run as root: as root, the server runs as `nobody`
//! (through `setpriv`), its folder owned by it.

use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

/// A Postgres server of the test's own.
#[derive(Debug)]
pub struct Postgres {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    as_nobody: bool,
}

/// The folder of Postgres's programs: where `initdb` is on `PATH`, else
/// the newest of Debian's `/usr/lib/postgresql/*/bin`.
pub fn bin_dir() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let initdb = dir.join("initdb");
            if initdb.is_file() {
                let real = std::fs::canonicalize(&initdb).unwrap_or(initdb);
                return real.parent().map(Path::to_path_buf);
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

impl Postgres {
    /// Makes a data folder and starts a server on it. Fails when
    /// Postgres is not installed (`scripts/deps postgres` installs it).
    pub fn start() -> io::Result<Self> {
        let bin = bin_dir().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "Postgres is not installed: run scripts/deps postgres (Debian's postgresql)",
            )
        })?;
        static SERVERS: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "toolkit-postgres-{}-{}",
            std::process::id(),
            SERVERS.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let as_nobody = is_root();
        if as_nobody {
            // nobody's folder: its parent (the temporary folder) is open to
            // every user.
            let status = Command::new("chown").arg("nobody").arg(&dir).status()?;
            if !status.success() {
                return Err(io::Error::other("chown nobody failed"));
            }
        }
        let port = free_port()?;
        let server = Self {
            bin,
            dir,
            port,
            as_nobody,
        };
        let data = server.data();
        server.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--no-locale",
            ],
        )?;
        server.start_again()?;
        Ok(server)
    }

    /// The connection string: `host=127.0.0.1 port=... user=postgres
    /// dbname=postgres`.
    pub fn config(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            self.port
        )
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server (fast shutdown: clients are disconnected, nothing
    /// committed is lost), keeping its data.
    pub fn stop(&self) -> io::Result<()> {
        let data = self.data();
        self.run("pg_ctl", &["-D", &data, "-m", "fast", "-w", "stop"])
            .map(drop)
    }

    /// Starts the server again on its data and port, after [`stop`](Self::stop).
    pub fn start_again(&self) -> io::Result<()> {
        let data = self.data();
        let log = format!("{}/server.log", self.dir.display());
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -c unix_socket_directories='' -c max_connections=50",
            self.port
        );
        self.run(
            "pg_ctl",
            &[
                "-D", &data, "-l", &log, "-o", &options, "-w", "-t", "60", "start",
            ],
        )
        .map(drop)
    }

    /// The server's log, for a failing test to print.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    fn data(&self) -> String {
        self.dir.join("data").to_string_lossy().into_owned()
    }

    fn run(&self, program: &str, args: &[&str]) -> io::Result<Output> {
        let path = self.bin.join(program);
        let mut command = if self.as_nobody {
            let mut command = Command::new("setpriv");
            command
                .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
                .arg(&path);
            command
        } else {
            Command::new(&path)
        };
        let output = command.args(args).current_dir(&self.dir).output()?;
        if output.status.success() {
            Ok(output)
        } else {
            Err(io::Error::other(format!(
                "{program} failed: {}{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr),
                self.log()
            )))
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}

fn free_port() -> io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}
