//! Two figures about the replay itself, measured in one run and printed
//! (nothing asserted; `cargo bench --bench replay`):
//! 1. every built-in dataset's generator rate against RocksDB's rate on the
//!    same operations, per phase: the generator must be at least 10x faster
//!    so that, even untimed, it never shapes a trial;
//! 2. the replay driver's rate against a minimal loop calling RocksDB
//!    directly on the same pre-generated spork operations (target: at least
//!    0.95): what the driver's bookkeeping costs.

use std::time::Instant;

use kvtune::dataset::ops::{Batch, OpKind, OpSource};
use kvtune::dataset::{Dataset, Phase, BUILT_IN};
use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::replay::run_phase;

const BUDGET: u64 = 256 << 20;

fn main() {
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch dir");
    println!("generator against engine, each dataset at a {} MiB budget:", BUDGET >> 20);
    println!(
        "{:<10} {:<10} {:>16} {:>16} {:>8}",
        "dataset", "phase", "generator ops/s", "engine ops/s", "ratio"
    );
    for (name, _) in BUILT_IN {
        generator_against_engine(name, work.path());
    }
    driver_against_minimal_loop(work.path());
}

fn generator_against_engine(name: &str, work: &std::path::Path) {
    let dataset = Dataset::find(name).expect("built-in dataset");
    let workload = dataset.workload(BUDGET);
    let defaults = RocksDb.defaults(BUDGET);
    let dir = work.join(name);
    let mut store = RocksDb.open(&defaults, BUDGET, &dir).expect("open RocksDB");
    for (mut generated, mut replayed) in workload.phases(1).into_iter().zip(workload.phases(1)) {
        let mut batch = Batch::default();
        let (mut ops, start) = (0u64, Instant::now());
        while generated.source.next_batch(&mut batch) {
            ops += batch.ops.len() as u64;
        }
        let generator = ops as f64 / start.elapsed().as_secs_f64();
        let engine = run_phase(store.as_mut(), &mut replayed).expect("replay").ops_per_sec;
        println!(
            "{name:<10} {:<10} {generator:>16.0} {engine:>16.0} {:>7.0}x",
            generated.name,
            generator / engine
        );
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Batches generated ahead, replayed from memory.
struct Recorded {
    batches: std::vec::IntoIter<Batch>,
    corpus: Vec<u8>,
}

impl OpSource for Recorded {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        match self.batches.next() {
            Some(next) => {
                *batch = next;
                true
            }
            None => false,
        }
    }

    fn corpus(&self) -> &[u8] {
        &self.corpus
    }
}

fn record(phase: &mut Phase) -> (Vec<Batch>, Vec<u8>) {
    let mut batches = vec![];
    let mut batch = Batch::default();
    while phase.source.next_batch(&mut batch) {
        batches.push(batch.clone());
    }
    (batches, phase.source.corpus().to_vec())
}

/// The same ops through the driver (`run_phase`, a fresh database) and
/// through a bare loop over the `rocksdb` crate (another fresh database,
/// same options), each timed as wall time around the whole phase.
fn driver_against_minimal_loop(work: &std::path::Path) {
    let dataset = Dataset::find("spork").expect("built-in dataset");
    let workload = dataset.workload(BUDGET);
    let defaults = RocksDb.defaults(BUDGET);
    let phases: Vec<(String, Vec<Batch>, Vec<u8>)> = workload
        .phases(1)
        .into_iter()
        .map(|mut p| {
            let (batches, corpus) = record(&mut p);
            (p.name, batches, corpus)
        })
        .collect();
    println!("\nthe replay driver against a minimal loop on the same pre-generated spork ops (wall time per phase):");
    println!("{:<10} {:>14} {:>14} {:>8}", "phase", "driver s", "minimal s", "ratio");
    let (driver_dir, bare_dir) = (work.join("driver"), work.join("bare"));
    let mut store = RocksDb.open(&defaults, BUDGET, &driver_dir).expect("open RocksDB");
    // The bare database gets the very options the driver's has, read back
    // from the OPTIONS file RocksDB wrote (statistics aside: the driver pays
    // for those, and that is part of what this measures).
    drop(RocksDb.open(&defaults, BUDGET, &bare_dir).expect("open RocksDB"));
    let cache_bytes =
        RocksDb.resolve(&defaults, BUDGET).expect("defaults").options["block_cache_size"].as_f64();
    let cache = rocksdb::Cache::new_lru_cache(cache_bytes.unwrap_or(8e6) as usize);
    let env = rocksdb::Env::new().expect("an env");
    let (options, _) = rocksdb::Options::load_latest(&bare_dir, env, false, cache).expect("the OPTIONS file");
    let db = rocksdb::DB::open(&options, &bare_dir).expect("open the bare database");
    for (name, batches, corpus) in phases {
        let mut phase = Phase {
            name: name.clone(),
            source: Box::new(Recorded { batches: batches.clone().into_iter(), corpus: corpus.clone() }),
            warmup_ops: 0,
        };
        // The driver's whole phase but the wait for compactions it bills
        // after the last call; the bare loop then waits the same way,
        // untimed, so both start each phase from a settled database.
        let start = Instant::now();
        let result = run_phase(store.as_mut(), &mut phase).expect("replay");
        let driver = start.elapsed().as_secs_f64() - result.settle_secs;
        let start = Instant::now();
        minimal(&db, &batches, &corpus);
        let bare = start.elapsed().as_secs_f64();
        db.wait_for_compact(&rocksdb::WaitForCompactOptions::default()).expect("settle");
        println!("{name:<10} {driver:>14.2} {bare:>14.2} {:>7.2}", bare / driver);
    }
    println!("(ratio: the minimal loop's time over the driver's, i.e. the driver's rate relative to it; both without the wait for compactions after the last call)");
}

/// The ops applied with nothing around them.
fn minimal(db: &rocksdb::DB, batches: &[Batch], corpus: &[u8]) {
    for batch in batches {
        let mut wb = rocksdb::WriteBatch::default();
        for op in &batch.ops {
            let key = batch.key(op);
            match op.kind {
                OpKind::Put => wb.put(key, &corpus[op.value.start as usize..op.value.end as usize]),
                OpKind::Get => {
                    let _ = db.get_pinned(key);
                }
                OpKind::SeekForPrev => {
                    let mut it = db.raw_iterator();
                    it.seek_for_prev(key);
                }
                OpKind::Scan => {
                    let mut it = db.raw_iterator();
                    it.seek(key);
                    let prefix = &key[..(op.prefix as usize).min(key.len())];
                    let mut n = 0;
                    while n < op.arg && it.key().is_some_and(|k| k.starts_with(prefix)) {
                        n += 1;
                        it.next();
                    }
                }
                _ => {}
            }
        }
        if !wb.is_empty() {
            db.write(wb).expect("write");
        }
    }
}
