//! How fast kvtune reads traces compared with how fast RocksDB applies the
//! same operations: spork exported at a 1 GiB budget (~4.7M ops) as a
//! RocksDB trace, CSV and JSON lines, each read in full (the first read, that
//! `shape()` keeps, and a replay's read), then the RocksDB trace's first
//! quarter (its recorded budget over a 256 MiB one) replayed through RocksDB
//! with its defaults. Run with `cargo bench --bench trace` (prints the
//! figures; asserts nothing). KVTUNE_TRACE_BUDGET changes the export budget.

use std::time::Instant;

use kvtune::budget::ByteSize;
use kvtune::dataset::ops::Batch;
use kvtune::dataset::trace::export::export;
use kvtune::dataset::trace::Format;
use kvtune::dataset::Dataset;
use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::replay::run_phase;

fn main() {
    let budget: u64 = std::env::var("KVTUNE_TRACE_BUDGET")
        .ok()
        .and_then(|s| s.parse::<ByteSize>().ok())
        .map_or(1 << 30, |b| b.0);
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch dir");
    let spork = Dataset::find("spork").expect("built-in dataset");
    println!("spork exported at a budget of {}:", ByteSize(budget));
    println!(
        "{:<14} {:>10} {:>10} {:>16} {:>16} {:>16}",
        "format", "ops", "MB", "export ops/s", "first read ops/s", "replay read ops/s"
    );
    let mut rocksdb_toml = None;
    for format in [Format::RocksdbTrace, Format::Csv, Format::Jsonl] {
        let out = work.path().join(format!("{format:?}/x.toml"));
        let started = Instant::now();
        let exported = export(&spork, budget, 1, format, &out).expect("export");
        let export_secs = started.elapsed().as_secs_f64();
        let ops: u64 = exported.phases.iter().map(|p| p.tally.total_ops()).sum();
        let bytes: u64 =
            exported.phases.iter().map(|p| std::fs::metadata(&p.file).map_or(0, |m| m.len())).sum();
        // The first read: `find` checks every phase (the summary `shape()` keeps).
        let started = Instant::now();
        let dataset = Dataset::find(out.to_str().expect("path")).expect("trace dataset");
        let first_secs = started.elapsed().as_secs_f64();
        // A replay's read: every batch, as the driver asks for them.
        let started = Instant::now();
        let mut read = 0u64;
        let mut batch = Batch::default();
        for mut phase in dataset.workload(budget).phases(1) {
            while phase.source.next_batch(&mut batch) {
                read += batch.ops.len() as u64;
            }
        }
        let read_secs = started.elapsed().as_secs_f64();
        assert_eq!(read, ops);
        println!(
            "{:<14} {ops:>10} {:>10.0} {:>16.0} {:>16.0} {:>16.0}",
            format!("{format:?}"),
            bytes as f64 / 1e6,
            ops as f64 / export_secs,
            ops as f64 / first_secs,
            ops as f64 / read_secs
        );
        if format == Format::RocksdbTrace {
            rocksdb_toml = Some(dataset);
        }
    }
    // The engine on the RocksDB trace's first quarter (engine time only, as in a trial).
    let dataset = rocksdb_toml.expect("exported");
    let engine_budget = budget / 4;
    let workload = dataset.workload(engine_budget);
    let dir = work.path().join("db");
    let mut store =
        RocksDb.open(&RocksDb.defaults(engine_budget), engine_budget, &dir).expect("open RocksDB");
    println!("\nRocksDB (defaults) replaying its first quarter at a budget of {}:", ByteSize(engine_budget));
    println!(
        "{:<10} {:>10} {:>16} {:>16} {:>16}",
        "phase", "ops", "engine ops/s", "calls only ops/s", "reader ops/s"
    );
    for mut phase in workload.phases(1) {
        let name = phase.name.clone();
        let result = run_phase(store.as_mut(), &mut phase).expect("replay");
        // The same prefix read alone.
        let mut alone = workload.phases(1).into_iter().find(|p| p.name == name).expect("phase");
        let (started, mut ops) = (Instant::now(), 0u64);
        let mut batch = Batch::default();
        while alone.source.next_batch(&mut batch) {
            ops += batch.ops.len() as u64;
        }
        let reader = ops as f64 / started.elapsed().as_secs_f64();
        let calls = result.ops as f64 / result.engine_secs.max(1e-9);
        println!("{name:<10} {ops:>10} {:>16.0} {calls:>16.0} {reader:>16.0}", result.ops_per_sec);
    }
}
