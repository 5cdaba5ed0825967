//! `mixgraph`: Facebook's social-graph key-value workload (Cao et al.,
//! "Characterizing, Modeling, and Benchmarking RocksDB Key-Value Workloads
//! at Facebook", FAST'20) as RocksDB's db_bench generates it with
//! `-benchmarks=mixgraph` (facebook/rocksdb tools/db_bench_tool.cc:
//! `MixGraph`, `GenerateTwoTermExpKeys`, `QueryDecider`,
//! `ParetoCdfInversion`, `PowerCdfInversion`, `GenerateKeyFromInt`).
//!
//! A load phase first writes every key once, in random order (the key space
//! db_bench's fill step leaves). Then each query is one uniform draw
//! `ini_rand` in `[0, num)` from which, as in db_bench, its type
//! (`ini_rand % 1000`), its key id (key-range hotness, then a power law
//! within the range), its value size and its scan length all follow. Keys
//! are the id as 8 big-endian bytes padded with ASCII '0' to `key_size`.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::ops::{Batch, OpKind, OpSource};
use super::values::{corpus, corpus_len, mix64, slice};
use super::{Phase, Shape, Workload};
use crate::budget::GIB;

const PHASES: [&str; 2] = ["load", "mixgraph"];
/// db_bench's value buffer: no value is larger, whatever mix_max_value_size says.
const DEFAULT_VALUE_MAX: i64 = 1024 * 1024;
/// Shorter values are written at this size (db_bench's floor).
const MIN_VALUE_BYTES: i64 = 10;
/// QueryDecider spreads the query types over `[0, 1000)`.
const DECIDER_SPAN: f64 = 1000.0;
/// db_bench counts a key range colder than this as never accessed.
const MIN_KEYRANGE_P: f64 = 1e-16;
/// Points of the grid the mean value size is averaged over.
const MEAN_GRID: u32 = 1 << 16;

/// The `[mixgraph]` table of a dataset file; names follow db_bench's flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixgraphParams {
    /// db_bench `-num`: keys loaded, per GiB of budget.
    pub keys_per_budget_gib: f64,
    /// db_bench `-reads`: mixgraph queries, per GiB of budget.
    pub queries_per_budget_gib: f64,
    pub key_size: u16,
    pub load_batch: u64,
    pub key_dist_a: f64,
    pub key_dist_b: f64,
    pub keyrange_dist_a: f64,
    pub keyrange_dist_b: f64,
    pub keyrange_dist_c: f64,
    pub keyrange_dist_d: f64,
    pub keyrange_num: u32,
    pub value_theta: f64,
    pub value_k: f64,
    pub value_sigma: f64,
    pub mix_max_value_size: u32,
    pub iter_theta: f64,
    pub iter_k: f64,
    pub iter_sigma: f64,
    pub mix_max_scan_len: u32,
    pub mix_get_ratio: f64,
    pub mix_put_ratio: f64,
    pub mix_seek_ratio: f64,
    pub value_compressibility: f64,
    pub queries_per_batch: u64,
    pub warmup_share: f64,
}

impl MixgraphParams {
    pub fn problem(&self) -> Option<String> {
        let ratios = [
            ("mix_get_ratio", self.mix_get_ratio),
            ("mix_put_ratio", self.mix_put_ratio),
            ("mix_seek_ratio", self.mix_seek_ratio),
        ];
        if let Some((name, v)) = ratios.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            return Some(format!("[mixgraph] {name} = {v}: a ratio is a number from 0 up"));
        }
        if ratios.iter().map(|(_, v)| v).sum::<f64>() <= 0.0 {
            return Some("[mixgraph] the mix_*_ratio values are all 0: give at least one query type".into());
        }
        if !(0.0..1.0).contains(&self.warmup_share) {
            return Some(format!(
                "[mixgraph] warmup_share = {}: a share from 0 to below 1",
                self.warmup_share
            ));
        }
        let positive = [
            ("keys_per_budget_gib", self.keys_per_budget_gib),
            ("queries_per_budget_gib", self.queries_per_budget_gib),
            ("load_batch", self.load_batch as f64),
            ("queries_per_batch", self.queries_per_batch as f64),
            ("keyrange_num", self.keyrange_num as f64),
            ("value_sigma", self.value_sigma),
            ("iter_sigma", self.iter_sigma),
            ("mix_max_value_size", self.mix_max_value_size as f64),
            ("mix_max_scan_len", self.mix_max_scan_len as f64),
            ("value_compressibility", self.value_compressibility),
        ];
        if let Some((name, v)) = positive.iter().find(|(_, v)| v.is_nan() || *v <= 0.0) {
            return Some(format!("[mixgraph] {name} = {v}: it must be above 0"));
        }
        if self.key_size < 8 {
            return Some(format!(
                "[mixgraph] key_size = {}: keys hold an 8-byte id, give 8 or more",
                self.key_size
            ));
        }
        let hot = (1..=self.keyrange_num).any(|x| self.keyrange_p(x) > 0.0);
        (self.uses_key_ranges() && !hot)
            .then(|| "[mixgraph] keyrange_dist_a..d give every key range a hotness of 0".into())
    }

    /// db_bench models key ranges when any keyrange_dist parameter is set,
    /// and uses them only with a key power law (key_dist_a and _b set).
    fn uses_key_ranges(&self) -> bool {
        let set = [self.keyrange_dist_a, self.keyrange_dist_b, self.keyrange_dist_c, self.keyrange_dist_d];
        self.uses_power_law() && set.iter().any(|v| *v != 0.0)
    }

    /// Without key_dist_a and _b db_bench draws key ids uniformly.
    fn uses_power_law(&self) -> bool {
        self.key_dist_a != 0.0 && self.key_dist_b != 0.0
    }

    /// Access probability of key range `x` (1 = hottest): a*e^(bx) + c*e^(dx).
    fn keyrange_p(&self, x: u32) -> f64 {
        let x = x as f64;
        let p = self.keyrange_dist_a * (self.keyrange_dist_b * x).exp()
            + self.keyrange_dist_c * (self.keyrange_dist_d * x).exp();
        if p < MIN_KEYRANGE_P {
            0.0
        } else {
            p
        }
    }
}

/// db_bench's `ParetoCdfInversion`: the generalized Pareto quantile of `u`,
/// rounded up.
#[derive(Debug, Clone, Copy)]
struct Pareto {
    theta: f64,
    k: f64,
    sigma: f64,
}

impl Pareto {
    fn inverse(&self, u: f64) -> i64 {
        let x = if self.k == 0.0 {
            self.theta - self.sigma * u.ln()
        } else {
            self.theta + self.sigma * (u.powf(-self.k) - 1.0) / self.k
        };
        x.ceil() as i64
    }
}

/// db_bench's `PowerCdfInversion`: the key seed of `u` under `F(x) = a*x^b`.
fn power_inverse(u: f64, a: f64, b: f64) -> u64 {
    (u / a).powf(1.0 / b).ceil() as u64
}

/// db_bench seeds a Random64 with the key seed and takes its first output, to
/// scatter hot keys over the range; a splitmix hash scatters them alike at a
/// hundredth of the cost (a std::mt19937_64 is seeded per query there).
fn scatter(seed: u64) -> u64 {
    mix64(seed)
}

/// How a query's draw picks its key id: db_bench's three modes.
#[derive(Debug, Clone)]
enum KeyModel {
    /// key_dist_a or _b unset: the draw is the id.
    Uniform,
    /// A power law over the whole key space.
    Power { a: f64, b: f64 },
    /// Ranges chosen by hotness, then a power law within the range.
    Ranges(KeyRanges),
}

/// `GenerateTwoTermExpKeys`: equal key ranges, each owning a slice of
/// `[0, rand_max)` as wide as its hotness, in a shuffled order.
#[derive(Debug, Clone)]
struct KeyRanges {
    /// Where each range's slice starts, in key order.
    starts: Vec<u64>,
    rand_max: u64,
    /// Keys per range.
    keys: u64,
    a: f64,
    b: f64,
}

impl KeyRanges {
    /// `InitiateExpDistribution`: widths from the coldest range up, scaled so
    /// the coldest gets at least 1, then shuffled as db_bench shuffles them.
    fn new(p: &MixgraphParams, keys: u64) -> Self {
        let n = p.keyrange_num as usize;
        let mut amplify = 0.0;
        let mut widths: Vec<u64> = (1..=p.keyrange_num)
            .rev()
            .map(|x| {
                let hot = p.keyrange_p(x);
                if amplify == 0.0 && hot > 0.0 {
                    amplify = (1.0 / hot).floor() + 1.0;
                }
                (amplify * hot).floor() as u64
            })
            .collect();
        let rand_max: u64 = widths.iter().sum();
        let mut shuffle = Mt64::new(rand_max);
        for i in 0..n {
            let pos = (shuffle.next() % n as u64) as usize;
            widths.swap(i, pos);
        }
        let starts = widths
            .iter()
            .scan(0, |start, w| {
                let at = *start;
                *start += w;
                Some(at)
            })
            .collect();
        KeyRanges { starts, rand_max, keys, a: p.key_dist_a, b: p.key_dist_b }
    }

    /// `DistGetKeyID`: the range whose slice holds `ini_rand % rand_max`
    /// (db_bench's binary search), then the power law on
    /// `(ini_rand % keys) / keys` within it.
    fn id(&self, ini_rand: u64) -> u64 {
        let r = ini_rand % self.rand_max;
        let (mut lo, mut hi) = (0, self.starts.len());
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if r < self.starts[mid] {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let u = (ini_rand % self.keys) as f64 / self.keys as f64;
        let offset = scatter(power_inverse(u, self.a, self.b)) % self.keys;
        self.keys * lo as u64 + offset
    }
}

/// What one query does.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Query {
    kind: OpKind,
    id: u64,
    /// Value bytes of a put, entries of a scan.
    len: u64,
}

/// Everything a query derives from its draw, fixed for a key count.
#[derive(Debug, Clone)]
struct Model {
    num: u64,
    key_size: usize,
    key_model: KeyModel,
    /// QueryDecider: cumulative bounds of get, put and seek in `[0, span)`.
    bounds: [u64; 3],
    span: u64,
    value: Pareto,
    value_max: i64,
    scan: Pareto,
    scan_max: i64,
}

impl Model {
    /// The model over about `keys` keys. With key ranges the key count is
    /// rounded to whole ranges of a size prime to 10: the type is
    /// `ini_rand % 1000` and the offset in a range `ini_rand % keys`, so a
    /// common factor would tie some keys to only reads or only writes.
    fn new(p: &MixgraphParams, keys: u64) -> Self {
        let ranges = p.keyrange_num as u64;
        let (num, key_model) = if p.uses_key_ranges() {
            let mut per_range = (keys / ranges).max(1);
            while gcd(per_range, 10) != 1 {
                per_range += 1;
            }
            (per_range * ranges, KeyModel::Ranges(KeyRanges::new(p, per_range)))
        } else if p.uses_power_law() {
            (keys, KeyModel::Power { a: p.key_dist_a, b: p.key_dist_b })
        } else {
            (keys, KeyModel::Uniform)
        };
        let ratios = [p.mix_get_ratio, p.mix_put_ratio, p.mix_seek_ratio];
        let sum: f64 = ratios.iter().sum();
        let mut bounds = [0; 3];
        let mut span = 0;
        for (bound, ratio) in bounds.iter_mut().zip(ratios) {
            span += (DECIDER_SPAN * (ratio / sum)).ceil() as u64;
            *bound = span;
        }
        Model {
            num,
            key_size: p.key_size as usize,
            key_model,
            bounds,
            span,
            value: Pareto { theta: p.value_theta, k: p.value_k, sigma: p.value_sigma },
            value_max: DEFAULT_VALUE_MAX.min(p.mix_max_value_size as i64),
            scan: Pareto { theta: p.iter_theta, k: p.iter_k, sigma: p.iter_sigma },
            scan_max: p.mix_max_scan_len as i64,
        }
    }

    /// The query db_bench's `MixGraph` makes of the draw `ini_rand`.
    fn query(&self, ini_rand: u64) -> Query {
        let u = ini_rand as f64 / self.num as f64;
        let id = match &self.key_model {
            KeyModel::Uniform => ini_rand,
            // db_bench takes this modulo as signed, so half its ids fall
            // outside the key space; here they stay within it.
            KeyModel::Power { a, b } => scatter(power_inverse(u, *a, *b)) % self.num,
            KeyModel::Ranges(ranges) => ranges.id(ini_rand),
        };
        let pos = ini_rand % self.span;
        let kind = match self.bounds.iter().position(|b| pos < *b) {
            Some(1) => OpKind::Put,
            Some(2) => OpKind::Scan,
            _ => OpKind::Get,
        };
        let len = match kind {
            OpKind::Put => self.value_bytes(u),
            OpKind::Scan => (self.scan.inverse(u) % self.scan_max).max(0) as u64,
            _ => 0,
        };
        Query { kind, id, len }
    }

    /// A value size for `u`: the Pareto quantile, at least 10 bytes, and
    /// taken modulo the maximum when above it, as db_bench does.
    fn value_bytes(&self, u: f64) -> u64 {
        let v = self.value.inverse(u);
        if v < MIN_VALUE_BYTES {
            MIN_VALUE_BYTES as u64
        } else if v > self.value_max {
            (v % self.value_max) as u64
        } else {
            v as u64
        }
    }

    /// Mean value size, averaged over a fine grid of quantiles.
    fn mean_value_bytes(&self) -> f64 {
        let sum: u64 = (0..MEAN_GRID).map(|i| self.value_bytes((i as f64 + 0.5) / MEAN_GRID as f64)).sum();
        sum as f64 / MEAN_GRID as f64
    }

    /// `GenerateKeyFromInt`: the id as 8 big-endian bytes, then '0's.
    fn push_key(&self, out: &mut Vec<u8>, id: u64) {
        out.extend_from_slice(&id.to_be_bytes());
        out.resize(out.len() + self.key_size - 8, b'0');
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// std::mt19937_64, which db_bench's Random64 wraps: it shuffles the key
/// ranges, so the hottest range sits where db_bench puts it.
struct Mt64 {
    state: [u64; Mt64::N],
    index: usize,
}

impl Mt64 {
    const N: usize = 312;
    const M: usize = 156;

    fn new(seed: u64) -> Self {
        let mut state = [0u64; Self::N];
        state[0] = seed;
        for i in 1..Self::N {
            let prev = state[i - 1];
            state[i] = 6_364_136_223_846_793_005u64.wrapping_mul(prev ^ (prev >> 62)).wrapping_add(i as u64);
        }
        Mt64 { state, index: Self::N }
    }

    fn next(&mut self) -> u64 {
        if self.index >= Self::N {
            self.twist();
        }
        let mut x = self.state[self.index];
        self.index += 1;
        x ^= (x >> 29) & 0x5555_5555_5555_5555;
        x ^= (x << 17) & 0x71D6_7FFF_EDA6_0000;
        x ^= (x << 37) & 0xFFF7_EEE0_0000_0000;
        x ^ (x >> 43)
    }

    fn twist(&mut self) {
        const UPPER: u64 = 0xFFFF_FFFF_8000_0000;
        const MATRIX: u64 = 0xB502_6F5A_A966_19E9;
        for i in 0..Self::N {
            let x = (self.state[i] & UPPER) | (self.state[(i + 1) % Self::N] & !UPPER);
            let twisted = (x >> 1) ^ if x & 1 == 1 { MATRIX } else { 0 };
            self.state[i] = self.state[(i + Self::M) % Self::N] ^ twisted;
        }
        self.index = 0;
    }
}

/// The mixgraph workload sized for one budget.
pub struct Mixgraph {
    params: MixgraphParams,
    model: Model,
    queries: u64,
    mean_value_bytes: f64,
    budget: u64,
}

impl Mixgraph {
    /// The workload at `budget` bytes, every count times `size`.
    pub fn new(params: MixgraphParams, budget: u64, size: f64) -> Self {
        let gib = budget as f64 / GIB as f64;
        let count = |per_gib: f64, min: f64| (per_gib * gib * size).max(min).round() as u64;
        let model = Model::new(&params, count(params.keys_per_budget_gib, 1000.0));
        Mixgraph {
            queries: count(params.queries_per_budget_gib, 100.0),
            mean_value_bytes: model.mean_value_bytes(),
            model,
            params,
            budget,
        }
    }
}

impl Workload for Mixgraph {
    /// The key space and its loaded values: the queries' puts overwrite keys
    /// of it, so they do not grow the data.
    fn shape(&self) -> Shape {
        let per_key = self.model.key_size as f64 + self.mean_value_bytes;
        Shape { keys: self.model.num, user_bytes: (self.model.num as f64 * per_key) as u64 }
    }

    fn phase_names(&self) -> Vec<String> {
        PHASES.iter().map(|p| p.to_string()).collect()
    }

    fn phases(&self, seed: u64) -> Vec<Phase> {
        let common = Common {
            model: Arc::new(self.model.clone()),
            corpus: Arc::new(corpus(corpus_len(self.budget), self.params.value_compressibility, seed)),
        };
        let rng = |phase: u64| StdRng::seed_from_u64(mix64(seed ^ mix64(phase)));
        let warmup = |ops: u64| (ops as f64 * self.params.warmup_share) as u64;
        vec![
            Phase {
                name: PHASES[0].into(),
                warmup_ops: warmup(self.model.num),
                source: Box::new(Load {
                    order: Stride::new(self.model.num, seed),
                    common: common.clone(),
                    next: 0,
                    batch: self.params.load_batch,
                    rng: rng(0),
                }),
            },
            Phase {
                name: PHASES[1].into(),
                warmup_ops: warmup(self.queries),
                source: Box::new(Queries {
                    common,
                    done: 0,
                    total: self.queries,
                    per_batch: self.params.queries_per_batch as usize,
                    rng: rng(1),
                }),
            },
        ]
    }
}

/// What both phases share.
#[derive(Clone)]
struct Common {
    model: Arc<Model>,
    corpus: Arc<Vec<u8>>,
}

/// A fixed permutation of `[0, n)`: `i -> (start + i * step) % n`, the step
/// prime to `n` and near `n / golden ratio`, so consecutive writes land far
/// apart in the key space, as fillrandom's do.
struct Stride {
    n: u64,
    step: u64,
    start: u64,
}

impl Stride {
    fn new(n: u64, seed: u64) -> Self {
        let mut step = ((n as f64 * 0.618_033_988_75) as u64).max(1);
        while gcd(step, n) != 1 {
            step += 1;
        }
        Stride { n, step, start: mix64(seed) % n }
    }

    fn at(&self, i: u64) -> u64 {
        ((self.start as u128 + i as u128 * self.step as u128) % self.n as u128) as u64
    }
}

/// Every key once, in `load_batch` puts per write.
struct Load {
    common: Common,
    order: Stride,
    next: u64,
    batch: u64,
    rng: StdRng,
}

impl OpSource for Load {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        let model = &self.common.model;
        let end = (self.next + self.batch).min(model.num);
        if self.next >= end {
            return false;
        }
        for i in self.next..end {
            let id = self.order.at(i);
            let bytes = model.value_bytes(self.rng.random());
            let value = slice(&mut self.rng, self.common.corpus.len(), bytes as usize);
            batch.push(OpKind::Put, |k| model.push_key(k, id), value, 0);
        }
        self.next = end;
        true
    }

    fn corpus(&self) -> &[u8] {
        &self.common.corpus
    }
}

/// The mixgraph queries, one call each as db_bench issues them: a batch
/// holds up to `per_batch` of them and closes after a put.
struct Queries {
    common: Common,
    done: u64,
    total: u64,
    per_batch: usize,
    rng: StdRng,
}

impl OpSource for Queries {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        let model = &self.common.model;
        while self.done < self.total && !batch.closed(self.per_batch) {
            let q = model.query(self.rng.random_range(0..model.num));
            let key = |k: &mut Vec<u8>| model.push_key(k, q.id);
            match q.kind {
                OpKind::Put => {
                    let value = slice(&mut self.rng, self.common.corpus.len(), q.len as usize);
                    batch.push(OpKind::Put, key, value, 0);
                }
                OpKind::Scan => batch.push_read(OpKind::Scan, key, q.len as u32, 0),
                _ => batch.push_read(OpKind::Get, key, 1, 0),
            }
            self.done += 1;
        }
        !batch.ops.is_empty()
    }

    fn corpus(&self) -> &[u8] {
        &self.common.corpus
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::dataset::Dataset;

    fn params() -> MixgraphParams {
        Dataset::find("mixgraph").unwrap().mixgraph.unwrap()
    }

    /// The dataset's parameters with `keys` keys and `queries` queries.
    fn sized(keys: f64, queries: f64) -> Mixgraph {
        let p = MixgraphParams { keys_per_budget_gib: keys, queries_per_budget_gib: queries, ..params() };
        Mixgraph::new(p, GIB, 1.0)
    }

    fn drain(source: &mut dyn OpSource) -> Vec<Batch> {
        let mut out = vec![];
        let mut batch = Batch::default();
        while source.next_batch(&mut batch) {
            out.push(batch.clone());
        }
        out
    }

    /// Every op of the mixgraph phase: kind, key id, value bytes, limit.
    fn queries(m: &Mixgraph, seed: u64) -> Vec<(OpKind, u64, usize, u32)> {
        let batches = drain(m.phases(seed)[1].source.as_mut());
        let id = |key: &[u8]| u64::from_be_bytes(key[..8].try_into().unwrap());
        batches
            .iter()
            .flat_map(|b| b.ops.iter().map(move |op| (op.kind, id(b.key(op)), op.value.len(), op.arg)))
            .collect()
    }

    /// Generalized Pareto CDF at `x`: the share of draws at or below it.
    fn pareto_cdf(x: f64, k: f64, sigma: f64) -> f64 {
        1.0 - (1.0 + k * x / sigma).powf(-1.0 / k)
    }

    fn share<T>(items: &[T], pick: impl Fn(&T) -> bool) -> f64 {
        items.iter().filter(|x| pick(x)).count() as f64 / items.len() as f64
    }

    #[test]
    fn mt19937_64_matches_the_standard() {
        // The C++ standard: the 10000th output of a default-seeded mt19937_64.
        let mut mt = Mt64::new(5489);
        let last = (0..10_000).map(|_| mt.next()).last().unwrap();
        assert_eq!(last, 9_981_545_732_273_789_042);
    }

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        let m = sized(100_000.0, 50_000.0);
        for (a, b) in m.phases(1).iter_mut().zip(m.phases(1).iter_mut()) {
            let (x, y) = (drain(a.source.as_mut()), drain(b.source.as_mut()));
            assert_eq!(x.len(), y.len());
            assert!(x.iter().zip(&y).all(|(p, q)| p.keys == q.keys && p.ops == q.ops), "{}", a.name);
        }
        for phase in 0..2 {
            let mut one = m.phases(1);
            let mut two = m.phases(2);
            let first = |p: &mut Phase| drain(p.source.as_mut()).swap_remove(0).keys;
            assert_ne!(first(&mut one[phase]), first(&mut two[phase]), "phase {phase}");
        }
    }

    #[test]
    fn load_writes_every_key_once_in_random_order() {
        let m = sized(60_000.0, 100.0);
        let batches = drain(m.phases(3)[0].source.as_mut());
        let p = &m.params;
        assert!(batches[..batches.len() - 1].iter().all(|b| b.ops.len() as u64 == p.load_batch));
        let mut seen = vec![false; m.model.num as usize];
        let mut sizes = vec![];
        for b in &batches {
            for op in &b.ops {
                assert_eq!(op.kind, OpKind::Put);
                let key = b.key(op);
                assert_eq!(key.len(), 48);
                assert!(key[8..].iter().all(|c| *c == b'0'), "padded with '0'");
                let id = u64::from_be_bytes(key[..8].try_into().unwrap());
                assert!(!std::mem::replace(&mut seen[id as usize], true), "id {id} written twice");
                sizes.push(op.value.len() as f64);
            }
        }
        assert!(seen.iter().all(|s| *s));
        let first: Vec<&[u8]> = batches[0].ops.iter().map(|op| batches[0].key(op)).collect();
        assert!(first.windows(2).any(|w| w[0] > w[1]), "keys arrive unsorted");
        let mean = sizes.iter().sum::<f64>() / sizes.len() as f64;
        assert!((mean - m.mean_value_bytes).abs() < 0.03 * m.mean_value_bytes, "mean {mean}");
        let shape = m.shape();
        assert_eq!(shape.keys, m.model.num);
        assert!((shape.user_bytes as f64 / shape.keys as f64 - 48.0 - mean).abs() < 1.5);
    }

    #[test]
    fn query_mix_and_key_lengths_match_the_ratios() {
        let m = sized(300_000.0, 200_000.0);
        let mut phases = m.phases(4);
        let batches = drain(phases[1].source.as_mut());
        let ops: Vec<(OpKind, usize)> =
            batches.iter().flat_map(|b| b.ops.iter().map(move |op| (op.kind, b.key(op).len()))).collect();
        assert_eq!(ops.len() as u64, m.queries);
        assert!(ops.iter().all(|(_, len)| *len == 48));
        let p = &m.params;
        for (kind, ratio) in
            [(OpKind::Get, p.mix_get_ratio), (OpKind::Put, p.mix_put_ratio), (OpKind::Scan, p.mix_seek_ratio)]
        {
            let got = share(&ops, |(k, _)| *k == kind);
            assert!((got - ratio).abs() < 0.005, "{kind:?}: {got} vs {ratio}");
        }
        // One call per query: no two puts share a write.
        for b in &batches {
            assert!(b.ops.windows(2).all(|w| !(w[0].kind.is_write() && w[1].kind.is_write())));
        }
    }

    #[test]
    fn put_sizes_and_scan_lengths_follow_the_pareto_inversion() {
        let m = sized(300_000.0, 600_000.0);
        let ops = queries(&m, 5);
        let puts: Vec<f64> = ops.iter().filter(|q| q.0 == OpKind::Put).map(|q| q.2 as f64).collect();
        let scans: Vec<f64> = ops.iter().filter(|q| q.0 == OpKind::Scan).map(|q| q.3 as f64).collect();
        let p = &m.params;
        // Sizes under 10 bytes are written at 10; the rest follow the CDF.
        let floor = share(&puts, |v| *v == 10.0);
        let expected = pareto_cdf(10.0, p.value_k, p.value_sigma);
        assert!((floor - expected).abs() < 0.01, "10-byte share {floor} vs {expected}");
        for x in [20.0, 35.0, 60.0, 120.0, 300.0] {
            let got = share(&puts, |v| *v <= x);
            let expected = pareto_cdf(x, p.value_k, p.value_sigma);
            assert!((got - expected).abs() < 0.01, "value CDF at {x}: {got} vs {expected}");
        }
        assert!(puts.iter().all(|v| *v >= 1.0 && *v <= p.mix_max_value_size as f64));
        for x in [1.0, 3.0, 10.0, 27.0, 100.0, 1000.0] {
            let got = share(&scans, |l| *l <= x);
            let expected = pareto_cdf(x, p.iter_k, p.iter_sigma);
            assert!((got - expected).abs() < 0.015, "scan CDF at {x}: {got} vs {expected}");
        }
        assert!(scans.iter().all(|l| *l < p.mix_max_scan_len as f64));
    }

    #[test]
    fn key_ranges_take_their_two_term_exponential_share() {
        let m = sized(300_000.0, 300_000.0);
        let KeyModel::Ranges(ranges) = &m.model.key_model else { panic!("the dataset models key ranges") };
        let ops = queries(&m, 6);
        let mut counts = vec![0u64; m.params.keyrange_num as usize];
        for (_, id, _, _) in &ops {
            counts[(id / ranges.keys) as usize] += 1;
        }
        let mut measured: Vec<f64> = counts.iter().map(|c| *c as f64 / ops.len() as f64).collect();
        measured.sort_by(|a, b| b.total_cmp(a));
        // db_bench gives range x a whole-number width floor(amplify * f(x)),
        // amplify = floor(1 / f(coldest)) + 1, f(x) = a*e^(bx) + c*e^(dx).
        let f = |x: f64| {
            let p = &m.params;
            p.keyrange_dist_a * (p.keyrange_dist_b * x).exp()
                + p.keyrange_dist_c * (p.keyrange_dist_d * x).exp()
        };
        let amplify = (1.0 / f(m.params.keyrange_num as f64)).floor() + 1.0;
        let widths: Vec<f64> = (1..=m.params.keyrange_num).map(|x| (amplify * f(x as f64)).floor()).collect();
        let sum: f64 = widths.iter().sum();
        for (i, (got, w)) in measured.iter().zip(&widths).enumerate() {
            assert!((got - w / sum).abs() < 0.004, "range {}: {got} vs {}", i + 1, w / sum);
        }
        assert!(measured[0] > 0.7, "the hottest range takes most queries: {}", measured[0]);
    }

    #[test]
    fn hottest_ids_of_a_range_take_the_power_law_share() {
        // Large ranges, so the power law's hot seeds stand above collisions.
        let m = sized(3_000_000.0, 400_000.0);
        let KeyModel::Ranges(ranges) = &m.model.key_model else { panic!("the dataset models key ranges") };
        let ops = queries(&m, 7);
        let mut by_range: HashMap<u64, HashMap<u64, u64>> = HashMap::new();
        for (_, id, _, _) in &ops {
            *by_range.entry(id / ranges.keys).or_default().entry(id % ranges.keys).or_default() += 1;
        }
        let hottest = by_range.values().max_by_key(|r| r.values().sum::<u64>()).unwrap();
        let total = hottest.values().sum::<u64>() as f64;
        let mut counts: Vec<u64> = hottest.values().copied().collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let (a, b) = (m.params.key_dist_a, m.params.key_dist_b);
        for n in [1usize, 10, 30] {
            let got = counts[..n].iter().sum::<u64>() as f64 / total;
            // F(n) = a * n^b of the range's queries go to its n hottest seeds.
            let expected = a * (n as f64).powf(b);
            assert!((got - expected).abs() < 0.12 * expected, "top {n}: {got} vs {expected}");
        }
    }
}
