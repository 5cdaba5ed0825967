//! The work directory trial databases are made in: a check that it is a real
//! disk, and the sweep of what dead kvtune processes left in it.

use std::path::Path;

use super::cgroup;

/// Warns when `dir` is on tmpfs: results there do not match a real disk.
pub fn warn_if_tmpfs(dir: &Path) {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let probe = dir.ancestors().find(|p| p.exists()).unwrap_or(Path::new("."));
    let Ok(c_path) = std::ffi::CString::new(probe.as_os_str().as_encoded_bytes()) else {
        return;
    };
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is a valid C string and stat a properly sized buffer.
    if unsafe { libc::statfs(c_path.as_ptr(), &mut stat) } == 0 && stat.f_type as i64 == TMPFS_MAGIC {
        eprintln!(
            "warning: the work directory {} is on tmpfs (memory), not a disk: results will not match a real disk; pass --workdir DIR on a disk",
            dir.display()
        );
    }
}

/// Removes trial directories and cgroups left by kvtune processes that died
/// (names carry the owner's pid), so an interrupted run leaves nothing behind.
pub(super) fn sweep_stale(workdir: &Path) {
    let dead = |name: &str, prefix: &str| {
        let pid = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<i32>().ok());
        // SAFETY: kill with signal 0 only checks that the process exists.
        pid.is_some_and(|pid| {
            let gone = unsafe { libc::kill(pid, 0) } != 0;
            gone && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
        })
    };
    for entry in std::fs::read_dir(workdir).into_iter().flatten().flatten() {
        if dead(&entry.file_name().to_string_lossy(), "trial-") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    cgroup::sweep(&|name| dead(name, "kvtune-"));
}
