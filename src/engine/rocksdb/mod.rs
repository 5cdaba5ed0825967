//! RocksDB, in process: a candidate becomes `rocksdb::Options` through the
//! parameter table in [`knobs`]; the store runs the replay's operations and
//! reads RocksDB's tickers; an option set is exported as RocksDB's own
//! OPTIONS file.

mod knobs;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use rocksdb::properties::{self, PropName};
use rocksdb::statistics::Ticker;
use rocksdb::{Options, ReadOptions, WaitForCompactOptions, WriteBatch, DB};

use super::{
    dir_size, knob, Engine, EngineError, Held, KvStore, OptionsFile, OptionsFiles, ParamDoc, Read, Resolved,
};
use crate::budget::ByteSize;
use crate::dataset::ops::{Batch, Op, OpKind};
use crate::dataset::Dataset;
use crate::record::{EngineMemory, EngineMetrics};
use crate::space::{Candidate, Value};
pub use knobs::memtable_floor;
use knobs::{Build, Caches, KNOBS, SHIPPED_BLOCK_CACHE};

/// RocksDB through the `rocksdb` crate.
pub struct RocksDb;

/// Options a dataset's own rules hold at one value on RocksDB, each with why.
fn held(dataset: &Dataset) -> Vec<Held> {
    let mut held = vec![];
    // Unordered writes let readers see a later write before an earlier one
    // and change what a snapshot reads: only for datasets whose writes
    // declare they allow it.
    if !dataset.writes_allow_unordered {
        held.push(Held {
            name: "unordered_write",
            value: Value::Bool(false),
            why: format!(
                "dataset `{}` does not declare `writes_allow_unordered = true`: with unordered writes readers \
                 may see a later write before an earlier one and snapshots are not repeatable, which its \
                 application has not said it tolerates (set writes_allow_unordered = true in the dataset file \
                 if it does)",
                dataset.name
            ),
        });
    }
    // RocksDB refuses a range delete beside a row cache ("Not implemented:
    // DeleteRange is not compatible with row cache").
    if dataset.deletes_ranges() {
        held.push(Held {
            name: "row_cache_share",
            value: Value::Float(0.0),
            why: format!(
                "dataset `{}` deletes key ranges, which RocksDB refuses beside a row cache (DeleteRange is not \
                 compatible with row cache)",
                dataset.name
            ),
        });
    }
    held
}

impl Engine for RocksDb {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn params(&self) -> Vec<ParamDoc> {
        knob::docs(KNOBS)
    }

    /// RocksDB's defaults fitted to the budget: every option at its default,
    /// the memtables at their default 2 x 64 MiB as a share of the budget (at
    /// most a quarter of a small budget), and a block cache of a third of it.
    fn defaults(&self, budget: u64) -> Candidate {
        knob::defaults(KNOBS, budget)
    }

    /// RocksDB as shipped differs from the fitted defaults in its block
    /// cache: 32 MiB whatever the budget. As a share of the full budget it
    /// scales like any cache, so a scaled study keeps its ratio to the data.
    fn shipped_defaults(&self, budget: u64) -> Option<(Candidate, String)> {
        let mut candidate = self.defaults(budget);
        let share = (SHIPPED_BLOCK_CACHE as f64 / budget as f64).min(1.0);
        candidate.insert("block_cache_share".into(), Value::Float(share));
        let why = format!(
            "RocksDB as shipped: the fitted defaults but for the block cache, RocksDB's own {} whatever the budget, \
             where the fitted defaults give it a third of the budget",
            ByteSize(SHIPPED_BLOCK_CACHE)
        );
        Some((candidate, why))
    }

    fn resolve(&self, candidate: &Candidate, budget: u64) -> Result<Resolved, EngineError> {
        Ok(Build::new(candidate, budget)?.resolved())
    }

    /// The dataset's own rules for this engine: see [`held`].
    fn held(&self, dataset: &Dataset) -> Vec<Held> {
        held(dataset)
    }

    fn open(&self, candidate: &Candidate, budget: u64, dir: &Path) -> anyhow::Result<Box<dyn KvStore>> {
        Ok(Box::new(RocksStore::open(dir, Build::new(candidate, budget)?)?))
    }

    /// RocksDB writes the file itself while opening a scratch database, so
    /// every field is exactly as RocksDB spells and loads it. The portable
    /// file keeps the lines that differ from what RocksDB writes for its own
    /// defaults: an option this RocksDB added since an older one (which
    /// that one would refuse) stays out unless kvtune changed it.
    fn options_file(
        &self,
        candidate: &Candidate,
        budget: u64,
        scratch: &Path,
    ) -> anyhow::Result<OptionsFiles> {
        std::fs::create_dir_all(scratch)
            .with_context(|| format!("making the scratch directory {}", scratch.display()))?;
        let dir = tempfile::tempdir_in(scratch)
            .with_context(|| format!("making a scratch directory in {}", scratch.display()))?;
        let build = Build::new(candidate, budget)?;
        let (cache, row_cache) = (build.block_cache_size, build.row_cache_size);
        let set: BTreeSet<String> = build.resolved().options.keys().cloned().collect();
        let tuned = dir.path().join("tuned");
        drop(RocksStore::open(&tuned, build)?);
        let stock = dir.path().join("stock");
        let mut plain = Options::default();
        plain.create_if_missing(true);
        drop(DB::open(&plain, &stock).with_context(|| format!("opening RocksDB in {}", stock.display()))?);
        let (tuned, stock) = (written_options(&tuned)?, written_options(&stock)?);
        let mut banner = format!(
            "# RocksDB does not write the block cache into OPTIONS files: create an LRU cache of\n\
             # block_cache_size = {cache} bytes ({}) and pass it when loading, e.g. Options::load_latest(dir, env,\n\
             # false, Cache::new_lru_cache({cache})) in Rust or LoadOptionsFromFile(config_options, path, &db_opts,\n\
             # &cf_descs, &cache) in C++. (load_latest reads a database directory: copy this file in as OPTIONS-000001.)\n",
            ByteSize(cache),
        );
        if row_cache > 0 {
            banner += &format!(
                "# Nor the row cache: create an LRU cache of row_cache_size = {row_cache} bytes ({}) and set it on the\n\
                 # loaded options, e.g. options.set_row_cache(&Cache::new_lru_cache({row_cache})) in Rust or\n\
                 # db_opts.row_cache = NewLRUCache({row_cache}) in C++.\n",
                ByteSize(row_cache),
            );
        }
        let portable = format!(
            "{banner}# Portable: only the options kvtune sets or that differ from RocksDB's defaults, so a RocksDB\n\
             # older than {} that refuses options it does not know loads it too; every other option is that\n\
             # RocksDB's default.\n{}",
            rocksdb_version(&tuned).unwrap_or("this one"),
            differing(&tuned, &stock, &set)
        );
        Ok(vec![
            OptionsFile { name: "OPTIONS", comment: "#", text: banner + &tuned },
            OptionsFile { name: "OPTIONS-portable", comment: "#", text: portable },
        ])
    }
}

/// RocksDB options as kvtune runs them: what a Rust program opens its
/// database with. The caches are inside `options` already; they are here
/// too so a program can watch their usage.
pub struct Tuned {
    pub options: Options,
    pub block_cache: Option<rocksdb::Cache>,
    pub row_cache: Option<rocksdb::Cache>,
    /// With a prefix extractor: the prefix length, in bytes, within which
    /// the application should read with `ReadOptions::set_prefix_same_as_start`
    /// (reads that cross prefixes must not), if the candidate asks so.
    pub prefix_bounded_reads: Option<usize>,
}

/// The RocksDB options of `candidate` (a preset's `[candidate]`) at a
/// budget of `budget` bytes, each option by its scaling rule, caches made.
///
/// ```
/// use kvtune::engine::rocksdb::options;
/// use kvtune::report::Preset;
///
/// let preset = Preset::load("examples/spork-128GiB.preset.toml".as_ref())?;
/// let tuned = options(&preset.candidate, preset.budget_bytes)?;
/// let dir = tempfile::tempdir()?;
/// let mut db_options = tuned.options;
/// db_options.create_if_missing(true);
/// let db = rocksdb::DB::open(&db_options, dir.path())?;
/// db.put(b"register", b"value")?;
/// assert_eq!(tuned.block_cache.map(|c| c.get_usage() < 1 << 20), Some(true));
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn options(candidate: &Candidate, budget: u64) -> Result<Tuned, EngineError> {
    let build = Build::new(candidate, budget)?;
    let prefix_bounded_reads =
        (build.prefix_len > 0 && build.prefix_bounded_reads).then_some(build.prefix_len);
    let (options, caches) = build.into_options();
    Ok(Tuned { options, block_cache: caches.block, row_cache: caches.row, prefix_bounded_reads })
}

/// The newest OPTIONS file RocksDB wrote in database directory `dir`.
fn written_options(dir: &Path) -> anyhow::Result<String> {
    let newest = std::fs::read_dir(dir)?
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

/// The RocksDB version an OPTIONS file names.
fn rocksdb_version(text: &str) -> Option<&str> {
    text.lines().find_map(|l| l.trim().strip_prefix("rocksdb_version="))
}

/// `[section] key` to value, for every `key=value` line of an OPTIONS file.
fn options_lines(text: &str) -> BTreeMap<String, String> {
    let mut section = String::new();
    let mut lines = BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.starts_with('#')) {
        if line.starts_with('[') {
            section = line.to_string();
        } else if let Some((key, value)) = line.split_once('=') {
            lines.insert(format!("{section} {key}"), value.to_string());
        }
    }
    lines
}

/// OPTIONS text `tuned` without the lines that `stock` holds alike, except
/// the options kvtune set (in `set`: an older RocksDB's default may differ
/// from this one's); every section heading and the `[Version]` section stay.
fn differing(tuned: &str, stock: &str, set: &BTreeSet<String>) -> String {
    let stock = options_lines(stock);
    let mut section = String::new();
    let mut kept = String::new();
    for line in tuned.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            section = trimmed.to_string();
        } else if let Some((key, value)) = trimmed.split_once('=') {
            let alike = stock.get(&format!("{section} {key}")).is_some_and(|v| v == value);
            if alike && section != "[Version]" && !set.contains(key) {
                continue;
            }
        }
        kept.push_str(line);
        kept.push('\n');
    }
    kept
}

/// Longest kvtune waits for RocksDB's background work to finish.
const SETTLE_LIMIT: Duration = Duration::from_secs(3600);

/// A running RocksDB database.
struct RocksStore {
    db: DB,
    dir: PathBuf,
    options: Options,
    caches: Caches,
    /// The prefix extractor's length, 0 for none.
    prefix_len: usize,
    /// Reads within an extractor prefix run with `prefix_same_as_start`.
    prefix_bounded_reads: bool,
}

impl RocksStore {
    fn open(dir: &Path, build: Build) -> anyhow::Result<Self> {
        let (prefix_len, prefix_bounded_reads) = (build.prefix_len, build.prefix_bounded_reads);
        let (options, caches) = build.into_options();
        let db = DB::open(&options, dir).with_context(|| format!("opening RocksDB in {}", dir.display()))?;
        Ok(RocksStore { db, dir: dir.to_path_buf(), options, caches, prefix_len, prefix_bounded_reads })
    }

    /// How an iterator from `key` that stays within its first `within`
    /// bytes reads. With a prefix extractor, RocksDB's default iterator is
    /// in prefix mode, whose results past the seek key's prefix are
    /// undefined: a read bounded by a prefix at least the extractor's runs
    /// prefix-bounded (`prefix_same_as_start`) where the candidate asks so,
    /// every other read in total order, as an application unaware of the
    /// extractor must.
    fn iterator_options(&self, key: &[u8], within: usize) -> ReadOptions {
        let mut read = ReadOptions::default();
        if self.prefix_len > 0 {
            let bounded =
                self.prefix_bounded_reads && within >= self.prefix_len && key.len() >= self.prefix_len;
            match bounded {
                true => read.set_prefix_same_as_start(true),
                false => read.set_total_order_seek(true),
            }
        }
        read
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
        let mut it = self.db.raw_iterator_opt(self.iterator_options(key, prefix_len));
        it.seek_for_prev(key);
        it.status()?;
        let prefix = &key[..prefix_len.min(key.len())];
        Ok(match (it.key(), it.value()) {
            (Some(k), Some(v)) if k.starts_with(prefix) => Read { entries: 1, bytes: v.len() as u64 },
            _ => Read::default(),
        })
    }

    fn scan(&mut self, key: &[u8], limit: usize, prefix_len: usize) -> anyhow::Result<Read> {
        let mut it = self.db.raw_iterator_opt(self.iterator_options(key, prefix_len));
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
            row_cache: self.caches.row.as_ref().map_or(0, |c| c.get_usage() as u64),
        }
    }

    fn disk_bytes(&self) -> u64 {
        dir_size(&self.dir)
    }

    fn metrics(&self) -> EngineMetrics {
        let t = |ticker| self.options.get_ticker_count(ticker);
        let seeks_filtered = t(Ticker::LastLevelSeekFiltered) + t(Ticker::NonLastLevelSeekFiltered);
        EngineMetrics {
            flush_bytes: t(Ticker::FlushWriteBytes),
            compaction_bytes: t(Ticker::CompactWriteBytes),
            blob_bytes: t(Ticker::BlobDbBlobFileBytesWritten),
            stall_micros: t(Ticker::StallMicros),
            block_cache_hits: t(Ticker::BlockCacheHit),
            block_cache_misses: t(Ticker::BlockCacheMiss),
            // Filters of point reads (whole keys, prefixes) and of prefix-bounded seeks alike.
            bloom_useful: t(Ticker::BloomFilterUseful) + t(Ticker::BloomFilterPrefixUseful) + seeks_filtered,
            bloom_checked: t(Ticker::BloomFilterUseful)
                + t(Ticker::BloomFilterFullPositive)
                + t(Ticker::BloomFilterPrefixChecked)
                + seeks_filtered
                + t(Ticker::LastLevelSeekFilterMatch)
                + t(Ticker::NonLastLevelSeekFilterMatch),
            live_keys_estimate: self.property(properties::ESTIMATE_NUM_KEYS),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::budget::{GIB, MIB};

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
        assert_eq!(option(&r, "compression"), Value::from("lz4"));
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

    /// The defaults at `budget` with `settings` changed.
    fn with(budget: u64, settings: &[(&str, Value)]) -> Candidate {
        let mut c = RocksDb.defaults(budget);
        c.extend(settings.iter().map(|(k, v)| (k.to_string(), v.clone())));
        c
    }

    /// The OPTIONS file RocksDB writes for `candidate`.
    fn options_file(candidate: &Candidate, budget: u64) -> String {
        let scratch = tempfile::tempdir().unwrap();
        RocksDb.options_file(candidate, budget, scratch.path()).unwrap().swap_remove(0).text
    }

    fn has_line(text: &str, line: &str) -> bool {
        text.lines().any(|l| l.trim() == line)
    }

    #[test]
    fn each_new_knob_reaches_rocksdb() {
        let partitioned = with(
            GIB,
            &[
                ("prefix_len", Value::Int(33)),
                ("memtable_prefix_bloom_ratio", Value::Float(0.1)),
                ("whole_key_filtering", Value::Bool(false)),
                ("optimize_filters_for_hits", Value::Bool(true)),
                ("level_compaction_dynamic_level_bytes", Value::Bool(false)),
                ("cache_index_and_filter_blocks", Value::Bool(true)),
                ("pin_l0_filter_and_index_blocks_in_cache", Value::Bool(true)),
                ("index_type", Value::from("two_level")),
                ("data_block_index_type", Value::from("binary_and_hash")),
                ("bloom_bits", Value::Int(10)),
                ("filter", Value::from("ribbon")),
                ("compaction_readahead_size", Value::from(4 * MIB)),
                ("bytes_per_sync", Value::from(MIB)),
                ("max_bytes_for_level_multiplier", Value::Float(8.0)),
                ("enable_pipelined_write", Value::Bool(true)),
            ],
        );
        let text = options_file(&partitioned, GIB);
        for line in [
            "prefix_extractor=rocksdb.FixedPrefix.33",
            "memtable_prefix_bloom_size_ratio=0.100000",
            "whole_key_filtering=false",
            "optimize_filters_for_hits=true",
            "level_compaction_dynamic_level_bytes=false",
            "cache_index_and_filter_blocks=true",
            "pin_l0_filter_and_index_blocks_in_cache=true",
            "index_type=kTwoLevelIndexSearch",
            "partition_filters=true",
            "data_block_index_type=kDataBlockBinaryAndHash",
            "filter_policy=ribbonfilter",
            "compaction_readahead_size=4194304",
            "bytes_per_sync=1048576",
            "max_bytes_for_level_multiplier=8.000000",
            "enable_pipelined_write=true",
            "unordered_write=false",
        ] {
            assert!(has_line(&text, line), "{line} is not in\n{text}");
        }
        let resolved = resolve(&partitioned, GIB).unwrap();
        assert!(resolved.adjusted.is_empty(), "{:?}", resolved.adjusted);
        assert_eq!(option(&resolved, "prefix_bounded_reads"), Value::Bool(false));

        let hashed = with(
            GIB,
            &[
                ("prefix_len", Value::Int(9)),
                ("index_type", Value::from("hash")),
                ("bloom_bits", Value::Int(10)),
                ("unordered_write", Value::Bool(true)),
                ("enable_pipelined_write", Value::Bool(true)),
                ("row_cache_share", Value::Float(0.05)),
            ],
        );
        let text = options_file(&hashed, GIB);
        for line in [
            "prefix_extractor=rocksdb.FixedPrefix.9",
            "index_type=kHashSearch",
            "partition_filters=false",
            "filter_policy=bloomfilter",
            "unordered_write=true",
            // RocksDB refuses both: the unordered writes run.
            "enable_pipelined_write=false",
        ] {
            assert!(has_line(&text, line), "{line} is not in\n{text}");
        }
        // RocksDB writes no cache into OPTIONS: the banner says how to make the row cache.
        assert!(text.contains(&format!("row_cache_size = {}", GIB / 20)), "{text}");
        let resolved = resolve(&hashed, GIB).unwrap();
        assert_eq!(resolved.candidate["enable_pipelined_write"], Value::Bool(false));
        assert!(
            resolved.adjusted.iter().any(|a| a.param == "enable_pipelined_write"),
            "{:?}",
            resolved.adjusted
        );
    }

    #[test]
    fn a_blob_threshold_without_blob_files_runs_as_the_default() {
        let threshold = |blobs: bool| {
            let c =
                with(GIB, &[("enable_blob_files", Value::Bool(blobs)), ("min_blob_size", Value::Int(4096))]);
            resolve(&c, GIB).unwrap()
        };
        let (off, on) = (threshold(false), threshold(true));
        assert_eq!(option(&off, "min_blob_size"), Value::Int(0));
        assert_eq!(off.candidate["min_blob_size"], Value::Int(0), "recorded as it ran");
        assert_eq!(off.options, resolve(&RocksDb.defaults(GIB), GIB).unwrap().options, "the defaults' run");
        assert!(off.adjusted.iter().any(|a| a.param == "min_blob_size"), "{:?}", off.adjusted);
        assert_eq!(option(&on, "min_blob_size"), Value::Int(4096));
        assert!(on.adjusted.is_empty(), "{:?}", on.adjusted);
    }

    #[test]
    fn the_defaults_candidate_runs_rocksdbs_own_options() {
        let budget = 128 * GIB;
        let ours = options_lines(&options_file(&RocksDb.defaults(budget), budget));
        let scratch = tempfile::tempdir().unwrap();
        let mut plain = Options::default();
        plain.create_if_missing(true);
        drop(DB::open(&plain, scratch.path()).unwrap());
        let file = std::fs::read_dir(scratch.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .find(|e| e.file_name().to_string_lossy().starts_with("OPTIONS-"))
            .unwrap();
        let theirs = options_lines(&std::fs::read_to_string(file.path()).unwrap());
        let keys = [
            // Added with the prefix, filter, index, I/O and write knobs.
            "prefix_extractor",
            "memtable_prefix_bloom_size_ratio",
            "memtable_whole_key_filtering",
            "whole_key_filtering",
            "optimize_filters_for_hits",
            "level_compaction_dynamic_level_bytes",
            "max_bytes_for_level_multiplier",
            "pin_l0_filter_and_index_blocks_in_cache",
            "pin_top_level_index_and_filter",
            "index_type",
            "partition_filters",
            "metadata_block_size",
            "data_block_index_type",
            "filter_policy",
            "compaction_readahead_size",
            "bytes_per_sync",
            "wal_bytes_per_sync",
            "enable_pipelined_write",
            "unordered_write",
            // And the ones before them, at 128 GiB.
            "write_buffer_size",
            "max_write_buffer_number",
            "min_write_buffer_number_to_merge",
            "target_file_size_base",
            "max_bytes_for_level_base",
            "level0_file_num_compaction_trigger",
            "level0_slowdown_writes_trigger",
            "level0_stop_writes_trigger",
            "compaction_style",
            "compression",
            "bottommost_compression",
            "block_size",
            "cache_index_and_filter_blocks",
            "use_direct_reads",
            "allow_mmap_reads",
            "max_background_jobs",
            "max_subcompactions",
            "enable_blob_files",
            "min_blob_size",
        ];
        for key in keys {
            let pick = |lines: &BTreeMap<String, String>| -> Vec<(String, String)> {
                lines
                    .iter()
                    .filter(|(k, _)| k.ends_with(&format!(" {key}")))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            };
            let (a, b) = (pick(&ours), pick(&theirs));
            assert!(!b.is_empty(), "{key} is not in RocksDB's OPTIONS file");
            assert_eq!(a, b, "{key}");
        }
        let resolved = resolve(&RocksDb.defaults(budget), budget).unwrap();
        assert_eq!(resolved.memory.row_cache, 0);
        assert_eq!(option(&resolved, "prefix_bounded_reads"), Value::Bool(false));
        assert!(resolved.adjusted.is_empty(), "{:?}", resolved.adjusted);
    }

    #[test]
    fn the_memory_model_counts_the_row_cache_filters_and_indexes() {
        let memory = |settings: &[(&str, Value)]| resolve(&with(GIB, settings), GIB).unwrap().memory;
        let shape = crate::budget::Shape { keys: 10_000_000, user_bytes: 4 * GIB };

        let row = memory(&[("row_cache_share", Value::Float(0.1))]);
        let plain = memory(&[]);
        // The cache's capacity and its handles' slack, 30% more.
        let charged = (GIB as f64 * 0.1) as u64;
        assert_eq!(row.row_cache, charged + (charged as f64 * 0.3) as u64);
        assert_eq!(row.total(shape), plain.total(shape) + row.row_cache);
        let why = memory(&[("row_cache_share", Value::Float(0.7))]).misfit(shape, GIB).unwrap();
        assert!(why.contains("row cache 931.84 MiB"), "{why}");

        let bits = ("bloom_bits", Value::Int(10));
        let bloom = memory(std::slice::from_ref(&bits)).outside_cache_per_key;
        assert_eq!(bloom, 1.25);
        let ribbon = memory(&[bits.clone(), ("filter", Value::from("ribbon"))]).outside_cache_per_key;
        assert!((ribbon - 0.875).abs() < 1e-9, "{ribbon}");
        // Whole keys and prefixes both go in the filter; prefixes alone, or nothing without an extractor.
        let prefix = ("prefix_len", Value::Int(33));
        assert_eq!(memory(&[bits.clone(), prefix.clone()]).outside_cache_per_key, 2.5);
        let prefixes_only = [bits.clone(), prefix.clone(), ("whole_key_filtering", Value::Bool(false))];
        assert_eq!(memory(&prefixes_only).outside_cache_per_key, 1.25);
        assert_eq!(
            memory(&[bits.clone(), ("whole_key_filtering", Value::Bool(false))]).outside_cache_per_key,
            0.0
        );
        // No last-level filters: the upper levels' share only.
        let hits =
            memory(&[bits.clone(), ("optimize_filters_for_hits", Value::Bool(true))]).outside_cache_per_key;
        assert!((hits - 0.25).abs() < 1e-9, "{hits}");
        // A two-level index keeps only its top level beside the cache; a hash index adds its buckets.
        let two_level = memory(&[bits.clone(), ("index_type", Value::from("two_level"))]);
        assert!(two_level.outside_cache_per_key < bloom / 50.0);
        assert!(two_level.outside_cache_per_byte < plain.outside_cache_per_byte / 50.0);
        let hash = memory(&[bits.clone(), prefix.clone(), ("index_type", Value::from("hash"))]);
        assert_eq!(hash.outside_cache_per_key, 2.5 + 8.0);
        let cached_hash = memory(&[
            prefix.clone(),
            ("index_type", Value::from("hash")),
            ("cache_index_and_filter_blocks", Value::Bool(true)),
        ]);
        assert_eq!(cached_hash.outside_cache_per_key, 8.0);
        // Pinned L0 blocks beyond a tiny cache are memory too; inside a normal one they are not.
        let pinned = |share: f64| {
            memory(&[
                bits.clone(),
                ("block_cache_share", Value::Float(share)),
                ("cache_index_and_filter_blocks", Value::Bool(true)),
                ("pin_l0_filter_and_index_blocks_in_cache", Value::Bool(true)),
            ])
            .overhead
        };
        assert!(pinned(0.0001) > plain.overhead + 10 * MIB, "{}", pinned(0.0001));
        assert_eq!(pinned(0.3), plain.overhead);
    }

    #[test]
    fn the_memory_model_counts_read_ahead_buffers_under_direct_io() {
        let memory = |settings: &[(&str, Value)]| resolve(&with(GIB, settings), GIB).unwrap().memory;
        let direct = ("load_mode", Value::from("direct"));
        // Buffered reads read ahead into the page cache: nothing to count.
        assert_eq!(memory(&[]).read_buffers, 0);
        assert_eq!(memory(&[("load_mode", Value::from("mmap"))]).read_buffers, 0);
        // The defaults' one compaction thread: an L0 file each up to the trigger (4), the level below, two more.
        assert_eq!(memory(std::slice::from_ref(&direct)).read_buffers, 7 * 2 * MIB);
        assert_eq!(memory(&[direct.clone(), ("compaction_readahead_size", Value::Int(0))]).read_buffers, 0);
        // Subcompactions each read the L0 inputs; six jobs compact on five threads.
        let wide = memory(&[
            direct,
            ("max_subcompactions", Value::Int(4)),
            ("max_background_jobs", Value::Int(6)),
            ("level0_file_num_compaction_trigger", Value::Int(10)),
        ]);
        assert_eq!(wide.read_buffers, (4 * 11 + 2 * 5) * 2 * MIB);
        let shape = crate::budget::Shape { keys: 1_000_000, user_bytes: 64 * MIB };
        let why = wide.misfit(shape, 128 * MIB).unwrap();
        assert!(why.contains("read-ahead buffers 108 MiB"), "{why}");
    }

    #[test]
    fn settings_that_cannot_run_as_asked_are_recorded_as_they_run() {
        let r = resolve(
            &with(
                GIB,
                &[
                    ("prefix_bounded_reads", Value::Bool(true)),
                    ("index_type", Value::from("hash")),
                    ("memtable_prefix_bloom_ratio", Value::Float(0.1)),
                ],
            ),
            GIB,
        )
        .unwrap();
        assert_eq!(r.candidate["prefix_bounded_reads"], Value::Bool(false));
        assert_eq!(r.candidate["index_type"], Value::from("binary"));
        assert_eq!(r.candidate["memtable_prefix_bloom_ratio"], Value::Float(0.0));
        assert_eq!(option(&r, "prefix_bounded_reads"), Value::Bool(false));
        assert_eq!(option(&r, "index_type"), Value::from("binary"));
        assert_eq!(r.adjusted.len(), 3, "{:?}", r.adjusted);
        assert!(r.adjusted.iter().all(|a| a.why.contains("prefix extractor")), "{:?}", r.adjusted);

        let bounded =
            with(GIB, &[("prefix_len", Value::Int(33)), ("prefix_bounded_reads", Value::Bool(true))]);
        let r = resolve(&bounded, GIB).unwrap();
        assert_eq!(option(&r, "prefix_bounded_reads"), Value::Bool(true));
        assert_eq!(option(&r, "prefix_extractor"), Value::from("rocksdb.FixedPrefix.33"));

        let big =
            with(GIB, &[("memtable_prefix_bloom_ratio", Value::Float(0.5)), ("prefix_len", Value::Int(8))]);
        assert_eq!(resolve(&big, GIB).unwrap().candidate["memtable_prefix_bloom_ratio"], Value::Float(0.25));
    }

    #[test]
    fn unordered_writes_need_the_datasets_leave() {
        let unordered = with(GIB, &[("unordered_write", Value::Bool(true))]);
        let mut spork = Dataset::find("spork").unwrap();
        let err = RocksDb.check_dataset(&unordered, &spork).unwrap_err().to_string();
        assert!(err.contains("unordered_write") && err.contains("writes_allow_unordered = true"), "{err}");
        assert!(RocksDb.check_dataset(&RocksDb.defaults(GIB), &spork).is_ok());
        spork.writes_allow_unordered = true;
        assert!(RocksDb.check_dataset(&unordered, &spork).is_ok());
    }

    #[test]
    fn a_row_cache_is_not_for_a_dataset_that_deletes_ranges() {
        let row_cache = with(GIB, &[("row_cache_share", Value::Float(0.05))]);
        let tbs = Dataset::find("tbs").unwrap();
        let err = RocksDb.check_dataset(&row_cache, &tbs).unwrap_err().to_string();
        assert!(err.contains("deletes key ranges") && err.contains("row_cache_share = 0"), "{err}");
        assert!(RocksDb.check_dataset(&RocksDb.defaults(GIB), &tbs).is_ok());
        assert!(RocksDb.check_dataset(&row_cache, &Dataset::find("spork").unwrap()).is_ok());
        // Why: RocksDB itself refuses a range delete beside a row cache.
        let dir = tempfile::tempdir().unwrap();
        let s = store(&with(64 * MIB, &[("row_cache_share", Value::Float(0.05))]), dir.path());
        let mut drop = WriteBatch::default();
        drop.delete_range(b"a", b"c");
        let refused = s.db.write(drop).unwrap_err().to_string();
        assert!(refused.contains("row cache"), "{refused}");
    }

    /// A store for `candidate` at a small budget, in `dir`.
    fn store(candidate: &Candidate, dir: &Path) -> RocksStore {
        RocksStore::open(dir, Build::new(candidate, 64 * MIB).unwrap()).unwrap()
    }

    #[test]
    fn the_row_cache_serves_repeated_point_reads() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(&with(64 * MIB, &[("row_cache_share", Value::Float(0.05))]), dir.path());
        for i in 0..100u32 {
            s.db.put(i.to_be_bytes(), [7u8; 100]).unwrap();
        }
        s.flush().unwrap();
        for _ in 0..3 {
            assert_eq!(s.get(&5u32.to_be_bytes()).unwrap(), Read { entries: 1, bytes: 100 });
        }
        assert!(s.options.get_ticker_count(Ticker::RowCacheHit) >= 2);
        assert!(s.memory().row_cache > 0);
    }

    #[test]
    fn prefix_bounded_reads_find_what_total_order_reads_find() {
        const PREFIX: usize = 4;
        let bounded = with(
            64 * MIB,
            &[
                ("prefix_len", Value::Int(PREFIX as i64)),
                ("prefix_bounded_reads", Value::Bool(true)),
                ("memtable_prefix_bloom_ratio", Value::Float(0.1)),
                ("bloom_bits", Value::Int(10)),
                ("whole_key_filtering", Value::Bool(false)),
                ("index_type", Value::from("hash")),
            ],
        );
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut fast = store(&bounded, a.path());
        let mut plain = store(&RocksDb.defaults(64 * MIB), b.path());
        let mut rng = StdRng::seed_from_u64(7);
        // Keys: a 4-byte prefix from a few hundred, a suffix of 0-6 bytes;
        // some keys shorter than the prefix. Three flushed rounds, the last
        // in the memtable, with overwrites and deletes.
        let key = |rng: &mut StdRng| -> Vec<u8> {
            let mut k = vec![b'k', b'0' + rng.random_range(0..8u8), rng.random_range(0..40u8)];
            if rng.random_bool(0.95) {
                k.push(rng.random_range(0..4u8));
                let suffix = rng.random_range(0..=6usize);
                k.extend((0..suffix).map(|_| rng.random_range(0..4u8)));
            }
            k
        };
        for round in 0..4 {
            for _ in 0..3000 {
                let k = key(&mut rng);
                let value = vec![round as u8; rng.random_range(1..64usize)];
                let delete = rng.random_bool(0.1);
                for s in [&mut fast, &mut plain] {
                    match delete {
                        true => s.db.delete(&k).unwrap(),
                        false => s.db.put(&k, &value).unwrap(),
                    }
                }
            }
            if round < 3 {
                fast.flush().unwrap();
                plain.flush().unwrap();
            }
        }
        let mut found = 0;
        for _ in 0..4000 {
            let k = key(&mut rng);
            for within in [0, 2, PREFIX, PREFIX + 1, PREFIX + 3] {
                let limit = rng.random_range(1..20usize);
                let back = fast.seek_for_prev(&k, within).unwrap();
                assert_eq!(back, plain.seek_for_prev(&k, within).unwrap(), "seek_for_prev({k:?}, {within})");
                let scan = fast.scan(&k, limit, within).unwrap();
                assert_eq!(scan, plain.scan(&k, limit, within).unwrap(), "scan({k:?}, {limit}, {within})");
                if within >= PREFIX {
                    found += back.entries + scan.entries;
                }
            }
        }
        assert!(found > 1000, "too few prefix-bounded reads found anything to compare: {found}");
        // Prefix-bounded seeks checked the prefix filters and skipped files by them.
        let metrics = fast.metrics();
        assert!(metrics.bloom_useful > 0 && metrics.bloom_checked > metrics.bloom_useful, "{metrics:?}");
        assert_eq!(plain.metrics().bloom_checked, 0);
    }

    #[test]
    fn the_built_in_space_and_its_seeds_are_valid() {
        let space = crate::space::Space::find("rocksdb", &RocksDb.param_names()).unwrap();
        RocksDb.check_space(&space, GIB).unwrap();
        assert!(space.seeds.len() >= 4, "{:?}", space.seeds);
        for (name, seed) in &space.seeds {
            let full = RocksDb.complete(seed, 128 * GIB);
            let r = resolve(&full, 128 * GIB).unwrap_or_else(|e| panic!("seed {name}: {e}"));
            // A seed runs as written: nothing in it is adjusted.
            assert!(r.adjusted.is_empty(), "seed {name}: {:?}", r.adjusted);
            let spork = Dataset::find("spork").unwrap();
            RocksDb.check_dataset(&full, &spork).unwrap_or_else(|e| panic!("seed {name}: {e}"));
        }
        assert!(
            space.seed_when["page-cache"].min_disk_ratio > Some(0.65),
            "spork's database is 0.65 times the budget"
        );
    }
}
