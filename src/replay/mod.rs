//! The replay driver: feeds a workload's phases to a store and measures the
//! engine's calls, then waits for the background work a phase leaves behind
//! and bills it to the phase. Generating operations is never billed.

use std::time::Instant;

use hdrhistogram::Histogram;

use crate::dataset::ops::{calls, Batch, Op, OpKind};
use crate::dataset::Phase;
use crate::engine::{KvStore, Read};
use crate::record::{CallStats, Latency, PhaseResult};

/// The kinds of engine call the driver makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    PutBatch,
    DeleteBatch,
    WriteBatch,
    Get,
    MultiGet,
    ReverseSeek,
    Scan,
    CompactRange,
}

const CALLS: [Call; 8] = [
    Call::PutBatch,
    Call::DeleteBatch,
    Call::WriteBatch,
    Call::Get,
    Call::MultiGet,
    Call::ReverseSeek,
    Call::Scan,
    Call::CompactRange,
];

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::PutBatch => "put batch",
            Call::DeleteBatch => "delete batch",
            Call::WriteBatch => "write batch",
            Call::Get => "get",
            Call::MultiGet => "multi get",
            Call::ReverseSeek => "reverse seek",
            Call::Scan => "scan",
            Call::CompactRange => "compact range",
        }
    }

    /// The call a run of ops makes.
    fn of(run: &[Op]) -> Call {
        match run[0].kind {
            kind if kind.is_write() => Call::of_writes(run),
            OpKind::Get => Call::Get,
            OpKind::MultiGet => Call::MultiGet,
            OpKind::SeekForPrev => Call::ReverseSeek,
            OpKind::Scan => Call::Scan,
            OpKind::CompactRange => Call::CompactRange,
            _ => unreachable!("every write kind is a write"),
        }
    }

    /// The write call a run of writes makes, by what it holds.
    fn of_writes(run: &[Op]) -> Call {
        let is = |kinds: &[OpKind]| run.iter().all(|op| kinds.contains(&op.kind));
        match (
            is(&[OpKind::Put, OpKind::Merge]),
            is(&[OpKind::Delete, OpKind::SingleDelete, OpKind::DeleteRange]),
        ) {
            (true, _) => Call::PutBatch,
            (_, true) => Call::DeleteBatch,
            _ => Call::WriteBatch,
        }
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("valid bounds")
}

fn latency(h: &Histogram<u64>) -> Latency {
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1e3;
    Latency { p50_us: q(0.5), p95_us: q(0.95), p99_us: q(0.99), p999_us: q(0.999) }
}

/// Time and latency of one kind of call.
struct CallTally {
    calls: u64,
    ops: u64,
    nanos: u64,
    latency: Histogram<u64>,
}

/// Counts for the part of a phase being measured.
struct Tally {
    ops: u64,
    all_write_bytes: u64,
    nanos: u64,
    write_bytes: u64,
    read_bytes: u64,
    reads: u64,
    reads_found: u64,
    latency: Histogram<u64>,
    by_call: Vec<CallTally>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            ops: 0,
            all_write_bytes: 0,
            nanos: 0,
            write_bytes: 0,
            read_bytes: 0,
            reads: 0,
            reads_found: 0,
            latency: histogram(),
            by_call: CALLS
                .iter()
                .map(|_| CallTally { calls: 0, ops: 0, nanos: 0, latency: histogram() })
                .collect(),
        }
    }

    fn record_call(&mut self, call: Call, ops: u64, nanos: u64) {
        self.nanos += nanos;
        self.latency.saturating_record(nanos.max(1));
        let tally = &mut self.by_call[call as usize];
        tally.calls += 1;
        tally.ops += ops;
        tally.nanos += nanos;
        tally.latency.saturating_record(nanos.max(1));
    }

    /// `reads` keys asked in one call (several for a multi-get), `read` what
    /// they found.
    fn record_read(&mut self, read: Read, reads: u64) {
        self.reads += reads;
        self.reads_found += read.entries.min(reads);
        self.read_bytes += read.bytes;
    }

    /// The phase's result, its time being the calls' plus `settle_secs`.
    fn result(&self, name: &str, settle_secs: f64) -> PhaseResult {
        let engine_secs = self.nanos as f64 / 1e9;
        let secs = engine_secs + settle_secs;
        let per_sec = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        let mut calls: Vec<CallStats> = CALLS
            .iter()
            .zip(&self.by_call)
            .filter(|(_, t)| t.calls > 0)
            .map(|(call, t)| CallStats {
                kind: call.name().to_string(),
                calls: t.calls,
                ops: t.ops,
                secs: t.nanos as f64 / 1e9,
                share_of_time: if secs > 0.0 { t.nanos as f64 / 1e9 / secs } else { 0.0 },
                latency: latency(&t.latency),
            })
            .collect();
        calls.sort_by(|a, b| b.secs.total_cmp(&a.secs));
        PhaseResult {
            name: name.to_string(),
            ops: self.ops,
            engine_secs,
            settle_secs,
            ops_per_sec: per_sec(self.ops as f64),
            mb_per_sec: per_sec((self.write_bytes + self.read_bytes) as f64 / 1e6),
            write_bytes: self.write_bytes,
            read_bytes: self.read_bytes,
            all_write_bytes: self.all_write_bytes,
            read_hit_rate: (self.reads > 0).then(|| self.reads_found as f64 / self.reads as f64),
            latency: latency(&self.latency),
            calls,
            ..PhaseResult::default()
        }
    }
}

/// Runs one phase to its end, then waits until the engine has settled (no
/// flush or compaction running or pending) and bills that wait to the phase:
/// a candidate cannot look fast by leaving compaction debt behind. The
/// engine's memory and the size on disk are read after settling.
pub fn run_phase(store: &mut dyn KvStore, phase: &mut Phase) -> anyhow::Result<PhaseResult> {
    let mut tally = Tally::new();
    let mut batch = Batch::default();
    let mut applied = 0u64;
    while phase.source.next_batch(&mut batch) {
        let counted = applied >= phase.warmup_ops;
        let write_bytes = batch.write_bytes();
        tally.all_write_bytes += write_bytes;
        if counted {
            tally.ops += batch.ops.len() as u64;
            tally.write_bytes += write_bytes;
        }
        apply(store, &batch, phase.source.corpus(), counted.then_some(&mut tally))?;
        applied += batch.ops.len() as u64;
    }
    if let Some(err) = phase.source.take_error() {
        return Err(err);
    }
    let started = Instant::now();
    store.settle()?;
    let mut result = tally.result(&phase.name, started.elapsed().as_secs_f64());
    result.memory = store.memory();
    result.disk_bytes = store.disk_bytes();
    Ok(result)
}

/// Applies a batch in order: each run of writes as one atomic engine write,
/// each run of multi-gets as one call, every other read on its own. The
/// store times each call where the engine runs.
fn apply(
    store: &mut dyn KvStore,
    batch: &Batch,
    corpus: &[u8],
    tally: Option<&mut Tally>,
) -> anyhow::Result<()> {
    let calls = calls(&batch.ops);
    let mut timed = Vec::with_capacity(calls.len());
    store.run_calls(batch, corpus, &calls, &mut timed)?;
    if let Some(t) = tally {
        for (range, timed) in calls.into_iter().zip(timed) {
            let run = &batch.ops[range];
            t.record_call(Call::of(run), run.len() as u64, timed.nanos);
            if let Some(read) = timed.read {
                t.record_read(read, run.len() as u64);
            }
        }
    }
    Ok(())
}
