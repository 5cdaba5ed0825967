//! The journal: an append-only JSON-lines record of a study, synced to disk
//! after every entry, so a crash loses at most the trial that was running.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::task::Claim;
use crate::outcome::{SearchLimits, StudyHeader};
use crate::record::TrialRecord;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    Started(Box<StudyHeader>),
    Trial(Box<TrialRecord>),
    /// A trial the machine failed (its work directory filled up): the
    /// study stopped there, and a resume runs the trial again.
    Stopped(Box<TrialRecord>),
    /// A worker took a task; its runs are recorded as `trial` entries under
    /// the numbers it names. A later claim of the same task (its worker
    /// stopped heart-beating) takes it over.
    Claimed(Box<Claim>),
    /// The search's limits, changed by a `--resume` while the search ran:
    /// the last such entry stands in for the start's limits.
    Limits(SearchLimits),
    /// The study ended (`recommended` is `None` when no trial succeeded).
    Finished {
        recommended: Option<String>,
        beats_defaults: bool,
    },
}

/// The trial records among a journal's entries, in order.
pub fn trials(entries: &[Entry]) -> Vec<&TrialRecord> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Trial(t) => Some(&**t),
            _ => None,
        })
        .collect()
}

/// What a study folder's journal holds.
pub struct Recorded {
    /// The start's header, with the search limits a resume set last.
    pub header: StudyHeader,
    pub trials: Vec<TrialRecord>,
    /// Whether its confirmation has begun ([`super::task::confirmation_began`]).
    pub confirmation_began: bool,
    /// Whether the study ended (a `finished` entry closes it).
    pub finished: bool,
}

/// Reads the journal in study folder `dir`.
pub fn read_study(dir: &Path) -> anyhow::Result<Recorded> {
    let entries = Journal::read(&dir.join("journal.jsonl"))?;
    let Some(Entry::Started(header)) = entries.first() else {
        anyhow::bail!(
            "{}/journal.jsonl does not begin with a study's start: it is not a kvtune study",
            dir.display()
        );
    };
    let trials: Vec<TrialRecord> = trials(&entries).into_iter().cloned().collect();
    let claims = entries.iter().filter_map(|e| match e {
        Entry::Claimed(c) => Some(&**c),
        _ => None,
    });
    let confirmation_began = super::task::confirmation_began(claims, &trials);
    let mut current = (**header).clone();
    for entry in &entries {
        if let Entry::Limits(limits) = entry {
            current.change_limits(*limits);
        }
    }
    Ok(Recorded {
        header: current,
        trials,
        confirmation_began,
        finished: entries.iter().any(|e| matches!(e, Entry::Finished { .. })),
    })
}

/// A study's journal, shared by every worker of the study: each reads and
/// appends only under the folder's lock ([`Journal::lock`]), held for the
/// moments a worker decides what to run or records what ran, never while a
/// trial runs.
pub struct Journal {
    path: PathBuf,
    dir: PathBuf,
}

/// The file a study folder's lock is taken on.
const LOCK_FILE: &str = ".kvtune.lock";

/// The journal as read under the folder's lock; appends go through it, and
/// the lock goes when it is dropped.
pub struct Locked {
    /// The entries read (those after `from`, with [`Journal::lock_from`]),
    /// and those appended since.
    pub entries: Vec<Entry>,
    /// The byte after the last complete entry.
    pub end: u64,
    path: PathBuf,
    file: File,
    _lock: File,
}

impl Journal {
    /// The journal at `path`, made (and its folder synced, so it survives a
    /// crash right after) if it does not exist yet.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
        if !path.exists() {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("making the journal {}", path.display()))?;
            File::open(&dir)
                .and_then(|d| d.sync_all())
                .with_context(|| format!("syncing the study folder {}", dir.display()))?;
        }
        Ok(Journal { path: path.to_path_buf(), dir })
    }

    /// Waits for the folder's lock, then reads the journal, first cutting off
    /// whatever follows its last complete entry (a line torn by a crash
    /// mid-write), so what is appended next starts on a line of its own and
    /// `read` agrees with it. The lock is `flock`, which the kernel lets go
    /// when its holder ends however it ends (and NFS serves as a lock on the
    /// whole file), so a crashed worker never leaves the study locked.
    pub fn lock(&self) -> anyhow::Result<Locked> {
        self.lock_from(0, 0)
    }

    /// [`Journal::lock`], reading only what follows byte `from`, the end of
    /// the `before`-th entry (a worker reads on from where it stopped: a
    /// long study's journal is not parsed whole at every turn).
    pub fn lock_from(&self, from: u64, before: usize) -> anyhow::Result<Locked> {
        let lock_path = self.dir.join(LOCK_FILE);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("opening the study folder's lock {}", lock_path.display()))?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("locking the study folder ({})", lock_path.display()));
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&self.path)
            .with_context(|| format!("opening the journal {}", self.path.display()))?;
        let len = file.metadata()?.len();
        if len < from {
            anyhow::bail!(
                "the journal {} is shorter than when it was last read: it was changed by hand",
                self.path.display()
            );
        }
        let mut bytes = Vec::with_capacity((len - from) as usize);
        file.seek(SeekFrom::Start(from))?;
        file.read_to_end(&mut bytes)
            .with_context(|| format!("reading the journal {}", self.path.display()))?;
        let (entries, valid) = scan(&bytes, &self.path, before)?;
        let end = from + valid;
        if len > end {
            file.set_len(end)?;
        }
        Ok(Locked { entries, end, path: self.path.clone(), file, _lock: lock })
    }

    /// Every complete entry of a journal file, in order.
    pub fn read(path: &Path) -> anyhow::Result<Vec<Entry>> {
        let bytes = std::fs::read(path).with_context(|| format!("reading the journal {}", path.display()))?;
        Ok(scan(&bytes, path, 0)?.0)
    }
}

impl Locked {
    /// Appends `entry`, synced to disk before it returns.
    pub fn append(&mut self, entry: &Entry) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(entry)?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|_| self.file.sync_data())
            .with_context(|| format!("writing the journal {}", self.path.display()))?;
        self.end += line.len() as u64;
        self.entries.push(entry.clone());
        Ok(())
    }
}

/// The entries in `bytes` (of the journal at `path`, after its `before`-th
/// entry) and the length of the part that holds them. Only the last line may
/// be unreadable (torn by a crash); a bad line before it is corruption and an
/// error naming the line.
fn scan(bytes: &[u8], path: &Path, before: usize) -> anyhow::Result<(Vec<Entry>, u64)> {
    let mut entries = Vec::new();
    let mut valid = 0usize;
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    for (i, line) in lines.iter().enumerate() {
        let complete = line.ends_with(b"\n");
        match serde_json::from_slice::<Entry>(line) {
            Ok(entry) if complete => {
                entries.push(entry);
                valid += line.len();
            }
            // Only a last line without its newline can be torn by a crash.
            _ if i + 1 == lines.len() && !complete => break,
            Err(e) => anyhow::bail!("journal {} line {}: {e}", path.display(), before + i + 1),
            Ok(_) => unreachable!("only the last line can lack its newline"),
        }
    }
    Ok((entries, valid as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(label: &str) -> Entry {
        Entry::Finished { recommended: Some(label.into()), beats_defaults: false }
    }

    fn append(path: &Path, entry: &Entry) {
        Journal::open(path).unwrap().lock().unwrap().append(entry).unwrap();
    }

    #[test]
    fn a_torn_tail_is_dropped_and_appending_goes_on_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        append(&path, &finished("a"));
        append(&path, &finished("b"));
        // A crash mid-write leaves half a line, with or without a full entry.
        for torn in
            ["{\"event\":\"fin", "{\"event\":\"finished\",\"recommended\":\"x\",\"beats_defaults\":false}"]
        {
            let mut bytes = std::fs::read(&path).unwrap();
            bytes.extend_from_slice(torn.as_bytes());
            std::fs::write(&path, bytes).unwrap();
            assert_eq!(Journal::read(&path).unwrap().len(), 2, "{torn}");
            assert_eq!(Journal::open(&path).unwrap().lock().unwrap().entries.len(), 2, "{torn}");
            assert_eq!(Journal::read(&path).unwrap().len(), 2, "{torn}");
        }
        append(&path, &finished("c"));
        assert_eq!(Journal::read(&path).unwrap(), vec![finished("a"), finished("b"), finished("c")]);
    }

    #[test]
    fn writers_take_turns_under_the_lock_and_see_each_others_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let journal = Journal::open(&path).unwrap();
                    for j in 0..25 {
                        let mut locked = journal.lock().unwrap();
                        let seen = locked.entries.len();
                        locked.append(&finished(&format!("{i}-{j}-{seen}"))).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let entries = Journal::read(&path).unwrap();
        assert_eq!(entries.len(), 100);
        // Each writer saw every entry before its own: none was lost or torn.
        for (n, entry) in entries.iter().enumerate() {
            let Entry::Finished { recommended: Some(label), .. } = entry else { panic!() };
            assert!(label.ends_with(&format!("-{n}")), "entry {n} is {label}");
        }
    }

    #[test]
    fn a_bad_line_before_the_end_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        std::fs::write(
            &path,
            "{\"event\":\"finished\",\"recommended\":\"a\",\"beats_defaults\":true}\nnot json\n{}\n",
        )
        .unwrap();
        let err = Journal::read(&path).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
    }
}
