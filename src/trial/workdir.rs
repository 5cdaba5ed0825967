//! The work directory trial databases are made in: a check that it is a real
//! disk, and the sweep of what dead kvtune processes left in it.

use std::path::Path;

use super::cgroup;

/// The file system `dir` (or its nearest existing ancestor) is on.
fn statfs(dir: &Path) -> Option<libc::statfs> {
    let probe = dir.ancestors().find(|p| p.exists()).unwrap_or(Path::new("."));
    let c_path = std::ffi::CString::new(probe.as_os_str().as_encoded_bytes()).ok()?;
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c_path is a valid C string and stat a properly sized buffer.
    (unsafe { libc::statfs(c_path.as_ptr(), &mut stat) } == 0).then_some(stat)
}

/// File systems a work directory should not be on, by their statfs magic:
/// memory, or a network between kvtune and its disk.
const NOT_A_LOCAL_DISK: [(libc::__fsword_t, &str); 6] = [
    (0x0102_1994, "tmpfs (memory, charged to each trial's memory budget)"),
    (0x6969, "NFS (a network file system)"),
    (0xFF53_4D42, "CIFS/SMB (a network file system)"),
    (0xFE53_4D42, "SMB2 (a network file system)"),
    (0x6573_5546, "FUSE (a user-space file system)"),
    (0x0000_0187, "autofs"),
];

/// Warns when `dir` is not on a local disk: results there do not mean what
/// users think (memory is far faster than a disk, a network far slower).
pub fn warn_if_not_a_local_disk(dir: &Path) {
    let Some(stat) = statfs(dir) else { return };
    if let Some((_, what)) = NOT_A_LOCAL_DISK.iter().find(|(magic, _)| *magic == stat.f_type) {
        eprintln!(
            "warning: the work directory {} is on {what}, not a local disk: results will not match a real disk; pass --workdir DIR on a disk",
            dir.display()
        );
    }
}

/// Bytes an unprivileged process may still write where `dir` is.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    statfs(dir).map(|s| s.f_bavail * s.f_frsize as u64)
}

/// Disk a trial needs for `user_bytes` of data, at least: an LSM holds the
/// data and the copies compaction writes before it drops the old ones,
/// plus the write-ahead log, so about twice the data at the worst moment
/// (compression makes it less, uncompressed blob files more).
pub fn disk_needed(user_bytes: u64) -> u64 {
    user_bytes.saturating_mul(2)
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
