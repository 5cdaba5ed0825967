//! What a trace file holds, read once: ops by kind, user bytes written,
//! distinct keys written (a HyperLogLog sketch, so a trace of any length
//! takes 16 KiB), recorded span. Kept per file (and op limit) for the life of
//! the process, so `shape()` never reads a large file twice.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use super::{open_source, Format, Pace};
use crate::dataset::ops::{Batch, OpKind, OpSource, Tally};
use crate::dataset::values::mix64;

/// Registers of the sketch: 2^14, a standard error of about 0.8%.
const HLL_BITS: u32 = 14;
/// Distinct hashes counted exactly, below the counts where the raw
/// HyperLogLog estimate is biased (up to about 5 times its registers).
const EXACT_UP_TO: usize = 1 << 18;

/// Distinct byte strings: exact up to [`EXACT_UP_TO`], then a HyperLogLog
/// sketch of fixed size.
#[derive(Debug, Clone, PartialEq)]
pub struct Distinct {
    exact: Option<HashSet<u64>>,
    registers: Vec<u8>,
}

impl Default for Distinct {
    fn default() -> Self {
        Distinct { exact: Some(HashSet::new()), registers: vec![0; 1 << HLL_BITS] }
    }
}

impl Distinct {
    pub fn add(&mut self, bytes: &[u8]) {
        self.add_hash(hash(bytes));
    }

    fn add_hash(&mut self, h: u64) {
        let index = (h >> (64 - HLL_BITS)) as usize;
        let rank = ((h << HLL_BITS) | (1 << (HLL_BITS - 1))).leading_zeros() as u8 + 1;
        let r = &mut self.registers[index];
        *r = (*r).max(rank);
        if let Some(set) = &mut self.exact {
            set.insert(h);
            if set.len() > EXACT_UP_TO {
                self.exact = None;
            }
        }
    }

    /// Adds every string `other` saw.
    pub fn union(&mut self, other: &Distinct) {
        for (a, b) in self.registers.iter_mut().zip(&other.registers) {
            *a = (*a).max(*b);
        }
        match (&mut self.exact, &other.exact) {
            (Some(mine), Some(theirs)) => {
                mine.extend(theirs);
                if mine.len() > EXACT_UP_TO {
                    self.exact = None;
                }
            }
            _ => self.exact = None,
        }
    }

    /// The count: exact while small, else the HyperLogLog estimate.
    pub fn count(&self) -> u64 {
        if let Some(set) = &self.exact {
            return set.len() as u64;
        }
        let m = self.registers.len() as f64;
        let sum: f64 = self.registers.iter().map(|&r| (-(r as f64)).exp2()).sum();
        (0.7213 / (1.0 + 1.079 / m) * m * m / sum).round() as u64
    }
}

/// A 64-bit hash of a byte string: splitmix over 8-byte words.
fn hash(bytes: &[u8]) -> u64 {
    let mut h = mix64(bytes.len() as u64);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = mix64(h ^ u64::from_le_bytes(c.try_into().expect("8 bytes")));
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    mix64(h ^ u64::from_le_bytes(tail))
}

/// What one phase's trace replays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub records: u64,
    pub ops: u64,
    pub tally: Tally,
    /// Key and value bytes of the writes, as the replay bills them.
    pub write_bytes: u64,
    /// Keys put or merged.
    pub keys: Distinct,
    /// Whether the trace uses column families other than the default (their
    /// keys then carry the column family id).
    pub column_families: bool,
    /// Records not replayable (RocksDB block-cache and IO trace records).
    pub skipped: u64,
    pub span_us: Option<(u64, u64)>,
}

impl Summary {
    fn add(&mut self, batch: &Batch) {
        self.ops += batch.ops.len() as u64;
        self.write_bytes += batch.write_bytes();
        self.tally.add(batch);
        for op in batch.ops.iter().filter(|op| matches!(op.kind, OpKind::Put | OpKind::Merge)) {
            self.keys.add(batch.key(op));
        }
    }
}

/// Reads a whole phase file (up to `limit` ops), its keys carrying their
/// column family where `cf_keys`.
fn scan(file: &Path, format: Format, limit: Option<u64>, cf_keys: bool) -> anyhow::Result<Summary> {
    let mut source = open_source(file, format, cf_keys, limit, Pace::Fast, 2.0, 0)?;
    let mut summary = Summary::default();
    let mut batch = Batch::default();
    while source.next_batch(&mut batch) {
        summary.add(&batch);
    }
    if let Some(e) = source.take_error() {
        return Err(e);
    }
    summary.records = source.records;
    summary.column_families = source.saw_column_families();
    summary.skipped = source.skipped();
    summary.span_us = source.span_us;
    Ok(summary)
}

/// A file as last seen: a change of size or time reads it again.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    file: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
    limit: Option<u64>,
    cf_keys: bool,
}

type Cache = Mutex<HashMap<Key, Arc<Summary>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The summary of a phase file, read once per process. The whole file's
/// (`limit` None) decides whether keys carry their column family; a prefix's
/// keys follow that choice.
pub fn summary(file: &Path, format: Format, limit: Option<u64>) -> anyhow::Result<Arc<Summary>> {
    let cf_keys = match limit {
        None => false,
        Some(_) => summary(file, format, None)?.column_families,
    };
    let meta = std::fs::metadata(file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
    let key =
        Key { file: file.to_path_buf(), len: meta.len(), modified: meta.modified().ok(), limit, cf_keys };
    if let Some(found) = cache().lock().expect("cache lock").get(&key) {
        return Ok(found.clone());
    }
    let mut read = scan(file, format, limit, cf_keys)?;
    if read.column_families && !cf_keys {
        // Keys carry their column family: count them as replayed.
        read = Summary { column_families: true, ..scan(file, format, limit, true)? };
    }
    let read = Arc::new(read);
    cache().lock().expect("cache lock").insert(key, read.clone());
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_count_is_within_a_few_percent() {
        for n in [10u64, 1000, 200_000, 400_000, 2_000_000] {
            let mut d = Distinct::default();
            for i in 0..n {
                d.add(&i.to_be_bytes());
                d.add(&i.to_be_bytes());
            }
            let err = (d.count() as f64 - n as f64).abs() / n as f64;
            assert!(err < 0.025, "{n}: {} ({err})", d.count());
        }
        let (mut a, mut b) = (Distinct::default(), Distinct::default());
        (0..5000u32).for_each(|i| a.add(&i.to_be_bytes()));
        (2500..7500u32).for_each(|i| b.add(&i.to_be_bytes()));
        a.union(&b);
        assert_eq!(a.count(), 7500);
        let mut big = Distinct::default();
        (0..300_000u32).for_each(|i| big.add(&i.to_be_bytes()));
        a.union(&big);
        assert!((a.count() as f64 - 300_000.0).abs() < 7500.0, "{}", a.count());
    }
}
