//! The child-process trial runner with a real memory cgroup.

use std::time::Duration;

use kvtune::budget::MIB;
use kvtune::dataset::Dataset;
use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::record::Status;
use kvtune::space::{Candidate, Value};
use kvtune::trial::cgroup::{CgroupError, MemoryCgroup};
use kvtune::trial::{ChildRunner, Quiet, Registry, TrialRunner, TrialSpec};

fn runner(dir: &std::path::Path) -> ChildRunner {
    ChildRunner {
        exe: env!("CARGO_BIN_EXE_kvtune").into(),
        workdir: dir.to_path_buf(),
        timeout: Duration::from_secs(300),
        quiet: Quiet::default(),
        neighbours: Registry::machine(),
    }
}

const BUDGET: u64 = 64 * MIB;

/// A spork trial of `candidate` at a 64 MiB budget.
fn spec(candidate: Candidate, dataset: Dataset) -> TrialSpec {
    TrialSpec {
        engine: "rocksdb".into(),
        candidate: RocksDb.complete(&candidate, BUDGET),
        dataset,
        budget: BUDGET,
        seed: 1,
    }
}

fn spork() -> Dataset {
    Dataset::find("spork").unwrap()
}

fn assert_no_leftovers(dir: &std::path::Path) {
    assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "trial directory left behind");
}

/// Whether memory cgroups can be made here. Where the OS has none (no memory
/// controller, or not root), the test says it is skipped; with
/// KVTUNE_REQUIRE_CGROUPS=1 (CI sets it) that is a failure instead.
fn cgroups_available(test: &str) -> bool {
    let required = std::env::var("KVTUNE_REQUIRE_CGROUPS").is_ok_and(|v| v == "1");
    match MemoryCgroup::create(&format!("kvtune-{}-probe-{test}", std::process::id()), 1 << 30) {
        Ok(_) => true,
        Err(why) if required => {
            panic!("{test}: KVTUNE_REQUIRE_CGROUPS=1 but no memory cgroup can be made: {why}")
        }
        Err(why @ (CgroupError::NoController | CgroupError::Membership(_))) => {
            eprintln!("SKIPPED {test}: no memory cgroup on this machine ({why})");
            false
        }
        Err(why) if unsafe { libc::geteuid() } != 0 => {
            eprintln!("SKIPPED {test}: not root, so no memory cgroup can be made ({why})");
            false
        }
        Err(why) => panic!("{test}: root, with a memory controller, yet no cgroup: {why}"),
    }
}

#[test]
fn a_trial_killed_by_its_cgroup_is_infeasible() {
    if !cgroups_available("a_trial_killed_by_its_cgroup_is_infeasible") {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Four times spork's data, and memtables that hold the whole budget
    // before RocksDB may flush (7 of 8 must fill first): the cap is crossed.
    let text = kvtune::dataset::BUILT_IN[0]
        .1
        .replace("registers_per_budget_gib = 3_800_000", "registers_per_budget_gib = 15_200_000");
    let dataset = Dataset::parse("big-spork", &text).unwrap();
    let candidate: Candidate = [
        ("memtable_share", Value::Float(1.0)),
        ("max_write_buffer_number", Value::Int(8)),
        ("min_write_buffer_number_to_merge", Value::Int(7)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let m = runner(dir.path()).run(&spec(candidate, dataset), "oom", None).unwrap();
    assert_eq!(m.status, Status::Infeasible, "{m:?}");
    assert!(m.reason.as_deref().unwrap().contains("cgroup"), "{m:?}");
    assert_no_leftovers(dir.path());
}

#[test]
fn a_fitting_trial_reports_peak_memory_from_the_cgroup() {
    if !cgroups_available("a_fitting_trial_reports_peak_memory_from_the_cgroup") {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let m = runner(dir.path()).run(&spec(Candidate::new(), spork()), "fits", None).unwrap();
    assert_eq!(m.status, Status::Ok, "{m:?}");
    assert!(m.memory_source.contains("cgroup"), "{}", m.memory_source);
    assert!(m.peak_memory > 0 && m.peak_memory <= BUDGET, "peak {} over the cap {BUDGET}", m.peak_memory);
    // The process's own memory and the page cache, apart, each under the cap.
    assert!(m.peak_anon > 0 && m.peak_anon < BUDGET, "anon {}", m.peak_anon);
    assert!(m.peak_page_cache > 0 && m.peak_page_cache <= BUDGET, "page cache {}", m.peak_page_cache);
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
    let m = runner(dir.path()).run(&spec(Candidate::new(), spork()), "slow", limit).unwrap();
    assert_eq!(m.status, Status::Pruned, "{m:?}");
    assert!(m.wall_secs < 5.0, "{m:?}");
    assert_no_leftovers(dir.path());
}

/// A trial whose work directory fills up (a 16 MiB tmpfs) is failed as
/// "disk full", naming the directory and its free space, with RocksDB's own
/// error message, and cleaned up.
/// Mounting needs root, as the cgroup tests do.
#[test]
fn a_trial_that_fills_its_disk_is_failed_as_disk_full() {
    if !cgroups_available("a_trial_that_fills_its_disk_is_failed_as_disk_full") {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mount = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"])
        .arg(dir.path())
        .output();
    if !mount.is_ok_and(|m| m.status.success()) {
        eprintln!(
            "SKIPPED a_trial_that_fills_its_disk_is_failed_as_disk_full: no tmpfs could be mounted here"
        );
        return;
    }
    let m = runner(dir.path()).run(&spec(Candidate::new(), spork()), "full", None);
    let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
    let unmount = std::process::Command::new("umount").arg(dir.path()).output().expect("umount runs");
    let m = m.unwrap();
    assert_eq!(m.status, Status::Failed, "{m:?}");
    let reason = m.reason.unwrap_or_default();
    assert!(
        reason.starts_with(kvtune::trial::DISK_FULL) && reason.contains("free when it failed"),
        "{reason}"
    );
    assert!(reason.contains(&dir.path().display().to_string()), "{reason}");
    // RocksDB's own error, as RocksDB words it.
    assert!(reason.contains("IO error: No space left on device"), "{reason}");
    assert_eq!(leftovers, 0, "trial directory left behind");
    assert!(unmount.status.success());
}

#[test]
fn compaction_left_behind_is_waited_for_and_billed_to_its_phase() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Compaction deferred until 16 files sit in L0: the bootstrap ends with
    // compaction pending.
    let candidate: Candidate =
        [("level0_file_num_compaction_trigger".to_string(), Value::Int(16))].into_iter().collect();
    let m = runner(dir.path()).run(&spec(candidate, spork()), "settle", None).unwrap();
    assert_eq!(m.status, Status::Ok, "{m:?}");
    let bootstrap = &m.phases[0];
    assert!(bootstrap.settle_secs > 0.0, "{bootstrap:?}");
    // A phase's rate is its operations over its whole time, settling included.
    let rate = bootstrap.ops as f64 / (bootstrap.engine_secs + bootstrap.settle_secs);
    assert!((bootstrap.ops_per_sec - rate).abs() < 1e-6 * rate, "{bootstrap:?}");
    // Sizes and memory are read after settling, per phase and at the end.
    assert!(m.phases.iter().all(|p| p.disk_bytes > 0 && p.memory.memtables > 0), "{:?}", m.phases);
    assert!(m.disk_bytes > 0 && m.bytes_per_key.unwrap() > 0.0);
    // Where the time went: the bootstrap is put batches, the serve phase reads.
    assert_eq!(bootstrap.calls[0].kind, "put batch");
    let serve: Vec<&str> = m.phases[2].calls.iter().map(|c| c.kind.as_str()).collect();
    assert!(
        serve.contains(&"reverse seek") && serve.contains(&"scan") && serve.contains(&"get"),
        "{serve:?}"
    );
    let shares: f64 = m.phases[2].calls.iter().map(|c| c.share_of_time).sum();
    assert!(shares > 0.9 && shares <= 1.0 + 1e-9, "{shares}");
    // The CPU the trial's threads used, from wait4.
    assert!(m.cpu.user_secs > 0.0 && m.cpu_micros_per_op().unwrap() > 0.0, "{:?}", m.cpu);
    assert_no_leftovers(dir.path());
}
