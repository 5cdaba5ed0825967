//! Other kvtune processes running trials on this machine. Two studies on one
//! machine slow and shake each other's figures (a ycsb-f study beside a tbs
//! one ran at half speed), and neither can tell from its own numbers. Each
//! process holds, from its first trial until it exits, a lock on a file of
//! its own in a directory the machine's processes share; around each trial
//! the runner looks for the others' held locks, warns once for each, and
//! records them on the run. Other programs are not seen, nor kvtune in
//! another container (its own /dev/shm): CPU steal is recorded apart, and
//! a quiet machine is still the user's to keep.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::record::Neighbour;

/// Where the processes of one machine announce that they run trials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registry {
    dir: PathBuf,
    /// The study this process runs trials for: its other workers on this
    /// machine (`--workers N`) run beside it on purpose and are not counted.
    study: Option<PathBuf>,
}

/// What a process's file in the registry says of it.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    pid: u32,
    study: Option<PathBuf>,
    command: String,
}

/// A registration this process holds: the lock lives as long as the file
/// stays open.
struct Held {
    dir: PathBuf,
    study: Option<PathBuf>,
    file: File,
}

/// This process's registrations, one per registry directory.
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

/// Neighbours this process has warned about.
static WARNED: Mutex<BTreeSet<Neighbour>> = Mutex::new(BTreeSet::new());

/// Says once per process that the registry cannot be used.
static UNUSABLE: std::sync::Once = std::sync::Once::new();

impl Registry {
    /// The machine's: `KVTUNE_RUNNING_DIR` if set (a test's own), else in
    /// /dev/shm (memory, emptied at boot), else the temporary directory.
    pub fn machine() -> Self {
        if let Some(dir) = std::env::var_os("KVTUNE_RUNNING_DIR") {
            return Registry::at(dir.into());
        }
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() };
        Registry::at(base.join("kvtune-running"))
    }

    /// A registry in `dir` (tests keep theirs apart from the machine's).
    pub fn at(dir: PathBuf) -> Self {
        Registry { dir, study: None }
    }

    /// The same registry, for a process running trials of the study in `dir`.
    pub fn for_study(self, study: &Path) -> Self {
        Registry { study: Some(study.to_path_buf()), ..self }
    }

    /// Registers this process as running trials, for its study: idempotent,
    /// and cheap enough to call before each trial, which restores a file a
    /// sweep removed. A study's workers on one machine register before the
    /// first of them runs a trial, so none takes another for a stranger.
    pub fn register(&self) {
        if let Err(why) = self.try_register() {
            UNUSABLE.call_once(|| {
                eprintln!(
                    "warning: cannot watch for other kvtune processes running trials on this machine ({}: {why})",
                    self.dir.display()
                );
            });
        }
    }

    fn try_register(&self) -> std::io::Result<()> {
        let mut held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let own = held.iter().position(|h| h.dir == self.dir);
        let current = own.is_some_and(|i| {
            let h = &held[i];
            h.study == self.study && names(&self.own_path(), &h.file)
        });
        if current {
            return Ok(());
        }
        let file = self.publish()?;
        let registration = Held { dir: self.dir.clone(), study: self.study.clone(), file };
        match own {
            // The old file, now unlinked, is closed and its lock let go.
            Some(i) => held[i] = registration,
            None => held.push(registration),
        }
        Ok(())
    }

    /// This process's file: user and pid, so that one user's stale file
    /// never stands in the way of another's process with that pid.
    fn own_path(&self) -> PathBuf {
        // SAFETY: getuid cannot fail.
        let uid = unsafe { libc::getuid() };
        self.dir.join(format!("{uid}-{}", std::process::id()))
    }

    /// Writes this process's entry to a new file, locks it, and renames it
    /// to its place: a reader finds the whole entry, locked, or nothing.
    fn publish(&self) -> std::io::Result<File> {
        if !self.dir.is_dir() {
            std::fs::create_dir_all(&self.dir)?;
            // Every user's kvtune registers here; the sticky bit keeps each
            // one's file its own.
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o1777));
        }
        let own = self.own_path();
        let fresh = self.dir.join(format!(".{}.new", own.file_name().unwrap_or_default().to_string_lossy()));
        let mut file = OpenOptions::new().write(true).create(true).truncate(true).mode(0o644).open(&fresh)?;
        let entry = Entry { pid: std::process::id(), study: self.study.clone(), command: command_line() };
        file.write_all(&serde_json::to_vec(&entry)?)?;
        if !try_flock(&file, libc::LOCK_EX) {
            return Err(std::io::Error::other(format!("{} is locked by another process", fresh.display())));
        }
        std::fs::rename(&fresh, &own)?;
        Ok(file)
    }

    /// The other kvtune processes running trials here now, but this one's
    /// study's workers; warns once for each new one.
    pub fn watch(&self) -> Vec<Neighbour> {
        let found = self.others();
        warn_of_new(&found);
        found
    }

    /// Registered processes whose lock is held, but this one and its
    /// study's workers; the files of ended ones are removed.
    fn others(&self) -> Vec<Neighbour> {
        let own = self.own_path();
        let mut found = vec![];
        for dir_entry in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            let path = dir_entry.path();
            if path == own || dir_entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(mut file) = File::open(&path) else { continue };
            if try_flock(&file, libc::LOCK_EX) {
                // Nobody holds it: its process ended. Removed only if the
                // name is still this file, not a new process's put there since.
                if names(&path, &file) {
                    let _ = std::fs::remove_file(&path);
                }
                continue;
            }
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let Ok(entry) = serde_json::from_str::<Entry>(&text) else { continue };
            if self.study.is_none() || entry.study != self.study {
                found.push(Neighbour { pid: entry.pid, command: entry.command });
            }
        }
        found.sort();
        found
    }
}

/// Whether `path` names `file` (not another file put there since).
fn names(path: &Path, file: &File) -> bool {
    let (Ok(named), Ok(open)) = (std::fs::metadata(path), file.metadata()) else { return false };
    named.ino() == open.ino() && named.dev() == open.dev()
}

/// Takes `operation` (shared or exclusive) on `file` without waiting.
fn try_flock(file: &File, operation: libc::c_int) -> bool {
    // SAFETY: flock on a descriptor `file` owns for the whole call.
    unsafe { libc::flock(file.as_raw_fd(), operation | libc::LOCK_NB) == 0 }
}

/// This process's command line, as a person would type it.
fn command_line() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .map(|p| Path::new(&p).file_name().map_or(p.clone(), |name| name.to_string_lossy().into_owned()));
    program.into_iter().chain(args).collect::<Vec<_>>().join(" ")
}

/// Warns of each neighbour not warned of before.
fn warn_of_new(found: &[Neighbour]) {
    let mut warned = WARNED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    for neighbour in found.iter().filter(|n| warned.insert((*n).clone())) {
        eprintln!(
            "warning: another kvtune is running trials on this machine (pid {}: `{}`): figures measured beside it \
             are slower and noisier; those runs are marked in the results. Run one study at a time on a machine.",
            neighbour.pid, neighbour.command
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A registration as another process would hold it: its own open file
    /// description, which flock treats apart from this process's others.
    fn hold_as(dir: &Path, pid: u32, study: Option<&str>) -> File {
        let path = dir.join(format!("0-{pid}"));
        let entry = Entry { pid, study: study.map(PathBuf::from), command: format!("kvtune study {pid}") };
        std::fs::write(&path, serde_json::to_vec(&entry).unwrap()).unwrap();
        let file = File::open(&path).unwrap();
        assert!(try_flock(&file, libc::LOCK_EX));
        file
    }

    #[test]
    fn a_process_holding_its_lock_is_a_neighbour_and_an_ended_ones_file_is_swept() {
        let dir = tempfile::tempdir().unwrap();
        let running = dir.path().join("running");
        let registry = Registry::at(running.clone());
        registry.register();
        assert_eq!(registry.watch(), vec![], "alone at first");
        assert!(registry.own_path().exists(), "this process registered itself");

        let live = hold_as(&running, 4_000_001, None);
        let ended = hold_as(&running, 4_000_002, None);
        drop(ended);
        let found = registry.watch();
        assert_eq!(found, vec![Neighbour { pid: 4_000_001, command: "kvtune study 4000001".into() }]);
        assert!(!running.join("0-4000002").exists(), "the ended process's file stays");

        drop(live);
        assert_eq!(registry.watch(), vec![], "a process that ended is no neighbour");
        assert!(registry.own_path().exists(), "this process's own registration is kept");
        std::fs::remove_file(registry.own_path()).unwrap();
        registry.register();
        assert!(registry.own_path().exists(), "a registration swept away is put back");
    }

    #[test]
    fn the_workers_of_the_same_study_are_not_neighbours() {
        let dir = tempfile::tempdir().unwrap();
        let running = dir.path().join("running");
        // Registered first outside the study, as calibration runs are.
        Registry::at(running.clone()).register();
        let registry = Registry::at(running.clone()).for_study(Path::new("/studies/a"));
        registry.register();
        let _same = hold_as(&running, 4_000_011, Some("/studies/a"));
        let _other = hold_as(&running, 4_000_012, Some("/studies/b"));
        let _bench = hold_as(&running, 4_000_013, None);
        let pids: Vec<u32> = registry.watch().iter().map(|n| n.pid).collect();
        assert_eq!(pids, vec![4_000_012, 4_000_013]);
        let own = std::fs::read_to_string(registry.own_path()).unwrap();
        assert!(own.contains("/studies/a"), "the registration names the study it joined: {own}");
        assert_eq!(std::fs::read_dir(&running).unwrap().count(), 4, "the first registration was replaced");
    }

    #[test]
    fn a_process_seen_twice_counts_once() {
        let seen = |command: &str| Neighbour { pid: 7, command: command.into() };
        let both = Neighbour::each_once(vec![
            seen("kvtune bench"),
            seen("kvtune bench"),
            seen("kvtune --dataset tbs"),
        ]);
        assert_eq!(both.len(), 1, "{both:?}");
    }
}
