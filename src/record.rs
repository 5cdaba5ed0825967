//! The records every stage shares: what one run of a candidate measured and
//! how the journal keeps it (Optuna's `FrozenTrial`, hyperfine's
//! `BenchmarkResult`). This module sits below everything that produces or
//! reads records: it names no engine, runner, sampler or study.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::space::{Candidate, Value};

/// Which part of the study a trial belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Search,
    Confirm,
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Search => "search",
            Stage::Confirm => "confirm",
        })
    }
}

/// How a trial ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    /// Not run: the engine's memory model said it cannot fit the budget.
    Rejected,
    /// Killed for memory by its cgroup.
    Infeasible,
    /// The engine or the process failed.
    Failed,
    /// Stopped early: far slower than the defaults, so it cannot win.
    Pruned,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Rejected => "rejected",
            Status::Infeasible => "infeasible",
            Status::Failed => "failed",
            Status::Pruned => "pruned",
        })
    }
}

/// Latency percentiles in microseconds, of single engine calls (one call is a
/// whole batch for writes, one operation for reads).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
}

/// What one phase measured, past its warm-up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    pub name: String,
    /// Operations counted (after warm-up).
    pub ops: u64,
    /// Seconds spent inside engine calls for the counted operations.
    pub engine_secs: f64,
    pub ops_per_sec: f64,
    /// User bytes written and read per second.
    pub mb_per_sec: f64,
    pub write_bytes: u64,
    pub read_bytes: u64,
    /// User bytes written by the whole phase, warm-up included (what the
    /// engine's own counters cover, for write amplification).
    pub all_write_bytes: u64,
    /// Reads that found something, as a share of reads.
    pub read_hit_rate: Option<f64>,
    pub latency: Latency,
}

/// Operations per second over all counted phases: total counted operations
/// over total engine time, the figure a replay of the whole workload yields.
pub fn overall_ops_per_sec(phases: &[PhaseResult]) -> f64 {
    let ops: u64 = phases.iter().map(|p| p.ops).sum();
    let secs: f64 = phases.iter().map(|p| p.engine_secs).sum();
    if secs > 0.0 {
        ops as f64 / secs
    } else {
        0.0
    }
}

/// What the engine reports about the work it did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineMetrics {
    pub flush_bytes: u64,
    pub compaction_bytes: u64,
    pub blob_bytes: u64,
    pub stall_micros: u64,
    pub block_cache_hits: u64,
    pub block_cache_misses: u64,
    pub bloom_useful: u64,
    pub bloom_checked: u64,
    pub live_keys_estimate: u64,
}

impl EngineMetrics {
    pub fn block_cache_hit_rate(&self) -> Option<f64> {
        ratio(self.block_cache_hits, self.block_cache_hits + self.block_cache_misses)
    }

    /// Share of bloom checks that spared a read.
    pub fn bloom_usefulness(&self) -> Option<f64> {
        ratio(self.bloom_useful, self.bloom_checked)
    }

    /// Bytes written to disk by flushes, compactions and blob files, per user byte.
    pub fn write_amplification(&self, user_bytes: u64) -> Option<f64> {
        ratio(self.flush_bytes + self.compaction_bytes + self.blob_bytes, user_bytes)
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// The record of one run of a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub status: Status,
    /// Why the trial failed, was rejected or infeasible.
    pub reason: Option<String>,
    pub wall_secs: f64,
    /// Operations per second over the whole replay (the default objective).
    pub ops_per_sec: f64,
    pub phases: Vec<PhaseResult>,
    pub engine: EngineMetrics,
    pub user_bytes_written: u64,
    pub write_amplification: Option<f64>,
    pub stall_secs: f64,
    pub disk_bytes: u64,
    pub bytes_per_key: Option<f64>,
    /// Peak memory of the trial process: from the cgroup where there is one.
    pub peak_memory: u64,
    pub peak_rss: u64,
    pub memory_source: String,
}

impl Measurement {
    /// A trial that measured nothing, and why.
    pub fn not_run(status: Status, reason: String) -> Self {
        Measurement {
            status,
            reason: Some(reason),
            wall_secs: 0.0,
            ops_per_sec: 0.0,
            phases: vec![],
            engine: EngineMetrics::default(),
            user_bytes_written: 0,
            write_amplification: None,
            stall_secs: 0.0,
            disk_bytes: 0,
            bytes_per_key: None,
            peak_memory: 0,
            peak_rss: 0,
            memory_source: String::new(),
        }
    }

    /// Whether a trial process ran (everything but a memory-model rejection).
    pub fn ran(&self) -> bool {
        self.status != Status::Rejected
    }

    pub fn ok(&self) -> bool {
        self.status == Status::Ok
    }
}

/// Every metric of a set of runs as a named series, the phases' by name, in
/// the order people read them: whole-replay throughput first.
pub fn metric_series(runs: &[Measurement]) -> Vec<(String, Vec<f64>)> {
    let Some(first) = runs.first() else {
        return vec![];
    };
    let all = |f: &dyn Fn(&Measurement) -> Option<f64>| runs.iter().filter_map(f).collect::<Vec<f64>>();
    let mut series = vec![("ops/s (whole replay)".to_string(), all(&|m| Some(m.ops_per_sec)))];
    type PhaseMetric = (&'static str, fn(&PhaseResult) -> f64);
    let phase_metrics: [PhaseMetric; 5] = [
        ("ops/s", |p| p.ops_per_sec),
        ("MB/s", |p| p.mb_per_sec),
        ("p50 us", |p| p.latency.p50_us),
        ("p99 us", |p| p.latency.p99_us),
        ("p99.9 us", |p| p.latency.p999_us),
    ];
    for (i, phase) in first.phases.iter().enumerate() {
        for (metric, read) in phase_metrics {
            series.push((format!("{} {metric}", phase.name), all(&|m| m.phases.get(i).map(read))));
        }
    }
    series.push(("write amplification".into(), all(&|m| m.write_amplification)));
    series.push(("stall s".into(), all(&|m| Some(m.stall_secs))));
    series.push(("disk MiB".into(), all(&|m| Some(m.disk_bytes as f64 / 1048576.0))));
    series.push(("bytes/key".into(), all(&|m| m.bytes_per_key)));
    series.push(("peak memory MiB".into(), all(&|m| Some(m.peak_memory as f64 / 1048576.0))));
    series.push(("wall s".into(), all(&|m| Some(m.wall_secs))));
    series.retain(|(_, values)| !values.is_empty());
    series
}

/// An engine's option set in its own absolute terms (RocksDB's option names,
/// bytes, counts), in the order the engine declares them: what actually ran.
pub type OptionSet = IndexMap<String, Value>;

/// A finished trial as the journal and the exporters see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    pub number: usize,
    pub stage: Stage,
    /// `defaults` or `#N`, the search trial the candidate came from.
    pub label: String,
    pub is_default: bool,
    /// The candidate as it ran (a value the engine could not take as asked
    /// shows what it took instead).
    pub candidate: Candidate,
    /// The engine's absolute options as run, at the scaled budget.
    #[serde(alias = "config")]
    pub options: OptionSet,
    pub measurement: Measurement,
}
