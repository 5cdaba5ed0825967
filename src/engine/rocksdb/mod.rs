//! RocksDB, in process: a candidate becomes `rocksdb::Options` through the
//! parameter table in [`knobs`]; the store runs the replay's operations and
//! reads RocksDB's tickers; an option set is exported as RocksDB's own
//! OPTIONS file.

mod knobs;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use rocksdb::properties::{self, PropName};
use rocksdb::statistics::Ticker;
use rocksdb::{Cache, Options, WaitForCompactOptions, WriteBatch, DB};

use super::{dir_size, Engine, EngineError, KvStore, ParamDoc, Read, Resolved};
use crate::budget::ByteSize;
use crate::dataset::ops::{Batch, Op, OpKind};
use crate::record::{EngineMemory, EngineMetrics};
use crate::space::Candidate;
pub use knobs::memtable_floor;
use knobs::{Build, KNOBS};

/// RocksDB through the `rocksdb` crate.
pub struct RocksDb;

impl Engine for RocksDb {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn params(&self) -> Vec<ParamDoc> {
        KNOBS.iter().map(|k| ParamDoc { name: k.name, help: k.help, scaling: k.scaling }).collect()
    }

    /// RocksDB's defaults fitted to the budget: every option at its default,
    /// the memtables at their default 2 x 64 MiB as a share of the budget (at
    /// most a quarter of a small budget), and a block cache of a third of it.
    fn defaults(&self, budget: u64) -> Candidate {
        KNOBS.iter().map(|k| (k.name.to_string(), (k.default)(budget))).collect()
    }

    fn resolve(&self, candidate: &Candidate, budget: u64) -> Result<Resolved, EngineError> {
        Ok(Build::new(candidate, budget)?.resolved())
    }

    fn open(&self, candidate: &Candidate, budget: u64, dir: &Path) -> anyhow::Result<Box<dyn KvStore>> {
        Ok(Box::new(RocksStore::open(dir, Build::new(candidate, budget)?)?))
    }

    /// RocksDB writes the file itself while opening a scratch database, so
    /// every field is exactly as RocksDB spells and loads it.
    fn options_file(&self, candidate: &Candidate, budget: u64, scratch: &Path) -> anyhow::Result<String> {
        std::fs::create_dir_all(scratch)
            .with_context(|| format!("making the scratch directory {}", scratch.display()))?;
        let dir = tempfile::tempdir_in(scratch)
            .with_context(|| format!("making a scratch directory in {}", scratch.display()))?;
        let build = Build::new(candidate, budget)?;
        let cache = build.block_cache_size;
        drop(RocksStore::open(dir.path(), build)?);
        let newest = std::fs::read_dir(dir.path())?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let number: u64 = name.strip_prefix("OPTIONS-")?.parse().ok()?;
                Some((number, e.path()))
            })
            .max()
            .context("RocksDB wrote no OPTIONS file")?;
        let banner = format!(
            "# RocksDB does not write the block cache into OPTIONS files: create an LRU cache of\n\
             # block_cache_size = {cache} bytes ({}) and pass it when loading, e.g. Options::load_latest(dir, env,\n\
             # false, Cache::new_lru_cache({cache})) in Rust or LoadOptionsFromFile(config_options, path, &db_opts,\n\
             # &cf_descs, &cache) in C++. (load_latest reads a database directory: copy this file in as OPTIONS-000001.)\n",
            ByteSize(cache),
        );
        Ok(banner + &std::fs::read_to_string(newest.1)?)
    }
}

/// Longest kvtune waits for RocksDB's background work to finish.
const SETTLE_LIMIT: Duration = Duration::from_secs(3600);

/// A running RocksDB database.
struct RocksStore {
    db: DB,
    dir: PathBuf,
    options: Options,
    _cache: Option<Cache>,
}

impl RocksStore {
    fn open(dir: &Path, build: Build) -> anyhow::Result<Self> {
        let (options, cache) = build.into_options();
        let db = DB::open(&options, dir).with_context(|| format!("opening RocksDB in {}", dir.display()))?;
        Ok(RocksStore { db, dir: dir.to_path_buf(), options, _cache: cache })
    }

    fn property(&self, name: &PropName) -> u64 {
        self.db.property_int_value(name).ok().flatten().unwrap_or(0)
    }
}

impl KvStore for RocksStore {
    fn write(&mut self, batch: &Batch, writes: &[Op], corpus: &[u8]) -> anyhow::Result<()> {
        let mut wb = WriteBatch::default();
        for op in writes {
            let value = || &corpus[op.value.start as usize..op.value.end as usize];
            match op.kind {
                OpKind::Put | OpKind::Merge => wb.put(batch.key(op), value()),
                OpKind::Delete => wb.delete(batch.key(op)),
                OpKind::SingleDelete => wb.single_delete(batch.key(op)),
                OpKind::DeleteRange => {
                    let (from, to) = batch.range(op);
                    wb.delete_range(from, to)
                }
                _ => {}
            }
        }
        Ok(self.db.write(wb)?)
    }

    fn multi_get(&mut self, keys: &[&[u8]]) -> anyhow::Result<Read> {
        let mut read = Read::default();
        for value in self.db.multi_get(keys) {
            if let Some(v) = value? {
                read.entries += 1;
                read.bytes += v.len() as u64;
            }
        }
        Ok(read)
    }

    fn compact_range(&mut self, start: &[u8], end: &[u8]) -> anyhow::Result<()> {
        self.db.compact_range(Some(start), Some(end));
        Ok(())
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

    fn scan(&mut self, key: &[u8], limit: usize, prefix_len: usize) -> anyhow::Result<Read> {
        let mut it = self.db.raw_iterator();
        it.seek(key);
        let prefix = &key[..prefix_len.min(key.len())];
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

    /// RocksDB's own wait for every running and scheduled flush and
    /// compaction, including those they trigger in turn.
    fn settle(&mut self) -> anyhow::Result<()> {
        let mut wait = WaitForCompactOptions::default();
        wait.set_timeout(SETTLE_LIMIT.as_micros() as u64);
        self.db.wait_for_compact(&wait).with_context(|| {
            format!(
                "waiting up to {} s for RocksDB's flushes and compactions to finish",
                SETTLE_LIMIT.as_secs()
            )
        })
    }

    fn memory(&self) -> EngineMemory {
        EngineMemory {
            block_cache: self.property(properties::BLOCK_CACHE_USAGE),
            block_cache_pinned: self.property(properties::BLOCK_CACHE_PINNED_USAGE),
            memtables: self.property(properties::CUR_SIZE_ALL_MEM_TABLES),
            table_readers: self.property(properties::ESTIMATE_TABLE_READERS_MEM),
        }
    }

    fn disk_bytes(&self) -> u64 {
        dir_size(&self.dir)
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
            live_keys_estimate: self.property(properties::ESTIMATE_NUM_KEYS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{GIB, MIB};
    use crate::space::Value;

    fn resolve(candidate: &Candidate, budget: u64) -> Result<Resolved, EngineError> {
        RocksDb.resolve(candidate, budget)
    }

    fn option(r: &Resolved, name: &str) -> Value {
        r.options[name].clone()
    }

    #[test]
    fn defaults_at_full_size_are_rocksdbs_own() {
        let budget = 128 * GIB;
        let r = resolve(&RocksDb.defaults(budget), budget).unwrap();
        let bytes = |name: &str| option(&r, name).as_f64().unwrap() as u64;
        assert_eq!(bytes("write_buffer_size"), 64 * MIB);
        assert_eq!(option(&r, "max_write_buffer_number"), Value::Int(2));
        assert_eq!(bytes("target_file_size_base"), 64 * MIB);
        assert_eq!(bytes("max_bytes_for_level_base"), 256 * MIB);
        assert_eq!(bytes("block_cache_size"), budget / 3);
        assert_eq!(option(&r, "compression"), Value::from("snappy"));
        assert_eq!(option(&r, "block_size"), Value::Int(4096));
        assert_eq!(option(&r, "load_mode"), Value::from("pread"));
        let shown: Vec<&str> = r.shown.iter().map(|(_, v)| v.as_str()).collect();
        assert!(shown.contains(&"64 MiB"), "{shown:?}");
    }

    #[test]
    fn every_parameter_has_a_default_and_help() {
        let defaults = RocksDb.defaults(GIB);
        for p in RocksDb.params() {
            assert!(defaults.contains_key(p.name) && !p.help.is_empty(), "{}", p.name);
        }
        assert_eq!(defaults.len(), RocksDb.params().len());
    }

    #[test]
    fn scaled_memtables_keep_a_floor() {
        let r = resolve(&RocksDb.defaults(128 * GIB), GIB).unwrap();
        assert_eq!(option(&r, "write_buffer_size"), Value::from(GIB / 32));
    }

    #[test]
    fn the_record_shows_what_ran() {
        let mut asked = RocksDb.defaults(GIB);
        asked.insert("min_write_buffer_number_to_merge".into(), Value::Int(3));
        asked.insert("max_background_jobs".into(), Value::Int(500));
        let r = resolve(&asked, GIB).unwrap();
        assert_eq!(r.candidate["min_write_buffer_number_to_merge"], Value::Int(1));
        assert_eq!(r.candidate["max_background_jobs"], Value::Int(64));
        assert_eq!(option(&r, "max_background_jobs"), Value::Int(64));
    }

    #[test]
    fn the_memory_model_follows_the_options() {
        let mut c = RocksDb.defaults(GIB);
        let plain = resolve(&c, GIB).unwrap().memory;
        assert_eq!(plain.block_cache, GIB / 3);
        assert_eq!(plain.memtables, 128 * MIB);
        c.insert("bloom_bits".into(), Value::Int(16));
        assert_eq!(resolve(&c, GIB).unwrap().memory.outside_cache_per_key, 2.0);
        c.insert("cache_index_and_filter_blocks".into(), Value::Bool(true));
        assert_eq!(resolve(&c, GIB).unwrap().memory.outside_cache_per_key, 0.0);
    }

    #[test]
    fn unknown_and_mistyped_values_are_refused() {
        let refused = |name: &str, value: Value| {
            let mut c = RocksDb.defaults(GIB);
            c.insert(name.into(), value);
            resolve(&c, GIB).unwrap_err().to_string()
        };
        assert!(refused("compression", Value::from("zlib")).contains("none, snappy, lz4, zstd"));
        assert!(refused("block_cache_share", Value::Float(1.5)).contains("from 0 to 1"));
        assert!(refused("bloom_bitz", Value::Int(1)).contains("known are"));
        assert!(refused("enable_blob_files", Value::Int(1)).contains("true or false"));
    }
}
