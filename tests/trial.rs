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
    }
}

const BUDGET: u64 = 64 << 20;

/// A spork trial at a 64 MiB budget of `candidate` read at `options_budget`.
fn spec(candidate: &kvtune::space::Candidate, options_budget: u64) -> TrialSpec {
    TrialSpec {
        config: RocksConfig::from_candidate(candidate, options_budget).unwrap(),
        dataset: Dataset::find("spork").unwrap(),
        budget: BUDGET,
        seed: 1,
    }
}

fn assert_no_leftovers(dir: &std::path::Path) {
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "trial directory left behind");
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
    // Memtables of 1 GiB each under a 64 MiB cap: the memtable outgrows the cap.
    let mut candidate = default_candidate(BUDGET);
    candidate.insert("memtable_share".into(), Value::Float(0.5));
    let m = runner(dir.path()).run(&spec(&candidate, 4 << 30), "oom", None).unwrap();
    assert_eq!(m.status, Status::Infeasible, "{m:?}");
    assert!(m.reason.as_deref().unwrap().contains("cgroup"), "{m:?}");
    assert_no_leftovers(dir.path());
}

#[test]
fn a_fitting_trial_reports_peak_memory_from_the_cgroup() {
    if !cgroups_available() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let m = runner(dir.path()).run(&spec(&default_candidate(BUDGET), BUDGET), "fits", None).unwrap();
    assert_eq!(m.status, Status::Ok, "{m:?}");
    assert!(m.memory_source.contains("cgroup"), "{}", m.memory_source);
    assert!(m.peak_memory > 0 && m.peak_memory <= BUDGET, "peak {} over the cap {BUDGET}", m.peak_memory);
    assert!(m.write_amplification.unwrap() > 0.0);
    assert_eq!(m.phases.len(), 3);
    assert!(m.phases.iter().all(|p| p.ops > 0 && p.ops_per_sec > 0.0));
    let serve = &m.phases[2];
    assert!(serve.read_hit_rate.unwrap() > 0.5, "reads found too little: {serve:?}");
    assert_no_leftovers(dir.path());
}

#[test]
fn a_trial_past_its_prune_limit_is_pruned_and_cleaned_up() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let limit = Some(Duration::from_millis(300));
    let m = runner(dir.path()).run(&spec(&default_candidate(BUDGET), BUDGET), "slow", limit).unwrap();
    assert_eq!(m.status, Status::Pruned, "{m:?}");
    assert!(m.wall_secs < 5.0, "{m:?}");
    assert_no_leftovers(dir.path());
}
