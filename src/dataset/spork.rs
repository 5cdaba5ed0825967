//! `spork`: the Flow DPS index of one Flow blockchain spork (see
//! shared/workloads.md). Keys are a prefix byte and fixed-width fields,
//! integers 8-byte big-endian, identifiers and register paths 32 bytes.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal, Zipf};
use serde::{Deserialize, Serialize};

use super::ops::{Batch, OpKind, OpSource};
use super::values::{corpus, corpus_len, mix64, push_id32, slice};
use super::{Phase, Shape, Workload};
use crate::budget::GIB;

pub const LAST_HEIGHT: u8 = 0x02;
pub const HEADER: u8 = 0x03;
pub const COMMIT: u8 = 0x04;
pub const EVENTS: u8 = 0x05;
pub const REGISTER: u8 = 0x06;
/// Lists by height: transactions, collections, seals, guarantees, results.
pub const LISTS: [u8; 5] = [0x07, 0x08, 0x09, 0x0A, 0x0B];
/// Records by id: transaction, result, collection.
pub const BY_ID: [u8; 3] = [0x10, 0x11, 0x12];
const PHASES: [&str; 3] = ["bootstrap", "index", "serve"];

/// Height of the root checkpoint the bootstrap writes at.
pub const ROOT_HEIGHT: u64 = 40_000_000;
/// Register key: prefix + path(32) + height(8).
pub const REGISTER_KEY_LEN: usize = 41;
/// A register's versions share prefix + path: a reverse seek stays within it.
pub const REGISTER_PREFIX_LEN: u16 = 33;
/// Height-keyed records: prefix + height(8); an event scan stays within it.
pub const HEIGHT_KEY_LEN: u16 = 9;
const MAX_CODE_BYTES: f64 = 700.0 * 1024.0;
const READS_PER_BATCH: u64 = 1000;
const EVENTS_PER_SCAN: u32 = 100;

/// The `[spork]` table of a dataset file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SporkParams {
    pub registers_per_budget_gib: f64,
    pub blocks_per_budget_gib: f64,
    pub reads_per_budget_gib: f64,
    pub bootstrap_batch: u64,
    pub register_updates_per_block: u64,
    pub transactions_per_block: u64,
    pub events_per_block: u64,
    pub zipf_exponent: f64,
    pub slab_share: f64,
    pub slab_mean_bytes: f64,
    pub small_share: f64,
    pub small_mean_bytes: f64,
    pub code_share: f64,
    pub code_median_bytes: f64,
    pub value_compressibility: f64,
    pub serve_register_share: f64,
    pub serve_event_share: f64,
    pub serve_transaction_share: f64,
    pub serve_recent_share: f64,
    pub warmup_share: f64,
}

impl SporkParams {
    pub fn problem(&self) -> Option<String> {
        let shares = [
            ("slab_share", self.slab_share),
            ("small_share", self.small_share),
            ("code_share", self.code_share),
            ("serve_register_share", self.serve_register_share),
            ("serve_event_share", self.serve_event_share),
            ("serve_transaction_share", self.serve_transaction_share),
            ("serve_recent_share", self.serve_recent_share),
            ("warmup_share", self.warmup_share),
        ];
        if let Some((name, v)) = shares.iter().find(|(_, v)| !(0.0..=1.0).contains(v)) {
            return Some(format!("[spork] {name} = {v}: a share is a number from 0 to 1"));
        }
        let positive = [
            ("registers_per_budget_gib", self.registers_per_budget_gib),
            ("bootstrap_batch", self.bootstrap_batch as f64),
            ("zipf_exponent", self.zipf_exponent),
            ("slab_mean_bytes", self.slab_mean_bytes),
            ("small_mean_bytes", self.small_mean_bytes),
            ("code_median_bytes", self.code_median_bytes),
            ("value_compressibility", self.value_compressibility),
        ];
        if let Some((name, v)) = positive.iter().find(|(_, v)| v.is_nan() || *v <= 0.0) {
            return Some(format!("[spork] {name} = {v}: it must be above 0"));
        }
        let sizes = self.slab_share + self.small_share + self.code_share;
        if (sizes - 1.0).abs() > 1e-6 {
            return Some(format!("[spork] slab_share + small_share + code_share add up to {sizes}, not 1"));
        }
        let mix = self.serve_register_share + self.serve_event_share + self.serve_transaction_share;
        ((mix - 1.0).abs() > 1e-6).then(|| format!("[spork] the serve_*_share values add up to {mix}, not 1"))
    }
}

/// The spork workload sized for one budget.
pub struct Spork {
    params: SporkParams,
    registers: u64,
    blocks: u64,
    reads: u64,
    budget: u64,
}

impl Spork {
    /// The spork workload at `budget` bytes, every count times `size`.
    pub fn new(params: SporkParams, budget: u64, size: f64) -> Self {
        let gib = budget as f64 / GIB as f64;
        let count = |per_gib: f64, min: f64| (per_gib * gib * size).max(min).round() as u64;
        Spork {
            registers: count(params.registers_per_budget_gib, 1000.0),
            blocks: count(params.blocks_per_budget_gib, 10.0),
            reads: count(params.reads_per_budget_gib, 100.0),
            budget,
            params,
        }
    }

    fn ops_per_block(&self) -> u64 {
        let p = &self.params;
        1 + 2
            + LISTS.len() as u64
            + 3 * p.transactions_per_block
            + p.events_per_block
            + p.register_updates_per_block
    }

    fn mean_register_bytes(&self) -> f64 {
        let p = &self.params;
        let code_mean = p.code_median_bytes * (CODE_SIGMA * CODE_SIGMA / 2.0).exp();
        p.slab_share * p.slab_mean_bytes + p.small_share * p.small_mean_bytes + p.code_share * code_mean
    }
}

impl Workload for Spork {
    fn shape(&self) -> Shape {
        let register_bytes = self.mean_register_bytes() + REGISTER_KEY_LEN as f64;
        let index_bytes = self.blocks as f64
            * (self.params.register_updates_per_block as f64 * register_bytes
                + self.params.transactions_per_block as f64 * 3.0 * 383.0
                + self.params.events_per_block as f64 * 3000.0
                + 700.0);
        Shape {
            keys: self.registers + self.blocks * (self.ops_per_block() - 1),
            user_bytes: (self.registers as f64 * register_bytes + index_bytes) as u64,
        }
    }

    fn phase_names(&self) -> Vec<String> {
        PHASES.iter().map(|p| p.to_string()).collect()
    }

    fn phases(&self, seed: u64) -> Vec<Phase> {
        let common = Common::new(&self.params, self.registers, corpus_len(self.budget), seed);
        let warmup = |ops: u64| (ops as f64 * self.params.warmup_share) as u64;
        let block_ops = self.blocks * self.ops_per_block();
        vec![
            Phase {
                name: PHASES[0].into(),
                warmup_ops: warmup(self.registers),
                source: Box::new(Bootstrap {
                    common: common.clone(),
                    next: 0,
                    batch: self.params.bootstrap_batch,
                }),
            },
            Phase {
                name: PHASES[1].into(),
                warmup_ops: warmup(block_ops),
                source: Box::new(Index { common: common.clone(), block: 0, blocks: self.blocks }),
            },
            Phase {
                name: PHASES[2].into(),
                warmup_ops: warmup(self.reads),
                source: Box::new(Serve {
                    common,
                    done: 0,
                    reads: self.reads,
                    blocks: self.blocks,
                    recent: Exp::new(1.0 / (self.params.serve_recent_share * self.blocks as f64).max(1.0))
                        .expect("positive rate"),
                }),
            },
        ]
    }
}

const SLAB_SIGMA: f64 = 0.5;
const SMALL_SIGMA: f64 = 0.3;
/// Contract code: median 10 KB with p95 36 KB gives sigma = ln(3.6) / 1.645.
const CODE_SIGMA: f64 = 0.78;

/// What every phase shares: the corpus, the register population, the skew.
#[derive(Clone)]
struct Common {
    params: SporkParams,
    seed: u64,
    registers: u64,
    corpus: Arc<Vec<u8>>,
    zipf: Zipf<f64>,
    slab: LogNormal<f64>,
    small: LogNormal<f64>,
    code: LogNormal<f64>,
}

impl Common {
    fn new(params: &SporkParams, registers: u64, corpus_bytes: usize, seed: u64) -> Self {
        let lognormal = |mean: f64, sigma: f64| {
            LogNormal::new(mean.ln() - sigma * sigma / 2.0, sigma).expect("positive sigma")
        };
        Common {
            seed,
            registers,
            corpus: Arc::new(corpus(corpus_bytes, params.value_compressibility, seed)),
            zipf: Zipf::new(registers as f64, params.zipf_exponent).expect("checked parameters"),
            slab: lognormal(params.slab_mean_bytes, SLAB_SIGMA),
            small: lognormal(params.small_mean_bytes, SMALL_SIGMA),
            code: LogNormal::new(params.code_median_bytes.ln(), CODE_SIGMA).expect("positive sigma"),
            params: params.clone(),
        }
    }

    fn rng(&self, phase: u64) -> StdRng {
        StdRng::seed_from_u64(mix64(self.seed ^ mix64(phase)))
    }

    /// A payload size drawn from the register mix (slab, small, contract code).
    fn register_value(&self, rng: &mut StdRng) -> std::ops::Range<u32> {
        let u: f64 = rng.random();
        let p = &self.params;
        let bytes = if u < p.code_share {
            self.code.sample(rng).min(MAX_CODE_BYTES)
        } else if u < p.code_share + p.small_share {
            self.small.sample(rng)
        } else {
            self.slab.sample(rng)
        };
        slice(rng, self.corpus.len(), bytes.max(1.0) as usize)
    }

    /// A register index, skewed: hot contracts and accounts come up often.
    fn hot_register(&self, rng: &mut StdRng) -> u64 {
        let rank = self.zipf.sample(rng) as u64;
        mix64(rank ^ self.seed) % self.registers
    }

    fn push_register_key(&self, out: &mut Vec<u8>, register: u64, height: u64) {
        out.push(REGISTER);
        push_id32(out, self.seed, 0x06, register);
        out.extend_from_slice(&height.to_be_bytes());
    }
}

fn push_height_key(out: &mut Vec<u8>, prefix: u8, height: u64) {
    out.push(prefix);
    out.extend_from_slice(&height.to_be_bytes());
}

fn transaction_key(out: &mut Vec<u8>, seed: u64, prefix: u8, height: u64, tx: u64) {
    out.push(prefix);
    push_id32(out, seed, height, tx);
}

/// Every register of the root checkpoint, paths in hash order, in batches.
struct Bootstrap {
    common: Common,
    next: u64,
    batch: u64,
}

impl OpSource for Bootstrap {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        let end = (self.next + self.batch).min(self.common.registers);
        if self.next >= end {
            return false;
        }
        let mut rng = self.common.rng(self.next);
        for register in self.next..end {
            let value = self.common.register_value(&mut rng);
            batch.push(OpKind::Put, |k| self.common.push_register_key(k, register, ROOT_HEIGHT), value, 0);
        }
        self.next = end;
        true
    }

    fn corpus(&self) -> &[u8] {
        &self.common.corpus
    }
}

/// One batch per block: height-keyed records, transactions by id, event
/// blobs and skewed register updates.
struct Index {
    common: Common,
    block: u64,
    blocks: u64,
}

impl OpSource for Index {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        if self.block >= self.blocks {
            return false;
        }
        let height = ROOT_HEIGHT + 1 + self.block;
        let c = &self.common;
        let p = &c.params;
        let mut rng = c.rng(height);
        let len = c.corpus.len();
        let put = |batch: &mut Batch, key: &dyn Fn(&mut Vec<u8>), bytes: usize, rng: &mut StdRng| {
            let value = slice(rng, len, bytes);
            batch.push(OpKind::Put, key, value, 0);
        };
        put(batch, &|k| k.push(LAST_HEIGHT), 8, &mut rng);
        put(batch, &|k| push_height_key(k, HEADER, height), 300, &mut rng);
        put(batch, &|k| push_height_key(k, COMMIT, height), 32, &mut rng);
        for prefix in LISTS {
            let n =
                if prefix == LISTS[0] { p.transactions_per_block } else { 1 + p.transactions_per_block / 5 };
            put(batch, &|k| push_height_key(k, prefix, height), 32 * n as usize, &mut rng);
        }
        for tx in 0..p.transactions_per_block {
            for prefix in BY_ID {
                let bytes = rng.random_range(100..=600);
                put(batch, &|k| transaction_key(k, c.seed, prefix, height, tx), bytes, &mut rng);
            }
        }
        for event_type in 0..p.events_per_block {
            let bytes = (512.0 * 20f64.powf(rng.random::<f64>())) as usize;
            put(
                batch,
                &|k| {
                    push_height_key(k, EVENTS, height);
                    k.extend_from_slice(&mix64(event_type).to_be_bytes());
                },
                bytes,
                &mut rng,
            );
        }
        for _ in 0..p.register_updates_per_block {
            let register = c.hot_register(&mut rng);
            let value = c.register_value(&mut rng);
            batch.push(OpKind::Put, |k| c.push_register_key(k, register, height), value, 0);
        }
        self.block += 1;
        true
    }

    fn corpus(&self) -> &[u8] {
        &self.common.corpus
    }
}

/// API reads: register at a height (reverse seek), events of a height
/// (prefix scan), transactions by id (point get); heights skewed to recent.
struct Serve {
    common: Common,
    done: u64,
    reads: u64,
    blocks: u64,
    recent: Exp<f64>,
}

impl Serve {
    /// A height among those indexed, skewed to the tip.
    fn recent_height(&self, rng: &mut StdRng) -> u64 {
        let back = (self.recent.sample(rng) as u64).min(self.blocks.saturating_sub(1));
        ROOT_HEIGHT + self.blocks - back
    }
}

impl OpSource for Serve {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        let end = (self.done + READS_PER_BATCH).min(self.reads);
        if self.done >= end {
            return false;
        }
        let c = &self.common;
        let p = &c.params;
        let mut rng = c.rng(u64::MAX - self.done);
        for _ in self.done..end {
            let u: f64 = rng.random();
            let height = self.recent_height(&mut rng);
            if u < p.serve_register_share {
                let register = c.hot_register(&mut rng);
                batch.push_read(
                    OpKind::SeekForPrev,
                    |k| c.push_register_key(k, register, height),
                    1,
                    REGISTER_PREFIX_LEN,
                );
            } else if u < p.serve_register_share + p.serve_event_share {
                batch.push_read(
                    OpKind::Scan,
                    |k| push_height_key(k, EVENTS, height),
                    EVENTS_PER_SCAN,
                    HEIGHT_KEY_LEN,
                );
            } else {
                let tx = rng.random_range(0..p.transactions_per_block.max(1));
                batch.push_read(OpKind::Get, |k| transaction_key(k, c.seed, BY_ID[0], height, tx), 1, 0);
            }
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
    use super::*;
    use crate::dataset::ops::drain;
    use crate::dataset::Dataset;

    fn small() -> Spork {
        let dataset = Dataset::find("spork").unwrap();
        Spork::new(dataset.spork.unwrap(), 16 << 20, 1.0)
    }

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        let spork = small();
        for (a, b) in spork.phases(1).iter_mut().zip(spork.phases(1).iter_mut()) {
            let (x, y) = (drain(a.source.as_mut()), drain(b.source.as_mut()));
            assert_eq!(x.len(), y.len());
            assert!(x.iter().zip(&y).all(|(p, q)| p.keys == q.keys && p.ops == q.ops), "{}", a.name);
        }
        let mut one = spork.phases(1);
        let mut two = spork.phases(2);
        assert_ne!(drain(one[0].source.as_mut())[0].keys, drain(two[0].source.as_mut())[0].keys);
    }

    #[test]
    fn bootstrap_writes_every_register_once_in_batches() {
        let spork = small();
        let mut phases = spork.phases(3);
        let batches = drain(phases[0].source.as_mut());
        let p = &spork.params;
        assert!(batches[..batches.len() - 1].iter().all(|b| b.ops.len() as u64 == p.bootstrap_batch));
        let mut keys = std::collections::HashSet::new();
        let mut value_bytes = 0usize;
        for b in &batches {
            for op in &b.ops {
                assert_eq!(op.kind, OpKind::Put);
                let key = b.key(op);
                assert_eq!(key.len(), REGISTER_KEY_LEN);
                assert_eq!(key[0], REGISTER);
                assert_eq!(&key[33..], &ROOT_HEIGHT.to_be_bytes());
                assert!(keys.insert(key.to_vec()), "register written twice");
                value_bytes += op.value.len();
            }
        }
        assert_eq!(keys.len() as u64, spork.registers);
        let mean = value_bytes as f64 / keys.len() as f64;
        let expected = spork.mean_register_bytes();
        assert!((mean - expected).abs() < 0.1 * expected, "mean value {mean} B, expected {expected}");
        // Hash-ordered paths: the keys of a batch are not sorted.
        let first: Vec<&[u8]> = batches[0].ops.iter().map(|op| batches[0].key(op)).collect();
        assert!(first.windows(2).any(|w| w[0] > w[1]));
    }

    #[test]
    fn index_blocks_have_the_described_mix() {
        let spork = small();
        let mut phases = spork.phases(4);
        let batches = drain(phases[1].source.as_mut());
        assert_eq!(batches.len() as u64, spork.blocks);
        let p = &spork.params;
        let mut register_updates = std::collections::HashMap::<Vec<u8>, u32>::new();
        for (i, b) in batches.iter().enumerate() {
            assert_eq!(b.ops.len() as u64, spork.ops_per_block());
            let height = (ROOT_HEIGHT + 1 + i as u64).to_be_bytes();
            let count = |prefix: u8, len: usize| {
                b.ops.iter().filter(|op| b.key(op)[0] == prefix && b.key(op).len() == len).count() as u64
            };
            assert_eq!(count(REGISTER, 41), p.register_updates_per_block);
            assert_eq!(count(BY_ID[0], 33), p.transactions_per_block);
            assert_eq!(count(EVENTS, 17), p.events_per_block);
            assert_eq!(count(HEADER, 9), 1);
            for op in b.ops.iter().filter(|op| b.key(op)[0] == REGISTER) {
                assert_eq!(&b.key(op)[33..], &height);
                *register_updates.entry(b.key(op)[..33].to_vec()).or_default() += 1;
            }
        }
        // Zipf skew: the hottest register is updated far more than the median one.
        let mut counts: Vec<u32> = register_updates.into_values().collect();
        counts.sort_unstable();
        assert!(
            counts[counts.len() - 1] >= 20 * counts[counts.len() / 2],
            "{:?}",
            &counts[counts.len() - 5..]
        );
    }

    #[test]
    fn serve_mix_matches_the_shares() {
        let spork = small();
        let mut phases = spork.phases(5);
        let batches = drain(phases[2].source.as_mut());
        let ops: Vec<_> =
            batches.iter().flat_map(|b| b.ops.iter().map(move |op| (op.kind, b.key(op).len()))).collect();
        assert_eq!(ops.len() as u64, spork.reads);
        let share = |kind: OpKind, len: usize| {
            ops.iter().filter(|(k, l)| *k == kind && *l == len).count() as f64 / ops.len() as f64
        };
        let p = &spork.params;
        assert!((share(OpKind::SeekForPrev, 41) - p.serve_register_share).abs() < 0.03);
        assert!((share(OpKind::Scan, 9) - p.serve_event_share).abs() < 0.03);
        assert!((share(OpKind::Get, 33) - p.serve_transaction_share).abs() < 0.03);
    }
}
