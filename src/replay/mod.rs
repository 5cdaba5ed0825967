//! The replay driver: feeds a workload's phases to a store and measures only
//! the engine's calls, so generating operations is never billed to the engine.

use std::time::Instant;

use hdrhistogram::Histogram;

use crate::dataset::ops::{Batch, OpKind};
use crate::dataset::Phase;
use crate::engine::{KvStore, Read};
use crate::record::{Latency, PhaseResult};

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
            latency: Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("valid bounds"),
        }
    }

    fn record_call(&mut self, nanos: u64) {
        self.nanos += nanos;
        self.latency.saturating_record(nanos.max(1));
    }

    fn record_read(&mut self, read: Read) {
        self.reads += 1;
        self.reads_found += (read.entries > 0) as u64;
        self.read_bytes += read.bytes;
    }

    fn result(&self, name: &str) -> PhaseResult {
        let secs = self.nanos as f64 / 1e9;
        let per_sec = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        let q = |p: f64| self.latency.value_at_quantile(p) as f64 / 1e3;
        PhaseResult {
            name: name.to_string(),
            ops: self.ops,
            engine_secs: secs,
            ops_per_sec: per_sec(self.ops as f64),
            mb_per_sec: per_sec((self.write_bytes + self.read_bytes) as f64 / 1e6),
            write_bytes: self.write_bytes,
            read_bytes: self.read_bytes,
            all_write_bytes: self.all_write_bytes,
            read_hit_rate: (self.reads > 0).then(|| self.reads_found as f64 / self.reads as f64),
            latency: Latency { p50_us: q(0.5), p95_us: q(0.95), p99_us: q(0.99), p999_us: q(0.999) },
        }
    }
}

/// Runs one phase to its end.
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
    Ok(tally.result(phase.name))
}

/// Applies a batch: its writes as one atomic engine write, its reads one by one.
fn apply(
    store: &mut dyn KvStore,
    batch: &Batch,
    corpus: &[u8],
    mut tally: Option<&mut Tally>,
) -> anyhow::Result<()> {
    if batch.ops.iter().any(|op| op.kind.is_write()) {
        let start = Instant::now();
        store.write(batch, corpus)?;
        let nanos = start.elapsed().as_nanos() as u64;
        if let Some(t) = tally.as_deref_mut() {
            t.record_call(nanos);
        }
    }
    for op in batch.ops.iter().filter(|op| !op.kind.is_write()) {
        let key = batch.key(op);
        let start = Instant::now();
        let read = match op.kind {
            OpKind::Get => store.get(key)?,
            OpKind::SeekForPrev => store.seek_for_prev(key, op.arg as usize)?,
            OpKind::Scan => store.scan(key, op.arg as usize)?,
            OpKind::Put | OpKind::Delete => unreachable!("writes are applied above"),
        };
        let nanos = start.elapsed().as_nanos() as u64;
        if let Some(t) = tally.as_deref_mut() {
            t.record_call(nanos);
            t.record_read(read);
        }
    }
    Ok(())
}
