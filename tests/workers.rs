//! Studies shared by workers, for real: two workers on this machine
//! (`--workers 2`), a study run by a Slurm array job on a one-node cluster
//! started here (tests/slurm/start-cluster.sh) with one worker killed
//! mid-trial, and the Kubernetes job checked against Kubernetes' schema.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use kvtune::record::{Stage, TrialRecord};
use kvtune::study::journal::{self, Entry, Journal};
use kvtune::study::task::Claim;

/// A short study at 64 MiB: 6 search trials, 1 contender, 3 rounds.
fn study_args(out: &Path) -> Vec<String> {
    small(&[
        "--trials",
        "6",
        "--strategy",
        "random",
        "--confirm-top",
        "1",
        "--confirm-repeats",
        "3",
        "--verify-scale",
        "off",
        "--time",
        "off",
        "--out",
        &path_arg(out),
    ])
}

fn entries(study: &Path) -> Vec<Entry> {
    Journal::read(&study.join("journal.jsonl")).unwrap()
}

fn claims(entries: &[Entry]) -> Vec<&Claim> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Claimed(c) => Some(&**c),
            _ => None,
        })
        .collect()
}

/// Every run a claim named is recorded exactly once, under its number, and
/// nothing else is; confirmation rounds each ran on one worker.
fn every_claimed_run_recorded_once(entries: &[Entry]) {
    let trials = journal::trials(entries);
    let mut recorded: Vec<usize> = trials.iter().map(|t| t.number).collect();
    recorded.sort();
    let claimed: BTreeSet<usize> =
        claims(entries).iter().flat_map(|c| c.runs.iter().map(|r| r.number)).collect();
    assert_eq!(recorded, claimed.into_iter().collect::<Vec<_>>(), "recorded once each, none lost");
    let mut rounds: BTreeMap<usize, BTreeSet<&str>> = BTreeMap::new();
    for t in trials.iter().filter(|t| t.stage == Stage::Confirm) {
        rounds.entry(t.round.unwrap()).or_default().insert(&t.worker);
    }
    assert!(rounds.values().all(|w| w.len() == 1), "a round on one worker: {rounds:?}");
    assert!(matches!(entries.last(), Some(Entry::Finished { .. })));
}

/// The study's outputs, as a local run writes them.
fn outputs_written(study: &Path, workers: &[&str]) {
    for file in ["preset.toml", "OPTIONS", "report.md", "report.html", "trials.csv"] {
        assert!(study.join(file).exists(), "{file} missing");
    }
    let report = std::fs::read_to_string(study.join("report.md")).unwrap();
    assert!(report.contains("## Workers"), "{report}");
    for w in workers {
        assert!(report.contains(&format!("| {w} |")), "{w} not in the report's workers");
    }
    let rows = csv::Reader::from_path(study.join("trials.csv")).unwrap().records().count();
    assert_eq!(rows, journal::trials(&entries(study)).len());
}

#[test]
fn two_workers_on_this_machine_share_one_study() {
    let dir = scratch();
    let (out, work) = (dir.path().join("out"), dir.path().join("work"));
    let mut args = study_args(&out);
    args.extend(["--workers", "2", "--workdir", &path_arg(&work)].map(String::from));
    // A registry of its own: other tests' kvtune processes run beside this one.
    let running = dir.path().join("running");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_kvtune"))
        .args(&args)
        .env("KVTUNE_RUNNING_DIR", &running)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
    assert!(String::from_utf8_lossy(&run.stdout).contains("preset.toml"), "{}", text(&run));
    let entries = entries(&out);
    every_claimed_run_recorded_once(&entries);
    // Both workers registered as running trials (the one that ends first
    // may be swept by the other), and neither counted the other, its
    // study's, as a kvtune beside it.
    assert!(std::fs::read_dir(&running).unwrap().count() >= 1, "no worker registered");
    let helper_log = std::fs::read_to_string(out.join("workers/worker-1.log")).unwrap();
    for said in [text(&run), helper_log] {
        assert!(!said.contains("cannot watch for other kvtune"), "{said}");
        assert!(!said.contains("another kvtune is running trials"), "{said}");
    }
    let beside: Vec<usize> = journal::trials(&entries)
        .iter()
        .filter(|t| t.measurement.ran() && t.measurement.beside.as_ref().is_none_or(|b| !b.is_empty()))
        .map(|t| t.number)
        .collect();
    assert_eq!(beside, Vec::<usize>::new(), "runs marked beside the study's own worker, or not watched");
    let by: BTreeSet<String> = journal::trials(&entries).iter().map(|t| t.worker.clone()).collect();
    assert_eq!(by, BTreeSet::from(["worker-0".to_string(), "worker-1".to_string()]));
    outputs_written(&out, &["worker-0", "worker-1"]);
    assert!(std::fs::read_to_string(out.join("workers/worker-1.log")).unwrap().contains("trial"));
    // Nothing left running: no heartbeat, no trial directory.
    assert_eq!(std::fs::read_dir(out.join("workers")).unwrap().count(), 1, "only worker-1's log");
    let leftovers: Vec<_> = walk(&work).into_iter().filter(|p| p.is_dir()).collect();
    assert!(leftovers.iter().all(|p| p.ends_with("worker-0") || p.ends_with("worker-1")), "{leftovers:?}");
}

fn unix_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs_f64()
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = vec![];
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        found.push(entry.path());
        found.extend(walk(&entry.path()));
    }
    found
}

/// Slurm, started here, when it is installed (KVTUNE_REQUIRE_SLURM: it must be).
fn slurm() -> bool {
    let required = std::env::var_os("KVTUNE_REQUIRE_SLURM").is_some();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slurm/start-cluster.sh");
    let start = Command::new("bash").arg(&script).output().expect("bash runs");
    if start.status.success() {
        return true;
    }
    assert!(
        !required,
        "KVTUNE_REQUIRE_SLURM is set but the one-node Slurm cluster did not start: {}",
        text(&start)
    );
    eprintln!("skipped: no Slurm here ({})", text(&start).trim());
    false
}

/// Sends `name` to every process of a Slurm array task (`JOB_TASK`).
fn signal(array_task: &str, name: &str) {
    let sent =
        Command::new("scancel").args(["--full", &format!("--signal={name}"), array_task]).output().unwrap();
    assert!(sent.status.success(), "scancel --signal={name}: {}", text(&sent));
}

#[test]
fn a_slurm_array_job_runs_a_study_and_a_worker_killed_mid_trial_loses_nothing() {
    if !slurm() {
        return;
    }
    let dir = scratch();
    let (study, work) = (dir.path().join("study"), dir.path().join("work"));
    let mut create = study_args(&study);
    create.push("--create-only".into());
    let made = kvtune_with(&create);
    assert!(made.status.success(), "{}", text(&made));

    let launch = kvtune_with(
        &["launch", "slurm", &path_arg(&study), "--workers", "2", "--share-nodes", "--time-limit", "20m"]
            .into_iter()
            .map(String::from)
            .chain(["--workdir".into(), path_arg(&work)])
            .collect::<Vec<_>>(),
    );
    assert!(launch.status.success(), "{}", text(&launch));
    let job = String::from_utf8_lossy(&launch.stdout).trim().to_string();
    assert!(job.parse::<u64>().is_ok(), "sbatch's job id: {}", text(&launch));

    // Wait for a worker to be mid-trial on a task it claimed, then kill
    // that worker's array task outright (SIGKILL, as a lost machine).
    let started = Instant::now();
    let (victim, task, killed_at) = loop {
        assert!(started.elapsed() < Duration::from_secs(300), "no trial under way after 5 minutes");
        let entries = entries(&study);
        let recorded: BTreeSet<usize> = journal::trials(&entries).iter().map(|t| t.number).collect();
        let running = claims(&entries).into_iter().rev().find(|c| {
            c.runs.iter().any(|r| !recorded.contains(&r.number))
                && journal::trials(&entries).iter().any(|t| t.worker == c.worker)
        });
        // Well into its trial: claimed a while ago, its trial directory made.
        if let Some(c) = running.filter(|c| unix_now() - c.at > 0.7) {
            let array_task = c.worker.trim_start_matches("slurm-").replacen('-', "_", 1);
            let trial_dirs = walk(&work.join(c.worker.trim_start_matches("slurm-")));
            // Freeze it first, then look again: a trial that ended before
            // the freeze is not mid-trial, and the worker is let go on.
            if !trial_dirs.is_empty() {
                signal(&array_task, "STOP");
                let recorded: BTreeSet<usize> =
                    journal::trials(&self::entries(&study)).iter().map(|t| t.number).collect();
                if c.runs.iter().any(|r| !recorded.contains(&r.number)) {
                    signal(&array_task, "KILL");
                    break (c.worker.clone(), c.task.clone(), unix_now());
                }
                signal(&array_task, "CONT");
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };

    while !matches!(entries(&study).last(), Some(Entry::Finished { .. })) {
        assert!(started.elapsed() < Duration::from_secs(600), "the study did not finish in 10 minutes");
        std::thread::sleep(Duration::from_millis(500));
    }
    let entries = entries(&study);
    every_claimed_run_recorded_once(&entries);
    // The killed worker's task was claimed again by the other, which ran it.
    let of_task: Vec<&Claim> = claims(&entries).into_iter().filter(|c| c.task == task).collect();
    assert_eq!(of_task.len(), 2, "{task}: claimed, then taken over");
    let survivor = &of_task[1].worker;
    assert_ne!(survivor, &victim);
    let numbers: BTreeSet<usize> = of_task[0].runs.iter().map(|r| r.number).collect();
    let trials = journal::trials(&entries);
    let redone: Vec<&&TrialRecord> = trials.iter().filter(|t| numbers.contains(&t.number)).collect();
    assert!(redone.iter().any(|t| &t.worker == survivor), "{task} finished by {survivor}");
    outputs_written(&study, &[&victim, survivor]);

    // The timeline, for whoever reads the test's output.
    let requeued = of_task[1].at - killed_at;
    eprintln!("job {job}: {victim} killed during {task}; {survivor} claimed it again {requeued:.1} s later");
    let start = claims(&entries)[0].at;
    for c in claims(&entries) {
        let runs: Vec<String> = c
            .runs
            .iter()
            .map(|r| {
                let t = trials.iter().find(|t| t.number == r.number && t.worker == c.worker);
                let took =
                    t.map_or("not recorded".to_string(), |t| format!("{:.1} s", t.measurement.wall_secs));
                format!("#{} {} ({took})", r.number, r.entrant.label)
            })
            .collect();
        eprintln!("  {:6.1} s  {:14} {:16} {}", c.at - start, c.worker, c.task, runs.join(", "));
    }
}

#[test]
fn the_kubernetes_job_passes_the_kubernetes_schema() {
    let dir = scratch();
    let study = dir.path().join("study");
    let mut create = study_args(&study);
    create.push("--create-only".into());
    assert!(kvtune_with(&create).status.success());
    let args = ["launch", "k8s", &path_arg(&study), "--workers", "4", "--image", "registry.example/kvtune:1"];
    let refused = kvtune_with(&args.map(String::from));
    assert!(!refused.status.success() && text(&refused).contains("--claim"), "{}", text(&refused));
    let with_claim: Vec<String> =
        args.iter().chain(&["--claim", "kvtune-study"]).map(|a| a.to_string()).collect();
    let made = kvtune_with(&with_claim);
    assert!(made.status.success(), "{}", text(&made));
    let manifest = study.join("launch/k8s-job.yaml");
    let yaml = std::fs::read_to_string(&manifest).unwrap();
    for expected in
        ["completionMode: \"Indexed\"", "parallelism: 4", "topologyKey: \"kubernetes.io/hostname\""]
    {
        assert!(yaml.contains(expected), "{expected} missing from\n{yaml}");
    }
    let Some(python) = python_with("kubernetes_validate") else { return };
    let check = Command::new(python)
        .args(["-m", "kubernetes_validate", "--strict", "--kubernetes-version", "1.30.0"])
        .arg(&manifest)
        .output()
        .unwrap();
    assert!(check.status.success() && text(&check).contains("passed"), "{}", text(&check));
}
