//! Every RocksDB parameter kvtune can search, declared once: name, help,
//! kind, default, and how a value sets RocksDB's `Options` and
//! `BlockBasedOptions`. The defaults, the help, the absolute option set a
//! trial records, the memory model and the OPTIONS export all come from this
//! table, so adding an option is adding one entry.
//!
//! Memory parameters are shares of the budget; table and level sizes are
//! multiples of the memtable size so the LSM keeps its shape when kvtune
//! scales a run. Entries are applied in order: a later one may read what an
//! earlier one set (the memtable size reads the memtable count).

use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, DBCompactionStyle, DBCompressionType, DataBlockIndexType,
    Options, SliceTransform,
};

use crate::budget::{ByteSize, MemoryModel, KIB, MIB};
use crate::engine::knob::{self, flag, float, int, text, Kind, Settings};
use crate::engine::{EngineError, Resolved, Scaling};
use crate::record::{Adjustment, OptionSet};
use crate::space::{Candidate, Value};

/// Memory of the trial process besides the cache, memtables and index: the
/// binary, RocksDB's table readers and arenas, the op generator. Measured
/// here as peak RSS minus cache and memtables at small budgets: ~10-16 MiB.
const PROCESS_OVERHEAD: u64 = 16 * MIB;

/// Memory of the row cache beyond the bytes it charges: its handles and the
/// allocator's slack on small values. Measured on mixgraph at 64 MiB: a row
/// cache charged 16 MiB raised the process's anonymous memory by about 4.6
/// MiB more than its charge, and such candidates were killed by the cgroup.
const ROW_CACHE_SLACK: f64 = 0.3;

/// Index memory per data block held outside the cache (a key and a handle).
const INDEX_BYTES_PER_BLOCK: f64 = 48.0;

/// The smallest table or level size kvtune sets.
const MIN_FILE_SIZE: u64 = 64 * KIB;

/// Memory of a Ribbon filter over a Bloom filter with the same false
/// positive rate: RocksDB's docs give about 30% less.
const RIBBON_SHARE: f64 = 0.7;

/// RocksDB's `metadata_block_size`: a partition of a two-level index or of
/// partitioned filters. Only the top level (an entry per partition) stays
/// beside the cache; the partitions go through it.
const METADATA_BLOCK_SIZE: f64 = 4096.0;

/// Memory of a hash index per key held outside the cache at worst: its
/// bucket and block arrays take a u32 or two per distinct prefix, and a
/// key may be its own prefix (most of spork's registers have one version).
const HASH_INDEX_BYTES_PER_KEY: f64 = 8.0;

/// Read-ahead buffers a compaction's inputs hold under direct I/O (buffered
/// reads read ahead into the page cache instead), each of
/// `compaction_readahead_size`: per subcompaction, an L0 file each up to the
/// trigger and the level below; two for every other compaction thread. Fits
/// what mixgraph at 64 and 128 MiB measured (anonymous memory over the same
/// option set with no read-ahead): 8.7 MiB where this gives 14 for the
/// defaults, 39 where it gives 42 for one compaction of 11 inputs beside four
/// others, and over 30 (killed) where it gives 30 to 92; it overstates a
/// four-way split of 11 inputs by about 2x (56 measured, 108 here).
fn compaction_read_buffers(subcompactions: u64, level0_trigger: u64, threads: u64) -> u64 {
    subcompactions * (level0_trigger + 1) + 2 * threads
}

/// One searchable RocksDB parameter.
pub(super) type Knob = knob::Knob<Build>;

const COMPRESSIONS: &[&str] = &["none", "snappy", "lz4", "zstd"];

/// The block cache RocksDB makes when a table is given none
/// (`BlockBasedTableOptions::block_cache`).
pub(super) const SHIPPED_BLOCK_CACHE: u64 = 32 * MIB;

pub(super) const KNOBS: &[Knob] = &[
    Knob {
        name: "block_cache_share",
        help: "block cache capacity as a share of the budget",
        kind: Kind::Share,
        scaling: Scaling::Budget,
        // A third of the budget: the tuning guide's rule of thumb, and what
        // anyone sizing a cache for a budget does first.
        default: |_| Value::Float(1.0 / 3.0),
        apply: |b, v| {
            b.block_cache_size = b.share(v);
            b.set_bytes("block_cache_size", b.block_cache_size, |_, _| {});
        },
    },
    Knob {
        name: "row_cache_share",
        help: "row cache (whole key-value pairs that point reads found, beside the block cache) as a share of the \
               budget, 0 for none",
        kind: Kind::Share,
        scaling: Scaling::Budget,
        // RocksDB has no row cache unless one is given.
        default: |_| Value::Float(0.0),
        apply: |b, v| {
            b.row_cache_size = b.share(v);
            b.set_bytes("row_cache_size", b.row_cache_size, |_, _| {});
        },
    },
    Knob {
        name: "max_write_buffer_number",
        help: "memtables per column family, active plus immutable",
        kind: Kind::Int { min: 2, max: 64 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(2),
        apply: |b, v| {
            b.max_write_buffer_number = int(v) as i32;
            b.set("max_write_buffer_number", int(v), |o| o.set_max_write_buffer_number(int(v) as i32));
        },
    },
    Knob {
        name: "memtable_share",
        help: "all memtables (write_buffer_size x max_write_buffer_number) as a share of the budget",
        kind: Kind::Share,
        scaling: Scaling::BudgetWithFloor,
        // RocksDB's 2 x 64 MiB, at most a quarter of a small budget.
        default: |budget| Value::Float((128.0 * MIB as f64 / budget as f64).min(0.25)),
        apply: |b, v| {
            let asked = b.share(v) / b.max_write_buffer_number as u64;
            let floor = memtable_floor(b.budget);
            b.write_buffer_size = asked.max(floor);
            if asked < floor {
                let ran = (floor * b.max_write_buffer_number as u64) as f64 / b.budget as f64;
                let why = format!(
                    "{} per memtable is below the floor at this budget, min(64 MiB, budget/32) = {}, so it ran \
                     at the floor; at another budget the same share runs by the same rule",
                    ByteSize(asked),
                    ByteSize(floor)
                );
                b.adjust("memtable_share", Value::Float(ran), why);
            }
            b.set_bytes("write_buffer_size", b.write_buffer_size, |o, size| {
                o.set_write_buffer_size(size as usize)
            });
        },
    },
    Knob {
        name: "min_write_buffer_number_to_merge",
        help: "immutable memtables merged into one flush",
        kind: Kind::Int { min: 1, max: 63 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(1),
        apply: |b, v| {
            // RocksDB needs a memtable left to write to while others merge.
            let merge = int(v).min(b.max_write_buffer_number as i64 - 1);
            if merge < int(v) {
                let why = "RocksDB needs at least one memtable left to write to: at most max_write_buffer_number - 1";
                b.replace("min_write_buffer_number_to_merge", Value::Int(merge), why.into());
            }
            b.set("min_write_buffer_number_to_merge", merge, |o| {
                o.set_min_write_buffer_number_to_merge(merge as i32)
            });
        },
    },
    Knob {
        name: "target_file_size_x_memtable",
        help: "target_file_size_base as a multiple of write_buffer_size",
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        scaling: Scaling::Memtable,
        default: |_| Value::Float(1.0),
        apply: |b, v| {
            b.set_bytes("target_file_size_base", b.times_memtable(v), Options::set_target_file_size_base)
        },
    },
    Knob {
        name: "level_base_x_memtable",
        help: "max_bytes_for_level_base as a multiple of write_buffer_size",
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        scaling: Scaling::Memtable,
        default: |_| Value::Float(4.0),
        apply: |b, v| {
            b.set_bytes(
                "max_bytes_for_level_base",
                b.times_memtable(v),
                Options::set_max_bytes_for_level_base,
            )
        },
    },
    Knob {
        name: "max_bytes_for_level_multiplier",
        help: "size ratio of adjacent levels (fanout): larger means fewer levels, more write amplification per level",
        kind: Kind::Float { min: 1.0, max: 100.0 },
        scaling: Scaling::Fixed,
        default: |_| Value::Float(10.0),
        apply: |b, v| {
            b.level_multiplier = float(v);
            b.set("max_bytes_for_level_multiplier", float(v), |o| o.set_max_bytes_for_level_multiplier(float(v)))
        },
    },
    Knob {
        name: "level_compaction_dynamic_level_bytes",
        help: "size levels from the last one up (RocksDB's default since 8.4), so about 90% of the data sits in \
               the last level",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(true),
        apply: |b, v| {
            b.set("level_compaction_dynamic_level_bytes", flag(v), |o| {
                o.set_level_compaction_dynamic_level_bytes(flag(v))
            })
        },
    },
    Knob {
        name: "level0_file_num_compaction_trigger",
        help: "L0 files that start a compaction (slowdown and stop triggers follow)",
        kind: Kind::Int { min: 1, max: 1000 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(4),
        apply: |b, v| {
            let trigger = int(v) as i32;
            // RocksDB's own slowdown (20) and stop (36) triggers, kept above the compaction trigger.
            let (slowdown, stop) = (20.max(trigger * 2), 36.max(trigger * 3));
            b.level0_trigger = trigger as u64;
            b.level0_slowdown_trigger = slowdown as u64;
            b.set("level0_file_num_compaction_trigger", trigger as i64, |o| {
                o.set_level_zero_file_num_compaction_trigger(trigger)
            });
            b.set("level0_slowdown_writes_trigger", slowdown as i64, |o| {
                o.set_level_zero_slowdown_writes_trigger(slowdown)
            });
            b.set("level0_stop_writes_trigger", stop as i64, |o| o.set_level_zero_stop_writes_trigger(stop));
        },
    },
    Knob {
        name: "compaction_style",
        help: "level or universal",
        kind: Kind::Choice(&["level", "universal"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("level"),
        apply: |b, v| {
            b.set("compaction_style", text(v), |o| {
                o.set_compaction_style(match text(v) {
                    "universal" => DBCompactionStyle::Universal,
                    _ => DBCompactionStyle::Level,
                })
            })
        },
    },
    Knob {
        name: "compression",
        help: "compression of every level but the last: none, snappy, lz4, zstd",
        kind: Kind::Choice(COMPRESSIONS),
        scaling: Scaling::Fixed,
        // RocksDB 11's default: LZ4 where it is built in, as here (its
        // GetDefaultCompressionType), else snappy.
        default: |_| Value::from("lz4"),
        apply: |b, v| b.set("compression", text(v), |o| o.set_compression_type(compression_type(text(v)))),
    },
    Knob {
        name: "bottommost_compression",
        help: "compression of the last level: same, none, snappy, lz4, zstd",
        kind: Kind::Choice(&["same", "none", "snappy", "lz4", "zstd"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("same"),
        apply: |b, v| {
            b.set("bottommost_compression", text(v), |o| {
                if text(v) != "same" {
                    o.set_bottommost_compression_type(compression_type(text(v)));
                }
            })
        },
    },
    Knob {
        name: "prefix_len",
        help: "prefix extractor: the first this many key bytes form a key's prefix (a fixed-prefix SliceTransform), \
               for prefix bloom filters, the memtable prefix bloom and hash indexes; 0 for none",
        kind: Kind::Int { min: 0, max: 255 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(0),
        apply: |b, v| {
            b.prefix_len = int(v) as usize;
            let name = match b.prefix_len {
                0 => "none".to_string(),
                len => format!("rocksdb.FixedPrefix.{len}"),
            };
            b.set("prefix_extractor", name.as_str(), |o| {
                if int(v) > 0 {
                    o.set_prefix_extractor(SliceTransform::create_fixed_prefix(int(v) as usize));
                }
            });
        },
    },
    Knob {
        name: "memtable_prefix_bloom_ratio",
        help: "memtable prefix bloom filter as a share of write_buffer_size (taken from the memtable's own \
               memory), at most 0.25; needs a prefix extractor; 0 for none",
        kind: Kind::Float { min: 0.0, max: 0.25 },
        scaling: Scaling::Fixed,
        default: |_| Value::Float(0.0),
        apply: |b, v| {
            let mut ratio = float(v);
            if ratio > 0.0 && b.prefix_len == 0 {
                ratio = 0.0;
                let why = "the memtable prefix bloom needs a prefix extractor (prefix_len > 0)";
                b.replace("memtable_prefix_bloom_ratio", Value::Float(0.0), why.into());
            }
            b.set("memtable_prefix_bloom_size_ratio", ratio, |o| o.set_memtable_prefix_bloom_ratio(ratio));
        },
    },
    Knob {
        name: "prefix_bounded_reads",
        help: "seeks and scans that stay within a key prefix as long as the extractor's or longer read with \
               ReadOptions::prefix_same_as_start, so prefix blooms and hash indexes skip what holds no key of \
               the prefix; the application must read the same way to get what was measured; needs prefix_len > 0",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        // RocksDB's ReadOptions default: prefix_same_as_start = false.
        default: |_| Value::Bool(false),
        apply: |b, v| {
            b.prefix_bounded_reads = flag(v) && b.prefix_len > 0;
            if flag(v) && b.prefix_len == 0 {
                let why = "prefix-bounded reads need a prefix extractor (prefix_len > 0): reads run in total order";
                b.replace("prefix_bounded_reads", Value::Bool(false), why.into());
            }
            b.set("prefix_bounded_reads", b.prefix_bounded_reads, |_| {});
        },
    },
    Knob {
        name: "bloom_bits",
        help: "filter bits per key (for Ribbon, the bits of a Bloom filter with the same false positive rate), 0 \
               for none",
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(0),
        apply: |b, v| {
            b.bloom_bits_per_key = float(v);
            b.set("bloom_bits_per_key", float(v), |_| {});
        },
    },
    Knob {
        name: "filter",
        help: "filter kind at bloom_bits per key: bloom, or ribbon (about 30% less memory for the same false \
               positive rate, more CPU to build)",
        kind: Kind::Choice(&["bloom", "ribbon"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("bloom"),
        apply: |b, v| {
            let bits = b.bloom_bits_per_key;
            b.ribbon = text(v) == "ribbon";
            let policy = match (bits > 0.0, b.ribbon) {
                (false, _) => "none",
                (true, false) => "bloom",
                (true, true) => "ribbon",
            };
            match policy {
                "bloom" => b.table.set_bloom_filter(bits, false),
                "ribbon" => b.table.set_ribbon_filter(bits),
                _ => {}
            }
            b.set("filter_policy", policy, |_| {});
        },
    },
    Knob {
        name: "whole_key_filtering",
        help: "put whole keys in the SST filters (point reads); off with a prefix extractor keeps only prefixes",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(true),
        apply: |b, v| {
            b.whole_key_filtering = flag(v);
            b.table.set_whole_key_filtering(flag(v));
            b.set("whole_key_filtering", flag(v), |_| {});
        },
    },
    Knob {
        name: "optimize_filters_for_hits",
        help: "no filters on the last level (about 90% less filter memory): for reads that mostly find their key",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |b, v| {
            b.optimize_filters_for_hits = flag(v);
            b.set("optimize_filters_for_hits", flag(v), |o| o.set_optimize_filters_for_hits(flag(v)));
        },
    },
    Knob {
        name: "block_size",
        help: "data block size in bytes",
        kind: Kind::Int { min: 256, max: i64::MAX },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(4096),
        apply: |b, v| {
            b.block_size = int(v) as u64;
            b.table.set_block_size(int(v) as usize);
            b.set("block_size", int(v), |_| {});
        },
    },
    Knob {
        name: "index_type",
        help: "SST index: binary (one index block), two_level (partitioned index and filters, whose partitions \
               go through the block cache) or hash (binary plus a prefix hash; needs a prefix extractor)",
        kind: Kind::Choice(&["binary", "two_level", "hash"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("binary"),
        apply: |b, v| {
            let mut index = text(v);
            if index == "hash" && b.prefix_len == 0 {
                index = "binary";
                let why = "RocksDB refuses a hash index without a prefix extractor (prefix_len > 0)";
                b.replace("index_type", Value::from("binary"), why.into());
            }
            b.index_type = match index {
                "two_level" => IndexType::TwoLevel,
                "hash" => IndexType::Hash,
                _ => IndexType::Binary,
            };
            let (rocksdb, partitioned) = match b.index_type {
                IndexType::Binary => (BlockBasedIndexType::BinarySearch, false),
                IndexType::TwoLevel => (BlockBasedIndexType::TwoLevelIndexSearch, true),
                IndexType::Hash => (BlockBasedIndexType::HashSearch, false),
            };
            b.table.set_index_type(rocksdb);
            b.table.set_partition_filters(partitioned);
            b.set("index_type", index, |_| {});
            b.set("partition_filters", partitioned, |_| {});
        },
    },
    Knob {
        name: "data_block_index_type",
        help: "index inside each data block: binary (search) or binary_and_hash (a hash of its keys too, for \
               faster point reads; about 1 byte per key in the block)",
        kind: Kind::Choice(&["binary", "binary_and_hash"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("binary"),
        apply: |b, v| {
            b.table.set_data_block_index_type(match text(v) {
                "binary_and_hash" => DataBlockIndexType::BinaryAndHash,
                _ => DataBlockIndexType::BinarySearch,
            });
            b.set("data_block_index_type", text(v), |_| {});
        },
    },
    Knob {
        name: "cache_index_and_filter_blocks",
        help: "keep index and filter blocks in the block cache instead of beside it",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |b, v| {
            let why = "RocksDB refuses to cache index and filter blocks without a block cache";
            let cached = b.flag_needing_block_cache("cache_index_and_filter_blocks", v, why);
            b.cache_index_and_filter_blocks = cached;
            b.table.set_cache_index_and_filter_blocks(cached);
            b.set("cache_index_and_filter_blocks", cached, |_| {});
        },
    },
    Knob {
        name: "pin_l0_filter_and_index_blocks_in_cache",
        help: "pin the index and filter blocks of L0 files in the block cache (with cached index and filter \
               blocks, or a two-level index's partitions): L0 reads never miss them",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |b, v| {
            let why = "RocksDB refuses to pin blocks in the cache without a block cache";
            let pin = b.flag_needing_block_cache("pin_l0_filter_and_index_blocks_in_cache", v, why);
            b.pin_l0 = pin;
            b.table.set_pin_l0_filter_and_index_blocks_in_cache(pin);
            b.set("pin_l0_filter_and_index_blocks_in_cache", pin, |_| {});
        },
    },
    Knob {
        name: "load_mode",
        help: "how SST files are read: pread, mmap or direct (O_DIRECT reads, flushes and compactions)",
        kind: Kind::Choice(&["pread", "mmap", "direct"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("pread"),
        apply: |b, v| {
            b.direct_io = text(v) == "direct";
            b.set("load_mode", text(v), |o| match text(v) {
                "mmap" => o.set_allow_mmap_reads(true),
                "direct" => {
                    o.set_use_direct_reads(true);
                    o.set_use_direct_io_for_flush_and_compaction(true);
                }
                _ => {}
            })
        },
    },
    Knob {
        name: "compaction_readahead_size",
        help: "bytes compactions read ahead of their inputs, 0 for none",
        kind: Kind::Int { min: 0, max: 1 << 30 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(2 * MIB as i64),
        apply: |b, v| {
            b.compaction_readahead = int(v) as u64;
            b.set_bytes("compaction_readahead_size", int(v) as u64, |o, n| {
                o.set_compaction_readahead_size(n as usize)
            })
        },
    },
    Knob {
        name: "bytes_per_sync",
        help: "SST writes are synced to disk in the background every this many bytes, smoothing writeback; 0 for \
               never (the OS decides)",
        kind: Kind::Int { min: 0, max: 1 << 30 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(0),
        apply: |b, v| b.set_bytes("bytes_per_sync", int(v) as u64, Options::set_bytes_per_sync),
    },
    Knob {
        name: "max_background_jobs",
        help: "flush and compaction threads",
        kind: Kind::Int { min: 1, max: 64 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(2),
        apply: |b, v| {
            b.background_jobs = int(v) as u64;
            b.set("max_background_jobs", int(v), |o| o.set_max_background_jobs(int(v) as i32))
        },
    },
    Knob {
        name: "max_subcompactions",
        help: "threads one compaction may split into",
        kind: Kind::Int { min: 1, max: 64 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(1),
        apply: |b, v| {
            b.subcompactions = int(v) as u64;
            b.set("max_subcompactions", int(v), |o| o.set_max_subcompactions(int(v) as u32))
        },
    },
    Knob {
        name: "unordered_write",
        help: "writes are acknowledged once in the WAL and their memtable, without waiting for earlier writes: more \
               concurrent write throughput, but readers may see a later write before an earlier one and snapshots \
               may change; only where the dataset declares writes_allow_unordered",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |b, v| {
            b.unordered_write = flag(v);
            b.set("unordered_write", flag(v), |o| o.set_unordered_write(flag(v)));
        },
    },
    Knob {
        name: "enable_pipelined_write",
        help: "pipeline WAL and memtable writes of successive write groups (concurrent writers)",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |b, v| {
            let mut pipelined = flag(v);
            if pipelined && b.unordered_write {
                pipelined = false;
                let why = "RocksDB refuses pipelined writes together with unordered writes: unordered writes run";
                b.replace("enable_pipelined_write", Value::Bool(false), why.into());
            }
            b.set("enable_pipelined_write", pipelined, |o| o.set_enable_pipelined_write(pipelined));
        },
    },
    Knob {
        name: "enable_blob_files",
        help: "key-value separation: large values go to blob files",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |b, v| {
            b.blob_files = flag(v);
            b.set("enable_blob_files", flag(v), |o| o.set_enable_blob_files(flag(v)));
        },
    },
    Knob {
        name: "min_blob_size",
        help: "values at least this large go to blob files when blobs are on",
        kind: Kind::Int { min: 0, max: i64::MAX },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(0),
        apply: |b, v| {
            // Without blob files the threshold changes nothing: it runs as
            // RocksDB's default, so two candidates that differ only in it
            // run alike and a preset does not show it changed.
            let mut size = int(v);
            if size != 0 && !b.blob_files {
                size = 0;
                let why = "values go to blob files only with enable_blob_files: the threshold ran as RocksDB's default";
                b.replace("min_blob_size", Value::Int(0), why.into());
            }
            b.set("min_blob_size", size, |o| o.set_min_blob_size(size as u64));
        },
    },
];

/// The smallest memtable kvtune sets: RocksDB's default 64 MiB, or a 32nd of
/// a smaller budget. Every flush has a fixed cost, so memtables scaled down
/// by the same factor as a scaled run's data would flush far more often per
/// byte than at full size and stall writes (seen here: 15 s of stalls in a
/// 22 s trial at 128 KiB memtables); the floor keeps the small memtables of
/// a scaled run out of that regime, at full size it is RocksDB's default.
pub fn memtable_floor(budget: u64) -> u64 {
    (64 * MIB).min(budget / 32).max(64 * KIB)
}

fn compression_type(name: &str) -> DBCompressionType {
    match name {
        "snappy" => DBCompressionType::Snappy,
        "lz4" => DBCompressionType::Lz4,
        "zstd" => DBCompressionType::Zstd,
        _ => DBCompressionType::None,
    }
}

impl Settings for Build {
    fn asked(&mut self) -> &mut Candidate {
        &mut self.candidate
    }

    /// Notes that a parameter runs at `ran` at every budget, and records it so.
    fn replace(&mut self, param: &str, ran: Value, why: String) {
        self.adjust(param, ran.clone(), why);
        self.candidate.insert(param.to_string(), ran);
    }
}

/// The SST index kinds kvtune sets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IndexType {
    Binary,
    TwoLevel,
    Hash,
}

/// RocksDB's options being built from a candidate, with what they record.
pub(super) struct Build {
    budget: u64,
    pub options: Options,
    pub table: BlockBasedOptions,
    /// What later knobs, the store and the memory model read.
    pub block_cache_size: u64,
    pub row_cache_size: u64,
    write_buffer_size: u64,
    max_write_buffer_number: i32,
    level_multiplier: f64,
    level0_trigger: u64,
    level0_slowdown_trigger: u64,
    /// Whether SST reads, flushes and compactions bypass the page cache.
    direct_io: bool,
    compaction_readahead: u64,
    background_jobs: u64,
    subcompactions: u64,
    /// The prefix extractor's length, 0 for none.
    pub prefix_len: usize,
    /// Whether reads within an extractor's prefix run prefix-bounded.
    pub prefix_bounded_reads: bool,
    bloom_bits_per_key: f64,
    ribbon: bool,
    whole_key_filtering: bool,
    optimize_filters_for_hits: bool,
    block_size: u64,
    index_type: IndexType,
    cache_index_and_filter_blocks: bool,
    pin_l0: bool,
    unordered_write: bool,
    /// Whether large values go to blob files (`min_blob_size` counts only then).
    blob_files: bool,
    /// The candidate as it runs.
    candidate: Candidate,
    /// RocksDB's absolute options as they run, and as people read them.
    ran: OptionSet,
    shown: Vec<(String, String)>,
    adjusted: Vec<Adjustment>,
}

impl Build {
    /// Applies every knob to RocksDB's defaults, in table order. Parameters
    /// the candidate leaves out take the defaults fitted to `budget`.
    pub fn new(candidate: &Candidate, budget: u64) -> Result<Self, EngineError> {
        let mut options = Options::default();
        options.create_if_missing(true);
        options.enable_statistics();
        let mut build = Build {
            budget,
            options,
            table: BlockBasedOptions::default(),
            block_cache_size: 0,
            row_cache_size: 0,
            write_buffer_size: 0,
            max_write_buffer_number: 2,
            level_multiplier: 10.0,
            level0_trigger: 4,
            level0_slowdown_trigger: 20,
            direct_io: false,
            compaction_readahead: 0,
            background_jobs: 2,
            subcompactions: 1,
            prefix_len: 0,
            prefix_bounded_reads: false,
            bloom_bits_per_key: 0.0,
            ribbon: false,
            whole_key_filtering: true,
            optimize_filters_for_hits: false,
            block_size: 4096,
            index_type: IndexType::Binary,
            cache_index_and_filter_blocks: false,
            pin_l0: false,
            unordered_write: false,
            blob_files: false,
            candidate: Candidate::new(),
            ran: OptionSet::new(),
            shown: vec![],
            adjusted: vec![],
        };
        knob::apply("RocksDB", KNOBS, candidate, budget, &mut build)?;
        Ok(build)
    }

    fn share(&self, v: &Value) -> u64 {
        (float(v) * self.budget as f64) as u64
    }

    fn times_memtable(&self, v: &Value) -> u64 {
        ((float(v) * self.write_buffer_size as f64) as u64).max(MIN_FILE_SIZE)
    }

    /// Sets an option (`apply` on RocksDB's `Options`) and records its value.
    fn set(&mut self, name: &str, value: impl Into<Value>, apply: impl FnOnce(&mut Options)) {
        apply(&mut self.options);
        let value = value.into();
        self.shown.push((name.to_string(), value.to_string()));
        self.ran.insert(name.to_string(), value);
    }

    /// Sets a size in bytes and records it, shown in binary units.
    fn set_bytes(&mut self, name: &str, bytes: u64, apply: impl FnOnce(&mut Options, u64)) {
        apply(&mut self.options, bytes);
        self.shown.push((name.to_string(), ByteSize(bytes).to_string()));
        self.ran.insert(name.to_string(), Value::from(bytes));
    }

    /// Notes that a parameter runs at `ran` at this budget, keeping the asked
    /// value in the candidate: at another budget it may run as asked.
    fn adjust(&mut self, param: &str, ran: Value, why: String) {
        let asked = self.candidate.get(param).cloned().unwrap_or(Value::Int(0));
        self.adjusted.push(Adjustment { param: param.to_string(), asked, ran, why });
    }

    /// A flag that only runs on with a block cache: without one it runs off,
    /// and the candidate says so.
    fn flag_needing_block_cache(&mut self, param: &str, v: &Value, why: &str) -> bool {
        let on = flag(v);
        if on && self.block_cache_size == 0 {
            self.replace(param, Value::Bool(false), why.into());
            return false;
        }
        on
    }

    /// What this option set holds in memory.
    fn memory(&self) -> MemoryModel {
        // Filter bytes per key: whole keys and, with an extractor, prefixes
        // (at worst a prefix per key); Ribbon takes less for the same rate;
        // without last-level filters only the upper levels' keys have one,
        // about 1/multiplier of the data (twice that, for L0 and levels short
        // of their target).
        let entries = f64::from(u8::from(self.whole_key_filtering) + u8::from(self.prefix_len > 0));
        let mut filter = self.bloom_bits_per_key / 8.0 * entries;
        if self.ribbon {
            filter *= RIBBON_SHARE;
        }
        if self.optimize_filters_for_hits {
            filter *= (2.0 / self.level_multiplier).min(1.0);
        }
        let index = INDEX_BYTES_PER_BLOCK / self.block_size.max(1) as f64;
        // A two-level index keeps only its top level (an entry per partition)
        // outside the cache, and none when index and filter blocks are cached.
        let top_level = INDEX_BYTES_PER_BLOCK / METADATA_BLOCK_SIZE;
        let (mut per_key, per_byte) = match (self.cache_index_and_filter_blocks, self.index_type) {
            (true, _) => (0.0, 0.0),
            (false, IndexType::TwoLevel) => (filter * top_level, index * top_level),
            (false, _) => (filter, index),
        };
        // A hash index's prefix buckets live with its reader, cached or not.
        if self.index_type == IndexType::Hash {
            per_key += HASH_INDEX_BYTES_PER_KEY;
        }
        // Pinned L0 index and filter blocks stay in the block cache and count
        // against its capacity, but an LRU cache grows past its capacity
        // rather than evict them: what L0 can hold at the slowdown trigger
        // beyond the cache is memory too. (With a two-level index, RocksDB's
        // default pins the top levels, counted above when not cached.)
        let overhead = PROCESS_OVERHEAD + self.pinned_l0().saturating_sub(self.block_cache_size);
        MemoryModel {
            block_cache: self.block_cache_size,
            row_cache: self.row_cache_size + (self.row_cache_size as f64 * ROW_CACHE_SLACK) as u64,
            memtables: self.write_buffer_size * self.max_write_buffer_number as u64,
            outside_cache_per_key: per_key,
            outside_cache_per_byte: per_byte,
            read_buffers: self.read_buffers(),
            overhead,
        }
    }

    /// Compactions' read-ahead buffers outside any cache: only under direct
    /// I/O, with RocksDB's split of background jobs (a quarter, at least one,
    /// flush; the rest compact).
    fn read_buffers(&self) -> u64 {
        if !self.direct_io {
            return 0;
        }
        let flushes = (self.background_jobs / 4).max(1);
        let threads = self.background_jobs.saturating_sub(flushes).max(1);
        self.compaction_readahead * compaction_read_buffers(self.subcompactions, self.level0_trigger, threads)
    }

    /// Index and filter bytes pinned in the block cache for L0 at most: its
    /// files up to the slowdown trigger, a memtable each, at the index and
    /// filter bytes per data byte (keys taken at 64 bytes, a small pair).
    fn pinned_l0(&self) -> u64 {
        let pins =
            self.pin_l0 && (self.cache_index_and_filter_blocks || self.index_type == IndexType::TwoLevel);
        if !pins {
            return 0;
        }
        let l0_bytes = (self.level0_slowdown_trigger * self.write_buffer_size) as f64;
        let entries = f64::from(u8::from(self.whole_key_filtering) + u8::from(self.prefix_len > 0));
        let filter_per_byte = self.bloom_bits_per_key / 8.0 * entries / 64.0;
        let index_per_byte = INDEX_BYTES_PER_BLOCK / self.block_size.max(1) as f64;
        (l0_bytes * (filter_per_byte + index_per_byte)) as u64
    }

    pub fn resolved(&self) -> Resolved {
        Resolved {
            candidate: self.candidate.clone(),
            options: self.ran.clone(),
            shown: self.shown.clone(),
            memory: self.memory(),
            adjusted: self.adjusted.clone(),
        }
    }

    /// The finished `Options`, with the block cache and the row cache they use.
    pub fn into_options(mut self) -> (Options, Caches) {
        let new_cache = |size: u64| (size > 0).then(|| Cache::new_lru_cache(size as usize));
        let caches = Caches { block: new_cache(self.block_cache_size), row: new_cache(self.row_cache_size) };
        match &caches.block {
            Some(cache) => self.table.set_block_cache(cache),
            None => self.table.disable_cache(),
        }
        if let Some(row) = &caches.row {
            self.options.set_row_cache(row);
        }
        self.options.set_block_based_table_factory(&self.table);
        (self.options, caches)
    }
}

/// The caches an open database uses, kept with it.
pub(super) struct Caches {
    pub block: Option<Cache>,
    pub row: Option<Cache>,
}
