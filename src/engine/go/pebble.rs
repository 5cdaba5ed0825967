//! Pebble (github.com/cockroachdb/pebble/v2), CockroachDB's LSM engine, the
//! store Elastic APM moved its tail-sampling to. Its index and filter blocks
//! go through the block cache, so the cache and the memtables are its memory.

use super::{model, share_of, GoSpec, Native};
use crate::budget::MIB;
use crate::engine::knob::{float, int, text, Kind, Knob};
use crate::engine::Scaling;
use crate::space::Value;

/// Pebble's own memtable size (`Options.MemTableSize`).
const MEMTABLE: u64 = 4 * MIB;

pub static PEBBLE: GoSpec = GoSpec {
    name: "pebble",
    module: "github.com/cockroachdb/pebble/v2 v2.1.7",
    knobs: KNOBS,
    memory: |n| {
        let memtables = n.number("mem_table_size") * n.number("mem_table_stop_writes_threshold");
        model(n.number("cache_size") as u64, memtables as u64, 0.0, 0.0)
    },
    code,
    shipped: Some(|budget| {
        let changes = [("cache_share".to_string(), share_of(SHIPPED_CACHE, budget))].into_iter().collect();
        (changes, "Pebble as shipped: the fitted defaults but for the cache, Pebble's own 8 MiB whatever the budget")
    }),
    writes_options: Some("OPTIONS-"),
};

/// The cache Pebble makes when it is given none (`Options.CacheSize`).
const SHIPPED_CACHE: u64 = 8 * MIB;

const KNOBS: &[Knob<Native>] = &[
    Knob {
        name: "cache_share",
        help: "block cache (data, index and filter blocks) as a share of the budget",
        kind: Kind::Share,
        scaling: Scaling::Budget,
        // A third of the budget, as for RocksDB (Pebble's own is 8 MiB whatever the budget).
        default: |_| Value::Float(1.0 / 3.0),
        apply: |n, v| n.set_bytes("cache_size", n.share(v)),
    },
    Knob {
        name: "memtable_count",
        help: "memtables, active plus queued for flush, before writes stop (MemTableStopWritesThreshold)",
        kind: Kind::Int { min: 2, max: 16 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(2),
        apply: |n, v| n.set("mem_table_stop_writes_threshold", int(v)),
    },
    Knob {
        name: "memtable_share",
        help: "all memtables (MemTableSize x memtable_count) as a share of the budget",
        kind: Kind::Share,
        scaling: Scaling::BudgetWithFloor,
        // Pebble's 2 x 4 MiB, at most a quarter of a small budget.
        default: |budget| Value::Float((2.0 * MEMTABLE as f64 / budget as f64).min(0.25)),
        apply: |n, v| n.set_memtables(v, "mem_table_size", "mem_table_stop_writes_threshold", MEMTABLE),
    },
    Knob {
        name: "l0_compaction_threshold",
        help: "L0 read amplification at which a compaction out of L0 starts",
        kind: Kind::Int { min: 1, max: 64 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(4),
        apply: |n, v| n.set("l0_compaction_threshold", int(v)),
    },
    Knob {
        name: "l0_stop_writes_threshold",
        help: "L0 read amplification at which writes stop",
        kind: Kind::Int { min: 2, max: 256 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(12),
        apply: |n, v| n.set("l0_stop_writes_threshold", int(v)),
    },
    Knob {
        name: "lbase_x_memtable",
        help: "maximum size of the base level (LBaseMaxBytes) as a multiple of the memtable",
        kind: Kind::Float { min: 1.0, max: 256.0 },
        scaling: Scaling::Memtable,
        // Pebble's 64 MiB over its 4 MiB memtable.
        default: |_| Value::Float(16.0),
        apply: |n, v| n.set_bytes("lbase_max_bytes", (float(v) * n.number("mem_table_size")) as u64),
    },
    Knob {
        name: "target_file_size_x_memtable",
        help: "size of an L0 table (it doubles per level below) as a multiple of the memtable",
        kind: Kind::Float { min: 0.0625, max: 16.0 },
        scaling: Scaling::Memtable,
        // Pebble's 2 MiB over its 4 MiB memtable.
        default: |_| Value::Float(0.5),
        apply: |n, v| n.set_bytes("target_file_size", (float(v) * n.number("mem_table_size")) as u64),
    },
    Knob {
        name: "block_size",
        help: "target size of a data block in bytes",
        kind: Kind::Int { min: 1024, max: 1 << 20 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(4096),
        apply: |n, v| n.set("block_size", int(v)),
    },
    Knob {
        name: "bloom_bits",
        help: "bloom filter bits per key on every level, 0 for none",
        kind: Kind::Int { min: 0, max: 32 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(0),
        apply: |n, v| n.set("bloom_bits_per_key", int(v)),
    },
    Knob {
        name: "compression",
        help: "block compression on every level",
        kind: Kind::Choice(&["none", "snappy", "zstd", "minlz"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("snappy"),
        apply: |n, v| n.set("compression", text(v)),
    },
    Knob {
        name: "compaction_concurrency",
        help: "compactions that may run at once, at most (CompactionConcurrencyRange's upper end)",
        kind: Kind::Int { min: 1, max: 16 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(1),
        apply: |n, v| n.set("compaction_concurrency", int(v)),
    },
];

fn code(n: &Native) -> String {
    let v = |name: &str| n.text(name);
    let compression = match v("compression").as_str() {
        "none" => "NoCompression",
        "zstd" => "ZstdCompression",
        "minlz" => "MinLZCompression",
        _ => "SnappyCompression",
    };
    let bloom = match v("bloom_bits_per_key").as_str() {
        "0" => String::new(),
        bits => format!("\topts.Levels[i].FilterPolicy = bloom.FilterPolicy({bits})\n"),
    };
    format!(
        "cache := pebble.NewCache({cache})\ndefer cache.Unref()\nopts := &pebble.Options{{\n\
         \tCache:                       cache,\n\
         \tMemTableSize:                {mem},\n\
         \tMemTableStopWritesThreshold: {count},\n\
         \tL0CompactionThreshold:       {l0c},\n\
         \tL0StopWritesThreshold:       {l0s},\n\
         \tLBaseMaxBytes:               {lbase},\n\
         \tCompactionConcurrencyRange:  func() (int, int) {{ return 1, {conc} }},\n}}\n\
         opts.TargetFileSizes[0] = {target}\nfor i := range opts.Levels {{\n\
         \topts.Levels[i].BlockSize = {block}\n\
         \topts.Levels[i].Compression = func() *sstable.CompressionProfile {{ return sstable.{compression} }}\n\
         {bloom}}}\ndb, err := pebble.Open(dir, opts)\n",
        cache = v("cache_size"),
        mem = v("mem_table_size"),
        count = v("mem_table_stop_writes_threshold"),
        l0c = v("l0_compaction_threshold"),
        l0s = v("l0_stop_writes_threshold"),
        lbase = v("lbase_max_bytes"),
        conc = v("compaction_concurrency"),
        target = v("target_file_size"),
        block = v("block_size"),
    )
}
