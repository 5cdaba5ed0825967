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
    /// A challenger re-run beside the incumbent, in pairs, until the
    /// difference is clear (SMAC's racing).
    Race,
    Confirm,
    /// Re-measured at a larger scale after the verdict: does the result transfer?
    Verify,
}

impl Stage {
    /// Trials of the search proper: proposals and their racing runs.
    pub fn is_search(self) -> bool {
        matches!(self, Stage::Search | Stage::Race)
    }

    /// Trials after the search: the confirmation and the larger-scale check.
    pub fn is_after_search(self) -> bool {
        matches!(self, Stage::Confirm | Stage::Verify)
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Search => "search",
            Stage::Race => "race",
            Stage::Confirm => "confirm",
            Stage::Verify => "verify",
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

/// One kind of engine call within a phase (a write batch, a point get, a
/// reverse seek, a scan): where the phase's time went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallStats {
    pub kind: String,
    pub calls: u64,
    /// Operations in those calls (a write batch holds many).
    pub ops: u64,
    pub secs: f64,
    /// Share of the phase's time (engine calls and settling).
    pub share_of_time: f64,
    pub latency: Latency,
}

/// The engine's own memory at one moment, by part, as the engine counts it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineMemory {
    pub block_cache: u64,
    /// Of the block cache: entries pinned (in use by iterators, or pinned index and filter blocks).
    pub block_cache_pinned: u64,
    /// Active and unflushed immutable memtables.
    pub memtables: u64,
    /// Index and filter blocks held by table readers outside the block cache.
    pub table_readers: u64,
    /// The row cache, where there is one.
    #[serde(default)]
    pub row_cache: u64,
}

impl EngineMemory {
    pub fn total(&self) -> u64 {
        self.block_cache + self.memtables + self.table_readers + self.row_cache
    }

    /// The larger of each part.
    pub fn max(self, other: EngineMemory) -> EngineMemory {
        EngineMemory {
            block_cache: self.block_cache.max(other.block_cache),
            block_cache_pinned: self.block_cache_pinned.max(other.block_cache_pinned),
            memtables: self.memtables.max(other.memtables),
            table_readers: self.table_readers.max(other.table_readers),
            row_cache: self.row_cache.max(other.row_cache),
        }
    }
}

/// What one phase measured, past its warm-up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    pub name: String,
    /// Operations counted (after warm-up).
    pub ops: u64,
    /// Seconds spent inside engine calls for the counted operations.
    pub engine_secs: f64,
    /// Seconds after the phase's last call until the engine had no flush or
    /// compaction running or pending: background work the phase left behind.
    #[serde(default)]
    pub settle_secs: f64,
    /// Operations over the phase's whole time (engine calls and settling).
    pub ops_per_sec: f64,
    /// User bytes written and read per second of the phase's whole time.
    pub mb_per_sec: f64,
    pub write_bytes: u64,
    pub read_bytes: u64,
    /// User bytes written by the whole phase, warm-up included (what the
    /// engine's own counters cover, for write amplification).
    pub all_write_bytes: u64,
    /// Reads that found something, as a share of reads.
    pub read_hit_rate: Option<f64>,
    pub latency: Latency,
    /// Time and latency by kind of call, largest share first.
    #[serde(default)]
    pub calls: Vec<CallStats>,
    /// The engine's memory at the end of the phase, settled.
    #[serde(default)]
    pub memory: EngineMemory,
    /// The database's size on disk at the end of the phase, settled.
    #[serde(default)]
    pub disk_bytes: u64,
}

impl PhaseResult {
    /// The phase's whole time: engine calls and settling.
    pub fn secs(&self) -> f64 {
        self.engine_secs + self.settle_secs
    }
}

/// Operations per second over all counted phases: total counted operations
/// over their whole time (engine calls and settling), the figure a replay of
/// the whole workload yields.
pub fn overall_ops_per_sec(phases: &[PhaseResult]) -> f64 {
    let ops: u64 = phases.iter().map(|p| p.ops).sum();
    let secs: f64 = phases.iter().map(|p| p.secs()).sum();
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

/// CPU the trial process used, all threads (from `wait4`'s resource usage).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    pub user_secs: f64,
    pub system_secs: f64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
}

impl CpuUse {
    pub fn secs(&self) -> f64 {
        self.user_secs + self.system_secs
    }
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
    /// Size on disk after the last phase, flushed and settled.
    pub disk_bytes: u64,
    pub bytes_per_key: Option<f64>,
    /// Disk bytes per unit of data where the dataset counts in one (bytes
    /// per point for time series), with the unit's name.
    #[serde(default)]
    pub bytes_per_unit: Option<(String, f64)>,
    /// Peak memory of the trial process: from the cgroup where there is one
    /// (page cache included), else its peak RSS.
    pub peak_memory: u64,
    pub peak_rss: u64,
    pub memory_source: String,
    /// Peaks of the process's anonymous memory (its own: heap, caches,
    /// memtables) and of the page cache charged to it, sampled from the
    /// cgroup's memory.stat during the run; 0 where there is no cgroup.
    #[serde(default)]
    pub peak_anon: u64,
    #[serde(default)]
    pub peak_page_cache: u64,
    /// CPU the trial process used (all its threads).
    #[serde(default)]
    pub cpu: CpuUse,
    /// Share of the machine's CPU time stolen by the hypervisor during the
    /// run (from /proc/stat); `None` where it could not be read.
    #[serde(default)]
    pub steal_share: Option<f64>,
    /// Other kvtune processes that were running trials on this machine
    /// before or after this run: its figure shared the CPUs and the disk.
    /// `None`: nobody looked (not run, or recorded by an older kvtune).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beside: Option<Vec<Neighbour>>,
}

/// Another kvtune process running trials on this machine while a run
/// measured.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Neighbour {
    pub pid: u32,
    /// Its command line.
    pub command: String,
}

impl Neighbour {
    /// `seen` with each process once (one seen before a run and after it,
    /// or by several runs), in pid order.
    pub fn each_once(mut seen: Vec<Neighbour>) -> Vec<Neighbour> {
        seen.sort();
        seen.dedup_by_key(|n| n.pid);
        seen
    }
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
            bytes_per_unit: None,
            peak_memory: 0,
            peak_rss: 0,
            memory_source: String::new(),
            peak_anon: 0,
            peak_page_cache: 0,
            cpu: CpuUse::default(),
            steal_share: None,
            beside: None,
        }
    }

    /// Whether a trial process ran (everything but a memory-model rejection).
    pub fn ran(&self) -> bool {
        self.status != Status::Rejected
    }

    pub fn ok(&self) -> bool {
        self.status == Status::Ok
    }

    /// CPU seconds per counted operation: steadier than wall time on a
    /// shared machine, since waiting for a core costs none.
    pub fn cpu_micros_per_op(&self) -> Option<f64> {
        let ops: u64 = self.phases.iter().map(|p| p.ops).sum();
        (ops > 0 && self.cpu.secs() > 0.0).then(|| self.cpu.secs() * 1e6 / ops as f64)
    }

    /// Seconds spent settling background work, all phases.
    pub fn settle_secs(&self) -> f64 {
        self.phases.iter().map(|p| p.settle_secs).sum()
    }

    /// The engine's largest memory over the phase ends, part by part.
    pub fn engine_memory(&self) -> EngineMemory {
        self.phases.iter().fold(EngineMemory::default(), |acc, p| acc.max(p.memory))
    }
}

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
    /// A property of the run more than a result (wall time, steal).
    Neither,
}

/// One named figure of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub better: Better,
    pub value: f64,
}

const MIB_F: f64 = 1048576.0;

/// The metric of the whole replay's throughput, and of bytes per key.
const THROUGHPUT_METRIC: &str = "ops/s (whole replay)";
const BYTES_PER_KEY_METRIC: &str = "bytes/key";

/// A phase's metric, e.g. `serve p99 us`.
fn phase_metric(phase: &str, what: &str) -> String {
    format!("{phase} {what}")
}

/// Every figure of a run, in the order people read them: whole-replay
/// throughput first, then each phase, then disk, memory and CPU.
pub fn metrics(m: &Measurement) -> Vec<Metric> {
    use Better::{Higher, Lower, Neither};
    let mut out = vec![];
    let mut push = |name: String, better: Better, value: Option<f64>| {
        if let Some(value) = value.filter(|v| v.is_finite()) {
            out.push(Metric { name, better, value });
        }
    };
    push(THROUGHPUT_METRIC.into(), Higher, Some(m.ops_per_sec));
    for p in &m.phases {
        let n = &p.name;
        push(phase_metric(n, "ops/s"), Higher, Some(p.ops_per_sec));
        push(format!("{n} MB/s"), Higher, Some(p.mb_per_sec));
        push(format!("{n} settle s"), Lower, Some(p.settle_secs));
        push(phase_metric(n, "p50 us"), Lower, Some(p.latency.p50_us));
        push(phase_metric(n, "p95 us"), Lower, Some(p.latency.p95_us));
        push(phase_metric(n, "p99 us"), Lower, Some(p.latency.p99_us));
        push(phase_metric(n, "p99.9 us"), Lower, Some(p.latency.p999_us));
        for c in &p.calls {
            push(format!("{n} {} time %", c.kind), Neither, Some(c.share_of_time * 100.0));
            push(format!("{n} {} p99 us", c.kind), Lower, Some(c.latency.p99_us));
        }
    }
    push("write amplification".into(), Lower, m.write_amplification);
    push("stall s".into(), Lower, Some(m.stall_secs));
    push("disk MiB".into(), Lower, Some(m.disk_bytes as f64 / MIB_F));
    push(BYTES_PER_KEY_METRIC.into(), Lower, m.bytes_per_key);
    if let Some((unit, bytes)) = &m.bytes_per_unit {
        push(format!("bytes/{unit}"), Lower, Some(*bytes));
    }
    push("peak memory MiB".into(), Lower, Some(m.peak_memory as f64 / MIB_F));
    push("peak anon MiB".into(), Lower, (m.peak_anon > 0).then(|| m.peak_anon as f64 / MIB_F));
    push("peak page cache MiB".into(), Neither, (m.peak_anon > 0).then(|| m.peak_page_cache as f64 / MIB_F));
    push("CPU us/op".into(), Lower, m.cpu_micros_per_op());
    let switches = m.cpu.voluntary_switches + m.cpu.involuntary_switches;
    push("context switches".into(), Neither, (switches > 0).then_some(switches as f64));
    push("CPU steal %".into(), Neither, m.steal_share.map(|s| s * 100.0));
    push("wall s".into(), Neither, Some(m.wall_secs));
    out
}

/// A parameter the engine ran at another value than the one asked, and why.
/// A value no scale allows (a count out of range) is replaced in the record's
/// candidate; one the scale forced (a memtable floor) stays as asked there,
/// since at another budget it may run as asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Adjustment {
    pub param: String,
    pub asked: Value,
    pub ran: Value,
    pub why: String,
}

/// `candidate` with the value each of `adjusted` ran at, for the parameters
/// it sets: the point a model should learn at. At a small scale a memtable
/// share below the floor runs at the floor (at 1/2048, the lower 62% of
/// the share's log range in 2 memtables); kept as asked, all of it looks
/// flat to a model, where every point is one run.
pub fn as_ran(candidate: &Candidate, adjusted: &[Adjustment]) -> Candidate {
    let mut ran = candidate.clone();
    for a in adjusted {
        if let Some(value) = ran.get_mut(&a.param) {
            *value = a.ran.clone();
        }
    }
    ran
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
    /// Where the candidate came from: `defaults`, `seed:NAME`, `sobol`,
    /// `model`, `tpe`, `random`, `grid`; for racing runs `race:LABEL`.
    #[serde(default)]
    pub origin: String,
    /// The confirmation or racing round a run belongs to (its pair).
    #[serde(default)]
    pub round: Option<usize>,
    /// The candidate as it ran (a value the engine could not take as asked
    /// shows what it took instead).
    pub candidate: Candidate,
    /// The engine's absolute options as run, at the scaled budget.
    #[serde(alias = "config")]
    pub options: OptionSet,
    /// Where what ran differs from what was asked.
    #[serde(default)]
    pub adjusted: Vec<Adjustment>,
    /// The (scaled) budget it ran at.
    #[serde(default)]
    pub budget: u64,
    pub measurement: Measurement,
    /// The worker that ran it and its machine: a study shared by workers
    /// on many machines says which measured what.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub worker: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    /// Trials the study's workers were running when it was recorded, itself
    /// included: the study's clock counts its seconds shared among them.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub side_by_side: usize,
    /// Seconds the worker spent on the run outside its process: asking the
    /// sampler, the journal, the live report, the quiet machine's sync and
    /// cooldown, the trial's directory made and removed. The study's clock
    /// counts them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub overhead_secs: f64,
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl TrialRecord {
    /// A search trial known only by its candidate and measurement: recorded
    /// or scripted results replayed against a strategy.
    pub fn replayed(number: usize, candidate: Candidate, measurement: Measurement) -> Self {
        TrialRecord {
            number,
            stage: Stage::Search,
            label: format!("#{number}"),
            is_default: false,
            origin: String::new(),
            round: None,
            candidate,
            options: OptionSet::default(),
            adjusted: vec![],
            budget: 0,
            measurement,
            worker: String::new(),
            host: String::new(),
            side_by_side: 1,
            overhead_secs: 0.0,
        }
    }

    /// The candidate as it ran at the trial's budget ([`as_ran`]).
    pub fn candidate_as_ran(&self) -> Candidate {
        as_ran(&self.candidate, &self.adjusted)
    }

    /// The seconds the run took on its worker's clock, its overhead
    /// included.
    pub fn clock_secs(&self) -> f64 {
        self.measurement.wall_secs + self.overhead_secs
    }
}

/// What a study maximises, read from a run's measurement. Throughput-like
/// objectives are better higher, the others lower; the score kvtune
/// compares is the log of the value, negated where lower is better, so a
/// 10% change weighs the same wherever it happens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Objective {
    /// Operations per second over the whole replay.
    Throughput,
    /// Operations per second of one phase.
    Phase(String),
    /// A latency percentile (p50, p95, p99, p99.9) of one phase.
    Latency { phase: String, percentile: String },
    /// Disk bytes per key after the last phase.
    BytesPerKey,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{0}` is not an objective: give throughput, phase:NAME (e.g. phase:index), latency:PHASE:PCT (e.g. latency:serve:p99; p50, p95, p99 or p99.9) or bytes_per_key")]
pub struct ObjectiveError(String);

impl std::str::FromStr for Objective {
    type Err = ObjectiveError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ObjectiveError(s.to_string());
        let parts: Vec<&str> = s.trim().split(':').collect();
        match parts.as_slice() {
            ["throughput"] => Ok(Objective::Throughput),
            ["bytes_per_key"] => Ok(Objective::BytesPerKey),
            ["phase", phase] if !phase.is_empty() => Ok(Objective::Phase(phase.to_string())),
            ["latency", phase, pct] if !phase.is_empty() && ["p50", "p95", "p99", "p99.9"].contains(pct) => {
                Ok(Objective::Latency { phase: phase.to_string(), percentile: pct.to_string() })
            }
            _ => Err(err()),
        }
    }
}

impl TryFrom<String> for Objective {
    type Error = ObjectiveError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<Objective> for String {
    fn from(o: Objective) -> String {
        o.to_string()
    }
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Objective::Throughput => write!(f, "throughput"),
            Objective::Phase(p) => write!(f, "phase:{p}"),
            Objective::Latency { phase, percentile } => write!(f, "latency:{phase}:{percentile}"),
            Objective::BytesPerKey => write!(f, "bytes_per_key"),
        }
    }
}

impl Objective {
    /// The measured value, if the run has it.
    pub fn value(&self, m: &Measurement) -> Option<f64> {
        let phase = |name: &str| m.phases.iter().find(|p| p.name == name);
        let value = match self {
            Objective::Throughput => Some(m.ops_per_sec),
            Objective::Phase(p) => phase(p).map(|p| p.ops_per_sec),
            Objective::Latency { phase: p, percentile } => phase(p).map(|p| match percentile.as_str() {
                "p50" => p.latency.p50_us,
                "p95" => p.latency.p95_us,
                "p99" => p.latency.p99_us,
                _ => p.latency.p999_us,
            }),
            Objective::BytesPerKey => m.bytes_per_key,
        };
        value.filter(|v| v.is_finite() && *v > 0.0 && m.ok())
    }

    pub fn better(&self) -> Better {
        match self {
            Objective::Throughput | Objective::Phase(_) => Better::Higher,
            Objective::Latency { .. } | Objective::BytesPerKey => Better::Lower,
        }
    }

    /// A value as a figure "higher is better" (its reciprocal where lower is
    /// better): what ratios and ranks are taken of, so a gain is positive.
    pub fn merit_of(&self, value: f64) -> f64 {
        match self.better() {
            Better::Lower => 1.0 / value,
            _ => value,
        }
    }

    /// The run's merit, if it has the value.
    pub fn merit(&self, m: &Measurement) -> Option<f64> {
        self.value(m).map(|v| self.merit_of(v))
    }

    /// Higher is better: the log of the merit.
    pub fn score(&self, m: &Measurement) -> Option<f64> {
        self.merit(m).map(f64::ln)
    }

    /// The value a score stands for (the inverse of [`Objective::score`]).
    pub fn from_score(&self, score: f64) -> f64 {
        self.merit_of(score.exp())
    }

    /// Its row among a run's [`metrics`].
    pub fn metric_name(&self) -> String {
        match self {
            Objective::Throughput => THROUGHPUT_METRIC.into(),
            Objective::Phase(p) => phase_metric(p, "ops/s"),
            Objective::Latency { phase, percentile } => phase_metric(phase, &format!("{percentile} us")),
            Objective::BytesPerKey => BYTES_PER_KEY_METRIC.into(),
        }
    }

    /// The unit the value is in, for people.
    pub fn unit(&self) -> &'static str {
        match self {
            Objective::Throughput | Objective::Phase(_) => "ops/s",
            Objective::Latency { .. } => "us",
            Objective::BytesPerKey => "bytes/key",
        }
    }

    /// Whether the workload can measure it (its phase exists).
    pub fn check(&self, phases: &[String]) -> Result<(), String> {
        match self {
            Objective::Phase(p) | Objective::Latency { phase: p, .. } if !phases.contains(p) => Err(format!(
                "objective {self}: the workload has no phase `{p}`; its phases are {}",
                phases.join(", ")
            )),
            _ => Ok(()),
        }
    }
}
