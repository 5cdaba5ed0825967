//! Replay fidelity against an independent reference: spork exported as
//! RocksDB traces, replayed by RocksDB's own `db_bench -benchmarks=replay`
//! (Debian's rocksdb-tools) and by kvtune's replay driver, the same options
//! on both sides, phase by phase. Prints each side's rate (operations over
//! the phase's wall time, reading the trace included, without the wait for
//! compactions kvtune bills after the last call) and their ratio. Debian's db_bench is RocksDB 7.8.3 and kvtune links 11.8.1, so the
//! ratio holds the version difference as well as the drivers'. Run with
//! `cargo bench --bench fidelity` (needs db_bench on the PATH).

use std::process::Command;

use kvtune::dataset::trace::export::export;
use kvtune::dataset::trace::Format;
use kvtune::dataset::Dataset;
use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::replay::run_phase;
use kvtune::space::Value;

const BUDGET: u64 = 64 << 20;

fn main() {
    if Command::new("db_bench").arg("--help").output().is_err() {
        println!("db_bench is not installed (apt-get install rocksdb-tools): nothing to compare");
        return;
    }
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("scratch dir");
    let spork = Dataset::find("spork").expect("built-in dataset");
    let toml = work.path().join("spork.toml");
    let exported = export(&spork, BUDGET, 1, Format::RocksdbTrace, &toml).expect("export");
    let traces = Dataset::find(toml.to_str().expect("path")).expect("trace dataset");
    let defaults = RocksDb.defaults(BUDGET);
    let flags = db_bench_flags(&defaults);
    let mut store = RocksDb.open(&defaults, BUDGET, &work.path().join("kvtune")).expect("open RocksDB");
    let db = work.path().join("db_bench");
    println!(
        "spork at a {} MiB budget as RocksDB traces, RocksDB's defaults fitted to the budget:",
        BUDGET >> 20
    );
    println!("{:<10} {:>9} {:>16} {:>16} {:>7}", "phase", "ops", "kvtune ops/s", "db_bench ops/s", "ratio");
    for (i, (mut phase, file)) in
        traces.workload(BUDGET).phases(1).into_iter().zip(&exported.phases).enumerate()
    {
        // Everything counted, and timed as db_bench times its replay: the
        // whole phase, reading the trace included, but not the wait for
        // compactions kvtune bills after the last call.
        phase.warmup_ops = 0;
        let started = std::time::Instant::now();
        let result = run_phase(store.as_mut(), &mut phase).expect("replay");
        let wall = started.elapsed().as_secs_f64() - result.settle_secs;
        let ops = file.tally.total_ops();
        let run = Command::new("db_bench")
            .arg("--benchmarks=replay")
            .arg(format!("--trace_file={}", file.file.display()))
            .arg(format!("--db={}", db.display()))
            .arg("--num_column_families=2")
            // As fast as it can, not at the trace's recorded pace.
            .arg("--trace_replay_fast_forward=1000000")
            .arg(format!("--use_existing_db={}", (i > 0) as u8))
            .args(&flags)
            .output()
            .expect("db_bench runs");
        let text = String::from_utf8_lossy(&run.stdout);
        let secs = text
            .lines()
            .find(|l| l.starts_with("replay"))
            .and_then(|l| {
                l.split_whitespace()
                    .collect::<Vec<_>>()
                    .windows(2)
                    .find(|w| w[1] == "seconds")
                    .map(|w| w[0].to_string())
            })
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or_else(|| {
                panic!("no replay time in db_bench's output: {text}{}", String::from_utf8_lossy(&run.stderr))
            });
        let kvtune = result.ops as f64 / wall;
        let reference = ops as f64 / secs;
        println!("{:<10} {ops:>9} {kvtune:>16.0} {reference:>16.0} {:>7.2}", phase.name, kvtune / reference);
    }
}

/// db_bench's flags for the options kvtune's defaults candidate runs.
fn db_bench_flags(candidate: &kvtune::space::Candidate) -> Vec<String> {
    let options = RocksDb.resolve(candidate, BUDGET).expect("defaults").options;
    let get = |name: &str| options.get(name).cloned().unwrap_or(Value::Int(0));
    let mut flags: Vec<String> = [
        ("write_buffer_size", "write_buffer_size"),
        ("max_write_buffer_number", "max_write_buffer_number"),
        ("min_write_buffer_number_to_merge", "min_write_buffer_number_to_merge"),
        ("target_file_size_base", "target_file_size_base"),
        ("max_bytes_for_level_base", "max_bytes_for_level_base"),
        ("level0_file_num_compaction_trigger", "level0_file_num_compaction_trigger"),
        ("level0_slowdown_writes_trigger", "level0_slowdown_writes_trigger"),
        ("level0_stop_writes_trigger", "level0_stop_writes_trigger"),
        ("block_size", "block_size"),
        ("block_cache_size", "cache_size"),
        ("max_background_jobs", "max_background_jobs"),
        ("compression", "compression_type"),
    ]
    .iter()
    .map(|(ours, theirs)| format!("--{theirs}={}", get(ours)))
    .collect();
    flags.push("--bloom_bits=0".into());
    flags.push("--statistics=1".into());
    flags
}
