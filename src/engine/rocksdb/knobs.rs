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

use rocksdb::{BlockBasedOptions, Cache, DBCompactionStyle, DBCompressionType, Options};

use crate::budget::{ByteSize, MemoryModel, KIB, MIB};
use crate::engine::{bad_value, EngineError, Resolved, Scaling};
use crate::record::{Adjustment, OptionSet};
use crate::space::{Candidate, Value};

/// Memory of the trial process besides the cache, memtables and index: the
/// binary, RocksDB's table readers and arenas, the op generator. Measured
/// here as peak RSS minus cache and memtables at small budgets: ~10-16 MiB.
const PROCESS_OVERHEAD: u64 = 16 * MIB;

/// Index memory per data block held outside the cache (a key and a handle).
const INDEX_BYTES_PER_BLOCK: f64 = 48.0;

/// The smallest table or level size kvtune sets.
const MIN_FILE_SIZE: u64 = 64 * KIB;

/// One searchable parameter.
pub(super) struct Knob {
    pub name: &'static str,
    pub help: &'static str,
    pub kind: Kind,
    pub scaling: Scaling,
    /// Its value in RocksDB's defaults fitted to a budget of this many bytes.
    pub default: fn(u64) -> Value,
    /// Sets RocksDB's options for a value already checked against `kind`.
    pub apply: fn(&mut Build, &Value),
}

/// What values a parameter takes.
pub(super) enum Kind {
    /// A share of the budget, from 0 to 1.
    Share,
    /// A whole number, brought into the range RocksDB takes.
    Int {
        min: i64,
        max: i64,
    },
    /// A number no less than `min`.
    Float {
        min: f64,
    },
    Flag,
    Choice(&'static [&'static str]),
}

const COMPRESSIONS: &[&str] = &["none", "snappy", "lz4", "zstd"];

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
        kind: Kind::Float { min: 0.0 },
        scaling: Scaling::Memtable,
        default: |_| Value::Float(1.0),
        apply: |b, v| {
            b.set_bytes("target_file_size_base", b.times_memtable(v), Options::set_target_file_size_base)
        },
    },
    Knob {
        name: "level_base_x_memtable",
        help: "max_bytes_for_level_base as a multiple of write_buffer_size",
        kind: Kind::Float { min: 0.0 },
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
        name: "level0_file_num_compaction_trigger",
        help: "L0 files that start a compaction (slowdown and stop triggers follow)",
        kind: Kind::Int { min: 1, max: 1000 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(4),
        apply: |b, v| {
            let trigger = int(v) as i32;
            // RocksDB's own slowdown (20) and stop (36) triggers, kept above the compaction trigger.
            let (slowdown, stop) = (20.max(trigger * 2), 36.max(trigger * 3));
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
        default: |_| Value::from("snappy"),
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
        name: "bloom_bits",
        help: "bloom filter bits per key, 0 for none",
        kind: Kind::Float { min: 0.0 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(0),
        apply: |b, v| {
            b.bloom_bits_per_key = float(v);
            if float(v) > 0.0 {
                b.table.set_bloom_filter(float(v), false);
            }
            b.set("bloom_bits_per_key", float(v), |_| {});
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
        name: "cache_index_and_filter_blocks",
        help: "keep index and filter blocks in the block cache instead of beside it",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |b, v| {
            b.cache_index_and_filter_blocks = flag(v);
            b.table.set_cache_index_and_filter_blocks(flag(v));
            b.set("cache_index_and_filter_blocks", flag(v), |_| {});
        },
    },
    Knob {
        name: "load_mode",
        help: "how SST files are read: pread, mmap or direct (O_DIRECT reads, flushes and compactions)",
        kind: Kind::Choice(&["pread", "mmap", "direct"]),
        scaling: Scaling::Fixed,
        default: |_| Value::from("pread"),
        apply: |b, v| {
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
        name: "max_background_jobs",
        help: "flush and compaction threads",
        kind: Kind::Int { min: 1, max: 64 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(2),
        apply: |b, v| b.set("max_background_jobs", int(v), |o| o.set_max_background_jobs(int(v) as i32)),
    },
    Knob {
        name: "max_subcompactions",
        help: "threads one compaction may split into",
        kind: Kind::Int { min: 1, max: 64 },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(1),
        apply: |b, v| b.set("max_subcompactions", int(v), |o| o.set_max_subcompactions(int(v) as u32)),
    },
    Knob {
        name: "enable_blob_files",
        help: "key-value separation: large values go to blob files",
        kind: Kind::Flag,
        scaling: Scaling::Fixed,
        default: |_| Value::Bool(false),
        apply: |b, v| b.set("enable_blob_files", flag(v), |o| o.set_enable_blob_files(flag(v))),
    },
    Knob {
        name: "min_blob_size",
        help: "values at least this large go to blob files when blobs are on",
        kind: Kind::Int { min: 0, max: i64::MAX },
        scaling: Scaling::Fixed,
        default: |_| Value::Int(0),
        apply: |b, v| b.set("min_blob_size", int(v), |o| o.set_min_blob_size(int(v) as u64)),
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

fn int(v: &Value) -> i64 {
    v.as_f64().unwrap_or_default() as i64
}

fn float(v: &Value) -> f64 {
    v.as_f64().unwrap_or_default()
}

fn flag(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

fn text(v: &Value) -> &str {
    match v {
        Value::Str(s) => s,
        _ => "",
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

impl Kind {
    fn describe(&self) -> String {
        match self {
            Kind::Share => "a share from 0 to 1".into(),
            Kind::Int { min, max } if *max == i64::MAX => format!("a whole number from {min}"),
            Kind::Int { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Float { min } => format!("a number from {min}"),
            Kind::Flag => "true or false".into(),
            Kind::Choice(allowed) => format!("one of {}", allowed.join(", ")),
        }
    }

    /// `value` as this kind takes it: a number brought into range, or why not.
    fn check(&self, name: &str, value: &Value) -> Result<Value, EngineError> {
        let number = || value.as_f64().ok_or_else(|| bad_value(name, value, "a number"));
        match self {
            Kind::Share => match number()? {
                s if (0.0..=1.0).contains(&s) => Ok(Value::Float(s)),
                _ => Err(bad_value(name, value, "a share of the budget, from 0 to 1")),
            },
            Kind::Int { min, max } => Ok(Value::Int((number()?.round() as i64).clamp(*min, *max))),
            Kind::Float { min } => Ok(Value::Float(number()?.max(*min))),
            Kind::Flag => match value {
                Value::Bool(_) => Ok(value.clone()),
                _ => Err(bad_value(name, value, "true or false")),
            },
            Kind::Choice(allowed) => match value {
                Value::Str(s) if allowed.contains(&s.as_str()) => Ok(value.clone()),
                _ => Err(bad_value(name, value, format!("one of {}", allowed.join(", ")))),
            },
        }
    }
}

/// RocksDB's options being built from a candidate, with what they record.
pub(super) struct Build {
    budget: u64,
    pub options: Options,
    pub table: BlockBasedOptions,
    /// What later knobs and the memory model read.
    pub block_cache_size: u64,
    write_buffer_size: u64,
    max_write_buffer_number: i32,
    bloom_bits_per_key: f64,
    block_size: u64,
    cache_index_and_filter_blocks: bool,
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
        if let Some(unknown) = candidate.keys().find(|name| !KNOBS.iter().any(|k| k.name == name.as_str())) {
            return Err(EngineError::UnknownParam {
                engine: "RocksDB",
                name: unknown.clone(),
                known: KNOBS.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
            });
        }
        let mut options = Options::default();
        options.create_if_missing(true);
        options.enable_statistics();
        let mut build = Build {
            budget,
            options,
            table: BlockBasedOptions::default(),
            block_cache_size: 0,
            write_buffer_size: 0,
            max_write_buffer_number: 2,
            bloom_bits_per_key: 0.0,
            block_size: 4096,
            cache_index_and_filter_blocks: false,
            candidate: Candidate::new(),
            ran: OptionSet::new(),
            shown: vec![],
            adjusted: vec![],
        };
        for knob in KNOBS {
            let asked = candidate.get(knob.name).cloned().unwrap_or_else(|| (knob.default)(budget));
            let value = knob.kind.check(knob.name, &asked)?;
            build.candidate.insert(knob.name.to_string(), asked.clone());
            if value.as_f64() != asked.as_f64() {
                let why = format!("outside what RocksDB takes ({})", knob.kind.describe());
                build.replace(knob.name, value.clone(), why);
            }
            (knob.apply)(&mut build, &value);
        }
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

    /// Notes that a parameter runs at `ran` at every budget, and records it so.
    fn replace(&mut self, param: &str, ran: Value, why: String) {
        self.adjust(param, ran.clone(), why);
        self.candidate.insert(param.to_string(), ran);
    }

    /// What this option set holds in memory.
    fn memory(&self) -> MemoryModel {
        let (per_key, per_byte) = if self.cache_index_and_filter_blocks {
            (0.0, 0.0)
        } else {
            (self.bloom_bits_per_key / 8.0, INDEX_BYTES_PER_BLOCK / self.block_size.max(1) as f64)
        };
        MemoryModel {
            block_cache: self.block_cache_size,
            memtables: self.write_buffer_size * self.max_write_buffer_number as u64,
            outside_cache_per_key: per_key,
            outside_cache_per_byte: per_byte,
            overhead: PROCESS_OVERHEAD,
        }
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

    /// The finished `Options`, and the block cache they share.
    pub fn into_options(mut self) -> (Options, Option<Cache>) {
        let cache = (self.block_cache_size > 0).then(|| Cache::new_lru_cache(self.block_cache_size as usize));
        match &cache {
            Some(cache) => self.table.set_block_cache(cache),
            None => self.table.disable_cache(),
        }
        self.options.set_block_based_table_factory(&self.table);
        (self.options, cache)
    }
}
