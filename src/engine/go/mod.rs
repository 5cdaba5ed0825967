//! Engines written in Go, run by kvtune's driver ([`super::driver`]): each
//! declares its parameters in a table of knobs that set the driver's options
//! for the engine (by kvtune's snake_case names of the engine's fields), its
//! memory model, and the Go code that opens it with an option set.

pub mod badger;
pub mod bbolt;
pub mod pebble;

use std::path::Path;

use anyhow::Context;

use super::driver::{self, DriverStore};
use super::knob::{self, Knob, Settings};
use super::{Engine, EngineError, KvStore, OptionsFile, OptionsFiles, ParamDoc, Resolved};
use crate::budget::{ByteSize, MemoryModel, MIB};
use crate::record::{Adjustment, OptionSet};
use crate::space::{Candidate, Value};

/// kvtune's worker process: its binary and the op generator (as with RocksDB).
const WORKER_MEMORY: u64 = 16 * MIB;

/// Memory of a trial besides the engine's caches and memtables: kvtune's
/// worker and the driver's Go runtime and binary (about 20 MiB idle).
const PROCESS_OVERHEAD: u64 = WORKER_MEMORY + 24 * MIB;

/// A Go engine: its table and what only it knows.
pub struct GoSpec {
    /// kvtune's name for it.
    pub name: &'static str,
    /// The Go module kvtune's driver links, at the version in drivers/go/go.mod.
    pub module: &'static str,
    pub knobs: &'static [Knob<Native>],
    /// What an option set holds in memory.
    pub memory: fn(&Native) -> MemoryModel,
    /// Go code that opens the engine with an option set.
    pub code: fn(&Native) -> String,
    /// How the engine as shipped differs from its fitted defaults at a
    /// (full) budget: the parameters that differ, and why in words (`None`
    /// where nothing does).
    pub shipped: Option<Shipped>,
    /// The prefix of the options file the engine writes into its own
    /// directory when it opens (Pebble's `OPTIONS-NNNNNN`), if it writes one.
    pub writes_options: Option<&'static str>,
}

/// The parameters in which an engine as shipped differs from its fitted
/// defaults at a (full) budget, and why in words.
pub type Shipped = fn(u64) -> (Candidate, &'static str);

/// A Go engine behind the [`Engine`] trait.
pub struct GoEngine(pub &'static GoSpec);

/// The driver's options being built from a candidate.
pub struct Native {
    pub budget: u64,
    /// The driver's options, by its names, as they run.
    pub options: OptionSet,
    shown: Vec<(String, String)>,
    adjusted: Vec<Adjustment>,
    candidate: Candidate,
}

impl Native {
    fn build(spec: &GoSpec, candidate: &Candidate, budget: u64) -> Result<Native, EngineError> {
        let mut native = Native {
            budget,
            options: OptionSet::new(),
            shown: vec![],
            adjusted: vec![],
            candidate: Candidate::new(),
        };
        knob::apply(spec.name, spec.knobs, candidate, budget, &mut native)?;
        Ok(native)
    }

    /// Bytes of a share of the budget.
    pub fn share(&self, v: &Value) -> u64 {
        (knob::float(v) * self.budget as f64) as u64
    }

    /// Sets a driver option and records it.
    pub fn set(&mut self, name: &str, value: impl Into<Value>) {
        let value = value.into();
        self.shown.push((name.to_string(), value.to_string()));
        self.options.insert(name.to_string(), value);
    }

    /// Sets a size in bytes and records it, shown in binary units.
    pub fn set_bytes(&mut self, name: &str, bytes: u64) {
        self.shown.push((name.to_string(), ByteSize(bytes).to_string()));
        self.options.insert(name.to_string(), Value::from(bytes));
    }

    /// An option already set, as written in Go code ("" if it is not).
    pub fn text(&self, name: &str) -> String {
        self.options.get(name).map(|v| v.to_string()).unwrap_or_default()
    }

    /// Sets the memtable size (`size_option`) from a share of the budget for
    /// all `count_option` memtables, at least the floor for an engine whose
    /// own memtable is `engine_default` bytes; below it, runs at the floor
    /// and says so.
    pub fn set_memtables(&mut self, v: &Value, size_option: &str, count_option: &str, engine_default: u64) {
        let count = self.number(count_option) as u64;
        let asked = self.share(v) / count;
        let floor = memtable_floor(engine_default, self.budget);
        if asked < floor {
            let ran = (floor * count) as f64 / self.budget as f64;
            let why = format!(
                "below the floor min({}, budget/32) = {} per memtable",
                ByteSize(engine_default),
                ByteSize(floor)
            );
            self.adjust("memtable_share", Value::Float(ran), why);
        }
        self.set_bytes(size_option, asked.max(floor));
    }

    /// An option already set, as a number (0 if it is not).
    pub fn number(&self, name: &str) -> f64 {
        self.options.get(name).and_then(Value::as_f64).unwrap_or(0.0)
    }

    /// Notes that a parameter runs at `ran` at this budget, keeping the asked value.
    pub fn adjust(&mut self, param: &str, ran: Value, why: String) {
        let asked = self.candidate.get(param).cloned().unwrap_or(Value::Int(0));
        self.adjusted.push(Adjustment { param: param.to_string(), asked, ran, why });
    }

    fn resolved(&self, spec: &GoSpec) -> Resolved {
        Resolved {
            candidate: self.candidate.clone(),
            options: self.options.clone(),
            shown: self.shown.clone(),
            memory: (spec.memory)(self),
            adjusted: self.adjusted.clone(),
        }
    }
}

impl Settings for Native {
    fn asked(&mut self) -> &mut Candidate {
        &mut self.candidate
    }

    fn replace(&mut self, param: &str, ran: Value, why: String) {
        self.adjust(param, ran.clone(), why);
        self.candidate.insert(param.to_string(), ran);
    }
}

/// A memory model of caches and memtables the engine declares, index and
/// filters per key and byte outside them, and the process around them.
pub fn model(block_cache: u64, memtables: u64, per_key: f64, per_byte: f64) -> MemoryModel {
    MemoryModel {
        block_cache,
        row_cache: 0,
        memtables,
        outside_cache_per_key: per_key,
        outside_cache_per_byte: per_byte,
        read_buffers: 0,
        overhead: PROCESS_OVERHEAD,
    }
}

/// A share of `budget` that is `bytes`, at most all of it.
pub fn share_of(bytes: u64, budget: u64) -> Value {
    Value::Float((bytes as f64 / budget as f64).min(1.0))
}

/// The smaller of an engine's own memtable size and a 32nd of the budget:
/// the least a memtable runs at, whatever share a candidate asks, since
/// per-flush costs do not shrink with the budget.
pub fn memtable_floor(engine_default: u64, budget: u64) -> u64 {
    engine_default.min(budget / 32).max(64 * 1024)
}

impl Engine for GoEngine {
    fn name(&self) -> &'static str {
        self.0.name
    }

    fn params(&self) -> Vec<ParamDoc> {
        knob::docs(self.0.knobs)
    }

    fn defaults(&self, budget: u64) -> Candidate {
        knob::defaults(self.0.knobs, budget)
    }

    fn shipped_defaults(&self, budget: u64) -> Option<(Candidate, String)> {
        let (changes, why) = (self.0.shipped?)(budget);
        let mut candidate = self.defaults(budget);
        candidate.extend(changes);
        Some((candidate, why.to_string()))
    }

    fn resolve(&self, candidate: &Candidate, budget: u64) -> Result<Resolved, EngineError> {
        Ok(Native::build(self.0, candidate, budget)?.resolved(self.0))
    }

    /// Builds the driver, so a study finds out before its first trial.
    fn prepare(&self) -> anyhow::Result<()> {
        driver::binary().map(|_| ())
    }

    /// The Go runtime is told to keep its heap inside the budget, less
    /// kvtune's worker (GOMEMLIMIT); the cgroup enforces the budget on both.
    /// (A limit below the engine's live heap would only make the collector
    /// run without end.)
    fn open(&self, candidate: &Candidate, budget: u64, dir: &Path) -> anyhow::Result<Box<dyn KvStore>> {
        let native = Native::build(self.0, candidate, budget)?;
        let limit = budget.saturating_sub(WORKER_MEMORY).max(16 * MIB);
        Ok(Box::new(DriverStore::open(self.0.name, dir, &native.options, limit)?))
    }

    /// The Go code that opens the engine, and where the engine writes an
    /// options file of its own, that file as it wrote it for a store opened
    /// with the option set in `scratch`.
    fn options_file(
        &self,
        candidate: &Candidate,
        budget: u64,
        scratch: &Path,
    ) -> anyhow::Result<OptionsFiles> {
        let native = Native::build(self.0, candidate, budget)?;
        let text = format!(
            "// Go code opening {} ({}) with these options.\n{}",
            self.0.name,
            self.0.module,
            (self.0.code)(&native)
        );
        let mut files = vec![];
        if let Some(prefix) = self.0.writes_options {
            let text = written_options(self.0, &native, scratch, prefix)?;
            files.push(OptionsFile { name: "OPTIONS", comment: "#", text });
        }
        files.push(OptionsFile { name: "options.go", comment: "//", text });
        Ok(files)
    }
}

/// The options file an engine writes when it opens a store with `native`'s
/// options, read back from a scratch store.
fn written_options(spec: &GoSpec, native: &Native, scratch: &Path, prefix: &str) -> anyhow::Result<String> {
    std::fs::create_dir_all(scratch).with_context(|| format!("making {}", scratch.display()))?;
    let dir = tempfile::tempdir_in(scratch)
        .with_context(|| format!("making a scratch store in {}", scratch.display()))?;
    drop(DriverStore::open(spec.name, dir.path(), &native.options, native.budget)?);
    let written = std::fs::read_dir(dir.path())?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
        .max()
        .with_context(|| format!("{} wrote no {prefix}* file in {}", spec.name, dir.path().display()))?;
    std::fs::read_to_string(&written).with_context(|| format!("reading {}", written.display()))
}
