//! The workers of a study. Each announces itself with a heartbeat file in
//! the study's `workers/` folder, rewritten every few seconds while it
//! lives and removed when it ends; a claim whose worker's heartbeat stopped
//! is taken over by another worker. The file's modification time is the
//! study folder's file system's clock, so machines with skewed clocks still
//! agree on it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

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

/// Worker `name`'s heartbeat if it is alive: its file exists, was rewritten
/// within `stale_after`, and (on this machine) its process still runs.
pub fn alive(study: &Path, name: &str, stale_after: Duration) -> Option<Beat> {
    read_live(&beat_path(study, name), stale_after)
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

/// Every live worker of `study`.
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
        assert!(alive(dir.path(), "w1", STALE_AFTER).is_some());
        assert_eq!(live(dir.path(), STALE_AFTER).len(), 1);
        assert!(alive(dir.path(), "w2", STALE_AFTER).is_none(), "never started");
        drop(beat);
        assert!(alive(dir.path(), "w1", STALE_AFTER).is_none());
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
        assert!(alive(dir.path(), "gone", STALE_AFTER).is_none());
        // One on another machine is judged by its file's age.
        let far = Beat { name: "far".into(), host: "elsewhere".into(), pid: 1, count: 3 };
        write_beat(&beat_path(dir.path(), "far"), &far).unwrap();
        assert!(alive(dir.path(), "far", STALE_AFTER).is_some());
        std::thread::sleep(Duration::from_millis(300));
        assert!(alive(dir.path(), "far", Duration::from_millis(200)).is_none());
    }
}
