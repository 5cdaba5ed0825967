//! Other kvtune processes running trials on this machine. Two studies on one
//! machine slow and shake each other's figures (a ycsb-f study beside a tbs
//! one ran at half speed), and neither can tell from its own numbers. Each
//! process that runs trials holds a lock on a file named by its pid in a
//! directory every process of the machine shares, for as long as it lives;
//! around each trial the runner looks for the others' held locks, warns once
//! for each, and records them on the run. Other programs are not seen: CPU
//! steal is recorded apart, and a quiet machine is still the user's to keep.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

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

/// Neighbours this process has warned about, by pid.
static WARNED: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

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

    /// The other kvtune processes running trials here now, after making
    /// sure this one is registered; warns once for each new one.
    pub fn others(&self) -> Vec<Neighbour> {
        if let Err(why) = self.register() {
            UNUSABLE.call_once(|| {
                eprintln!(
                    "warning: cannot watch for other kvtune processes measuring on this machine ({}: {why})",
                    self.dir.display()
                );
            });
        }
        let found = self.live_others();
        warn_of_new(&found);
        found
    }

    /// Holds this process's lock file, saying which study it runs trials
    /// for (calibration runs before the study is made).
    fn register(&self) -> std::io::Result<()> {
        let mut held = HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(own) = held.iter_mut().find(|own| own.dir == self.dir) {
            if own.study != self.study {
                write_entry(&mut own.file, &self.study)?;
                own.study = self.study.clone();
            }
            return Ok(());
        }
        if !self.dir.is_dir() {
            std::fs::create_dir_all(&self.dir)?;
            // Every user's kvtune registers here; the sticky bit keeps each
            // one's file its own.
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o1777));
        }
        let mut file = lock_own(&self.dir.join(std::process::id().to_string()))?;
        write_entry(&mut file, &self.study)?;
        held.push(Held { dir: self.dir.clone(), study: self.study.clone(), file });
        Ok(())
    }

    /// Registered processes other than this one and its study's workers
    /// whose lock is held; the files of dead ones are removed.
    fn live_others(&self) -> Vec<Neighbour> {
        let own = std::process::id();
        let mut found = vec![];
        for dir_entry in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            let Some(pid) = dir_entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if pid == own {
                continue;
            }
            let Ok(mut file) = File::open(dir_entry.path()) else { continue };
            if try_flock(&file, libc::LOCK_SH) {
                // Nobody holds it: its process is gone.
                let _ = std::fs::remove_file(dir_entry.path());
                continue;
            }
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let entry = serde_json::from_str::<Entry>(&text).ok();
            if entry.as_ref().is_some_and(|e| self.study.is_some() && e.study == self.study) {
                continue;
            }
            let command = entry.map_or_else(|| "kvtune (starting)".into(), |e| e.command);
            found.push(Neighbour { pid, command });
        }
        found.sort();
        found
    }
}

/// Opens and locks `path` for this process. A process that found the file
/// stale may hold it a moment, or remove it after this one opened it, so
/// the lock is retried until it is on the file the path names.
fn lock_own(path: &Path) -> std::io::Result<File> {
    for _ in 0..100 {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        if try_flock(&file, libc::LOCK_EX) {
            let (held, named) = (file.metadata()?, std::fs::metadata(path));
            if named.is_ok_and(|named| named.ino() == held.ino() && named.dev() == held.dev()) {
                return Ok(file);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err(std::io::Error::other(format!("{} stayed locked by another process", path.display())))
}

/// Writes what the registry says of this process into its held file.
fn write_entry(file: &mut File, study: &Option<PathBuf>) -> std::io::Result<()> {
    let entry = Entry { study: study.clone(), command: command_line() };
    file.set_len(0)?;
    file.write_all_at(&serde_json::to_vec(&entry)?, 0)
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
    for neighbour in found.iter().filter(|n| warned.insert(n.pid)) {
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
        let file = lock_own(&dir.join(pid.to_string())).unwrap();
        let entry = Entry { study: study.map(PathBuf::from), command: format!("kvtune study {pid}") };
        file.write_all_at(&serde_json::to_vec(&entry).unwrap(), 0).unwrap();
        file
    }

    #[test]
    fn a_process_holding_its_lock_is_a_neighbour_and_a_dead_ones_file_is_swept() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::at(dir.path().join("running"));
        assert_eq!(registry.others(), vec![], "alone at first");
        let own = dir.path().join("running").join(std::process::id().to_string());
        assert!(own.exists(), "this process registered itself");

        let live = hold_as(&dir.path().join("running"), 4_000_001, None);
        let dead = hold_as(&dir.path().join("running"), 4_000_002, None);
        drop(dead);
        let found = registry.others();
        assert_eq!(found, vec![Neighbour { pid: 4_000_001, command: "kvtune study 4000001".into() }]);
        assert!(!dir.path().join("running/4000002").exists(), "the dead process's file stays");

        drop(live);
        assert_eq!(registry.others(), vec![], "a process that ended is no neighbour");
        assert!(own.exists(), "this process's own registration is kept");
    }

    #[test]
    fn the_workers_of_the_same_study_are_not_neighbours() {
        let dir = tempfile::tempdir().unwrap();
        let running = dir.path().join("running");
        let registry = Registry::at(running.clone()).for_study(Path::new("/studies/a"));
        // Registered first outside the study, as calibration runs are.
        Registry::at(running.clone()).others();
        registry.others();
        let _same = hold_as(&running, 4_000_011, Some("/studies/a"));
        let _other = hold_as(&running, 4_000_012, Some("/studies/b"));
        let _bench = hold_as(&running, 4_000_013, None);
        let pids: Vec<u32> = registry.others().iter().map(|n| n.pid).collect();
        assert_eq!(pids, vec![4_000_012, 4_000_013]);
        let own = std::fs::read_to_string(running.join(std::process::id().to_string())).unwrap();
        assert!(own.contains("/studies/a"), "the registration names the study it joined: {own}");
    }
}
