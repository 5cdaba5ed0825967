//! `tsdb`: InfluxDB's bz1 engine (influxdb tsdb/engine/bz1/bz1.go, 2015)
//! storing series of points in compressed blocks (see shared/workloads.md).
//! bz1 keeps a BoltDB bucket per series with 8-byte big-endian block start
//! times as keys; in one RocksDB keyspace a block's key is the series key
//! followed by that time, so a series' blocks are contiguous and in time order.
//!
//! What bz1.go does, and how it is modelled:
//! - `writeIndex`, once per series per WAL flush: `c.Last()` (the series'
//!   last block: a reverse seek within the series), then, if the new points
//!   all come after it (~99%), `writeBlocks` appends new blocks: a block per
//!   `BlockSize` of raw points, the flush's last one partial.
//! - Otherwise (points out of order) every block overlapping the new points
//!   is read, decoded, deleted (`c.Delete()`), and the merged points are
//!   written as new blocks: gets, then deletes and puts in one batch.
//! - A block's value: 8-byte end time + snappy-compressed entries, which the
//!   engine's own compression cannot shrink much further.
//! - `Cursor.SeekTo` + `Next`: a query seeks to a time in one series and reads
//!   blocks forward.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::ops::{Batch, OpKind, OpSource};
use super::values::{corpus, corpus_len, log_uniform, log_uniform_mean, mix64, slice};
use super::{DataUnit, Phase, Shape, Workload};
use crate::budget::GIB;

const PHASES: [&str; 2] = ["ingest", "query"];
/// Series keys as InfluxDB writes them (`measurement,tag=value,...`, tags
/// sorted by key), shaped like Telegraf's inputs. `@` is the host
/// (`srv` + 8 digits, from the series number: unique), `#` a digit from the
/// series' hash. Every key of a template has the same length and no
/// measurement name plus comma begins another, so no series key is a prefix
/// of another: a scan within a series key never runs into the next series.
const TEMPLATES: [&str; 10] = [
    "cpu,cpu=cpu##,host=@",
    "mem,host=@",
    "disk,device=sd#,fstype=ext4,host=@,mode=rw,path=/data##",
    "diskio,host=@,name=nvme#n1",
    "net,host=@,interface=eth#",
    "system,host=@",
    "processes,host=@",
    "kernel,host=@",
    "docker_container_cpu,container_name=app-####-####,cpu=cpu-total,host=@",
    "http_response,host=@,method=GET,result=success,server=api##.internal",
];
const HOST_DIGITS: u32 = 8;
/// Bytes `@` stands for: `srv` + the digits.
const HOST_LEN: usize = 3 + HOST_DIGITS as usize;
/// The block start time after the series key.
const TIME_LEN: usize = 8;
/// The block value's leading end time.
const END_TIME_LEN: usize = 8;
/// 2015-09-01T00:00:00Z in nanoseconds, when the first points were written.
const START_NS: u64 = 1_441_065_600_000_000_000;
const QUERIES_PER_BATCH: u64 = 100;

/// The `[tsdb]` table of a dataset file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TsdbParams {
    pub series_per_budget_gib: f64,
    pub points_per_budget_gib: f64,
    pub queries_per_budget_gib: f64,
    pub points_per_block: u64,
    pub compressed_bytes_per_point: f64,
    pub raw_bytes_per_point: f64,
    pub flush_min_bytes: f64,
    pub flush_max_bytes: f64,
    pub out_of_order_share: f64,
    pub max_rewritten_blocks: u64,
    pub point_interval_secs: f64,
    pub query_max_blocks: u64,
    pub query_recent_share: f64,
    pub value_compressibility: f64,
    pub warmup_share: f64,
}

impl TsdbParams {
    pub fn problem(&self) -> Option<String> {
        let shares = [
            ("out_of_order_share", self.out_of_order_share),
            ("query_recent_share", self.query_recent_share),
            ("warmup_share", self.warmup_share),
        ];
        if let Some((name, v)) = shares.iter().find(|(_, v)| !(0.0..=1.0).contains(v)) {
            return Some(format!("[tsdb] {name} = {v}: a share is a number from 0 to 1"));
        }
        let positive = [
            ("series_per_budget_gib", self.series_per_budget_gib),
            ("points_per_budget_gib", self.points_per_budget_gib),
            ("points_per_block", self.points_per_block as f64),
            ("compressed_bytes_per_point", self.compressed_bytes_per_point),
            ("raw_bytes_per_point", self.raw_bytes_per_point),
            ("flush_min_bytes", self.flush_min_bytes),
            ("max_rewritten_blocks", self.max_rewritten_blocks as f64),
            ("point_interval_secs", self.point_interval_secs),
            ("query_max_blocks", self.query_max_blocks as f64),
            ("value_compressibility", self.value_compressibility),
        ];
        if let Some((name, v)) = positive.iter().find(|(_, v)| v.is_nan() || *v <= 0.0) {
            return Some(format!("[tsdb] {name} = {v}: it must be above 0"));
        }
        if self.flush_max_bytes < self.flush_min_bytes {
            return Some(format!(
                "[tsdb] flush_max_bytes = {} is below flush_min_bytes = {}",
                self.flush_max_bytes, self.flush_min_bytes
            ));
        }
        let block = self.block_bytes(self.points_per_block);
        (block > 1 << 20).then(|| format!("[tsdb] a full block would be {block} bytes: keep it under 1 MiB"))
    }

    /// A block's value: the end time and the compressed points.
    fn block_bytes(&self, points: u64) -> usize {
        END_TIME_LEN + (points as f64 * self.compressed_bytes_per_point).round() as usize
    }

    fn step_ns(&self) -> u64 {
        (self.point_interval_secs * 1e9).round().max(1.0) as u64
    }

    fn mean_flush_points(&self) -> f64 {
        log_uniform_mean(self.flush_min_bytes, self.flush_max_bytes) / self.raw_bytes_per_point
    }
}

/// The tsdb workload sized for one budget.
pub struct Tsdb {
    params: TsdbParams,
    series: u64,
    points: u64,
    queries: u64,
    budget: u64,
}

impl Tsdb {
    /// The tsdb workload at `budget` bytes, every count times `size`.
    pub fn new(params: TsdbParams, budget: u64, size: f64) -> Self {
        let gib = budget as f64 / GIB as f64;
        let count = |per_gib: f64, min: f64| (per_gib * gib * size).max(min).round() as u64;
        Tsdb {
            series: count(params.series_per_budget_gib, 10.0)
                .min(10u64.pow(HOST_DIGITS) * TEMPLATES.len() as u64),
            points: count(params.points_per_budget_gib, 10_000.0),
            queries: count(params.queries_per_budget_gib, 100.0),
            budget,
            params,
        }
    }

    /// Expected flushes (one batch each) and blocks on disk at the end.
    fn flushes_and_blocks(&self) -> (f64, f64) {
        let p = &self.params;
        let flushes = self.points as f64 / p.mean_flush_points();
        (flushes, self.points as f64 / p.points_per_block as f64 + flushes / 2.0)
    }
}

impl Workload for Tsdb {
    fn shape(&self) -> Shape {
        let (_, blocks) = self.flushes_and_blocks();
        let key = mean_series_key_len() + TIME_LEN as f64;
        let values =
            blocks * END_TIME_LEN as f64 + self.points as f64 * self.params.compressed_bytes_per_point;
        Shape { keys: blocks as u64, user_bytes: (blocks * key + values) as u64 }
    }

    fn phase_names(&self) -> Vec<String> {
        PHASES.iter().map(|p| p.to_string()).collect()
    }

    /// Points, as InfluxDB users size their data: bytes on disk per point.
    fn data_unit(&self) -> Option<DataUnit> {
        Some(DataUnit { name: "point".into(), count: self.points })
    }

    fn phases(&self, seed: u64) -> Vec<Phase> {
        let common = Common {
            params: self.params.clone(),
            seed,
            corpus: Arc::new(corpus(corpus_len(self.budget), self.params.value_compressibility, seed)),
        };
        let timeline = Timeline::new(&common, self.series, self.points);
        let (flushes, blocks) = self.flushes_and_blocks();
        let warmup = |ops: f64| (ops * self.params.warmup_share) as u64;
        vec![
            Phase {
                name: PHASES[0].into(),
                warmup_ops: warmup(flushes + blocks),
                source: Box::new(Ingest {
                    rng: common.rng(1),
                    common: common.clone(),
                    timeline: timeline.clone(),
                    key: Vec::new(),
                }),
            },
            Phase {
                name: PHASES[1].into(),
                warmup_ops: warmup(self.queries as f64),
                source: Box::new(Queries::new(common, timeline, self.queries)),
            },
        ]
    }
}

/// Mean length of a series key over the templates.
fn mean_series_key_len() -> f64 {
    let len = |t: &str| t.len() + t.matches('@').count() * (HOST_LEN - 1);
    TEMPLATES.iter().map(|t| len(t) as f64).sum::<f64>() / TEMPLATES.len() as f64
}

/// Appends series `series`' key: its template, host and digits.
fn push_series_key(out: &mut Vec<u8>, seed: u64, series: u64) {
    let templates = TEMPLATES.len() as u64;
    let host = series / templates;
    let mut digits = mix64(seed ^ mix64(series));
    for &b in TEMPLATES[(series % templates) as usize].as_bytes() {
        match b {
            b'@' => {
                out.extend_from_slice(b"srv");
                out.extend((0..HOST_DIGITS).rev().map(|i| b'0' + (host / 10u64.pow(i) % 10) as u8));
            }
            b'#' => {
                out.push(b'0' + (digits % 10) as u8);
                digits /= 10;
            }
            _ => out.push(b),
        }
    }
}

/// Appends a block's key: the series key, then the block's start time.
fn push_block_key(out: &mut Vec<u8>, series_key: &[u8], start: u64) {
    out.extend_from_slice(series_key);
    out.extend_from_slice(&start.to_be_bytes());
}

/// What the phases share.
#[derive(Clone)]
struct Common {
    params: TsdbParams,
    seed: u64,
    corpus: Arc<Vec<u8>>,
}

impl Common {
    fn rng(&self, stream: u64) -> StdRng {
        StdRng::seed_from_u64(mix64(self.seed ^ mix64(stream)))
    }

    /// Time of a series' first point: series start within one interval.
    fn first_time(&self, series: u64) -> u64 {
        START_NS + mix64(self.seed ^ series) % self.params.step_ns()
    }
}

/// Blocks written together: `points` points from `start` on, a block per
/// `points_per_block` (the last one partial), block `i` starting at
/// `start + i * span`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Group {
    start: u64,
    span: u64,
    points: u64,
}

impl Group {
    fn blocks(&self, per_block: u64) -> u64 {
        self.points.div_ceil(per_block)
    }

    fn block_start(&self, i: u64) -> u64 {
        self.start + i * self.span
    }

    fn block_points(&self, i: u64, per_block: u64) -> u64 {
        per_block.min(self.points - i * per_block)
    }
}

/// A series: when its next point comes, and its newest group of blocks,
/// the ones out-of-order points are merged into.
#[derive(Debug, Clone, Copy, Default)]
struct Series {
    next: u64,
    tail: Group,
}

/// One series' part of a WAL flush.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Flush {
    /// Points after the series' last block: new blocks.
    Append { series: u64, blocks: Group },
    /// Points among the newest blocks: `old` are read, deleted and written
    /// again as `new` with the late points merged in.
    Rewrite { series: u64, old: Group, new: Group },
}

/// Which series flushes, how much, and whether in order: the series' times
/// and block layout, so that appends follow each series' last point and
/// rewrites read blocks that exist. Its own random stream, so the query
/// phase can replay it to learn where every series ended.
#[derive(Clone)]
struct Timeline {
    params: TsdbParams,
    rng: StdRng,
    series: Vec<Series>,
    /// Points still to write.
    remaining: u64,
}

impl Timeline {
    fn new(common: &Common, series: u64, points: u64) -> Self {
        let series =
            (0..series).map(|s| Series { next: common.first_time(s), tail: Group::default() }).collect();
        Timeline { params: common.params.clone(), rng: common.rng(0), series, remaining: points }
    }

    /// The next series flush, applied to the series' state.
    fn next_flush(&mut self) -> Option<Flush> {
        if self.remaining == 0 {
            return None;
        }
        let p = &self.params;
        let series = self.rng.random_range(0..self.series.len() as u64);
        let state = &mut self.series[series as usize];
        let tail_blocks = state.tail.blocks(p.points_per_block);
        let flush = if tail_blocks > 0 && self.rng.random::<f64>() < p.out_of_order_share {
            let rewritten = self.rng.random_range(1..=tail_blocks.min(p.max_rewritten_blocks));
            let late = self.rng.random_range(1..=p.points_per_block).min(self.remaining);
            self.remaining -= late;
            let first = tail_blocks - rewritten;
            let old = Group {
                start: state.tail.block_start(first),
                span: state.tail.span,
                points: state.tail.points - first * p.points_per_block,
            };
            let points = old.points + late;
            let span =
                ((state.next - old.start) as u128 * p.points_per_block as u128 / points as u128) as u64;
            let new = Group { start: old.start, span: span.max(1), points };
            state.tail = new;
            Flush::Rewrite { series, old, new }
        } else {
            let bytes = log_uniform(&mut self.rng, p.flush_min_bytes, p.flush_max_bytes);
            let points = ((bytes / p.raw_bytes_per_point).round() as u64).clamp(1, self.remaining);
            self.remaining -= points;
            let blocks = Group { start: state.next, span: p.step_ns() * p.points_per_block, points };
            state.next += points * p.step_ns();
            state.tail = blocks;
            Flush::Append { series, blocks }
        };
        Some(flush)
    }
}

/// The WAL's flushes into the index, one batch per series flush.
struct Ingest {
    common: Common,
    timeline: Timeline,
    rng: StdRng,
    /// The current series' key, written once per batch.
    key: Vec<u8>,
}

impl Ingest {
    /// `c.Last()`: the series' newest block, to tell an append from a rewrite.
    fn push_last_block_read(&self, batch: &mut Batch) {
        let prefix = self.key.len() as u16;
        batch.push_read(OpKind::SeekForPrev, |k| push_block_key(k, &self.key, u64::MAX), 1, prefix);
    }

    fn push_puts(&mut self, batch: &mut Batch, group: Group) {
        let p = &self.common.params;
        for i in 0..group.blocks(p.points_per_block) {
            let bytes = p.block_bytes(group.block_points(i, p.points_per_block));
            let value = slice(&mut self.rng, self.common.corpus.len(), bytes);
            batch.push(OpKind::Put, |k| push_block_key(k, &self.key, group.block_start(i)), value, 0);
        }
    }

    fn push_old_blocks(&self, batch: &mut Batch, kind: OpKind, old: Group) {
        for i in 0..old.blocks(self.common.params.points_per_block) {
            let write_key = |k: &mut Vec<u8>| push_block_key(k, &self.key, old.block_start(i));
            match kind {
                OpKind::Get => batch.push_read(kind, write_key, 1, 0),
                _ => batch.push(kind, write_key, 0..0, 0),
            }
        }
    }
}

impl OpSource for Ingest {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        let Some(flush) = self.timeline.next_flush() else {
            return false;
        };
        let (Flush::Append { series, .. } | Flush::Rewrite { series, .. }) = flush;
        self.key.clear();
        push_series_key(&mut self.key, self.common.seed, series);
        self.push_last_block_read(batch);
        match flush {
            Flush::Append { blocks, .. } => self.push_puts(batch, blocks),
            Flush::Rewrite { old, new, .. } => {
                self.push_old_blocks(batch, OpKind::Get, old);
                self.push_old_blocks(batch, OpKind::Delete, old);
                self.push_puts(batch, new);
            }
        }
        true
    }

    fn corpus(&self) -> &[u8] {
        &self.common.corpus
    }
}

/// Queries: seek to a time in one series, read blocks forward. Most ask for
/// recent data, the rest for any time in the series' history.
struct Queries {
    common: Common,
    /// Every series as the ingest left it.
    series: Vec<Series>,
    rng: StdRng,
    done: u64,
    queries: u64,
    /// The current series' key.
    key: Vec<u8>,
}

impl Queries {
    /// Replays the ingest's timeline (cheap: a few draws per flush) to learn
    /// where each series ends.
    fn new(common: Common, mut timeline: Timeline, queries: u64) -> Self {
        while timeline.next_flush().is_some() {}
        Queries { rng: common.rng(2), series: timeline.series, common, done: 0, queries, key: Vec::new() }
    }

    /// A seek time and a block count for series `s`.
    fn window(&mut self, s: u64) -> (u64, u32) {
        let p = &self.common.params;
        let blocks = log_uniform(&mut self.rng, 1.0, p.query_max_blocks as f64).round() as u64;
        let (first, end) = (self.common.first_time(s), self.series[s as usize].next);
        let span = blocks * p.points_per_block * p.step_ns();
        let time = if self.rng.random::<f64>() < p.query_recent_share || end <= first + 1 {
            end.saturating_sub(span).max(first)
        } else {
            self.rng.random_range(first..end)
        };
        (time, blocks as u32)
    }
}

impl OpSource for Queries {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        let end = (self.done + QUERIES_PER_BATCH).min(self.queries);
        if self.done >= end {
            return false;
        }
        for _ in self.done..end {
            let s = self.rng.random_range(0..self.series.len() as u64);
            let (time, blocks) = self.window(s);
            self.key.clear();
            push_series_key(&mut self.key, self.common.seed, s);
            let prefix = self.key.len() as u16;
            batch.push_read(OpKind::Scan, |k| push_block_key(k, &self.key, time), blocks, prefix);
        }
        self.done = end;
        true
    }

    fn corpus(&self) -> &[u8] {
        &self.common.corpus
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;
    use crate::dataset::ops::drain;
    use crate::dataset::Dataset;

    fn params() -> TsdbParams {
        Dataset::find("tsdb").unwrap().tsdb.unwrap()
    }

    /// 64 MiB: ~16M points, 125 series, ~1200 flushes.
    fn small(params: TsdbParams) -> Tsdb {
        Tsdb::new(params, 64 << 20, 1.0)
    }

    /// A block key's series key and start time.
    fn split(key: &[u8]) -> (&[u8], u64) {
        let (series, time) = key.split_at(key.len() - TIME_LEN);
        (series, u64::from_be_bytes(time.try_into().unwrap()))
    }

    /// Points in a block, from its value's size.
    fn points(p: &TsdbParams, value: &std::ops::Range<u32>) -> u64 {
        ((value.len() - END_TIME_LEN) as f64 / p.compressed_bytes_per_point).round() as u64
    }

    /// What the ingest left: live blocks (key to points), each series' end
    /// (the time after its last point), and the batches by kind.
    #[derive(Default)]
    struct Replayed {
        live: BTreeMap<Vec<u8>, u64>,
        ends: HashMap<Vec<u8>, u64>,
        appends: u64,
        rewrites: u64,
    }

    /// Replays the ingest, checking each batch's order.
    fn replay(tsdb: &Tsdb, batches: &[Batch]) -> Replayed {
        let p = &tsdb.params;
        let Replayed { mut live, mut ends, mut appends, mut rewrites } = Replayed::default();
        for b in batches {
            // bz1's c.Last(): a reverse seek within the series first.
            let last = &b.ops[0];
            let (series, time) = split(b.key(last));
            assert_eq!(
                (last.kind, last.prefix as usize, time),
                (OpKind::SeekForPrev, series.len(), u64::MAX)
            );
            let kinds: Vec<OpKind> = b.ops[1..].iter().map(|op| op.kind).collect();
            let puts: Vec<(u64, u64)> = b.ops[1..]
                .iter()
                .filter(|op| op.kind == OpKind::Put)
                .map(|op| (split(b.key(op)).1, points(p, &op.value)))
                .collect();
            assert!(b.ops[1..].iter().all(|op| split(b.key(op)).0 == series), "one series a batch");
            assert!(puts.windows(2).all(|w| w[0].0 < w[1].0), "blocks in time order");
            assert!(
                puts[..puts.len() - 1].iter().all(|&(_, n)| n == p.points_per_block),
                "full blocks but the last"
            );
            let gets = kinds.iter().filter(|&&k| k == OpKind::Get).count();
            if gets == 0 {
                assert!(kinds.iter().all(|&k| k == OpKind::Put));
                assert!(ends.get(series).is_none_or(|&t| t <= puts[0].0), "an append follows the last point");
                let (start, n) = puts[puts.len() - 1];
                ends.insert(series.to_vec(), start + n * p.step_ns());
                appends += 1;
            } else {
                // Reads first, then the deletes of what was read, then the puts.
                let old: Vec<&[u8]> = b.ops[1..=gets].iter().map(|op| b.key(op)).collect();
                assert!((1..=p.max_rewritten_blocks as usize).contains(&gets));
                assert!(kinds[..gets].iter().all(|&k| k == OpKind::Get));
                assert!(kinds[gets..2 * gets].iter().all(|&k| k == OpKind::Delete));
                assert!(b.ops[1 + gets..=2 * gets].iter().map(|op| b.key(op)).eq(old.iter().copied()));
                let read: u64 =
                    old.iter().map(|k| live.remove(*k).expect("a rewrite reads existing blocks")).sum();
                let written: u64 = puts.iter().map(|(_, n)| n).sum();
                assert!((1..=p.points_per_block).contains(&(written - read)), "late points merged in");
                assert_eq!(puts[0].0, split(old[0]).1, "the rewrite starts where the first block read did");
                assert!(puts[puts.len() - 1].0 < ends[series], "rewritten within the series' time");
                rewrites += 1;
            }
            for op in b.ops.iter().filter(|op| op.kind == OpKind::Put) {
                live.insert(b.key(op).to_vec(), points(p, &op.value));
            }
        }
        Replayed { live, ends, appends, rewrites }
    }

    #[test]
    fn same_seed_same_stream_other_seed_other_keys() {
        let tsdb = small(params());
        for (a, b) in tsdb.phases(1).iter_mut().zip(tsdb.phases(1).iter_mut()) {
            let (x, y) = (drain(a.source.as_mut()), drain(b.source.as_mut()));
            assert_eq!(x.len(), y.len());
            assert!(x.iter().zip(&y).all(|(p, q)| p.keys == q.keys && p.ops == q.ops), "{}", a.name);
        }
        let (mut one, mut two) = (tsdb.phases(1), tsdb.phases(2));
        assert_ne!(drain(one[0].source.as_mut())[0].keys, drain(two[0].source.as_mut())[0].keys);
    }

    #[test]
    fn series_keys_are_20_to_80_bytes_and_none_begins_another() {
        let mut keys: Vec<Vec<u8>> = (0..5000)
            .map(|s| {
                let mut key = vec![];
                push_series_key(&mut key, 7, s);
                key
            })
            .collect();
        let lens: Vec<usize> = keys.iter().map(|k| k.len()).collect();
        assert_eq!((lens.iter().min(), lens.iter().max()), (Some(&20), Some(&80)));
        let mean = lens.iter().sum::<usize>() as f64 / lens.len() as f64;
        assert!((mean - mean_series_key_len()).abs() < 0.01);
        keys.sort();
        assert!(keys.windows(2).all(|w| !w[1].starts_with(&w[0])), "a series key is a prefix of another");
        assert!(keys
            .iter()
            .all(|k| k.is_ascii() && k.contains(&b',') && k.windows(5).any(|w| w == b"host=")));
    }

    #[test]
    fn appends_follow_each_series_in_time_order_and_sizes_match_the_spec() {
        let tsdb = small(params());
        let p = &tsdb.params;
        let mut phases = tsdb.phases(3);
        let batches = drain(phases[0].source.as_mut());
        let Replayed { live, appends, rewrites, .. } = replay(&tsdb, &batches);
        // ~1% of series flushes are out of order.
        let share = rewrites as f64 / (appends + rewrites) as f64;
        assert!((0.002..0.025).contains(&share), "out-of-order share {share}");
        // Every point written is in a live block once: the data unit counts them.
        assert_eq!(live.values().sum::<u64>(), tsdb.data_unit().unwrap().count);
        // Flush sizes: 30 KB to 1 MB of raw points, log-uniform (median at the geometric mean).
        let mut flushes: Vec<f64> = batches
            .iter()
            .filter(|b| !b.ops.iter().any(|op| op.kind == OpKind::Get))
            .map(|b| {
                b.ops[1..].iter().map(|op| points(p, &op.value)).sum::<u64>() as f64 * p.raw_bytes_per_point
            })
            .collect();
        flushes.pop(); // the last flush is cut to the points left
        flushes.sort_by(f64::total_cmp);
        assert!(flushes[0] >= p.flush_min_bytes - p.raw_bytes_per_point);
        assert!(flushes[flushes.len() - 1] <= p.flush_max_bytes + p.raw_bytes_per_point);
        let median = flushes[flushes.len() / 2] / (p.flush_min_bytes * p.flush_max_bytes).sqrt();
        assert!((median - 1.0).abs() < 0.1, "median flush {median} of the geometric mean");
        // Blocks: keys are 20-80 byte series keys + 8-byte times; a full block ~1.45 KB.
        let key_lens: Vec<usize> = live.keys().map(|k| k.len()).collect();
        assert!(key_lens.iter().all(|l| (28..=88).contains(l)));
        let full = p.block_bytes(p.points_per_block) as f64;
        assert!((full - (8.0 + 195.0 * 7.4)).abs() < 1.0);
        let puts = batches.iter().flat_map(|b| b.ops.iter().filter(|op| op.kind == OpKind::Put));
        let sizes: Vec<usize> = puts.map(|op| op.value.len()).collect();
        let full_share = sizes.iter().filter(|&&s| s as f64 == full).count() as f64 / sizes.len() as f64;
        assert!(full_share > 0.9 && sizes.iter().all(|&s| s as f64 <= full), "full blocks {full_share}");
        // The shape is what the ingest leaves.
        let shape = tsdb.shape();
        let bytes: usize = live.keys().map(|k| k.len()).sum::<usize>()
            + live.values().map(|&n| p.block_bytes(n)).sum::<usize>();
        assert!(
            (live.len() as f64 / shape.keys as f64 - 1.0).abs() < 0.1,
            "{} blocks vs {shape:?}",
            live.len()
        );
        assert!((bytes as f64 / shape.user_bytes as f64 - 1.0).abs() < 0.05, "{bytes} B vs {shape:?}");
    }

    #[test]
    fn out_of_order_flushes_read_the_blocks_they_rewrite_first() {
        let tsdb = small(TsdbParams { out_of_order_share: 0.2, ..params() });
        let mut phases = tsdb.phases(4);
        let batches = drain(phases[0].source.as_mut());
        let Replayed { live, appends, rewrites, .. } = replay(&tsdb, &batches);
        let share = rewrites as f64 / (appends + rewrites) as f64;
        assert!((share - 0.2).abs() < 0.03, "out-of-order share {share}");
        assert_eq!(live.values().sum::<u64>(), tsdb.points);
    }

    #[test]
    fn queries_scan_forward_within_one_series_mostly_recent() {
        let tsdb = small(params());
        let p = &tsdb.params;
        let mut phases = tsdb.phases(5);
        let names: Vec<&str> = phases.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, PHASES);
        let Replayed { ends, .. } = replay(&tsdb, &drain(phases[0].source.as_mut()));
        let batches = drain(phases[1].source.as_mut());
        let (mut scans, mut recent, mut found) = (0, 0, 0);
        for b in &batches {
            for op in &b.ops {
                let (series, time) = split(b.key(op));
                assert_eq!((op.kind, op.prefix as usize), (OpKind::Scan, series.len()));
                assert!((1..=p.query_max_blocks as u32).contains(&op.arg));
                scans += 1;
                let Some(&end) = ends.get(series) else { continue };
                found += 1;
                assert!(time < end, "a query starts within the series");
                // Recent: the newest `arg` blocks' worth of time, as a dashboard asks.
                recent += (time + op.arg as u64 * p.points_per_block * p.step_ns() == end) as u64;
            }
        }
        assert_eq!(scans, tsdb.queries);
        assert!(found as f64 > 0.99 * scans as f64, "queries of series never written: {}", scans - found);
        let share = recent as f64 / found as f64;
        assert!((share - p.query_recent_share).abs() < 0.06, "recent share {share}");
    }
}
