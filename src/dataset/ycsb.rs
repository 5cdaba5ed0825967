//! `ycsb-a` .. `ycsb-f`: the YCSB core workloads (brianfrankcooper/YCSB
//! workloads/workloada..f run by `CoreWorkload`) as YCSB's RocksDB binding
//! (rocksdb/.../RocksDBClient.java) issues them to RocksDB.
//!
//! Keys are `user` + the decimal FNV-64 hash of the record number
//! (`CoreWorkload.buildKeyName`, insertorder=hashed, zeropadding=1). A
//! record is one value: its fields, in `java.util.HashMap` order, each as a
//! 4-byte big-endian name length, the name, a 4-byte length and the field's
//! bytes (`serializeValues`). The binding's update reads the record and puts
//! it whole, so an update is a get then a put, and a read-modify-write (a
//! read, then an update) is two gets then a put, in one batch.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::ops::{Batch, OpKind, OpSource};
use super::values::{corpus_len, mix64};
use super::{Phase, Shape, Workload};
use crate::budget::GIB;

const PHASES: [&str; 2] = ["load", "run"];
/// `ZipfianGenerator.ZIPFIAN_CONSTANT`: no core workload changes it.
const ZIPFIAN_CONSTANT: f64 = 0.99;
/// `ScrambledZipfianGenerator`: ranks are drawn over 10^10 items (their zeta
/// precomputed), then hashed into the key space.
const SCRAMBLED_ITEMS: i64 = 10_000_000_000;
const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;
const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: i64 = 1_099_511_628_211;
/// Zeta sums longer than this finish with the Euler-Maclaurin formula.
const ZETA_EXACT_TERMS: u64 = 1 << 20;
/// Record numbers the mean key length is averaged over.
const KEY_SAMPLE: i64 = 4096;

/// The `[ycsb]` table of a dataset file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct YcsbParams {
    /// The core workload, `a` to `f`: its operation mix and distributions.
    pub workload: String,
    /// YCSB `recordcount`, per GiB of budget.
    pub records_per_budget_gib: f64,
    /// YCSB `operationcount`, per GiB of budget.
    pub operations_per_budget_gib: f64,
    pub field_count: u32,
    pub field_length: u32,
    /// Operations per batch of the run phase; a batch closes early after a
    /// write, so each write is an engine call of its own.
    pub ops_per_batch: u64,
    pub warmup_share: f64,
}

impl YcsbParams {
    pub fn problem(&self) -> Option<String> {
        if core(&self.workload).is_none() {
            return Some(format!(
                "[ycsb] workload = {:?}: give a core workload letter, a to f",
                self.workload
            ));
        }
        if !(0.0..1.0).contains(&self.warmup_share) {
            return Some(format!("[ycsb] warmup_share = {}: a share from 0 to below 1", self.warmup_share));
        }
        let positive = [
            ("records_per_budget_gib", self.records_per_budget_gib),
            ("operations_per_budget_gib", self.operations_per_budget_gib),
            ("field_count", self.field_count as f64),
            ("field_length", self.field_length as f64),
            ("ops_per_batch", self.ops_per_batch as f64),
        ];
        positive
            .iter()
            .find(|(_, v)| v.is_nan() || *v <= 0.0)
            .map(|(name, v)| format!("[ycsb] {name} = {v}: it must be above 0"))
    }
}

/// A YCSB operation, in `CoreWorkload.createOperationGenerator`'s order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Txn {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl Txn {
    const ALL: [Txn; 5] = [Txn::Read, Txn::Update, Txn::Insert, Txn::Scan, Txn::ReadModifyWrite];

    /// Engine operations the binding makes of it.
    fn engine_ops(self) -> u64 {
        match self {
            Txn::Update => 2,
            Txn::ReadModifyWrite => 3,
            _ => 1,
        }
    }
}

/// `requestdistribution` of a core workload.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Request {
    Zipfian,
    Latest,
}

/// What a workload file sets: proportions in `Txn::ALL` order, the request
/// distribution and the longest scan (`maxscanlength`, uniform from 1).
#[derive(Debug, Clone, Copy)]
struct Core {
    mix: [f64; 5],
    request: Request,
    max_scan: u64,
}

/// workloads/workloada .. workloadf.
fn core(letter: &str) -> Option<Core> {
    let zipfian = |mix| Core { mix, request: Request::Zipfian, max_scan: 1000 };
    Some(match letter {
        "a" => zipfian([0.5, 0.5, 0.0, 0.0, 0.0]),
        "b" => zipfian([0.95, 0.05, 0.0, 0.0, 0.0]),
        "c" => zipfian([1.0, 0.0, 0.0, 0.0, 0.0]),
        "d" => Core { request: Request::Latest, ..zipfian([0.95, 0.0, 0.05, 0.0, 0.0]) },
        "e" => Core { max_scan: 100, ..zipfian([0.0, 0.0, 0.05, 0.95, 0.0]) },
        "f" => zipfian([0.5, 0.0, 0.0, 0.0, 0.5]),
        _ => return None,
    })
}

impl Core {
    /// `DiscreteGenerator.nextValue` for the draw `u`.
    fn choose(&self, mut u: f64) -> Txn {
        let sum: f64 = self.mix.iter().sum();
        for (txn, weight) in Txn::ALL.iter().zip(self.mix) {
            if weight > 0.0 && u < weight / sum {
                return *txn;
            }
            u -= weight / sum;
        }
        Txn::Read
    }

    /// Engine operations per YCSB operation, on average.
    fn engine_ops_per_txn(&self) -> f64 {
        let sum: f64 = self.mix.iter().sum();
        Txn::ALL.iter().zip(self.mix).map(|(t, w)| w / sum * t.engine_ops() as f64).sum()
    }
}

/// `Utils.fnvhash64`: FNV-1a over the 8 low-first bytes, then `Math.abs`.
fn fnvhash64(mut val: i64) -> i64 {
    let mut hash = FNV_OFFSET_BASIS_64 as i64;
    for _ in 0..8 {
        hash ^= val & 0xff;
        val >>= 8;
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    hash.wrapping_abs()
}

/// `CoreWorkload.buildKeyName`: `user` + the record number's hash in decimal,
/// written without formatting machinery.
fn push_key(out: &mut Vec<u8>, keynum: i64) {
    out.extend_from_slice(b"user");
    let hash = fnvhash64(keynum);
    if hash < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 20];
    let mut n = hash.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// `zetastatic(st, n, theta, initialsum)`: `initial + sum over i in [st, n)
/// of 1 / (i + 1)^theta`, the tail past 2^20 terms by Euler-Maclaurin (what
/// YCSB sums one by one, to within 1e-12).
fn zeta(st: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let exact_end = n.min(st.max(ZETA_EXACT_TERMS));
    let mut sum = initial + (st..exact_end).map(|i| ((i + 1) as f64).powf(-theta)).sum::<f64>();
    if exact_end < n {
        // Terms f(x) = x^-theta for x in (exact_end, n].
        let (a, b) = ((exact_end + 1) as f64, n as f64);
        let f = |x: f64| x.powf(-theta);
        let df = |x: f64| -theta * x.powf(-theta - 1.0);
        let integral = if theta == 1.0 {
            (b / a).ln()
        } else {
            (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
        };
        sum += integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0;
    }
    sum
}

/// `ZipfianGenerator` (Gray et al.'s method): rank 0 most popular. Like
/// YCSB's it grows its zeta when asked for more items than it was built for,
/// and keeps `eta` of the item count it was built with.
#[derive(Debug, Clone)]
struct Zipfian {
    items: i64,
    theta: f64,
    alpha: f64,
    zeta2: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: i64,
}

impl Zipfian {
    fn new(items: i64, theta: f64, zetan: f64) -> Self {
        let zeta2 = zeta(0, 2, theta, 0.0);
        let mut z = Zipfian {
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta2,
            zetan,
            eta: 0.0,
            count_for_zeta: items,
        };
        z.eta = z.eta();
        z
    }

    fn eta(&self) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan)
    }

    /// `nextLong(itemcount)` for the draw `u`.
    fn next(&mut self, itemcount: i64, u: f64) -> i64 {
        if itemcount > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta as u64, itemcount as u64, self.theta, self.zetan);
            self.count_for_zeta = itemcount;
            self.eta = self.eta();
        }
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        (itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }
}

/// `CoreWorkload`'s key chooser.
#[derive(Debug, Clone)]
enum Chooser {
    /// `ScrambledZipfianGenerator(0, max)`: a rank over 10^10 items, hashed
    /// into `itemcount` record numbers.
    Scrambled { zipf: Zipfian, itemcount: i64 },
    /// `SkewedLatestGenerator`: the last insert most, Zipfian back from it.
    Latest { zipf: Zipfian },
}

impl Chooser {
    /// The chooser of `CoreWorkload.init` for `records` loaded records and
    /// `operations` to run.
    fn new(core: &Core, records: i64, operations: i64) -> Self {
        match core.request {
            Request::Zipfian => {
                // YCSB sizes the space for twice the expected inserts.
                let expected_new = (operations as f64 * core.mix[2] * 2.0) as i64;
                Chooser::Scrambled {
                    zipf: Zipfian::new(SCRAMBLED_ITEMS + 1, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN),
                    itemcount: records + expected_new + 1,
                }
            }
            Request::Latest => {
                let items = records - 1;
                let zetan = zeta(0, items as u64, ZIPFIAN_CONSTANT, 0.0);
                Chooser::Latest { zipf: Zipfian::new(items, ZIPFIAN_CONSTANT, zetan) }
            }
        }
    }

    /// One candidate record number when `last` is the latest inserted.
    fn next(&mut self, last: i64, u: f64) -> i64 {
        match self {
            Chooser::Scrambled { zipf, itemcount } => {
                fnvhash64(zipf.next(SCRAMBLED_ITEMS + 1, u)) % *itemcount
            }
            Chooser::Latest { zipf } => last - zipf.next(last, u),
        }
    }
}

/// The order a `java.util.HashMap` of these names iterates in: by bucket
/// (`h ^ h >>> 16` of `String.hashCode`, in a table of 16 doubled while more
/// than 3/4 full), then by insertion. The binding serializes fields in it.
fn java_hash_map_order(names: &[String]) -> Vec<usize> {
    let mut table = 16;
    while names.len() > table * 3 / 4 {
        table *= 2;
    }
    let bucket = |name: &str| {
        let h = name.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32)) as u32;
        (h ^ (h >> 16)) as usize & (table - 1)
    };
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| bucket(&names[i]));
    order
}

/// `RandomByteIterator`: each random int gives 6 bytes from ' ' to 127.
fn push_random_field(out: &mut Vec<u8>, len: usize, rng: &mut StdRng) {
    let mut left = len;
    while left > 0 {
        let b = rng.random::<u32>() as i32;
        let six = [b & 31, (b >> 5) & 63, (b >> 10) & 95, (b >> 15) & 31, (b >> 20) & 63, (b >> 25) & 95];
        let n = left.min(6);
        out.extend(six[..n].iter().map(|c| b' ' + *c as u8));
        left -= n;
    }
}

/// Serialized records (`serializeValues` of `buildValues`), back to back:
/// every write's value is one of them.
fn record_corpus(fields: u32, field_length: u32, bytes: usize, seed: u64) -> (Vec<u8>, usize) {
    let names: Vec<String> = (0..fields).map(|i| format!("field{i}")).collect();
    let order = java_hash_map_order(&names);
    let record_len: usize = names.iter().map(|n| 8 + n.len() + field_length as usize).sum();
    let count = (bytes / record_len).max(1);
    let mut rng = StdRng::seed_from_u64(seed ^ 0x7C5B);
    let mut out = Vec::with_capacity(count * record_len);
    for _ in 0..count {
        for &i in &order {
            out.extend_from_slice(&(names[i].len() as u32).to_be_bytes());
            out.extend_from_slice(names[i].as_bytes());
            out.extend_from_slice(&field_length.to_be_bytes());
            push_random_field(&mut out, field_length as usize, &mut rng);
        }
    }
    (out, record_len)
}

/// A YCSB core workload sized for one budget.
pub struct Ycsb {
    params: YcsbParams,
    core: Core,
    records: i64,
    operations: i64,
    budget: u64,
}

impl Ycsb {
    /// The workload at `budget` bytes, every count times `size`.
    pub fn new(params: YcsbParams, budget: u64, size: f64) -> Self {
        let gib = budget as f64 / GIB as f64;
        let count = |per_gib: f64, min: f64| (per_gib * gib * size).max(min).round() as i64;
        Ycsb {
            core: core(&params.workload).expect("checked when parsed"),
            records: count(params.records_per_budget_gib, 1000.0),
            operations: count(params.operations_per_budget_gib, 100.0),
            budget,
            params,
        }
    }

    fn record_len(&self) -> usize {
        (0..self.params.field_count)
            .map(|i| 8 + format!("field{i}").len() + self.params.field_length as usize)
            .sum()
    }

    fn expected_inserts(&self) -> f64 {
        self.operations as f64 * self.core.mix[2] / self.core.mix.iter().sum::<f64>()
    }
}

fn mean_key_len() -> f64 {
    let mut key = Vec::new();
    let total: usize = (0..KEY_SAMPLE)
        .map(|n| {
            key.clear();
            push_key(&mut key, n);
            key.len()
        })
        .sum();
    total as f64 / KEY_SAMPLE as f64
}

impl Workload for Ycsb {
    /// The records loaded and inserted: updates rewrite records in place,
    /// so they do not grow the data.
    fn shape(&self) -> Shape {
        let keys = self.records as f64 + self.expected_inserts();
        Shape { keys: keys as u64, user_bytes: (keys * (mean_key_len() + self.record_len() as f64)) as u64 }
    }

    fn phase_names(&self) -> Vec<String> {
        PHASES.iter().map(|p| p.to_string()).collect()
    }

    fn phases(&self, seed: u64) -> Vec<Phase> {
        let p = &self.params;
        let (corpus, record_len) =
            record_corpus(p.field_count, p.field_length, corpus_len(self.budget), seed);
        let common = Common { corpus: Arc::new(corpus), record_len };
        let rng = |phase: u64| StdRng::seed_from_u64(mix64(seed ^ mix64(phase)));
        let warmup = |ops: f64| (ops * p.warmup_share) as u64;
        vec![
            Phase {
                name: PHASES[0].into(),
                warmup_ops: warmup(self.records as f64),
                source: Box::new(Load {
                    common: common.clone(),
                    next: 0,
                    records: self.records,
                    rng: rng(0),
                }),
            },
            Phase {
                name: PHASES[1].into(),
                warmup_ops: warmup(self.operations as f64 * self.core.engine_ops_per_txn()),
                source: Box::new(Run {
                    common,
                    core: self.core,
                    chooser: Chooser::new(&self.core, self.records, self.operations),
                    last: self.records - 1,
                    done: 0,
                    total: self.operations,
                    per_batch: p.ops_per_batch as usize,
                    rng: rng(1),
                }),
            },
        ]
    }
}

/// What both phases share: the serialized records values are cut from.
#[derive(Clone)]
struct Common {
    corpus: Arc<Vec<u8>>,
    record_len: usize,
}

impl Common {
    /// One whole serialized record.
    fn record(&self, rng: &mut StdRng) -> std::ops::Range<u32> {
        let at = rng.random_range(0..self.corpus.len() / self.record_len) * self.record_len;
        at as u32..(at + self.record_len) as u32
    }
}

/// `doInsert` for every record, one put per call as YCSB's load issues them.
struct Load {
    common: Common,
    next: i64,
    records: i64,
    rng: StdRng,
}

impl OpSource for Load {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        if self.next >= self.records {
            return false;
        }
        let value = self.common.record(&mut self.rng);
        batch.push(OpKind::Put, |k| push_key(k, self.next), value, 0);
        self.next += 1;
        true
    }

    fn corpus(&self) -> &[u8] {
        &self.common.corpus
    }
}

/// `doTransaction` `operationcount` times; reads gather in batches of up to
/// `per_batch` engine ops, each write closes its batch.
struct Run {
    common: Common,
    core: Core,
    chooser: Chooser,
    /// `transactioninsertkeysequence.lastValue()`: the latest record.
    last: i64,
    done: i64,
    total: i64,
    per_batch: usize,
    rng: StdRng,
}

impl Run {
    /// `nextKeynum`: a record already inserted, redrawn until it is.
    fn next_keynum(&mut self) -> i64 {
        loop {
            let keynum = self.chooser.next(self.last, self.rng.random());
            if keynum <= self.last {
                return keynum;
            }
        }
    }

    /// Appends the engine ops of one YCSB operation.
    fn push_txn(&mut self, batch: &mut Batch) {
        let get =
            |batch: &mut Batch, keynum: i64| batch.push_read(OpKind::Get, |k| push_key(k, keynum), 1, 0);
        match self.core.choose(self.rng.random()) {
            Txn::Read => get(batch, self.next_keynum()),
            Txn::Scan => {
                let keynum = self.next_keynum();
                let len = self.rng.random_range(1..=self.core.max_scan) as u32;
                batch.push_read(OpKind::Scan, |k| push_key(k, keynum), len, 0);
            }
            txn => {
                let keynum = match txn {
                    Txn::Insert => self.last + 1,
                    _ => self.next_keynum(),
                };
                for _ in 1..txn.engine_ops() {
                    get(batch, keynum);
                }
                let value = self.common.record(&mut self.rng);
                batch.push(OpKind::Put, |k| push_key(k, keynum), value, 0);
                self.last = self.last.max(keynum);
            }
        }
    }
}

impl OpSource for Run {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        while self.done < self.total && !batch.closed(self.per_batch) {
            self.push_txn(batch);
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

    fn ycsb(letter: &str, records: f64, operations: f64) -> Ycsb {
        let dataset = Dataset::find(&format!("ycsb-{letter}")).unwrap();
        let p = YcsbParams {
            records_per_budget_gib: records,
            operations_per_budget_gib: operations,
            ..dataset.ycsb.unwrap()
        };
        Ycsb::new(p, GIB, 1.0)
    }

    fn drain(source: &mut dyn OpSource) -> Vec<Batch> {
        let mut out = vec![];
        let mut batch = Batch::default();
        while source.next_batch(&mut batch) {
            out.push(batch.clone());
        }
        out
    }

    /// The YCSB operations of a run, read back from its engine ops: key and
    /// scan length of each.
    fn transactions(w: &Ycsb, seed: u64) -> Vec<(Txn, Vec<u8>, u32)> {
        let rmw = w.core.mix[4] > 0.0;
        let mut out = vec![];
        for b in drain(w.phases(seed)[1].source.as_mut()) {
            let ops = &b.ops;
            let same = |i: usize, kind: OpKind, key: &[u8]| {
                ops.get(i).is_some_and(|op| op.kind == kind && b.key(op) == key)
            };
            let mut i = 0;
            while i < ops.len() {
                let key = b.key(&ops[i]);
                let (txn, len) = match ops[i].kind {
                    OpKind::Scan => (Txn::Scan, 1),
                    OpKind::Put => (Txn::Insert, 1),
                    _ if rmw && same(i + 1, OpKind::Get, key) && same(i + 2, OpKind::Put, key) => {
                        (Txn::ReadModifyWrite, 3)
                    }
                    _ if !rmw && same(i + 1, OpKind::Put, key) => (Txn::Update, 2),
                    _ => (Txn::Read, 1),
                };
                out.push((txn, key.to_vec(), ops[i].arg));
                i += len;
            }
        }
        out
    }

    fn share<T>(items: &[T], pick: impl Fn(&T) -> bool) -> f64 {
        items.iter().filter(|x| pick(x)).count() as f64 / items.len() as f64
    }

    /// Gray's Zipfian: the share of draws below rank `r` over `n` items.
    fn zipf_below(r: f64, n: f64, zetan: f64) -> f64 {
        let zeta2 = 1.0 + 0.5f64.powf(ZIPFIAN_CONSTANT);
        let eta = (1.0 - (2.0 / n).powf(1.0 - ZIPFIAN_CONSTANT)) / (1.0 - zeta2 / zetan);
        1.0 - (1.0 - (r / n).powf(1.0 - ZIPFIAN_CONSTANT)) / eta
    }

    fn key_of(keynum: i64) -> Vec<u8> {
        let mut k = vec![];
        push_key(&mut k, keynum);
        k
    }

    #[test]
    fn keys_and_field_order_match_ycsb() {
        // The first key of every YCSB load, and the next, as YCSB prints them.
        assert_eq!(key_of(0), b"user6284781860667377211");
        assert_eq!(key_of(1), b"user8517097267634966620");
        let names: Vec<String> = (0..10).map(|i| format!("field{i}")).collect();
        assert_eq!(java_hash_map_order(&names), [1, 0, 7, 6, 9, 8, 3, 2, 5, 4]);
    }

    #[test]
    fn zeta_tail_matches_the_exact_sum() {
        let n = 3 * ZETA_EXACT_TERMS;
        let exact: f64 = (0..n).map(|i| ((i + 1) as f64).powf(-ZIPFIAN_CONSTANT)).sum();
        assert!((zeta(0, n, ZIPFIAN_CONSTANT, 0.0) - exact).abs() < 1e-9);
        let grown =
            zeta(ZETA_EXACT_TERMS, n, ZIPFIAN_CONSTANT, zeta(0, ZETA_EXACT_TERMS, ZIPFIAN_CONSTANT, 0.0));
        assert!((grown - exact).abs() < 1e-9);
    }

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        for letter in ["a", "d", "e"] {
            let w = ycsb(letter, 5000.0, 5000.0);
            for (a, b) in w.phases(1).iter_mut().zip(w.phases(1).iter_mut()) {
                let (x, y) = (drain(a.source.as_mut()), drain(b.source.as_mut()));
                assert_eq!(x.len(), y.len());
                assert!(
                    x.iter().zip(&y).all(|(p, q)| p.keys == q.keys && p.ops == q.ops),
                    "{letter} {}",
                    a.name
                );
            }
            let run = |seed| drain(w.phases(seed)[1].source.as_mut());
            assert_ne!(run(1)[0].keys, run(2)[0].keys, "{letter}");
        }
    }

    #[test]
    fn load_inserts_every_record_once_as_the_binding_serializes_it() {
        let w = ycsb("a", 20_000.0, 100.0);
        let mut phases = w.phases(3);
        let batches = drain(phases[0].source.as_mut());
        assert_eq!(batches.len() as i64, w.records, "one put per call");
        let mut keys = std::collections::HashSet::new();
        let mut key_lens = vec![];
        for b in &batches {
            let op = &b.ops[0];
            assert_eq!(op.kind, OpKind::Put);
            let key = b.key(op);
            assert!(key.starts_with(b"user") && key[4..].iter().all(u8::is_ascii_digit));
            assert!(keys.insert(key.to_vec()), "record inserted twice");
            key_lens.push(key.len());
            // Ten fields of 100 random ASCII bytes: 4 + 6 + 4 + 100 bytes each.
            let mut value = &phases[0].source.corpus()[op.value.start as usize..op.value.end as usize];
            assert_eq!(value.len(), 1140);
            let mut names = vec![];
            while !value.is_empty() {
                let len = |v: &[u8]| u32::from_be_bytes(v[..4].try_into().unwrap()) as usize;
                let name_len = len(value);
                names.push(String::from_utf8(value[4..4 + name_len].to_vec()).unwrap());
                value = &value[4 + name_len..];
                assert_eq!(len(value), 100);
                assert!(value[4..104].iter().all(|c| (32..=127).contains(c)));
                value = &value[104..];
            }
            assert_eq!(
                names,
                [
                    "field1", "field0", "field7", "field6", "field9", "field8", "field3", "field2", "field5",
                    "field4"
                ]
            );
        }
        // Hashes uniform over [0, 2^63): 19 digits for all above 10^18.
        let long = share(&key_lens, |l| *l == 23);
        let expected = 1.0 - 1e18 / 2f64.powi(63);
        assert!((long - expected).abs() < 0.01, "23-byte keys {long} vs {expected}");
        let mean = key_lens.iter().sum::<usize>() as f64 / key_lens.len() as f64;
        assert!((mean - mean_key_len()).abs() < 0.05);
    }

    #[test]
    fn run_mix_matches_each_core_workload() {
        for letter in ["a", "b", "c", "d", "e", "f"] {
            let w = ycsb(letter, 10_000.0, 40_000.0);
            let txns = transactions(&w, 4);
            assert_eq!(txns.len() as i64, w.operations, "{letter}");
            for (txn, expected) in Txn::ALL.iter().zip(w.core.mix) {
                let got = share(&txns, |(t, _, _)| t == txn);
                assert!((got - expected).abs() < 0.012, "ycsb-{letter} {txn:?}: {got} vs {expected}");
            }
            // Each write is an engine call of its own; reads come in batches.
            let batches = drain(w.phases(4)[1].source.as_mut());
            for b in &batches {
                assert!(b.ops.windows(2).all(|p| !(p[0].kind.is_write() && p[1].kind.is_write())));
                assert!(b.ops.len() <= w.params.ops_per_batch as usize + 2);
            }
            if letter == "c" {
                let full = |b: &Batch| b.ops.len() == w.params.ops_per_batch as usize;
                assert!(batches[..batches.len() - 1].iter().all(full), "reads fill their batches");
            }
        }
    }

    #[test]
    fn updates_and_read_modify_writes_read_before_they_write_the_whole_record() {
        for (letter, gets) in [("a", 1), ("f", 2)] {
            let w = ycsb(letter, 10_000.0, 20_000.0);
            let mut phases = w.phases(5);
            let mut puts = 0;
            for b in drain(phases[1].source.as_mut()) {
                for (i, op) in b.ops.iter().enumerate().filter(|(_, op)| op.kind == OpKind::Put) {
                    puts += 1;
                    assert_eq!(op.value.len(), 1140, "the whole record");
                    assert!(i >= gets, "ycsb-{letter}: a put without its reads");
                    for read in &b.ops[i - gets..i] {
                        assert_eq!((read.kind, b.key(read)), (OpKind::Get, b.key(op)), "ycsb-{letter}");
                    }
                }
            }
            assert!(puts > 9000, "ycsb-{letter}: {puts} writes");
        }
    }

    #[test]
    fn zipfian_requests_favour_the_top_ranks() {
        let w = ycsb("c", 100_000.0, 200_000.0);
        let mut counts: HashMap<Vec<u8>, u64> = HashMap::new();
        let txns = transactions(&w, 6);
        for (_, key, _) in &txns {
            *counts.entry(key.clone()).or_default() += 1;
        }
        let mut sorted: Vec<u64> = counts.into_values().collect();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let n = (SCRAMBLED_ITEMS + 1) as f64;
        for top in [1usize, 10, 100] {
            let got = sorted[..top].iter().sum::<u64>() as f64 / txns.len() as f64;
            let expected = zipf_below(top as f64, n, SCRAMBLED_ZETAN);
            let expected = if top == 1 { 1.0 / SCRAMBLED_ZETAN } else { expected };
            assert!((got - expected).abs() < 0.1 * expected, "top {top} keys: {got} vs {expected}");
        }
    }

    #[test]
    fn latest_reads_favour_the_newest_records() {
        let w = ycsb("d", 50_000.0, 100_000.0);
        let mut keynums: HashMap<Vec<u8>, i64> = (0..w.records).map(|n| (key_of(n), n)).collect();
        let mut last = w.records - 1;
        let mut distances = vec![];
        for (txn, key, _) in transactions(&w, 7) {
            if txn == Txn::Insert {
                last += 1;
                assert_eq!(key, key_of(last), "inserts take the next record number");
                keynums.insert(key, last);
            } else {
                distances.push(last - keynums[&key]);
            }
        }
        let items = (w.records - 1) as f64;
        let zetan = zeta(0, items as u64, ZIPFIAN_CONSTANT, 0.0);
        let newest = share(&distances, |d| *d == 0);
        assert!((newest - 1.0 / zetan).abs() < 0.1 / zetan, "newest record: {newest} vs {}", 1.0 / zetan);
        for d in [10i64, 1000] {
            let got = share(&distances, |x| *x < d);
            let expected = zipf_below(d as f64, items, zetan);
            assert!((got - expected).abs() < 0.015, "within {d} of the newest: {got} vs {expected}");
        }
    }

    #[test]
    fn scan_lengths_are_uniform_from_1_to_100() {
        let w = ycsb("e", 10_000.0, 40_000.0);
        let lens: Vec<u32> =
            transactions(&w, 8).into_iter().filter(|(t, _, _)| *t == Txn::Scan).map(|(_, _, l)| l).collect();
        assert_eq!((*lens.iter().min().unwrap(), *lens.iter().max().unwrap()), (1, 100));
        for tenth in 0..10 {
            let got = share(&lens, |l| (*l - 1) / 10 == tenth);
            assert!((got - 0.1).abs() < 0.01, "lengths {}-{}: {got}", tenth * 10 + 1, tenth * 10 + 10);
        }
    }
}
