//! Badger (github.com/dgraph-io/badger/v4), the LSM with a value log that
//! keeps large values apart from keys (the Flow DPS indexer's store). Its
//! table indices and bloom filters stay in memory unless an index cache
//! bounds them.

use super::{model, share_of, GoSpec, Native};
use crate::budget::{MemoryModel, MIB};
use crate::engine::knob::{float, int, text, Kind, Knob};
use crate::engine::Scaling;
use crate::space::Value;

/// Badger's own memtable size (`Options.MemTableSize`).
const MEMTABLE: u64 = 64 * MIB;

/// Heap per byte of user data with no index cache (Badger keeps each
/// table's index and bloom filter, and its own buffers, in Go's heap):
/// measured on spork as the anonymous memory beyond caches, memtables and
/// the process, 0.84 at a 256 MiB budget and 0.82 at 512 MiB.
const HEAP_PER_DATA_BYTE: f64 = 0.83;

pub static BADGER: GoSpec = GoSpec {
    name: "badger",
    module: "github.com/dgraph-io/badger/v4 v4.9.6",
    knobs: KNOBS,
    memory,
    code,
    shipped: Some(|budget| {
        let changes = [
            ("block_cache_share".to_string(), share_of(SHIPPED_BLOCK_CACHE, budget)),
            ("memtable_share".to_string(), share_of(5 * MEMTABLE, budget)),
        ]
        .into_iter()
        .collect();
        (
            changes,
            "Badger as shipped: the fitted defaults but for its own 256 MiB block cache and 5 x 64 MiB memtables \
             whatever the budget",
        )
    }),
    writes_options: None,
};

/// Badger's own block cache (`Options.BlockCacheSize`).
const SHIPPED_BLOCK_CACHE: u64 = 256 * MIB;

/// Caches and memtables, and, without an index cache, the heap that grows
/// with the data (measured, not derived: Badger's table indices and filters
/// and its buffers); with an index cache that part is bounded by it.
fn memory(n: &Native) -> MemoryModel {
    let caches = n.number("block_cache_size") + n.number("index_cache_size");
    let memtables = n.number("mem_table_size") * n.number("num_memtables");
    let per_byte = if n.number("index_cache_size") > 0.0 { 0.0 } else { HEAP_PER_DATA_BYTE };
    model(caches as u64, memtables as u64, 0.0, per_byte)
}

const KNOBS: &[Knob<Native>] = &[
    Knob {
        name: "block_cache_share",
        help: "block cache as a share of the budget (Badger's own: 256 MiB)",
        kind: Kind::Share,
        scaling: Scaling::Budget,
        // A third of the budget, as for RocksDB.
        default: |_| Value::Float(1.0 / 3.0),
        apply: |n, v| n.set_bytes("block_cache_size", n.share(v)),
    },
    Knob {
        name: "index_cache_share",
        help: "index and bloom filter cache as a share of the budget, 0 to hold them all in memory (Badger's default)",
        kind: Kind::Share,
        scaling: Scaling::Budget,
        default: |_| Value::Float(0.0),
        apply: |n, v| n.set_bytes("index_cache_size", n.share(v)),
    },
    Knob {
        name: "num_memtables",
        help: "memtables, active plus waiting to flush, before writes stall",
        kind: Kind::Int { min: 1, max: 32 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(5),
        apply: |n, v| n.set("num_memtables", int(v)),
    },
    Knob {
        name: "memtable_share",
        help: "all memtables (MemTableSize x num_memtables) as a share of the budget",
        kind: Kind::Share,
        scaling: Scaling::BudgetWithFloor,
        // Badger's 5 x 64 MiB, at most a quarter of a small budget.
        default: |budget| Value::Float((5.0 * MEMTABLE as f64 / budget as f64).min(0.25)),
        apply: |n, v| n.set_memtables(v, "mem_table_size", "num_memtables", MEMTABLE),
    },
    Knob {
        name: "base_table_x_memtable",
        help: "size of a table in the base level (BaseTableSize) as a multiple of the memtable",
        kind: Kind::Float { min: 0.015625, max: 16.0 },
        scaling: Scaling::Memtable,
        // Badger's 2 MiB over its 64 MiB memtable.
        default: |_| Value::Float(2.0 / 64.0),
        apply: |n, v| n.set_bytes("base_table_size", (float(v) * n.number("mem_table_size")) as u64),
    },
    Knob {
        name: "base_level_x_memtable",
        help: "size of the base level (BaseLevelSize) as a multiple of the memtable",
        kind: Kind::Float { min: 0.0625, max: 256.0 },
        scaling: Scaling::Memtable,
        // Badger's 10 MiB over its 64 MiB memtable.
        default: |_| Value::Float(10.0 / 64.0),
        apply: |n, v| n.set_bytes("base_level_size", (float(v) * n.number("mem_table_size")) as u64),
    },
    Knob {
        name: "level_size_multiplier",
        help: "size ratio of a level to the one above",
        kind: Kind::Int { min: 2, max: 64 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(10),
        apply: |n, v| n.set("level_size_multiplier", int(v)),
    },
    Knob {
        name: "num_level_zero_tables",
        help: "L0 tables at which compaction starts (the seed thread tried 1)",
        kind: Kind::Int { min: 1, max: 64 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(5),
        apply: |n, v| n.set("num_level_zero_tables", int(v)),
    },
    Knob {
        name: "num_level_zero_tables_stall",
        help: "L0 tables at which writes stall",
        kind: Kind::Int { min: 2, max: 256 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(15),
        apply: |n, v| {
            let l0 = n.number("num_level_zero_tables") as i64;
            n.set("num_level_zero_tables_stall", int(v).max(l0 + 1))
        },
    },
    Knob {
        name: "num_compactors",
        help: "compaction goroutines (Badger takes 2 or more)",
        kind: Kind::Int { min: 2, max: 16 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(4),
        apply: |n, v| n.set("num_compactors", int(v)),
    },
    Knob {
        name: "block_size",
        help: "size of a table's data block in bytes",
        kind: Kind::Int { min: 1024, max: 1 << 20 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(4096),
        apply: |n, v| n.set("block_size", int(v)),
    },
    Knob {
        name: "bloom_false_positive",
        help: "bloom filters' false positive rate, 0 for no filters (the seed thread tried 0)",
        kind: Kind::Float { min: 0.0, max: 0.5 },
        scaling: Scaling::Fixed,
        default: |_| Value::Float(0.01),
        apply: |n, v| n.set("bloom_false_positive", float(v)),
    },
    Knob {
        name: "compression",
        help: "block compression",
        kind: Kind::Choice(&["none", "snappy", "zstd"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("snappy"),
        apply: |n, v| n.set("compression", text(v)),
    },
    Knob {
        name: "value_threshold",
        help: "values of at least this many bytes go to the value log, apart from the keys (key-value separation); \
               at most 1 MiB and 15% of a memtable",
        kind: Kind::Int { min: 1, max: 1 << 20 },
        scaling: Scaling::Fixed,
        // Badger v4's: 1 MiB, so only huge values are separated.
        default: |_| Value::Int(1 << 20),
        apply: |n, v| {
            // Badger refuses a threshold above its largest batch, 15% of a memtable.
            let most = (0.15 * n.number("mem_table_size")) as i64;
            if int(v) > most {
                let why = format!("above 15% of a memtable ({most} bytes), which Badger refuses");
                n.adjust("value_threshold", Value::Int(most), why);
            }
            n.set("value_threshold", int(v).min(most))
        },
    },
    Knob {
        name: "value_log_file_size",
        help: "size of a value log file in bytes",
        kind: Kind::Int { min: 1 << 20, max: (1 << 31) - 1 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int((1 << 30) - 1),
        apply: |n, v| n.set("value_log_file_size", int(v)),
    },
];

fn code(n: &Native) -> String {
    let v = |name: &str| n.text(name);
    let compression = match v("compression").as_str() {
        "none" => "options.None",
        "zstd" => "options.ZSTD",
        _ => "options.Snappy",
    };
    let calls = [
        ("WithMemTableSize", "mem_table_size"),
        ("WithNumMemtables", "num_memtables"),
        ("WithBaseTableSize", "base_table_size"),
        ("WithBaseLevelSize", "base_level_size"),
        ("WithLevelSizeMultiplier", "level_size_multiplier"),
        ("WithNumLevelZeroTables", "num_level_zero_tables"),
        ("WithNumLevelZeroTablesStall", "num_level_zero_tables_stall"),
        ("WithNumCompactors", "num_compactors"),
        ("WithBlockCacheSize", "block_cache_size"),
        ("WithIndexCacheSize", "index_cache_size"),
        ("WithBlockSize", "block_size"),
        ("WithBloomFalsePositive", "bloom_false_positive"),
        ("WithValueThreshold", "value_threshold"),
        ("WithValueLogFileSize", "value_log_file_size"),
    ];
    let mut text = "opts := badger.DefaultOptions(dir).\n".to_string();
    for (call, name) in calls {
        text += &format!("\t{call}({}).\n", v(name));
    }
    text + &format!("\tWithCompression({compression})\ndb, err := badger.Open(opts)\n")
}
