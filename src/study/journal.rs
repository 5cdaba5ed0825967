//! The journal: an append-only JSON-lines record of a study, synced to disk
//! after every entry, so a crash loses at most the trial that was running.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::{StudyHeader, TrialRecord};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    Started(Box<StudyHeader>),
    Trial(Box<TrialRecord>),
    Finished { recommended: String, beats_defaults: bool },
}

pub struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Opens a journal to append to, cutting off a torn last line left by a
    /// crash mid-write so the next entry starts on a line of its own.
    pub fn create(path: &Path) -> anyhow::Result<Self> {
        if let Ok(bytes) = std::fs::read(path) {
            if bytes.last().is_some_and(|&b| b != b'\n') {
                let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                let file = OpenOptions::new().write(true).open(path)?;
                file.set_len(keep as u64)?;
            }
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening the journal {}", path.display()))?;
        Ok(Journal { path: path.to_path_buf(), file })
    }

    pub fn append(&mut self, entry: &Entry) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(entry)?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|_| self.file.sync_data())
            .with_context(|| format!("writing the journal {}", self.path.display()))
    }

    /// Every entry of a journal file, in order; a torn last line (a crash
    /// mid-write) is ignored, a corrupt line elsewhere is an error naming it.
    pub fn read(path: &Path) -> anyhow::Result<Vec<Entry>> {
        let file = File::open(path).with_context(|| format!("opening the journal {}", path.display()))?;
        let lines: Vec<String> = BufReader::new(file).lines().collect::<Result<_, _>>()?;
        let mut entries = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            match serde_json::from_str(line) {
                Ok(entry) => entries.push(entry),
                Err(_) if i + 1 == lines.len() => break,
                Err(e) => anyhow::bail!("journal {} line {}: {e}", path.display(), i + 1),
            }
        }
        Ok(entries)
    }
}
