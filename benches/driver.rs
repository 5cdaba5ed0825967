//! What the Go driver's pipe adds to a phase: each engine replays spork's
//! phases at a 256 MiB budget, batch by batch as the replay does, and the
//! wall time of each batch's round trip (encode, pipe, decode) is set
//! against the engine time the driver measured inside it. RocksDB, in
//! process, is the reference (its gap is the replay's own loop). Target:
//! the driver adds under 5% to the read-heavy phase (serve).
//! `cargo bench --bench driver` (needs Go for the Go engines).

use std::time::Instant;

use kvtune::dataset::ops::{calls, Batch};
use kvtune::dataset::Dataset;
use kvtune::engine::{self, Timed};

const BUDGET: u64 = 256 << 20;

fn main() {
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch dir");
    let workload = Dataset::find("spork").expect("spork").workload(BUDGET);
    println!(
        "spork at a {} MiB budget: wall time of each batch's calls against the engine's own time in them",
        BUDGET >> 20
    );
    println!(
        "{:<8} {:<10} {:>10} {:>12} {:>12} {:>9}",
        "engine", "phase", "ops", "engine s", "wall s", "added"
    );
    for name in ["rocksdb", "pebble", "badger", "bbolt"] {
        let engine = engine::find(name).expect("an engine");
        if let Err(e) = engine.prepare() {
            println!("{name:<8} skipped: {e:#}");
            continue;
        }
        let mut store = engine.open(&engine.defaults(BUDGET), BUDGET, &work.path().join(name)).expect("open");
        for mut phase in workload.phases(1) {
            let (mut ops, mut engine_nanos, mut wall) = (0u64, 0u64, 0f64);
            let mut batch = Batch::default();
            let mut timed: Vec<Timed> = vec![];
            while phase.source.next_batch(&mut batch) {
                let calls = calls(&batch.ops);
                timed.clear();
                let start = Instant::now();
                store.run_calls(&batch, phase.source.corpus(), &calls, &mut timed).expect("calls");
                wall += start.elapsed().as_secs_f64();
                engine_nanos += timed.iter().map(|t| t.nanos).sum::<u64>();
                ops += batch.ops.len() as u64;
            }
            store.settle().expect("settle");
            let engine_secs = engine_nanos as f64 / 1e9;
            println!(
                "{name:<8} {:<10} {ops:>10} {engine_secs:>12.3} {wall:>12.3} {:>8.1}%",
                phase.name,
                (wall / engine_secs - 1.0) * 100.0
            );
        }
    }
}
