//! RocksDB: maps a candidate to `rocksdb::Options`, runs the store, reads its
//! tickers, and exports an option set as RocksDB's own OPTIONS file.
//!
//! Memory options are candidates' *shares of the budget*; everything else is
//! an absolute RocksDB setting, or (table and level sizes) a multiple of the
//! memtable size so that the LSM keeps its shape when kvtune scales the run.

use std::path::Path;

use anyhow::Context;
use rocksdb::statistics::Ticker;
use rocksdb::{BlockBasedOptions, Cache, DBCompactionStyle, DBCompressionType, Options, WriteBatch, DB};
use serde::{Deserialize, Serialize};

use super::{EngineMetrics, KvStore, Read};
use crate::budget::{MemoryModel, MIB};
use crate::dataset::ops::{Batch, OpKind};
use crate::space::{Candidate, Value};

/// Memory of the trial process besides the cache, memtables and index: the
/// binary, RocksDB's table readers and arenas, the op generator. Measured
/// here as peak RSS minus cache and memtables at small budgets: ~10-16 MiB.
const PROCESS_OVERHEAD: u64 = 16 * MIB;

/// Every parameter a search space may name for RocksDB, with a line of help.
pub const PARAMS: &[(&str, &str)] = &[
    ("block_cache_share", "block cache capacity as a share of the budget"),
    (
        "memtable_share",
        "all memtables (write_buffer_size x max_write_buffer_number) as a share of the budget",
    ),
    ("max_write_buffer_number", "memtables per column family, active plus immutable"),
    ("min_write_buffer_number_to_merge", "immutable memtables merged into one flush"),
    ("target_file_size_x_memtable", "target_file_size_base as a multiple of write_buffer_size"),
    ("level_base_x_memtable", "max_bytes_for_level_base as a multiple of write_buffer_size"),
    (
        "level0_file_num_compaction_trigger",
        "L0 files that start a compaction (slowdown and stop triggers follow)",
    ),
    ("compaction_style", "level or universal"),
    ("compression", "compression of every level but the last: none, snappy, lz4, zstd"),
    ("bottommost_compression", "compression of the last level: same, none, snappy, lz4, zstd"),
    ("bloom_bits", "bloom filter bits per key, 0 for none"),
    ("block_size", "data block size in bytes"),
    ("cache_index_and_filter_blocks", "keep index and filter blocks in the block cache instead of beside it"),
    ("load_mode", "how SST files are read: pread, mmap or direct (O_DIRECT reads, flushes and compactions)"),
    ("max_background_jobs", "flush and compaction threads"),
    ("max_subcompactions", "threads one compaction may split into"),
    ("enable_blob_files", "key-value separation: large values go to blob files"),
    ("min_blob_size", "values at least this large go to blob files when blobs are on"),
];

/// Whether RocksDB knows a parameter of this name.
pub fn param_known(name: &str) -> Result<(), String> {
    if PARAMS.iter().any(|(known, _)| *known == name) {
        return Ok(());
    }
    let names: Vec<&str> = PARAMS.iter().map(|(n, _)| *n).collect();
    Err(format!("RocksDB has no parameter of this name; known are: {}", names.join(", ")))
}

/// RocksDB's defaults, fitted to the budget: every option at its default, the
/// memtables at their default 2 x 64 MiB as a share of the full budget (at
/// most a quarter of a small budget), and a block cache of a third of the
/// budget (the tuning guide's rule of thumb, and what anyone sizing a cache
/// for a budget does first).
pub fn default_candidate(full_budget: u64) -> Candidate {
    let memtable_share = (128.0 * MIB as f64 / full_budget as f64).min(0.25);
    [
        ("block_cache_share", Value::Float(1.0 / 3.0)),
        ("memtable_share", Value::Float(memtable_share)),
        ("max_write_buffer_number", Value::Int(2)),
        ("min_write_buffer_number_to_merge", Value::Int(1)),
        ("target_file_size_x_memtable", Value::Float(1.0)),
        ("level_base_x_memtable", Value::Float(4.0)),
        ("level0_file_num_compaction_trigger", Value::Int(4)),
        ("compaction_style", Value::Str("level".into())),
        ("compression", Value::Str("snappy".into())),
        ("bottommost_compression", Value::Str("same".into())),
        ("bloom_bits", Value::Int(0)),
        ("block_size", Value::Int(4096)),
        ("cache_index_and_filter_blocks", Value::Bool(false)),
        ("load_mode", Value::Str("pread".into())),
        ("max_background_jobs", Value::Int(2)),
        ("max_subcompactions", Value::Int(1)),
        ("enable_blob_files", Value::Bool(false)),
        ("min_blob_size", Value::Int(0)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The smallest memtable kvtune sets: RocksDB's default 64 MiB, or a 32nd of
/// a smaller budget. Every flush has a fixed cost, so memtables scaled down
/// by the same factor as a scaled run's data would flush far more often per
/// byte than at full size and stall writes (seen here: 15 s of stalls in a
/// 22 s trial at 128 KiB memtables); the floor keeps the small memtables of
/// a scaled run out of that regime, at full size it is RocksDB's default.
pub fn memtable_floor(budget: u64) -> u64 {
    (64 * MIB).min(budget / 32).max(64 * 1024)
}

/// `candidate` with every parameter it leaves out set to the defaults fitted
/// to the full budget, so what is recorded is exactly what runs at any scale.
pub fn complete(candidate: &Candidate, full_budget: u64) -> Candidate {
    let mut full = default_candidate(full_budget);
    full.extend(candidate.iter().map(|(k, v)| (k.clone(), v.clone())));
    full
}

/// A complete RocksDB option set in absolute terms, as the preset records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RocksConfig {
    pub block_cache_size: u64,
    pub write_buffer_size: u64,
    pub max_write_buffer_number: i32,
    pub min_write_buffer_number_to_merge: i32,
    pub target_file_size_base: u64,
    pub max_bytes_for_level_base: u64,
    pub level0_file_num_compaction_trigger: i32,
    pub level0_slowdown_writes_trigger: i32,
    pub level0_stop_writes_trigger: i32,
    pub compaction_style: String,
    pub compression: String,
    pub bottommost_compression: String,
    pub bloom_bits_per_key: f64,
    pub block_size: u64,
    pub cache_index_and_filter_blocks: bool,
    pub load_mode: String,
    pub max_background_jobs: i32,
    pub max_subcompactions: u32,
    pub enable_blob_files: bool,
    pub min_blob_size: u64,
}

/// Reads typed values out of a candidate, falling back to the defaults.
struct Reader<'a> {
    candidate: &'a Candidate,
    defaults: Candidate,
}

impl Reader<'_> {
    fn value(&self, name: &str) -> &Value {
        self.candidate.get(name).unwrap_or(&self.defaults[name])
    }

    fn float(&self, name: &str) -> Result<f64, String> {
        self.value(name)
            .as_f64()
            .ok_or_else(|| format!("`{name}` must be a number, not {}", self.value(name)))
    }

    fn int(&self, name: &str) -> Result<i64, String> {
        Ok(self.float(name)?.round() as i64)
    }

    fn flag(&self, name: &str) -> Result<bool, String> {
        match self.value(name) {
            Value::Bool(b) => Ok(*b),
            other => Err(format!("`{name}` must be true or false, not {other}")),
        }
    }

    fn choice(&self, name: &str, allowed: &[&str]) -> Result<String, String> {
        match self.value(name) {
            Value::Str(s) if allowed.contains(&s.as_str()) => Ok(s.clone()),
            other => Err(format!("`{name}` must be one of {}, not {other}", allowed.join(", "))),
        }
    }
}

const COMPRESSIONS: &[&str] = &["none", "snappy", "lz4", "zstd"];

impl RocksConfig {
    /// The absolute option set a candidate means at `budget` bytes.
    pub fn from_candidate(candidate: &Candidate, budget: u64) -> Result<Self, String> {
        for name in candidate.keys() {
            param_known(name).map_err(|why| format!("`{name}`: {why}"))?;
        }
        let r = Reader { candidate, defaults: default_candidate(budget) };
        let share = |name: &str| -> Result<u64, String> {
            let s = r.float(name)?;
            if !(0.0..=1.0).contains(&s) {
                return Err(format!("`{name}` is a share of the budget, from 0 to 1, not {s}"));
            }
            Ok((s * budget as f64) as u64)
        };
        let buffers = r.int("max_write_buffer_number")?.clamp(2, 64) as i32;
        let write_buffer_size = (share("memtable_share")? / buffers as u64).max(memtable_floor(budget));
        let scaled = |name: &str| -> Result<u64, String> {
            Ok(((r.float(name)? * write_buffer_size as f64) as u64).max(64 * 1024))
        };
        let l0_trigger = r.int("level0_file_num_compaction_trigger")?.clamp(1, 1000) as i32;
        let mut bottommost_choices = vec!["same"];
        bottommost_choices.extend_from_slice(COMPRESSIONS);
        Ok(RocksConfig {
            block_cache_size: share("block_cache_share")?,
            write_buffer_size,
            max_write_buffer_number: buffers,
            min_write_buffer_number_to_merge: (r.int("min_write_buffer_number_to_merge")? as i32)
                .clamp(1, buffers - 1),
            target_file_size_base: scaled("target_file_size_x_memtable")?,
            max_bytes_for_level_base: scaled("level_base_x_memtable")?,
            level0_file_num_compaction_trigger: l0_trigger,
            level0_slowdown_writes_trigger: 20.max(l0_trigger * 2),
            level0_stop_writes_trigger: 36.max(l0_trigger * 3),
            compaction_style: r.choice("compaction_style", &["level", "universal"])?,
            compression: r.choice("compression", COMPRESSIONS)?,
            bottommost_compression: r.choice("bottommost_compression", &bottommost_choices)?,
            bloom_bits_per_key: r.float("bloom_bits")?.max(0.0),
            block_size: (r.int("block_size")?.max(256)) as u64,
            cache_index_and_filter_blocks: r.flag("cache_index_and_filter_blocks")?,
            load_mode: r.choice("load_mode", &["pread", "mmap", "direct"])?,
            max_background_jobs: r.int("max_background_jobs")?.clamp(1, 64) as i32,
            max_subcompactions: r.int("max_subcompactions")?.clamp(1, 64) as u32,
            enable_blob_files: r.flag("enable_blob_files")?,
            min_blob_size: r.int("min_blob_size")?.max(0) as u64,
        })
    }

    /// `candidate` with the counts RocksDB would not take as asked (a merge
    /// count of at least the memtable count, say) set to what actually runs,
    /// so the record of a trial never claims a setting it did not have.
    pub fn effective(&self, candidate: &Candidate) -> Candidate {
        let mut out = candidate.clone();
        let ran = [
            ("max_write_buffer_number", self.max_write_buffer_number as i64),
            ("min_write_buffer_number_to_merge", self.min_write_buffer_number_to_merge as i64),
            ("level0_file_num_compaction_trigger", self.level0_file_num_compaction_trigger as i64),
            ("max_background_jobs", self.max_background_jobs as i64),
            ("max_subcompactions", self.max_subcompactions as i64),
        ];
        for (name, value) in ran {
            if let Some(asked @ Value::Int(_)) = out.get_mut(name) {
                *asked = Value::Int(value);
            }
        }
        out
    }

    /// What this option set holds in memory for a database of `keys` keys
    /// and `data_bytes` user bytes.
    pub fn memory_model(&self, keys: u64, data_bytes: u64) -> MemoryModel {
        let outside_cache = if self.cache_index_and_filter_blocks {
            0
        } else {
            let blocks = data_bytes / self.block_size.max(1);
            let index = blocks * 48;
            let filters = (keys as f64 * self.bloom_bits_per_key / 8.0) as u64;
            index + filters
        };
        MemoryModel {
            block_cache: self.block_cache_size,
            memtables: self.write_buffer_size * self.max_write_buffer_number as u64,
            index_and_filters: outside_cache,
            overhead: PROCESS_OVERHEAD,
        }
    }

    /// The `rocksdb::Options` of this set, and the block cache they share.
    pub fn options(&self) -> (Options, Option<Cache>) {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.enable_statistics();
        o.set_write_buffer_size(self.write_buffer_size as usize);
        o.set_max_write_buffer_number(self.max_write_buffer_number);
        o.set_min_write_buffer_number_to_merge(self.min_write_buffer_number_to_merge);
        o.set_target_file_size_base(self.target_file_size_base);
        o.set_max_bytes_for_level_base(self.max_bytes_for_level_base);
        o.set_level_zero_file_num_compaction_trigger(self.level0_file_num_compaction_trigger);
        o.set_level_zero_slowdown_writes_trigger(self.level0_slowdown_writes_trigger);
        o.set_level_zero_stop_writes_trigger(self.level0_stop_writes_trigger);
        o.set_compaction_style(match self.compaction_style.as_str() {
            "universal" => DBCompactionStyle::Universal,
            _ => DBCompactionStyle::Level,
        });
        o.set_compression_type(compression_type(&self.compression));
        if self.bottommost_compression != "same" {
            o.set_bottommost_compression_type(compression_type(&self.bottommost_compression));
        }
        match self.load_mode.as_str() {
            "mmap" => o.set_allow_mmap_reads(true),
            "direct" => {
                o.set_use_direct_reads(true);
                o.set_use_direct_io_for_flush_and_compaction(true);
            }
            _ => {}
        }
        o.set_max_background_jobs(self.max_background_jobs);
        o.set_max_subcompactions(self.max_subcompactions);
        o.set_enable_blob_files(self.enable_blob_files);
        o.set_min_blob_size(self.min_blob_size);

        let mut table = BlockBasedOptions::default();
        let cache = (self.block_cache_size > 0).then(|| Cache::new_lru_cache(self.block_cache_size as usize));
        match &cache {
            Some(cache) => table.set_block_cache(cache),
            None => table.disable_cache(),
        }
        table.set_block_size(self.block_size as usize);
        if self.bloom_bits_per_key > 0.0 {
            table.set_bloom_filter(self.bloom_bits_per_key, false);
        }
        table.set_cache_index_and_filter_blocks(self.cache_index_and_filter_blocks);
        o.set_block_based_table_factory(&table);
        (o, cache)
    }
}

fn compression_type(name: &str) -> DBCompressionType {
    match name {
        "snappy" => DBCompressionType::Snappy,
        "lz4" => DBCompressionType::Lz4,
        "zstd" => DBCompressionType::Zstd,
        _ => DBCompressionType::None,
    }
}

/// A running RocksDB database.
pub struct RocksStore {
    db: DB,
    options: Options,
    _cache: Option<Cache>,
}

impl RocksStore {
    pub fn open(dir: &Path, config: &RocksConfig) -> anyhow::Result<Self> {
        let (options, cache) = config.options();
        let db = DB::open(&options, dir).with_context(|| format!("opening RocksDB in {}", dir.display()))?;
        Ok(RocksStore { db, options, _cache: cache })
    }
}

impl KvStore for RocksStore {
    fn write(&mut self, batch: &Batch, corpus: &[u8]) -> anyhow::Result<()> {
        let mut wb = WriteBatch::default();
        for op in &batch.ops {
            match op.kind {
                OpKind::Put => wb.put(batch.key(op), &corpus[op.value.start as usize..op.value.end as usize]),
                OpKind::Delete => wb.delete(batch.key(op)),
                _ => {}
            }
        }
        Ok(self.db.write(wb)?)
    }

    fn get(&mut self, key: &[u8]) -> anyhow::Result<Read> {
        let value = self.db.get_pinned(key)?;
        Ok(value.map_or(Read::default(), |v| Read { entries: 1, bytes: v.len() as u64 }))
    }

    fn seek_for_prev(&mut self, key: &[u8], prefix_len: usize) -> anyhow::Result<Read> {
        let mut it = self.db.raw_iterator();
        it.seek_for_prev(key);
        it.status()?;
        let prefix = &key[..prefix_len.min(key.len())];
        Ok(match (it.key(), it.value()) {
            (Some(k), Some(v)) if k.starts_with(prefix) => Read { entries: 1, bytes: v.len() as u64 },
            _ => Read::default(),
        })
    }

    fn scan(&mut self, prefix: &[u8], limit: usize) -> anyhow::Result<Read> {
        let mut it = self.db.raw_iterator();
        it.seek(prefix);
        let mut read = Read::default();
        while read.entries < limit as u64 && it.key().is_some_and(|k| k.starts_with(prefix)) {
            read.entries += 1;
            read.bytes += it.value().map_or(0, |v| v.len() as u64);
            it.next();
        }
        it.status()?;
        Ok(read)
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        Ok(self.db.flush()?)
    }

    fn metrics(&self) -> EngineMetrics {
        let t = |ticker| self.options.get_ticker_count(ticker);
        EngineMetrics {
            flush_bytes: t(Ticker::FlushWriteBytes),
            compaction_bytes: t(Ticker::CompactWriteBytes),
            blob_bytes: t(Ticker::BlobDbBlobFileBytesWritten),
            stall_micros: t(Ticker::StallMicros),
            block_cache_hits: t(Ticker::BlockCacheHit),
            block_cache_misses: t(Ticker::BlockCacheMiss),
            bloom_useful: t(Ticker::BloomFilterUseful),
            bloom_checked: t(Ticker::BloomFilterUseful) + t(Ticker::BloomFilterFullPositive),
            live_keys_estimate: self
                .db
                .property_int_value("rocksdb.estimate-num-keys")
                .ok()
                .flatten()
                .unwrap_or(0),
        }
    }
}

/// RocksDB's own OPTIONS file for `config`: RocksDB writes it while opening a
/// scratch database under `scratch_parent`, so every field is exactly as
/// RocksDB spells and loads it.
pub fn options_file(config: &RocksConfig, scratch_parent: &Path) -> anyhow::Result<String> {
    let scratch = tempfile::tempdir_in(scratch_parent)
        .with_context(|| format!("making a scratch directory in {}", scratch_parent.display()))?;
    drop(RocksStore::open(scratch.path(), config)?);
    let newest = std::fs::read_dir(scratch.path())?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let number: u64 = name.strip_prefix("OPTIONS-")?.parse().ok()?;
            Some((number, e.path()))
        })
        .max()
        .context("RocksDB wrote no OPTIONS file")?;
    Ok(std::fs::read_to_string(newest.1)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::GIB;

    #[test]
    fn defaults_at_full_size_are_rocksdbs_own() {
        let budget = 128 * GIB;
        let c = RocksConfig::from_candidate(&default_candidate(budget), budget).unwrap();
        assert_eq!(c.write_buffer_size, 64 * MIB);
        assert_eq!(c.max_write_buffer_number, 2);
        assert_eq!(c.target_file_size_base, 64 * MIB);
        assert_eq!(c.max_bytes_for_level_base, 256 * MIB);
        assert_eq!(c.block_cache_size, budget / 3);
        assert_eq!((c.compression.as_str(), c.block_size, c.load_mode.as_str()), ("snappy", 4096, "pread"));
    }

    #[test]
    fn scaled_memtables_keep_a_floor() {
        let c = RocksConfig::from_candidate(&default_candidate(128 * GIB), GIB).unwrap();
        assert_eq!(c.write_buffer_size, GIB / 32);
    }

    #[test]
    fn the_record_shows_what_ran() {
        let mut asked = default_candidate(GIB);
        asked.insert("min_write_buffer_number_to_merge".into(), Value::Int(3));
        let config = RocksConfig::from_candidate(&asked, GIB).unwrap();
        assert_eq!(config.effective(&asked)["min_write_buffer_number_to_merge"], Value::Int(1));
    }

    #[test]
    fn unknown_and_mistyped_values_are_refused() {
        let mut c = default_candidate(GIB);
        c.insert("compression".into(), Value::Str("zlib".into()));
        assert!(RocksConfig::from_candidate(&c, GIB).unwrap_err().contains("none, snappy, lz4, zstd"));
        let mut c = default_candidate(GIB);
        c.insert("block_cache_share".into(), Value::Float(1.5));
        assert!(RocksConfig::from_candidate(&c, GIB).unwrap_err().contains("from 0 to 1"));
        let mut c = default_candidate(GIB);
        c.insert("bloom_bitz".into(), Value::Int(1));
        assert!(RocksConfig::from_candidate(&c, GIB).unwrap_err().contains("known are"));
    }
}
