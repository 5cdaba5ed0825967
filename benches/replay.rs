//! How fast the spork generator makes operations compared with how fast
//! RocksDB applies them, measured in one run: the generator must be at least
//! 10x faster so that, even untimed, it never shapes a trial. Run with
//! `cargo bench --bench replay` (prints the figures; asserts nothing).

use std::time::Instant;

use kvtune::dataset::ops::Batch;
use kvtune::dataset::Dataset;
use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::replay::run_phase;

const BUDGET: u64 = 256 << 20;
const ROUNDS: usize = 3;

fn main() {
    let dataset = Dataset::find("spork").expect("built-in dataset");
    let workload = dataset.workload(BUDGET);
    let mut gen_rates: Vec<Vec<f64>> = vec![vec![]; workload.phase_names().len()];
    let mut engine_rates: Vec<Vec<f64>> = vec![vec![]; workload.phase_names().len()];
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch dir");
    let defaults = RocksDb.defaults(BUDGET);
    for round in 0..ROUNDS {
        // Generation alone.
        for (i, mut phase) in workload.phases(round as u64).into_iter().enumerate() {
            let mut batch = Batch::default();
            let (mut ops, start) = (0u64, Instant::now());
            while phase.source.next_batch(&mut batch) {
                ops += batch.ops.len() as u64;
            }
            gen_rates[i].push(ops as f64 / start.elapsed().as_secs_f64());
        }
        // The engine on the same stream (engine time only, as in a trial).
        let dir = work.path().join(format!("db{round}"));
        let mut store = RocksDb.open(&defaults, BUDGET, &dir).expect("open RocksDB");
        for (i, mut phase) in workload.phases(round as u64).into_iter().enumerate() {
            let result = run_phase(store.as_mut(), &mut phase).expect("replay");
            engine_rates[i].push(result.ops_per_sec);
        }
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!("spork at a {} MiB budget, {ROUNDS} rounds, medians:", BUDGET >> 20);
    println!("{:<10} {:>16} {:>16} {:>8}", "phase", "generator ops/s", "engine ops/s", "ratio");
    for (i, name) in workload.phase_names().iter().enumerate() {
        let g = kvtune::stats::median(&gen_rates[i]);
        let e = kvtune::stats::median(&engine_rates[i]);
        println!("{name:<10} {g:>16.0} {e:>16.0} {:>7.1}x", g / e);
    }
}
