//! Every built-in dataset replays on the real engine, at its own data size
//! and at its documented larger-than-memory setting (data twice the budget).

use std::time::Duration;

use kvtune::dataset::{Dataset, BUILT_IN};
use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::record::Status;
use kvtune::space::Candidate;
use kvtune::trial::{ChildRunner, Quiet, Registry, TrialRunner, TrialSpec};

const BUDGET: u64 = 64 << 20;

fn run(dataset: Dataset) -> kvtune::record::Measurement {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let runner = ChildRunner {
        exe: env!("CARGO_BIN_EXE_kvtune").into(),
        workdir: dir.path().to_path_buf(),
        timeout: Duration::from_secs(600),
        quiet: Quiet::default(),
        neighbours: Registry::machine(),
    };
    let spec = TrialSpec {
        engine: "rocksdb".into(),
        candidate: RocksDb.complete(&Candidate::new(), BUDGET),
        dataset,
        budget: BUDGET,
        seed: 1,
    };
    runner.run(&spec, "dataset", None).unwrap()
}

#[test]
fn every_built_in_dataset_runs_larger_than_memory_on_rocksdb() {
    for (name, _) in BUILT_IN {
        let dataset = Dataset::find(name).unwrap().with_data_ratio(2.0).unwrap();
        let shape = dataset.workload(BUDGET).shape();
        let ratio = shape.user_bytes as f64 / BUDGET as f64;
        assert!((ratio - 2.0).abs() < 0.1, "{name}: data/budget {ratio}");
        let m = run(dataset);
        assert_eq!(m.status, Status::Ok, "{name}: {m:?}");
        assert!(m.phases.iter().all(|p| p.ops > 0), "{name}: {:?}", m.phases);
        assert!(m.disk_bytes > 0, "{name}");
    }
}
