//! The workers of a study. Each announces itself with a heartbeat file in
//! the study's `workers/` folder, rewritten every few seconds while it
//! lives (a beat count that moves) and removed when it ends; a claim whose
//! worker's heartbeat stopped is taken over by another worker ([`Watch`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// How often a worker rewrites its heartbeat.
pub const BEAT_EVERY: Duration = Duration::from_secs(2);

/// A heartbeat older than this, by default, is a worker that stopped.
pub const STALE_AFTER: Duration = Duration::from_secs(60);

/// What a heartbeat file holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Beat {
    pub name: String,
    pub host: String,
    pub pid: u32,
    /// Beats so far: the file changes each time, so a network file system
    /// cannot serve an old copy as the new one.
    pub count: u64,
}

/// This machine's host name.
pub fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// The name a worker goes by unless it is given one: `host:pid`.
pub fn default_name() -> String {
    format!("{}:{}", host(), std::process::id())
}

fn folder(study: &Path) -> PathBuf {
    study.join("workers")
}

fn beat_path(study: &Path, name: &str) -> PathBuf {
    folder(study).join(name.replace(['/', ':', '.'], "_"))
}

/// A running worker's heartbeat; dropping it stops the beat and removes the file.
pub struct Heartbeat {
    pub name: String,
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeat {
    /// Announces worker `name` in `study` and keeps its heartbeat going on a
    /// thread of its own (a trial's minutes never silence it).
    pub fn start(study: &Path, name: &str) -> anyhow::Result<Self> {
        std::fs::create_dir_all(folder(study))
            .with_context(|| format!("making the workers' folder in {}", study.display()))?;
        let path = beat_path(study, name);
        let mut beat = Beat { name: name.into(), host: host(), pid: std::process::id(), count: 0 };
        write_beat(&path, &beat)?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (stop, path) = (stop.clone(), path.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::park_timeout(BEAT_EVERY);
                    beat.count += 1;
                    // A missed beat is not fatal: the next one may land.
                    let _ = write_beat(&path, &beat);
                }
            })
        };
        Ok(Heartbeat { name: name.into(), path, stop, thread: Some(thread) })
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn write_beat(path: &Path, beat: &Beat) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp"); // names have no dots (see beat_path)
    std::fs::write(&tmp, serde_json::to_vec(beat)?)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn read_live(path: &Path, stale_after: Duration) -> Option<Beat> {
    // Opening the file (not only asking for its metadata) makes a network
    // file system fetch its current attributes.
    let file = File::open(path).ok()?;
    let modified = file.metadata().ok()?.modified().ok()?;
    let beat: Beat = serde_json::from_reader(file).ok()?;
    let age = SystemTime::now().duration_since(modified).unwrap_or_default();
    let running_here = || {
        // SAFETY: signal 0 only asks whether the process exists.
        beat.host != host() || unsafe { libc::kill(beat.pid as i32, 0) } == 0
    };
    (age < stale_after && running_here()).then_some(beat)
}

/// Judges other workers' heartbeats as this worker sees them move: a worker
/// is gone when its file is missing, or (on this machine) its process has
/// ended, or its beat count has not moved for `stale_after` by this
/// machine's own clock, so the machines' clocks need not agree. A file that
/// cannot be read just now counts as alive: a worker's task is taken over
/// only when the worker is known to be gone.
pub struct Watch {
    study: PathBuf,
    stale_after: Duration,
    /// Each worker's beat count when it was first seen at that count.
    seen: RefCell<HashMap<String, (u64, Instant)>>,
}

impl Watch {
    pub fn new(study: &Path, stale_after: Duration) -> Self {
        Watch { study: study.to_path_buf(), stale_after, seen: RefCell::new(HashMap::new()) }
    }

    pub fn alive(&self, name: &str) -> bool {
        let beat = match File::open(beat_path(&self.study, name)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
            Err(_) => return true,
            Ok(file) => match serde_json::from_reader::<_, Beat>(file) {
                Ok(beat) => beat,
                Err(_) => return true,
            },
        };
        // SAFETY: signal 0 only asks whether the process exists.
        if beat.host == host() && unsafe { libc::kill(beat.pid as i32, 0) } != 0 {
            return false;
        }
        let mut seen = self.seen.borrow_mut();
        match seen.get(name) {
            Some(&(count, since)) if count == beat.count => since.elapsed() < self.stale_after,
            _ => {
                seen.insert(name.to_string(), (beat.count, Instant::now()));
                true
            }
        }
    }
}

/// Every live worker of `study`, judged at one look by its file's age (for
/// messages: whether a study is in use).
pub fn live(study: &Path, stale_after: Duration) -> Vec<Beat> {
    let Ok(entries) = std::fs::read_dir(folder(study)) else { return vec![] };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_none())
        .filter_map(|e| read_live(&e.path(), stale_after))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_is_alive_while_its_heartbeat_lives_and_gone_when_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let beat = Heartbeat::start(dir.path(), "w1").unwrap();
        let watch = Watch::new(dir.path(), STALE_AFTER);
        assert!(watch.alive("w1"));
        assert_eq!(live(dir.path(), STALE_AFTER).len(), 1);
        assert!(!watch.alive("w2"), "never started");
        drop(beat);
        assert!(!watch.alive("w1"));
        assert!(live(dir.path(), STALE_AFTER).is_empty());
    }

    #[test]
    fn a_heartbeat_left_by_a_process_that_ended_or_went_quiet_is_dead() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(folder(dir.path())).unwrap();
        // A worker killed on this machine leaves a fresh file behind.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let gone = Beat { name: "gone".into(), host: host(), pid, count: 3 };
        write_beat(&beat_path(dir.path(), "gone"), &gone).unwrap();
        assert!(!Watch::new(dir.path(), STALE_AFTER).alive("gone"));
        // One on another machine is judged by whether its beat moves, on this
        // machine's clock: however old its file looks.
        let mut far = Beat { name: "far".into(), host: "elsewhere".into(), pid: 1, count: 3 };
        write_beat(&beat_path(dir.path(), "far"), &far).unwrap();
        let old = SystemTime::now() - Duration::from_secs(3600);
        File::options().write(true).open(beat_path(dir.path(), "far")).unwrap().set_modified(old).unwrap();
        let watch = Watch::new(dir.path(), Duration::from_millis(200));
        assert!(watch.alive("far"), "first seen");
        std::thread::sleep(Duration::from_millis(120));
        far.count += 1;
        write_beat(&beat_path(dir.path(), "far"), &far).unwrap();
        assert!(watch.alive("far"), "it beat");
        std::thread::sleep(Duration::from_millis(120));
        assert!(watch.alive("far"), "within 200 ms of its last beat");
        std::thread::sleep(Duration::from_millis(150));
        assert!(!watch.alive("far"), "no beat for 270 ms");
        // An unreadable file is not taken for a dead worker.
        std::fs::write(beat_path(dir.path(), "torn"), "{\"na").unwrap();
        assert!(watch.alive("torn"));
    }
}
