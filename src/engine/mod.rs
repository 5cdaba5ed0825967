//! The engines kvtune can tune. An [`Engine`] knows its parameters, its
//! defaults for a budget, its memory model, how to open a store for a
//! candidate and how to write its native options file; the replay driver
//! talks to the open store only through [`KvStore`]. Nothing outside this
//! module names an engine's own types.

pub mod driver;
pub mod go;
pub mod knob;
pub mod rocksdb;

use std::ops::Range;
use std::path::Path;
use std::time::Instant;

use crate::budget::MemoryModel;
use crate::dataset::ops::{Batch, Op, OpKind};
use crate::dataset::Dataset;
use crate::record::{Adjustment, EngineMemory, EngineMetrics, OptionSet};
use crate::space::{Candidate, Domain, Space, Value};

/// The operations the replay driver issues.
pub trait KvStore {
    /// Applies `writes` (ops of `batch`) atomically; values are slices of `corpus`.
    fn write(&mut self, batch: &Batch, writes: &[Op], corpus: &[u8]) -> anyhow::Result<()>;
    /// Point read.
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Read>;
    /// Point reads of several keys in one call.
    fn multi_get(&mut self, keys: &[&[u8]]) -> anyhow::Result<Read>;
    /// Latest entry at or below `key` sharing its first `prefix_len` bytes
    /// (0: any entry at or below it).
    fn seek_for_prev(&mut self, key: &[u8], prefix_len: usize) -> anyhow::Result<Read>;
    /// Up to `limit` entries from `key` on that share its first `prefix_len`
    /// bytes (0: any).
    fn scan(&mut self, key: &[u8], limit: usize, prefix_len: usize) -> anyhow::Result<Read>;
    /// Compacts the keys in `[start, end)` now.
    fn compact_range(&mut self, start: &[u8], end: &[u8]) -> anyhow::Result<()>;
    /// Persists what is still in memory, so the size on disk is the data's.
    fn flush(&mut self) -> anyhow::Result<()>;
    /// Returns once no flush or compaction is running or pending.
    fn settle(&mut self) -> anyhow::Result<()>;
    /// Counters the engine keeps about itself since it was opened.
    fn metrics(&self) -> EngineMetrics;
    /// The engine's own memory now, by part.
    fn memory(&self) -> EngineMemory;
    /// Bytes the database takes on disk now.
    fn disk_bytes(&self) -> u64;

    /// Runs `calls` of `batch` (each a range of its ops: a run of writes, a
    /// run of multi-gets, or one other read) in order, and appends to `out`
    /// what each took, timed around the engine's own work. An engine in
    /// another process takes a whole batch at once and times it there.
    fn run_calls(
        &mut self,
        batch: &Batch,
        corpus: &[u8],
        calls: &[Range<usize>],
        out: &mut Vec<Timed>,
    ) -> anyhow::Result<()> {
        for range in calls {
            let start = Instant::now();
            let read = call(self, batch, corpus, &batch.ops[range.clone()])?;
            out.push(Timed { nanos: start.elapsed().as_nanos() as u64, read });
        }
        Ok(())
    }

    /// Peak resident memory of any process the store runs the engine in
    /// besides this one (a driver), for the report.
    fn helper_peak_rss(&self) -> u64 {
        0
    }
}

/// What one engine call took and, for a read, found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timed {
    pub nanos: u64,
    pub read: Option<Read>,
}

/// Makes the one engine call that a run of ops is.
fn call<S: KvStore + ?Sized>(
    store: &mut S,
    batch: &Batch,
    corpus: &[u8],
    run: &[Op],
) -> anyhow::Result<Option<Read>> {
    let op = &run[0];
    let key = batch.key(op);
    Ok(match op.kind {
        kind if kind.is_write() => {
            store.write(batch, run, corpus)?;
            None
        }
        OpKind::Get => Some(store.get(key)?),
        OpKind::MultiGet => {
            let keys: Vec<&[u8]> = run.iter().map(|op| batch.key(op)).collect();
            Some(store.multi_get(&keys)?)
        }
        OpKind::SeekForPrev => Some(store.seek_for_prev(key, op.prefix as usize)?),
        OpKind::Scan => Some(store.scan(key, op.arg as usize, op.prefix as usize)?),
        OpKind::CompactRange => {
            let (from, to) = batch.range(op);
            store.compact_range(from, to)?;
            None
        }
        _ => unreachable!("every write kind is a write"),
    })
}

/// Bytes of all files below `dir`.
pub fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_size(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// What a read found: entries and their value bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Read {
    pub entries: u64,
    pub bytes: u64,
}

/// A parameter a search space may name: a line of help and its scaling rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamDoc {
    pub name: &'static str,
    pub help: &'static str,
    pub scaling: Scaling,
}

/// What a candidate runs as at one budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The candidate as the engine takes it: complete, with any value it
    /// could not take as asked replaced by the one it runs.
    pub candidate: Candidate,
    /// The engine's absolute options, as they run.
    pub options: OptionSet,
    /// The same options as people read them (sizes in binary units).
    pub shown: Vec<(String, String)>,
    /// What the option set holds in memory.
    pub memory: MemoryModel,
    /// Where what runs differs from what was asked, and why.
    pub adjusted: Vec<Adjustment>,
}

/// How a parameter's value carries over from one budget to another: the one
/// rule by which a scaled trial runs it and a preset exports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scaling {
    /// A share of the budget: the same share at every scale.
    Budget,
    /// A share of the budget, but never below a floor in bytes that does
    /// not shrink with the budget (per-flush costs do not scale).
    BudgetWithFloor,
    /// A multiple of the memtable size: it follows the memtable.
    Memtable,
    /// The same value at every scale (block size, bits per key, counts).
    Fixed,
}

impl Scaling {
    pub fn describe(self) -> &'static str {
        match self {
            Scaling::Budget => "share of the budget",
            Scaling::BudgetWithFloor => "share of the budget, with a floor",
            Scaling::Memtable => "multiple of the memtable",
            Scaling::Fixed => "same at every scale",
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EngineError {
    #[error("unknown engine `{name}`: known engines are {known}")]
    UnknownEngine { name: String, known: String },
    #[error("`{name}`: {engine} has no parameter of this name; known are: {known}")]
    UnknownParam { engine: &'static str, name: String, known: String },
    #[error("`{name}` must be {expected}, not {value}")]
    BadValue { name: String, value: String, expected: String },
    #[error("`{name}` is not allowed here: {why}")]
    NotAllowed { name: String, why: String },
    #[error("search space parameter `{name}`: value {value}: {why}")]
    BadSpaceValue { name: String, value: String, why: Box<EngineError> },
    #[error("search space seed `{name}`: {why}")]
    BadSeed { name: String, why: Box<EngineError> },
}

/// An option set in one of the engine's own forms, written beside the preset.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionsFile {
    /// The file's name in the study's folder: `OPTIONS`, `options.go`.
    pub name: &'static str,
    /// How a line of the file's language starts a comment.
    pub comment: &'static str,
    pub text: String,
}

/// The engine's forms of an option set, the fullest first.
pub type OptionsFiles = Vec<OptionsFile>;

/// An option a dataset's rules hold at one value (see [`Engine::held`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub name: &'static str,
    pub value: Value,
    /// Why, in a user's words.
    pub why: String,
}

impl Held {
    /// Whether `value` is the held one (a number as any number type).
    pub fn holds(&self, value: &Value) -> bool {
        match (value.as_f64(), self.value.as_f64()) {
            (Some(a), Some(b)) => a == b,
            _ => *value == self.value,
        }
    }
}

/// An engine kvtune can tune.
pub trait Engine: Sync {
    fn name(&self) -> &'static str;
    /// Every parameter a search space may name.
    fn params(&self) -> Vec<ParamDoc>;
    /// The engine's defaults fitted to a (full) budget of `budget` bytes.
    fn defaults(&self, budget: u64) -> Candidate;
    /// The engine's defaults as it ships them, at a (full) budget of
    /// `budget` bytes, and how they differ from the fitted ones in words;
    /// `None` where they are the same.
    fn shipped_defaults(&self, _budget: u64) -> Option<(Candidate, String)> {
        None
    }
    /// What `candidate` runs as at `budget` bytes; parameters it leaves out
    /// take the defaults fitted to that budget.
    fn resolve(&self, candidate: &Candidate, budget: u64) -> Result<Resolved, EngineError>;
    /// The options `dataset`'s rules hold at one value on this engine (a
    /// setting that changes what its application may rely on, or one the
    /// engine refuses beside what it does): no candidate may change them,
    /// and a search does not vary them.
    fn held(&self, _dataset: &Dataset) -> Vec<Held> {
        vec![]
    }
    /// Why `candidate` must not run on `dataset`, if it must not: it sets
    /// an option the dataset [holds](Engine::held) to another value.
    fn check_dataset(&self, candidate: &Candidate, dataset: &Dataset) -> Result<(), EngineError> {
        match self.held(dataset).into_iter().find(|h| candidate.get(h.name).is_some_and(|v| !h.holds(v))) {
            Some(h) => Err(EngineError::NotAllowed {
                name: h.name.into(),
                why: format!("{}; leave {} = {}", h.why, h.name, h.value),
            }),
            None => Ok(()),
        }
    }
    /// Makes sure the engine can run here (builds what it runs through),
    /// so a study finds out before its first trial.
    fn prepare(&self) -> anyhow::Result<()> {
        Ok(())
    }
    /// Opens a fresh store in `dir` running `candidate` at `budget` bytes.
    fn open(&self, candidate: &Candidate, budget: u64, dir: &Path) -> anyhow::Result<Box<dyn KvStore>>;
    /// The engine's native options files for `candidate` at `budget` bytes,
    /// made where it may write scratch files (`scratch`).
    fn options_file(
        &self,
        candidate: &Candidate,
        budget: u64,
        scratch: &Path,
    ) -> anyhow::Result<OptionsFiles>;

    /// The names of [`Engine::params`].
    fn param_names(&self) -> Vec<&'static str> {
        self.params().iter().map(|p| p.name).collect()
    }

    /// `candidate` with every parameter it leaves out set to the defaults
    /// fitted to the full budget, so what is recorded is what runs at any scale.
    fn complete(&self, candidate: &Candidate, full_budget: u64) -> Candidate {
        let mut full = self.defaults(full_budget);
        full.extend(candidate.iter().map(|(k, v)| (k.clone(), v.clone())));
        full
    }

    /// Every level, bound and choice of a space, and every seed, is a value
    /// the engine takes, so a bad one is caught before the study starts, not
    /// at the trial that draws it.
    fn check_space(&self, space: &Space, budget: u64) -> Result<(), EngineError> {
        for (name, seed) in &space.seeds {
            self.resolve(seed, budget)
                .map_err(|why| EngineError::BadSeed { name: name.clone(), why: Box::new(why) })?;
        }
        for param in &space.params {
            let mut values = param.grid_levels();
            if let Domain::Choice { values: choices } = &param.domain {
                values.extend(choices.iter().cloned());
            }
            for value in values {
                let candidate: Candidate = [(param.name.clone(), value.clone())].into_iter().collect();
                self.resolve(&candidate, budget).map_err(|why| EngineError::BadSpaceValue {
                    name: param.name.clone(),
                    value: value.to_string(),
                    why: Box::new(why),
                })?;
            }
        }
        Ok(())
    }
}

/// Every engine kvtune has.
pub const ENGINES: &[&dyn Engine] = &[
    &rocksdb::RocksDb,
    &go::GoEngine(&go::pebble::PEBBLE),
    &go::GoEngine(&go::badger::BADGER),
    &go::GoEngine(&go::bbolt::BBOLT),
];

/// The engine of this name.
pub fn find(name: &str) -> Result<&'static dyn Engine, EngineError> {
    ENGINES.iter().copied().find(|e| e.name() == name).ok_or_else(|| EngineError::UnknownEngine {
        name: name.to_string(),
        known: ENGINES.iter().map(|e| e.name()).collect::<Vec<_>>().join(", "),
    })
}

/// A value a parameter of `name` was given, checked against what it must be.
pub(crate) fn bad_value(name: &str, value: &Value, expected: impl Into<String>) -> EngineError {
    EngineError::BadValue { name: name.to_string(), value: value.to_string(), expected: expected.into() }
}
