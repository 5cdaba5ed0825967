//! Memory cgroups that cap a trial's process at the budget and report its
//! peak, page cache included. cgroup v1 (`memory.limit_in_bytes`) and v2
//! (`memory.max`) are both handled; where neither can be made, the caller
//! falls back to the child's peak RSS.

use std::fs;
use std::path::{Path, PathBuf};

/// Why no memory cgroup could be made or used.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("cannot read /proc/self/cgroup: {0}")]
    Membership(std::io::Error),
    #[error("no writable memory cgroup: neither a v1 memory controller nor a v2 hierarchy with memory in cgroup.subtree_control")]
    NoController,
    #[error("cannot {action} {path}: {source}")]
    Io { action: String, path: PathBuf, source: std::io::Error },
}

fn io_error(action: impl Into<String>, path: &Path) -> impl FnOnce(std::io::Error) -> CgroupError {
    let (action, path) = (action.into(), path.to_path_buf());
    move |source| CgroupError::Io { action, path, source }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Version {
    V1,
    V2,
}

/// A memory cgroup made for one trial; removed when dropped.
#[derive(Debug)]
pub struct MemoryCgroup {
    pub path: PathBuf,
    pub version: Version,
}

/// Where new cgroups can be made: below the memory cgroup this process is in.
fn parent_dir() -> Result<(PathBuf, Version), CgroupError> {
    let own = fs::read_to_string("/proc/self/cgroup").map_err(CgroupError::Membership)?;
    for line in own.lines() {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) =
            (fields.next(), fields.next().unwrap_or(""), fields.next().unwrap_or(""));
        if controllers.split(',').any(|c| c == "memory") {
            let dir = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
            if dir.join("memory.limit_in_bytes").exists() {
                return Ok((dir, Version::V1));
            }
        }
    }
    for line in own.lines() {
        if let Some(path) = line.strip_prefix("0::") {
            for mount in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let dir = Path::new(mount).join(path.trim_start_matches('/'));
                let controllers = fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
                if controllers.split_whitespace().any(|c| c == "memory") {
                    return Ok((dir, Version::V2));
                }
            }
        }
    }
    Err(CgroupError::NoController)
}

/// Removes empty cgroups below ours whose name `stale` says is left over.
pub fn sweep(stale: &dyn Fn(&str) -> bool) {
    let Ok((parent, _)) = parent_dir() else {
        return;
    };
    for entry in fs::read_dir(parent).into_iter().flatten().flatten() {
        if entry.path().is_dir() && stale(&entry.file_name().to_string_lossy()) {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

impl MemoryCgroup {
    /// Makes a cgroup named `name` capped at `limit` bytes.
    pub fn create(name: &str, limit: u64) -> Result<Self, CgroupError> {
        let (parent, version) = parent_dir()?;
        let path = parent.join(name);
        if path.exists() {
            let _ = fs::remove_dir(&path);
        }
        fs::create_dir(&path).map_err(io_error("create cgroup", &path))?;
        let group = MemoryCgroup { path, version };
        // Keep swap out of it where the kernel accounts swap (no error if
        // not): v1 caps memory + swap together, v2 caps swap alone.
        match version {
            Version::V1 => {
                group.write("memory.limit_in_bytes", &limit.to_string())?;
                let _ = group.write("memory.memsw.limit_in_bytes", &limit.to_string());
            }
            Version::V2 => {
                group.write("memory.max", &limit.to_string())?;
                let _ = group.write("memory.swap.max", "0");
            }
        }
        Ok(group)
    }

    fn write(&self, file: &str, value: &str) -> Result<(), CgroupError> {
        let path = self.path.join(file);
        fs::write(&path, value).map_err(io_error(format!("write {value} to"), &path))
    }

    fn read_u64(&self, file: &str) -> Option<u64> {
        fs::read_to_string(self.path.join(file)).ok()?.trim().parse().ok()
    }

    /// Moves the calling process into the cgroup at `path` (run by the child
    /// before it allocates anything of note).
    pub fn join(path: &Path) -> Result<(), CgroupError> {
        fs::write(path.join("cgroup.procs"), std::process::id().to_string())
            .map_err(io_error("join cgroup", path))
    }

    /// Peak memory charged to the cgroup, page cache included.
    pub fn peak(&self) -> Option<u64> {
        match self.version {
            Version::V1 => self.read_u64("memory.max_usage_in_bytes"),
            Version::V2 => self.read_u64("memory.peak"),
        }
    }

    /// Anonymous memory (the process's own) and page cache charged to the
    /// cgroup now, from memory.stat.
    pub fn usage_split(&self) -> Option<(u64, u64)> {
        let text = fs::read_to_string(self.path.join("memory.stat")).ok()?;
        let (anon, file) = match self.version {
            Version::V1 => ("rss", "cache"),
            Version::V2 => ("anon", "file"),
        };
        let field = |name: &str| {
            text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse::<u64>().ok())
        };
        Some((field(anon)?, field(file)?))
    }

    /// Whether the kernel's OOM killer acted inside this cgroup, given that
    /// the process was (or was not) ended by SIGKILL.
    pub fn oom_killed(&self, sigkilled: bool) -> bool {
        let file = match self.version {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        };
        let text = fs::read_to_string(self.path.join(file)).unwrap_or_default();
        let counted = text.lines().find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse::<u64>().ok());
        match counted {
            Some(n) => n > 0,
            // Older v1 kernels lack the counter: a SIGKILL at the limit is the sign.
            None => sigkilled && self.read_u64("memory.failcnt").unwrap_or(0) > 0,
        }
    }

    pub fn describe(&self) -> &'static str {
        match self.version {
            Version::V1 => "cgroup v1 memory.max_usage_in_bytes (page cache included)",
            Version::V2 => "cgroup v2 memory.peak (page cache included)",
        }
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // The child has exited; an empty cgroup can be removed (v1 moves any
        // page cache still charged to it up to the parent).
        for _ in 0..50 {
            if fs::remove_dir(&self.path).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
