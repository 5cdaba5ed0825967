//! The trial runner with a real memory cgroup.

use std::time::Duration;

use kvtune::dataset::Dataset;
use kvtune::engine::rocksdb::{default_candidate, RocksConfig};
use kvtune::space::Value;
use kvtune::trial::cgroup::MemoryCgroup;
use kvtune::trial::{Runner, Status, TrialSpec};

fn runner(dir: &std::path::Path) -> Runner {
    Runner {
        exe: env!("CARGO_BIN_EXE_kvtune").into(),
        workdir: dir.to_path_buf(),
        timeout: Duration::from_secs(300),
        use_cgroup: true,
    }
}

fn cgroups_available() -> bool {
    match MemoryCgroup::create(&format!("kvtune-probe-{}", std::process::id()), 1 << 30) {
        Ok(_) => true,
        Err(why) => {
            eprintln!("no memory cgroup here ({why}): the cgroup assertions cannot run");
            false
        }
    }
}

#[test]
fn a_trial_killed_by_its_cgroup_is_infeasible() {
    if !cgroups_available() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let budget = 64 << 20;
    // Memtables of 1 GiB each under a 64 MiB cap: the memtable outgrows the cap.
    let mut candidate = default_candidate(budget);
    candidate.insert("memtable_share".into(), Value::Float(0.5));
    let config = RocksConfig::from_candidate(&candidate, 4 << 30).unwrap();
    let spec = TrialSpec {
        config,
        dataset: Dataset::find("spork").unwrap(),
        budget,
        seed: 1,
    };
    let m = runner(dir.path()).run(&spec, "oom", None).unwrap();
    assert_eq!(m.status, Status::Infeasible, "{m:?}");
    assert!(m.reason.as_deref().unwrap().contains("cgroup"), "{m:?}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "trial directory left behind"
    );
}

#[test]
fn a_fitting_trial_reports_peak_memory_from_the_cgroup() {
    if !cgroups_available() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let budget = 64 << 20;
    let config = RocksConfig::from_candidate(&default_candidate(budget), budget).unwrap();
    let spec = TrialSpec {
        config,
        dataset: Dataset::find("spork").unwrap(),
        budget,
        seed: 1,
    };
    let m = runner(dir.path()).run(&spec, "fits", None).unwrap();
    assert_eq!(m.status, Status::Ok, "{m:?}");
    assert!(m.memory_source.contains("cgroup"), "{}", m.memory_source);
    assert!(
        m.peak_memory > 0 && m.peak_memory <= budget,
        "peak {} over the cap {budget}",
        m.peak_memory
    );
    assert!(m.write_amplification.unwrap() > 0.0);
    assert_eq!(m.phases.len(), 3);
    assert!(m.phases.iter().all(|p| p.ops > 0 && p.ops_per_sec > 0.0));
    let serve = &m.phases[2];
    assert!(
        serve.read_hit_rate.unwrap() > 0.5,
        "reads found too little: {serve:?}"
    );
}

#[test]
fn a_trial_past_its_prune_limit_is_pruned_and_cleaned_up() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let budget = 64 << 20;
    let config = RocksConfig::from_candidate(&default_candidate(budget), budget).unwrap();
    let spec = TrialSpec {
        config,
        dataset: Dataset::find("spork").unwrap(),
        budget,
        seed: 1,
    };
    let m = runner(dir.path())
        .run(&spec, "slow", Some(Duration::from_millis(300)))
        .unwrap();
    assert_eq!(m.status, Status::Pruned, "{m:?}");
    assert!(m.wall_secs < 5.0, "{m:?}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "trial directory left behind"
    );
}
