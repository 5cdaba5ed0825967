//! The journal: an append-only JSON-lines record of a study, synced to disk
//! after every entry, so a crash loses at most the trial that was running.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::outcome::StudyHeader;
use crate::record::TrialRecord;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    Started(Box<StudyHeader>),
    Trial(Box<TrialRecord>),
    /// A trial the machine failed (its work directory filled up): the
    /// study stopped there, and a resume runs the trial again.
    Stopped(Box<TrialRecord>),
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
    pub header: StudyHeader,
    pub trials: Vec<TrialRecord>,
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
    Ok(Recorded {
        header: (**header).clone(),
        trials: trials(&entries).into_iter().cloned().collect(),
        finished: entries.iter().any(|e| matches!(e, Entry::Finished { .. })),
    })
}

pub struct Journal {
    path: PathBuf,
    file: File,
    /// The study folder's lock, held while the journal is open.
    _lock: File,
}

/// The file a study folder's lock is taken on; it holds the holder's pid.
const LOCK_FILE: &str = ".kvtune.lock";

/// Takes the exclusive lock on study folder `dir`, or says who holds it. The
/// kernel lets the lock go when its holder ends, however it ends, so a
/// crashed study never leaves its folder locked.
fn lock_folder(dir: &Path) -> anyhow::Result<File> {
    match try_lock(dir)? {
        Ok(file) => Ok(file),
        Err(holder) => anyhow::bail!(
            "the study in {} is in use by another kvtune (pid {holder}): wait for it to end, or stop it, before resuming",
            dir.display()
        ),
    }
}

/// The pid of the kvtune holding study folder `dir`, if one does.
pub fn holder(dir: &Path) -> anyhow::Result<Option<String>> {
    Ok(try_lock(dir)?.err())
}

/// The lock on `dir` (holding this pid), or the holder's pid if another
/// process has it.
fn try_lock(dir: &Path) -> anyhow::Result<Result<File, String>> {
    let path = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening the study folder's lock {}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(error).with_context(|| format!("locking the study folder ({})", path.display()));
        }
        return Ok(Err(std::fs::read_to_string(&path).unwrap_or_default().trim().to_string()));
    }
    file.set_len(0)?;
    write!(file, "{}", std::process::id())?;
    Ok(Ok(file))
}

impl Journal {
    /// Opens a journal to append to, under the study folder's lock, first
    /// cutting off whatever follows its last complete entry (a line torn by
    /// a crash mid-write), so what is appended next starts on a line of its
    /// own and `read` agrees with it. A new journal's folder is synced, so
    /// the file survives a crash right after it was made.
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let lock = lock_folder(dir)?;
        let existed = path.exists();
        if existed {
            let (_, valid) = scan(path)?;
            OpenOptions::new().write(true).open(path)?.set_len(valid)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening the journal {}", path.display()))?;
        if !existed {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .with_context(|| format!("syncing the study folder {}", dir.display()))?;
        }
        Ok(Journal { path: path.to_path_buf(), file, _lock: lock })
    }

    pub fn append(&mut self, entry: &Entry) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(entry)?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|_| self.file.sync_data())
            .with_context(|| format!("writing the journal {}", self.path.display()))
    }

    /// Every complete entry of a journal file, in order.
    pub fn read(path: &Path) -> anyhow::Result<Vec<Entry>> {
        Ok(scan(path)?.0)
    }
}

/// The entries of a journal and the length in bytes of the part that holds
/// them. Only the last line may be unreadable (torn by a crash); a bad line
/// before it is corruption and an error naming the line.
fn scan(path: &Path) -> anyhow::Result<(Vec<Entry>, u64)> {
    let bytes = std::fs::read(path).with_context(|| format!("reading the journal {}", path.display()))?;
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
            Err(e) => anyhow::bail!("journal {} line {}: {e}", path.display(), i + 1),
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

    #[test]
    fn a_torn_tail_is_dropped_and_appending_goes_on_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut journal = Journal::create(&path).unwrap();
        journal.append(&finished("a")).unwrap();
        journal.append(&finished("b")).unwrap();
        drop(journal);
        // A crash mid-write leaves half a line, with or without a full entry.
        for torn in
            ["{\"event\":\"fin", "{\"event\":\"finished\",\"recommended\":\"x\",\"beats_defaults\":false}"]
        {
            let mut bytes = std::fs::read(&path).unwrap();
            bytes.extend_from_slice(torn.as_bytes());
            std::fs::write(&path, bytes).unwrap();
            assert_eq!(Journal::read(&path).unwrap().len(), 2, "{torn}");
            Journal::create(&path).unwrap();
            assert_eq!(Journal::read(&path).unwrap().len(), 2, "{torn}");
        }
        Journal::create(&path).unwrap().append(&finished("c")).unwrap();
        assert_eq!(Journal::read(&path).unwrap(), vec![finished("a"), finished("b"), finished("c")]);
    }

    #[test]
    fn a_study_folder_is_held_by_one_journal_at_a_time_and_names_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut first = Journal::create(&path).unwrap();
        first.append(&finished("a")).unwrap();
        let refused = Journal::create(&path).err().expect("a second holder is refused").to_string();
        assert!(refused.contains(&format!("pid {}", std::process::id())), "{refused}");
        // The refused opener touched nothing.
        assert_eq!(Journal::read(&path).unwrap(), vec![finished("a")]);
        drop(first);
        Journal::create(&path).unwrap().append(&finished("b")).unwrap();
        assert_eq!(Journal::read(&path).unwrap(), vec![finished("a"), finished("b")]);
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
