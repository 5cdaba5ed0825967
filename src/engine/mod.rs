//! The engines kvtune can tune. An engine turns a candidate into a running
//! store; the replay driver talks to the store only through [`KvStore`], so a
//! second engine plugs in beside `rocksdb` without touching the driver.

pub mod rocksdb;

use serde::{Deserialize, Serialize};

use crate::dataset::ops::Batch;

/// The operations the replay driver issues.
pub trait KvStore {
    /// Applies the writes of `batch` atomically; values are slices of `corpus`.
    fn write(&mut self, batch: &Batch, corpus: &[u8]) -> anyhow::Result<()>;
    /// Point read.
    fn get(&mut self, key: &[u8]) -> anyhow::Result<Read>;
    /// Latest entry at or below `key` sharing its first `prefix_len` bytes.
    fn seek_for_prev(&mut self, key: &[u8], prefix_len: usize) -> anyhow::Result<Read>;
    /// Reads up to `limit` entries that start with `prefix`.
    fn scan(&mut self, prefix: &[u8], limit: usize) -> anyhow::Result<Read>;
    /// Persists what is still in memory, so the size on disk is the data's.
    fn flush(&mut self) -> anyhow::Result<()>;
    /// Counters the engine keeps about itself since it was opened.
    fn metrics(&self) -> EngineMetrics;
}

/// What a read found: entries and their value bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Read {
    pub entries: u64,
    pub bytes: u64,
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
