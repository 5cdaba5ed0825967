//! `tbs`: the local event store of Elastic APM Server's tail-based sampling
//! (see shared/workloads.md; elastic/apm-server x-pack/apm-server/sampling,
//! the Pebble-based store). Trace events wait in the store until their trace
//! is decided; at every interval's end the sampled traces are read back; at
//! every TTL the oldest of three key partitions is dropped with a range
//! delete and compacted.
//!
//! What the source does, and how it is modelled (one RocksDB keyspace holds
//! what apm-server keeps in an event DB and a decision DB; their keys do not
//! collide, and a partition's range delete covers both):
//! - `processor.go` processSpan / processTransaction: every incoming event
//!   asks `IsTraceSampled`, a point get on the decision key in each active
//!   partition, current first (`partition_rw.go`), so 2 misses while the
//!   trace is undecided; then the event is written (`WriteTraceEvent`). The
//!   root transaction arrives last (it ends last): unless the reservoir
//!   admits it, an unsampled decision (`u`) is written instead.
//! - A late event (its trace decided the interval before) finds the decision
//!   in the current partition: one get, nothing written.
//! - At the interval's end (`finalizeSampledTraces`): per sampled trace a
//!   sampled decision (`s`), then `ReadTraceEventsCallback`, a prefix seek
//!   over `partition + traceID + ':'` in each active partition; for a remote
//!   decision each event read is deleted in each active partition.
//! - `storage_manager.go` RotatePartitions, every TTL (partitionsPerTTL = 1,
//!   so 2 active partitions and 1 inactive): save the partition ID, then
//!   DeleteRange and Compact of the new inactive partition, the oldest.

use std::ops::Range;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::ops::{Batch, OpKind, OpSource};
use super::values::{corpus, corpus_len, log_uniform, log_uniform_mean, mix64, push_hex64, slice, unit};
use super::{Phase, Shape, Workload};
use crate::budget::GIB;

const PHASES: [&str; 2] = ["fill", "ingest"];
/// Key partitions: 2 active (current and previous) and 1 inactive, the
/// partition byte cycling 0, 1, 2 (`partitioner.go`).
pub const PARTITIONS: u64 = 3;
/// Event key: partition(1) + trace ID (32 hex) + ':' + event ID (16 hex).
pub const EVENT_KEY_LEN: usize = 50;
/// Decision key: partition(1) + trace ID (32 hex).
pub const DECISION_KEY_LEN: usize = 33;
/// Partition + trace ID + ':', Pebble's `Split` of an event key (`pebble.go`,
/// the prefix its bloom filter is built on): a trace read stays within it.
pub const TRACE_PREFIX_LEN: u16 = 34;
const SEPARATOR: u8 = b':';
/// Where `savePartitionID` keeps the current partition (`~partitioner`).
pub const PARTITIONER_KEY: &[u8] = b"~partitioner";
/// A trace read goes to the trace's end; no trace comes near this.
const TRACE_SCAN_LIMIT: u32 = 100_000;
/// Longest trace and largest event accepted, so scans and the corpus hold them.
const MAX_TRACE_EVENTS: u64 = 10_000;
const MAX_EVENT_BYTES: f64 = 1024.0 * 1024.0;

/// The `[tbs]` table of a dataset file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TbsParams {
    pub events_per_ttl_per_budget_gib: f64,
    pub ingest_ttls: u64,
    pub ttl_secs: u64,
    pub interval_secs: u64,
    pub trace_secs: f64,
    pub min_trace_events: u64,
    pub max_trace_events: u64,
    pub sampled_share: f64,
    pub late_event_share: f64,
    pub delete_share: f64,
    pub event_min_bytes: f64,
    pub event_max_bytes: f64,
    pub value_compressibility: f64,
    pub events_per_batch: u64,
    pub warmup_share: f64,
}

impl TbsParams {
    pub fn problem(&self) -> Option<String> {
        let shares = [
            ("sampled_share", self.sampled_share),
            ("late_event_share", self.late_event_share),
            ("delete_share", self.delete_share),
            ("warmup_share", self.warmup_share),
        ];
        if let Some((name, v)) = shares.iter().find(|(_, v)| !(0.0..=1.0).contains(v)) {
            return Some(format!("[tbs] {name} = {v}: a share is a number from 0 to 1"));
        }
        let positive = [
            ("events_per_ttl_per_budget_gib", self.events_per_ttl_per_budget_gib),
            ("ingest_ttls", self.ingest_ttls as f64),
            ("interval_secs", self.interval_secs as f64),
            ("trace_secs", self.trace_secs),
            ("min_trace_events", self.min_trace_events as f64),
            ("event_min_bytes", self.event_min_bytes),
            ("value_compressibility", self.value_compressibility),
            ("events_per_batch", self.events_per_batch as f64),
        ];
        if let Some((name, v)) = positive.iter().find(|(_, v)| v.is_nan() || *v <= 0.0) {
            return Some(format!("[tbs] {name} = {v}: it must be above 0"));
        }
        if self.ttl_secs < self.interval_secs {
            return Some(format!(
                "[tbs] ttl_secs = {} is shorter than interval_secs = {}",
                self.ttl_secs, self.interval_secs
            ));
        }
        if !(self.min_trace_events..=MAX_TRACE_EVENTS).contains(&self.max_trace_events) {
            return Some(format!(
                "[tbs] max_trace_events = {}: give from min_trace_events ({}) to {MAX_TRACE_EVENTS}",
                self.max_trace_events, self.min_trace_events
            ));
        }
        (!(self.event_min_bytes..=MAX_EVENT_BYTES).contains(&self.event_max_bytes)).then(|| {
            format!(
                "[tbs] event_max_bytes = {}: give from event_min_bytes ({}) to {MAX_EVENT_BYTES}",
                self.event_max_bytes, self.event_min_bytes
            )
        })
    }

    fn mean_trace_events(&self) -> f64 {
        (self.min_trace_events + self.max_trace_events) as f64 / 2.0
    }

    fn intervals_per_ttl(&self) -> u64 {
        self.ttl_secs / self.interval_secs
    }

    /// Late events among all: none in a TTL's first interval (nothing is
    /// decided yet in its partition).
    fn late_share(&self) -> f64 {
        let intervals = self.intervals_per_ttl() as f64;
        self.late_event_share * (intervals - 1.0) / intervals
    }

    /// Traces receiving events at once, at `events_per_ttl`: the event rate
    /// times how long a trace's events keep coming, over events per trace.
    /// Scaled with the rate, so a trace ends within the same share of an
    /// interval at any scale.
    fn open_traces(&self, events_per_ttl: u64) -> usize {
        let per_sec = events_per_ttl as f64 / self.ttl_secs as f64;
        (per_sec * self.trace_secs / self.mean_trace_events()).round().max(1.0) as usize
    }
}

/// The tbs workload sized for one budget.
pub struct Tbs {
    params: TbsParams,
    events_per_ttl: u64,
    budget: u64,
}

/// What one TTL of events leaves in the store, and the ops it takes.
struct TtlTally {
    live_keys: f64,
    live_bytes: f64,
    ops: f64,
}

impl Tbs {
    /// The tbs workload at `budget` bytes, every count times `size`.
    pub fn new(params: TbsParams, budget: u64, size: f64) -> Self {
        let gib = budget as f64 / GIB as f64;
        let events_per_ttl =
            (params.events_per_ttl_per_budget_gib * gib * size).max(params.intervals_per_ttl() as f64) as u64;
        Tbs { params, events_per_ttl, budget }
    }

    /// Expected counts of one TTL, from the parameters.
    fn per_ttl(&self) -> TtlTally {
        let p = &self.params;
        let events = self.events_per_ttl as f64;
        let traced = events * (1.0 - p.late_share());
        let decided = traced / p.mean_trace_events();
        let sampled = decided * p.sampled_share;
        let stored = traced - (decided - sampled);
        let deleted = sampled * p.delete_share * p.mean_trace_events();
        let value = log_uniform_mean(p.event_min_bytes, p.event_max_bytes);
        TtlTally {
            live_keys: stored - deleted + decided,
            live_bytes: (stored - deleted) * (EVENT_KEY_LEN as f64 + value)
                + decided * (DECISION_KEY_LEN as f64 + 1.0),
            ops: (events - traced) + 3.0 * traced + sampled * 3.0 + 2.0 * deleted,
        }
    }
}

impl Workload for Tbs {
    /// The store at its largest, two partitions full: what the memory model
    /// and `--data-ratio` should see. Older partitions are dropped, so the
    /// replay writes more in all (1 + ingest_ttls TTLs of events).
    fn shape(&self) -> Shape {
        let ttl = self.per_ttl();
        Shape { keys: (2.0 * ttl.live_keys) as u64 + 1, user_bytes: (2.0 * ttl.live_bytes) as u64 }
    }

    fn phase_names(&self) -> Vec<String> {
        PHASES.iter().map(|p| p.to_string()).collect()
    }

    /// Every TTL drops the oldest partition by a range delete.
    fn deletes_ranges(&self) -> bool {
        true
    }

    fn phases(&self, seed: u64) -> Vec<Phase> {
        let common = Common::new(&self.params, self.events_per_ttl, corpus_len(self.budget), seed);
        let ops_per_ttl = self.per_ttl().ops;
        let warmup = |ttls: u64| (ops_per_ttl * ttls as f64 * self.params.warmup_share) as u64;
        let ingest_ttls = self.params.ingest_ttls;
        vec![
            Phase {
                name: PHASES[0].into(),
                warmup_ops: warmup(1),
                source: Box::new(Ttls::new(common.clone(), 0..1)),
            },
            Phase {
                name: PHASES[1].into(),
                warmup_ops: warmup(ingest_ttls),
                source: Box::new(Ttls::new(common, 1..1 + ingest_ttls)),
            },
        ]
    }
}

/// What the phases share: parameters, seed, sizes and the value corpus,
/// whose tail holds the literal decision values and partition IDs.
#[derive(Clone)]
struct Common {
    params: TbsParams,
    seed: u64,
    events_per_ttl: u64,
    corpus: Arc<Vec<u8>>,
    /// Bytes of the corpus event values are cut from; the literals follow.
    values: usize,
}

impl Common {
    fn new(params: &TbsParams, events_per_ttl: u64, corpus_bytes: usize, seed: u64) -> Self {
        let mut bytes = corpus(corpus_bytes, params.value_compressibility, seed);
        bytes.extend_from_slice(b"su");
        for partition in 0..PARTITIONS {
            bytes.extend_from_slice(format!("{{\"id\":{partition}}}").as_bytes());
        }
        Common { params: params.clone(), seed, events_per_ttl, corpus: Arc::new(bytes), values: corpus_bytes }
    }

    /// The decision value: `s` (sampled) or `u` (unsampled), as prefix.go writes it.
    fn decision_value(&self, sampled: bool) -> Range<u32> {
        let at = (self.values + !sampled as usize) as u32;
        at..at + 1
    }

    /// `{"id":N}`, the partitioner's saved ID.
    fn partition_value(&self, partition: u8) -> Range<u32> {
        let at = (self.values + 2 + 8 * partition as usize) as u32;
        at..at + 8
    }

    fn event_value(&self, rng: &mut StdRng) -> Range<u32> {
        let p = &self.params;
        let bytes = log_uniform(rng, p.event_min_bytes, p.event_max_bytes);
        slice(rng, self.values, bytes as usize)
    }
}

/// The current and the previous partition during TTL `ttl`: the active ones,
/// read in this order.
fn active_partitions(ttl: u64) -> [u8; 2] {
    [(ttl % PARTITIONS) as u8, ((ttl + PARTITIONS - 1) % PARTITIONS) as u8]
}

/// The partition dropped when TTL `ttl` begins: the new inactive one, which
/// holds the oldest events (written two TTLs before).
fn dropped_partition(ttl: u64) -> u8 {
    ((ttl + 1) % PARTITIONS) as u8
}

/// A trace, named by a hash; its ID, length and fate follow from the hash,
/// so any later step recomputes them instead of storing them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Trace(u64);

impl Trace {
    fn new(seed: u64, ttl: u64, n: u64) -> Self {
        Trace(mix64(mix64(seed ^ mix64(ttl)) ^ n))
    }

    fn events(self, p: &TbsParams) -> u32 {
        (p.min_trace_events + mix64(self.0 ^ 1) % (p.max_trace_events - p.min_trace_events + 1)) as u32
    }

    /// Admitted by the reservoir and kept when it is finalised.
    fn sampled(self, p: &TbsParams) -> bool {
        unit(mix64(self.0 ^ 2)) < p.sampled_share
    }

    /// Decided remotely: processor.go deletes the events it reads.
    fn deleted_after_read(self, p: &TbsParams) -> bool {
        unit(mix64(self.0 ^ 3)) < p.delete_share
    }

    fn push_decision_key(self, out: &mut Vec<u8>, partition: u8) {
        out.push(partition);
        push_hex64(out, mix64(self.0 ^ 4));
        push_hex64(out, mix64(self.0 ^ 5));
    }

    fn push_prefix(self, out: &mut Vec<u8>, partition: u8) {
        self.push_decision_key(out, partition);
        out.push(SEPARATOR);
    }

    fn push_event_key(self, out: &mut Vec<u8>, partition: u8, event: u32) {
        self.push_prefix(out, partition);
        push_hex64(out, mix64(self.0 ^ mix64(6 + event as u64)));
    }
}

/// A trace whose events are still arriving; `next` is the next event's number.
#[derive(Debug, Clone, Copy)]
struct OpenTrace {
    trace: Trace,
    next: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// A TTL begins: save the new current partition.
    Rotate,
    /// Then drop the oldest partition and compact its range.
    Drop,
    /// Events arrive until the interval's end.
    Events,
    /// The interval's sampled traces are decided and read back.
    Decisions,
}

/// TTLs `ttls` of the store, in order. Each TTL starts afresh (its traces
/// begin and end within it), so a phase needs no state from the one before.
struct Ttls {
    c: Common,
    ttl: u64,
    end: u64,
    step: Step,
    rng: StdRng,
    open: Vec<OpenTrace>,
    /// Traces begun in this TTL.
    started: u64,
    /// Events received in this TTL.
    events: u64,
    interval: u64,
    /// Sampled traces whose root arrived this interval, and how many of them
    /// have been decided.
    sampled: Vec<Trace>,
    decided: usize,
    /// Traces whose root arrived this interval, and those of the interval
    /// before, which late events belong to.
    closed: Vec<Trace>,
    closed_before: Vec<Trace>,
}

impl Ttls {
    fn new(c: Common, ttls: Range<u64>) -> Self {
        let mut source = Ttls {
            ttl: ttls.start,
            end: ttls.end,
            step: Step::Events,
            rng: StdRng::seed_from_u64(0),
            open: vec![],
            started: 0,
            events: 0,
            interval: 0,
            sampled: vec![],
            decided: 0,
            closed: vec![],
            closed_before: vec![],
            c,
        };
        source.start_ttl();
        source
    }

    /// Fresh state for `self.ttl`; every TTL after the first begins with a rotation.
    fn start_ttl(&mut self) {
        self.rng = StdRng::seed_from_u64(mix64(self.c.seed ^ mix64(!self.ttl)));
        self.step = if self.ttl == 0 { Step::Events } else { Step::Rotate };
        self.started = 0;
        self.events = 0;
        self.interval = 0;
        self.closed_before.clear();
        self.open.clear();
        for _ in 0..self.c.params.open_traces(self.c.events_per_ttl) {
            let trace = Trace::new(self.c.seed, self.ttl, self.started);
            self.started += 1;
            self.open.push(OpenTrace { trace, next: 0 });
        }
    }

    /// Events received by the end of the current interval.
    fn interval_end(&self) -> u64 {
        self.c.events_per_ttl * (self.interval + 1) / self.c.params.intervals_per_ttl()
    }

    fn push_events(&mut self, batch: &mut Batch, until: u64) {
        let n = self.c.params.events_per_batch.min(until - self.events);
        for _ in 0..n {
            self.push_event(batch);
        }
        self.events += n;
    }

    /// One incoming event: a late one checks its trace's decision; any other
    /// checks both active partitions, then is stored, unless it is the root
    /// of a trace the reservoir does not admit (an unsampled decision then).
    fn push_event(&mut self, batch: &mut Batch) {
        let p = &self.c.params;
        let [current, previous] = active_partitions(self.ttl);
        if !self.closed_before.is_empty() && self.rng.random::<f64>() < p.late_event_share {
            let trace = self.closed_before[self.rng.random_range(0..self.closed_before.len())];
            batch.push_read(OpKind::Get, |k| trace.push_decision_key(k, current), 1, 0);
            return;
        }
        let slot = self.rng.random_range(0..self.open.len());
        let OpenTrace { trace, next } = self.open[slot];
        for partition in [current, previous] {
            batch.push_read(OpKind::Get, |k| trace.push_decision_key(k, partition), 1, 0);
        }
        let root = next + 1 == trace.events(p);
        if root && !trace.sampled(p) {
            batch.push(OpKind::Put, |k| trace.push_decision_key(k, current), self.c.decision_value(false), 0);
        } else {
            let value = self.c.event_value(&mut self.rng);
            batch.push(OpKind::Put, |k| trace.push_event_key(k, current, next), value, 0);
        }
        if root {
            if trace.sampled(p) {
                self.sampled.push(trace);
            }
            self.closed.push(trace);
            self.open[slot] = OpenTrace { trace: Trace::new(self.c.seed, self.ttl, self.started), next: 0 };
            self.started += 1;
        } else {
            self.open[slot].next += 1;
        }
    }

    /// A sampled trace at the interval's end: the decision, a read of its
    /// events in each active partition, and for a remote decision a delete
    /// of each event in each active partition.
    fn push_decision(&self, batch: &mut Batch, trace: Trace) {
        let p = &self.c.params;
        let partitions = active_partitions(self.ttl);
        batch.push(
            OpKind::Put,
            |k| trace.push_decision_key(k, partitions[0]),
            self.c.decision_value(true),
            0,
        );
        for partition in partitions {
            batch.push_read(
                OpKind::Scan,
                |k| trace.push_prefix(k, partition),
                TRACE_SCAN_LIMIT,
                TRACE_PREFIX_LEN,
            );
        }
        if trace.deleted_after_read(p) {
            for event in 0..trace.events(p) {
                for partition in partitions {
                    batch.push(OpKind::Delete, |k| trace.push_event_key(k, partition, event), 0..0, 0);
                }
            }
        }
    }

    fn end_interval(&mut self) {
        self.sampled.clear();
        self.decided = 0;
        std::mem::swap(&mut self.closed, &mut self.closed_before);
        self.closed.clear();
        self.interval += 1;
        if self.interval < self.c.params.intervals_per_ttl() {
            self.step = Step::Events;
        } else {
            self.ttl += 1;
            if self.ttl < self.end {
                self.start_ttl();
            }
        }
    }
}

impl OpSource for Ttls {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        while batch.ops.is_empty() {
            if self.ttl >= self.end {
                return false;
            }
            match self.step {
                Step::Rotate => {
                    let current = active_partitions(self.ttl)[0];
                    let value = self.c.partition_value(current);
                    batch.push(OpKind::Put, |k| k.extend_from_slice(PARTITIONER_KEY), value, 0);
                    self.step = Step::Drop;
                }
                Step::Drop => {
                    let oldest = dropped_partition(self.ttl);
                    batch.push_range(OpKind::DeleteRange, &[oldest], &[oldest + 1]);
                    batch.push_range(OpKind::CompactRange, &[oldest], &[oldest + 1]);
                    self.step = Step::Events;
                }
                Step::Events => {
                    let until = self.interval_end();
                    if self.events < until {
                        self.push_events(batch, until);
                    } else {
                        self.step = Step::Decisions;
                    }
                }
                Step::Decisions => match self.sampled.get(self.decided) {
                    Some(&trace) => {
                        self.push_decision(batch, trace);
                        self.decided += 1;
                    }
                    None => self.end_interval(),
                },
            }
        }
        true
    }

    fn corpus(&self) -> &[u8] {
        &self.c.corpus
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::dataset::ops::drain;
    use crate::dataset::Dataset;

    fn params() -> TbsParams {
        Dataset::find("tbs").unwrap().tbs.unwrap()
    }

    /// 32 MiB: ~31k events per TTL.
    fn small() -> Tbs {
        Tbs::new(params(), 32 << 20, 1.0)
    }

    fn trace_id(key: &[u8]) -> &[u8] {
        &key[1..DECISION_KEY_LEN]
    }

    fn is_hex(bytes: &[u8]) -> bool {
        bytes.iter().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
    }

    /// Batches of one phase that carry incoming events (not a rotation, not a decision).
    fn event_batches(batches: &[Batch]) -> impl Iterator<Item = &Batch> {
        batches.iter().filter(|b| b.ops[0].kind == OpKind::Get)
    }

    #[test]
    fn same_seed_same_stream_other_seed_other_keys() {
        let tbs = small();
        for (a, b) in tbs.phases(1).iter_mut().zip(tbs.phases(1).iter_mut()) {
            let (x, y) = (drain(a.source.as_mut()), drain(b.source.as_mut()));
            assert_eq!(x.len(), y.len());
            assert!(x.iter().zip(&y).all(|(p, q)| p.keys == q.keys && p.ops == q.ops), "{}", a.name);
        }
        let (mut one, mut two) = (tbs.phases(1), tbs.phases(2));
        assert_ne!(drain(one[1].source.as_mut())[5].keys, drain(two[1].source.as_mut())[5].keys);
    }

    #[test]
    fn every_event_checks_both_partitions_then_is_stored_with_the_described_sizes() {
        let tbs = small();
        let p = &tbs.params;
        let mut phases = tbs.phases(3);
        let batches = drain(phases[0].source.as_mut());
        let corpus = phases[0].source.corpus();
        let (mut gets, mut puts, mut unsampled) = (0u64, 0u64, 0u64);
        let mut value_sizes = vec![];
        let mut events_by_trace = HashMap::<Vec<u8>, u32>::new();
        for b in event_batches(&batches) {
            for op in &b.ops {
                let key = b.key(op);
                assert!(is_hex(trace_id(key)), "{key:?}");
                match (op.kind, key.len()) {
                    (OpKind::Get, DECISION_KEY_LEN) => {
                        assert!([0, 2].contains(&key[0]), "fill reads partitions 0 and 2");
                        gets += 1;
                    }
                    (OpKind::Put, EVENT_KEY_LEN) => {
                        assert_eq!((key[0], key[33]), (0, b':'));
                        assert!(is_hex(&key[34..]));
                        value_sizes.push(op.value.len() as f64);
                        *events_by_trace.entry(trace_id(key).to_vec()).or_default() += 1;
                        puts += 1;
                    }
                    (OpKind::Put, DECISION_KEY_LEN) => {
                        assert_eq!(&corpus[op.value.start as usize..op.value.end as usize], b"u");
                        // The root transaction is not stored: count it here.
                        *events_by_trace.entry(trace_id(key).to_vec()).or_default() += 1;
                        unsampled += 1;
                        puts += 1;
                    }
                    other => panic!("unexpected op {other:?}"),
                }
            }
        }
        // Each traced event: 2 gets and 1 put; each late event: 1 get.
        let late = gets - 2 * puts;
        assert_eq!(puts + late, tbs.events_per_ttl);
        let late_share = late as f64 / tbs.events_per_ttl as f64;
        assert!((late_share - p.late_share()).abs() < 0.005, "late share {late_share}");
        // Value sizes: log-uniform over 0.5-2 KB.
        value_sizes.sort_by(f64::total_cmp);
        assert!(
            value_sizes[0] >= p.event_min_bytes && value_sizes[value_sizes.len() - 1] <= p.event_max_bytes
        );
        let median = value_sizes[value_sizes.len() / 2];
        assert!(
            (median / (p.event_min_bytes * p.event_max_bytes).sqrt() - 1.0).abs() < 0.03,
            "median {median}"
        );
        let quartile = value_sizes.iter().filter(|&&v| v < 512.0 * 2f64.sqrt()).count() as f64;
        assert!((quartile / value_sizes.len() as f64 - 0.25).abs() < 0.02);
        // Traces decided `s` this TTL: the share sampled, and their lengths.
        let sampled = batches.iter().filter(|b| b.ops[0].kind == OpKind::Put).count() as f64;
        let sampled_share = sampled / (sampled + unsampled as f64);
        assert!((sampled_share - p.sampled_share).abs() < 0.025, "sampled share {sampled_share}");
        let decided: Vec<u32> = batches
            .iter()
            .flat_map(|b| b.ops.iter().filter(|op| op.kind == OpKind::Put).map(move |op| b.key(op)))
            .filter(|key| key.len() == DECISION_KEY_LEN)
            .map(|key| events_by_trace[trace_id(key)])
            .collect();
        assert!(decided.iter().all(|n| (10..=30).contains(n)), "{:?}", decided.iter().max());
        let mean = decided.iter().sum::<u32>() as f64 / decided.len() as f64;
        assert!((mean - p.mean_trace_events()).abs() < 0.5, "mean trace length {mean}");
    }

    #[test]
    fn sampled_traces_are_read_back_whole_and_remote_ones_deleted() {
        let tbs = small();
        let mut phases = tbs.phases(4);
        let batches = drain(phases[0].source.as_mut());
        let corpus = phases[0].source.corpus();
        let mut live = HashMap::<Vec<u8>, Vec<Vec<u8>>>::new();
        let (mut decisions, mut deleted) = (0, 0);
        for b in &batches {
            if b.ops[0].kind == OpKind::Get {
                for op in b.ops.iter().filter(|op| op.kind == OpKind::Put && b.key(op).len() == EVENT_KEY_LEN)
                {
                    live.entry(b.key(op)[..34].to_vec()).or_default().push(b.key(op).to_vec());
                }
                continue;
            }
            decisions += 1;
            let kinds: Vec<OpKind> = b.ops.iter().map(|op| op.kind).collect();
            assert_eq!(kinds[..3], [OpKind::Put, OpKind::Scan, OpKind::Scan]);
            let decision = b.key(&b.ops[0]);
            assert_eq!(&corpus[b.ops[0].value.start as usize..b.ops[0].value.end as usize], b"s");
            for (op, partition) in b.ops[1..3].iter().zip([0u8, 2]) {
                assert_eq!(b.key(op), [&[partition], trace_id(decision), b":"].concat());
                assert_eq!(op.prefix, TRACE_PREFIX_LEN);
            }
            // The whole trace was stored before its decision, and fits the scan.
            let events = live.get(b.key(&b.ops[1])).expect("trace stored");
            assert!(events.len() >= 10 && events.len() as u32 <= b.ops[1].arg);
            let deletes: Vec<&[u8]> = b.ops[3..].iter().map(|op| b.key(op)).collect();
            if !deletes.is_empty() {
                assert!(b.ops[3..].iter().all(|op| op.kind == OpKind::Delete));
                assert_eq!(deletes.len(), 2 * events.len());
                for (pair, event) in deletes.chunks(2).zip(events) {
                    assert_eq!(pair[0], &event[..]);
                    assert_eq!((pair[1][0], &pair[1][1..]), (2, &event[1..]));
                }
                deleted += 1;
            }
        }
        let share = deleted as f64 / decisions as f64;
        assert!((share - tbs.params.delete_share).abs() < 0.06, "deleted share {share} of {decisions}");
    }

    #[test]
    fn each_ttl_drops_the_oldest_partition_by_range_delete_then_compaction() {
        let tbs = small();
        // Live keys: the TTL that wrote them and their bytes.
        let mut live = HashMap::<Vec<u8>, (u64, u64)>::new();
        let (mut ttl, mut drops, mut bytes, mut peak) = (0u64, vec![], 0u64, 0u64);
        for mut phase in tbs.phases(5) {
            let batches = drain(phase.source.as_mut());
            let has_drops = batches.iter().any(|b| b.ops.iter().any(|op| op.kind == OpKind::DeleteRange));
            assert_eq!(has_drops, phase.name == "ingest");
            for b in &batches {
                let kinds: Vec<OpKind> = b.ops.iter().map(|op| op.kind).collect();
                if b.key(&b.ops[0]) == PARTITIONER_KEY {
                    ttl += 1;
                    let value =
                        &phase.source.corpus()[b.ops[0].value.start as usize..b.ops[0].value.end as usize];
                    assert_eq!(value, format!("{{\"id\":{}}}", ttl % 3).as_bytes());
                } else if kinds[0] == OpKind::DeleteRange {
                    assert_eq!(kinds, [OpKind::DeleteRange, OpKind::CompactRange]);
                    let (start, end) = b.range(&b.ops[0]);
                    assert_eq!(b.range(&b.ops[1]), (start, end));
                    assert_eq!((start.len(), end.len(), end[0]), (1, 1, start[0] + 1));
                    let of = |dropped: bool| {
                        live.iter().filter(move |(k, _)| k[0] != b'~' && (k[0] == start[0]) == dropped)
                    };
                    // The oldest: written two TTLs ago, before everything kept.
                    assert!(of(true).all(|(_, (t, _))| t + 2 == ttl));
                    assert!(of(false).all(|(_, (t, _))| t + 1 >= ttl));
                    drops.push(of(true).count());
                    bytes -= of(true).map(|(_, (_, b))| b).sum::<u64>();
                    live.retain(|k, _| k[0] != start[0]);
                } else {
                    for op in b.ops.iter().filter(|op| op.kind.is_write()) {
                        let key = b.key(op).to_vec();
                        if op.kind == OpKind::Put {
                            assert_eq!(key[0] as u64, ttl % 3, "writes go to the current partition");
                            let size = (key.len() + op.value.len()) as u64;
                            bytes += size - live.insert(key, (ttl, size)).map_or(0, |(_, b)| b);
                        } else if let Some((_, size)) = live.remove(&key) {
                            bytes -= size;
                        }
                    }
                }
                peak = peak.max(bytes);
            }
        }
        assert_eq!(drops.len() as u64, tbs.params.ingest_ttls);
        assert_eq!(drops[0], 0, "the first rotation drops the partition never written");
        assert!(drops[1..].iter().all(|&n| n > 10_000), "{drops:?}");
        // The shape is the store at its peak: two partitions full.
        let expected = tbs.shape().user_bytes as f64;
        assert!((peak as f64 / expected - 1.0).abs() < 0.05, "peak {peak} B, shape {expected} B");
    }

    #[test]
    fn phases_are_one_fill_ttl_then_the_ingest_ttls() {
        let tbs = small();
        let phases = tbs.phases(6);
        let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, PHASES);
        for (mut phase, ttls) in phases.into_iter().zip([1, tbs.params.ingest_ttls]) {
            let batches = drain(phase.source.as_mut());
            let ops = batches.iter().map(|b| b.ops.len()).sum::<usize>() as f64;
            let expected = tbs.per_ttl().ops * ttls as f64;
            assert!((ops / expected - 1.0).abs() < 0.05, "{}: {ops} ops, expected {expected}", phase.name);
            assert_eq!(phase.warmup_ops, (expected * tbs.params.warmup_share) as u64);
            // One decision step per interval: the event batches of an interval end at its bound.
            let events: u64 = event_batches(&batches)
                .map(|b| {
                    let puts = b.ops.iter().filter(|op| op.kind == OpKind::Put).count() as u64;
                    let gets = b.ops.len() as u64 - puts;
                    gets - puts
                })
                .sum();
            assert_eq!(events, tbs.events_per_ttl * ttls);
        }
    }
}
