//! The memory a browser session costs: PSS (shared pages divided among the
//! processes that map them) and RSS summed over the browser's process tree,
//! read from `/proc/<pid>/smaps_rollup` (Linux).

use std::collections::HashMap;
use std::path::Path;

/// One process of the browser's tree.
pub struct Process {
    /// Its id.
    pub pid: u32,
    /// Chromium's `--type=` (`renderer`, `zygote`, `utility`...), or
    /// `browser` for the main process.
    pub kind: String,
    /// Proportional set size, KiB.
    pub pss_kib: u64,
    /// Resident set size, KiB.
    pub rss_kib: u64,
    /// Unique set size (private pages only), KiB.
    pub uss_kib: u64,
}

/// The memory of a process tree.
pub struct Usage {
    /// Every process of the tree, the main one first.
    pub processes: Vec<Process>,
}

impl Usage {
    /// Summed PSS, KiB.
    pub fn pss_kib(&self) -> u64 {
        self.processes.iter().map(|p| p.pss_kib).sum()
    }

    /// Summed RSS, KiB (counts shared pages once per process that maps
    /// them, so it overstates what the session costs).
    pub fn rss_kib(&self) -> u64 {
        self.processes.iter().map(|p| p.rss_kib).sum()
    }

    /// Summed USS, KiB: what would be freed if the session ended.
    pub fn uss_kib(&self) -> u64 {
        self.processes.iter().map(|p| p.uss_kib).sum()
    }

    /// One line: `N processes, PSS x MiB (USS y MiB, RSS z MiB)`.
    pub fn summary(&self) -> String {
        format!(
            "{} processes, PSS {:.1} MiB (USS {:.1} MiB, RSS {:.1} MiB)",
            self.processes.len(),
            mib(self.pss_kib()),
            mib(self.uss_kib()),
            mib(self.rss_kib())
        )
    }

    /// One line per process.
    pub fn breakdown(&self) -> String {
        let mut out = String::new();
        for p in &self.processes {
            out.push_str(&format!(
                "    pid {:>7}  {:<26} PSS {:>6.1} MiB  USS {:>6.1} MiB  RSS {:>6.1} MiB\n",
                p.pid,
                p.kind,
                mib(p.pss_kib),
                mib(p.uss_kib),
                mib(p.rss_kib)
            ));
        }
        out
    }
}

#[allow(clippy::cast_precision_loss)] // KiB counts far below 2^52
fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The memory of `root` and all its descendants.
pub fn usage_of_tree(root: u32) -> Usage {
    let processes = tree(root)
        .into_iter()
        .map(|pid| {
            let [pss_kib, rss_kib, uss_kib] = rollup(pid);
            Process {
                pid,
                kind: kind(pid, root),
                pss_kib,
                rss_kib,
                uss_kib,
            }
        })
        .collect();
    Usage { processes }
}

/// `root` and its descendants, parents before children.
pub fn tree(root: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![root];
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = parent(pid) {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = vec![root];
    let mut k = 0;
    while k < out.len() {
        if let Some(kids) = children.get(&out[k]) {
            let mut kids = kids.clone();
            kids.sort_unstable();
            out.extend(kids);
        }
        k += 1;
    }
    out
}

/// The parent of `pid`, from `/proc/<pid>/stat` (the field after the
/// command name, which is in parentheses and may itself hold spaces or
/// parentheses).
fn parent(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// `[Pss, Rss, Uss]` of `pid` in KiB; zeros for a process that has gone.
fn rollup(pid: u32) -> [u64; 3] {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) else {
        return [0; 3];
    };
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kib| kib.parse::<u64>().ok())
            .unwrap_or(0)
    };
    [
        field("Pss:"),
        field("Rss:"),
        field("Private_Clean:") + field("Private_Dirty:"),
    ]
}

/// The processes outside `tree` running the same executable as its first
/// process (other sessions' browsers). They share the executable's pages
/// with the tree, so while they run the tree's PSS reads lower than it
/// would alone.
pub fn same_executable_outside(usage: &Usage) -> Vec<u32> {
    let Some(root) = usage.processes.first() else {
        return Vec::new();
    };
    let Ok(exe) = std::fs::read_link(format!("/proc/{}/exe", root.pid)) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| !usage.processes.iter().any(|p| p.pid == *pid))
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == exe))
        .collect()
}

fn kind(pid: u32, root: u32) -> String {
    if pid == root {
        return "browser".into();
    }
    // Chromium rewrites its helpers' command lines into one space-separated
    // string (as setproctitle does), so arguments are split on both.
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let cmdline = String::from_utf8_lossy(&cmdline);
    let args: Vec<&str> = cmdline
        .split(['\0', ' '])
        .filter(|a| !a.is_empty())
        .collect();
    let arg = |name: &str| args.iter().find_map(|a| a.strip_prefix(name));
    match (arg("--type="), arg("--utility-sub-type=")) {
        (Some(kind), Some(sub)) => format!("{kind} ({})", sub.rsplit('.').next().unwrap_or(sub)),
        // A renderer for the browser's own pages (headless Chromium keeps
        // one) or an extension, rather than for a tab.
        (Some(kind), None) if args.contains(&"--top-chrome-webui") => format!("{kind} (webui)"),
        (Some(kind), None) if args.contains(&"--extension-process") => {
            format!("{kind} (extension)")
        }
        (Some(kind), None) => kind.to_owned(),
        (None, _) => args
            .first()
            .and_then(|a| Path::new(a).file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}
