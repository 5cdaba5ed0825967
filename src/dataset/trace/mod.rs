//! `trace`: a user's own recorded operations replayed as a dataset, in the
//! recorded order. Formats: RocksDB's binary query trace ([`rocksdb`]), and
//! CSV or JSON lines ([`text`]). A dataset file lists one trace file per
//! phase; `--dataset FILE` also takes a trace file itself (one phase).
//!
//! A trace has no size knob: where the dataset gives `recorded_budget` (the
//! memory the traced system had), a study at a smaller budget replays that
//! fraction of each phase's ops, from the start, so data and memory shrink
//! together as they do for generated datasets; without it every budget
//! replays the whole trace. [`export`] writes generated datasets as traces.

pub mod export;
pub mod rocksdb;
mod source;
mod summary;
#[cfg(test)]
mod tests;
pub mod text;

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::ops::OpKind;
use super::{Phase, Shape, Workload};
use crate::budget::ByteSize;
pub use source::{At, Failed, TraceError, TraceSource};
pub use summary::{summary, Distinct, Summary};

/// How fast a trace replays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Pace {
    /// As fast as the engine takes it.
    #[default]
    Fast,
    /// Each record at its recorded offset from the phase's start (the source
    /// sleeps, unbilled: only engine calls are timed); never faster.
    Recorded,
}

/// A trace file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// RocksDB's binary query trace (`DB::StartTrace`, `db_bench --trace_file`).
    RocksdbTrace,
    /// One operation a line: op,key,arg,time_us,batch,prefix.
    Csv,
    /// One JSON object a line: {"op":"put","key":"k","value_size":100}.
    Jsonl,
}

impl std::fmt::Display for Format {
    /// As the command line and dataset files name it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::RocksdbTrace => "rocksdb-trace",
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
        })
    }
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::RocksdbTrace => "trace",
            Format::Csv => "csv",
            Format::Jsonl => "jsonl",
        }
    }

    /// The format of a file that is a trace, by its content (RocksDB's
    /// magic, a JSON object, a known op) or extension; `None` if it looks
    /// like none (a dataset file, say).
    pub fn sniff(path: &Path) -> Option<Format> {
        let mut head = Vec::with_capacity(4096);
        File::open(path).ok()?.take(4096).read_to_end(&mut head).ok()?;
        if head.get(13..13 + rocksdb::MAGIC.len()) == Some(rocksdb::MAGIC) {
            return Some(Format::RocksdbTrace);
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        match ext.as_str() {
            "trace" => return Some(Format::RocksdbTrace),
            "csv" => return Some(Format::Csv),
            "jsonl" | "ndjson" => return Some(Format::Jsonl),
            "toml" => return None,
            _ => {}
        }
        let text = String::from_utf8_lossy(&head);
        let line = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'))?;
        let first = line.split(',').next().unwrap_or("").trim();
        match line.starts_with('{') {
            true => Some(Format::Jsonl),
            false => (first == "op" || text::is_op(first)).then_some(Format::Csv),
        }
    }

    /// The format of a phase file whose dataset does not say: as sniffed, else CSV.
    pub fn detect(path: &Path) -> Format {
        Format::sniff(path).unwrap_or(Format::Csv)
    }
}

/// The `[trace]` table of a dataset file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceParams {
    pub phases: Vec<TracePhase>,
    #[serde(default)]
    pub pace: Pace,
    /// The memory budget of the system the trace was recorded on: a smaller
    /// budget replays that fraction of each phase. Unset: always all of it.
    #[serde(default, with = "budget_field", skip_serializing_if = "Option::is_none")]
    pub recorded_budget: Option<u64>,
    /// Leading share of each phase run but not counted, where a phase gives
    /// no `warmup_ops`.
    #[serde(default)]
    pub warmup_share: f64,
    /// How much sized values (`size:N`) shrink under an LZ compressor.
    #[serde(default = "default_compressibility")]
    pub value_compressibility: f64,
}

fn default_compressibility() -> f64 {
    2.0
}

/// One phase: a trace file (relative to the dataset file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracePhase {
    pub name: String,
    pub file: PathBuf,
    /// Default: by content and extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// Leading ops run but not counted (at the recorded budget; a prefix
    /// replay takes its share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_ops: Option<u64>,
}

/// `recorded_budget` as a size ("8G") or a number of bytes.
mod budget_field {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::budget::ByteSize;

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Bytes(u64),
        Text(String),
    }

    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(v.unwrap_or(0))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        match Given::deserialize(d)? {
            Given::Bytes(n) => Ok(Some(n)),
            Given::Text(t) => t.parse::<ByteSize>().map(|b| Some(b.0)).map_err(serde::de::Error::custom),
        }
    }
}

impl TraceParams {
    pub fn problem(&self) -> Option<String> {
        if self.phases.is_empty() {
            return Some("[trace] phases is empty: list at least one { name, file }".into());
        }
        let names: std::collections::HashSet<&str> = self.phases.iter().map(|p| p.name.as_str()).collect();
        if names.len() < self.phases.len() || names.contains("") {
            return Some("[trace] phases: every phase needs a name of its own".into());
        }
        if !(0.0..1.0).contains(&self.warmup_share) {
            return Some(format!("[trace] warmup_share = {}: a share from 0 to below 1", self.warmup_share));
        }
        if self.value_compressibility.is_nan() || self.value_compressibility < 1.0 {
            return Some(format!(
                "[trace] value_compressibility = {}: 1 or more (1: values do not compress)",
                self.value_compressibility
            ));
        }
        (self.recorded_budget == Some(0))
            .then(|| "[trace] recorded_budget = 0: give a size, e.g. \"8G\"".into())
    }

    /// Makes phase files relative to `base` (the dataset file's folder)
    /// absolute and settles their formats, so the dataset reads the same
    /// from any folder and any process (a trial's child).
    pub fn resolve(&mut self, base: &Path) {
        for phase in &mut self.phases {
            let joined = base.join(&phase.file);
            phase.file = std::path::absolute(&joined).unwrap_or(joined);
            phase.format = Some(phase.format());
        }
    }

    /// Reads every phase once (kept for `shape()`): a trace that cannot be
    /// replayed fails here, naming the phase, the byte offset or line and why.
    pub fn check(&self) -> Result<(), String> {
        for phase in &self.phases {
            summary(&phase.file, phase.format(), None)
                .map_err(|e| format!("phase `{}`: {e:#}", phase.name))?;
        }
        Ok(())
    }
}

impl TracePhase {
    pub fn format(&self) -> Format {
        self.format.unwrap_or_else(|| Format::detect(&self.file))
    }
}

/// A trace file as a one-phase dataset's `[trace]` table.
pub fn single(file: &Path, format: Format) -> TraceParams {
    TraceParams {
        phases: vec![TracePhase {
            name: "replay".into(),
            file: std::path::absolute(file).unwrap_or(file.to_path_buf()),
            format: Some(format),
            warmup_ops: None,
        }],
        pace: Pace::Fast,
        recorded_budget: None,
        warmup_share: 0.0,
        value_compressibility: default_compressibility(),
    }
}

/// A phase file as an op source: keys carry their column family where
/// `cf_keys`, at most `limit` ops.
pub fn open_source(
    file: &Path,
    format: Format,
    cf_keys: bool,
    limit: Option<u64>,
    pace: Pace,
    compressibility: f64,
    seed: u64,
) -> anyhow::Result<TraceSource> {
    let opened =
        File::open(file).map_err(|e| anyhow::anyhow!("cannot open trace {}: {e}", file.display()))?;
    let input = BufReader::with_capacity(1 << 18, opened);
    let reader: Box<dyn source::RecordReader> = match format {
        Format::RocksdbTrace => Box::new(rocksdb::RocksdbReader::new(input, cf_keys)),
        Format::Csv => Box::new(text::CsvReader::new(input)),
        Format::Jsonl => Box::new(text::JsonlReader::new(input)),
    };
    Ok(TraceSource::new(reader, file.display().to_string(), limit, pace, compressibility, seed))
}

/// A trace dataset at one budget.
pub struct Trace {
    params: TraceParams,
    budget: u64,
    /// Share of each phase's ops replayed.
    fraction: f64,
}

impl Trace {
    /// The trace at `budget`, `size` times its recorded data where a data
    /// ratio asks (never more than the whole trace).
    pub fn new(params: TraceParams, budget: u64, size: f64) -> Self {
        let share = params.recorded_budget.map_or(1.0, |r| budget as f64 / r as f64);
        Trace { fraction: (share * size).clamp(0.0, 1.0), budget, params }
    }

    fn whole(&self, phase: &TracePhase) -> anyhow::Result<Arc<Summary>> {
        summary(&phase.file, phase.format(), None)
    }

    /// Ops of `phase` replayed at this budget; `None`: all.
    fn limit(&self, phase: &TracePhase) -> anyhow::Result<Option<u64>> {
        if self.fraction >= 1.0 {
            return Ok(None);
        }
        Ok(Some((self.whole(phase)?.ops as f64 * self.fraction).ceil() as u64))
    }

    fn replayed(&self, phase: &TracePhase) -> anyhow::Result<Arc<Summary>> {
        summary(&phase.file, phase.format(), self.limit(phase)?)
    }

    fn phase(&self, phase: &TracePhase, seed: u64) -> anyhow::Result<Phase> {
        let format = phase.format();
        let limit = self.limit(phase)?;
        let cf_keys = format == Format::RocksdbTrace && self.whole(phase)?.column_families;
        let warmup_ops = match phase.warmup_ops {
            Some(ops) => (ops as f64 * self.fraction).round() as u64,
            None if self.params.warmup_share > 0.0 => {
                (self.replayed(phase)?.ops as f64 * self.params.warmup_share) as u64
            }
            None => 0,
        };
        let p = &self.params;
        let source = open_source(&phase.file, format, cf_keys, limit, p.pace, p.value_compressibility, seed)?;
        Ok(Phase { name: phase.name.clone(), source: Box::new(source), warmup_ops })
    }
}

impl Workload for Trace {
    /// Keys put or merged (distinct, across phases) and user bytes written,
    /// of what this budget replays; read once per file and kept.
    fn shape(&self) -> Shape {
        let mut keys = Distinct::default();
        let mut user_bytes = 0;
        for summary in self.params.phases.iter().filter_map(|p| self.replayed(p).ok()) {
            keys.union(&summary.keys);
            user_bytes += summary.write_bytes;
        }
        Shape { keys: keys.count(), user_bytes }
    }

    fn phase_names(&self) -> Vec<String> {
        self.params.phases.iter().map(|p| p.name.clone()).collect()
    }

    fn phases(&self, seed: u64) -> Vec<Phase> {
        let phase = |p: &TracePhase| {
            self.phase(p, seed).unwrap_or_else(|e| Phase {
                name: p.name.clone(),
                source: Box::new(Failed(Some(e))),
                warmup_ops: 0,
            })
        };
        self.params.phases.iter().map(phase).collect()
    }

    /// Whether any phase's whole file holds a range delete: a replay of
    /// part of it may reach one at another budget.
    fn deletes_ranges(&self) -> bool {
        let deletes =
            |p: &TracePhase| self.whole(p).is_ok_and(|s| s.tally.ops[OpKind::DeleteRange as usize] > 0);
        self.params.phases.iter().any(deletes)
    }

    fn notes(&self) -> Vec<String> {
        let p = &self.params;
        let mut notes = vec![match (p.recorded_budget, self.fraction < 1.0) {
            (Some(recorded), true) => format!(
                "replays the first {:.3}% of each phase's ops: the traced system had a budget of {} (recorded_budget), this one is {}",
                self.fraction * 100.0,
                ByteSize(recorded),
                ByteSize(self.budget)
            ),
            (Some(recorded), false) => format!(
                "replays the whole trace: this budget ({}) is at or above the traced system's ({}, recorded_budget)",
                ByteSize(self.budget),
                ByteSize(recorded)
            ),
            (None, _) => "replays the whole trace at every budget (no recorded_budget: a scaled study does not shrink it)".into(),
        }];
        notes.push(match p.pace {
            Pace::Fast => "pace: as fast as the engine takes it (`pace = \"recorded\"` or --pace recorded replays at the recorded times)".into(),
            Pace::Recorded => "pace: recorded (each record waits for its recorded time; waiting is not billed)".into(),
        });
        for phase in &p.phases {
            let Ok(whole) = self.whole(phase) else { continue };
            if let Some((first, last)) = whole.span_us.filter(|(a, b)| b - a >= 1_000_000) {
                let span =
                    humantime::format_duration(std::time::Duration::from_secs((last - first) / 1_000_000));
                notes.push(format!("phase {}: {} records over {span} recorded", phase.name, whole.records));
            }
            if whole.column_families {
                notes.push(format!(
                    "phase {}: uses column families besides the default; every key carries its 4-byte column family id",
                    phase.name
                ));
            }
            if whole.skipped > 0 {
                notes.push(format!(
                    "phase {}: {} records skipped, as RocksDB's replayer skips them (not queries)",
                    phase.name, whole.skipped
                ));
            }
        }
        notes
    }
}
