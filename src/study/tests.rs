//! The study loop against a scripted runner: contenders, the confirmation
//! schedule, pruning, rejections, the verdict and resuming, without running
//! a trial.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use super::*;
use crate::budget::MIB;
use crate::dataset::Dataset;
use crate::engine::rocksdb::RocksDb;
use crate::outcome::{Baseline, SearchLimits};
use crate::record::Measurement;
use crate::record::Objective;
use crate::scale::Scale;
use crate::search::Admissible;
use crate::search::{Proposal, Sampler, Strategy};
use crate::space::Value;
use crate::trial::scripted::{ended, ok, ScriptedRunner};
use crate::trial::Interrupted;

const BUDGET: u64 = 256 * MIB;

const SPACE: &str = r#"
[params.bloom_bits]
kind = "int"
min = 0
max = 20

[params.block_cache_share]
kind = "float"
min = 0.05
max = 0.5
"#;

fn header(trials: usize, confirm_top: usize, confirm_repeats: usize) -> StudyHeader {
    StudyHeader {
        kvtune_version: "test".into(),
        engine: "rocksdb".into(),
        dataset: Dataset::find("spork").unwrap(),
        full_budget: BUDGET,
        scale: Scale { shift: 0 },
        scale_reason: "test".into(),
        space_name: "test".into(),
        space_text: SPACE.into(),
        strategy: Strategy::Random,
        objectives: vec![Objective::Throughput],
        trials,
        time_budget_secs: None,
        calibration_secs: 0.0,
        racing: false,
        early_stop: true,
        quiet: Default::default(),
        confirm_top,
        confirm_repeats,
        verify_scale: None,
        verify_note: String::new(),
        baseline: None,
        seed: 3,
        limits_at_start: None,
    }
}

fn space() -> Space {
    Space::parse("test", SPACE, &RocksDb.param_names()).unwrap()
}

fn bloom(c: &Candidate) -> i64 {
    c["bloom_bits"].as_f64().unwrap() as i64
}

/// A study run with `sampler` against `runner`, in a fresh folder.
struct Run {
    dir: tempfile::TempDir,
}

impl Run {
    fn new() -> Self {
        Run { dir: tempfile::tempdir().unwrap() }
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    fn study(
        &self,
        header: StudyHeader,
        prior: Option<Vec<TrialRecord>>,
        sampler: Box<dyn Sampler>,
        runner: &dyn TrialRunner,
    ) -> anyhow::Result<StudyOutcome> {
        run(StudySettings {
            header,
            resume: prior.is_some(),
            space: space(),
            sampler,
            out_dir: self.out(),
            engine: &RocksDb,
            runner,
            scratch: self.dir.path().join("scratch"),
            show_progress: false,
            worker: WorkerSettings::default(),
        })
    }

    fn journal_trials(&self) -> Vec<TrialRecord> {
        let entries = Journal::read(&self.out().join("journal.jsonl")).unwrap();
        journal::trials(&entries).into_iter().cloned().collect()
    }
}

fn random(header: &StudyHeader) -> Box<dyn Sampler> {
    header.strategy.sampler(
        &space(),
        header.trials,
        header.seed,
        &Objective::Throughput,
        Admissible::any(),
        true,
    )
}

/// Proposes bloom_bits = 2 x the number of trials it was told of, so what
/// it proposes shows what it learnt; logs every ask and tell.
struct Learning {
    told: usize,
    log: Rc<RefCell<Vec<String>>>,
}

impl Sampler for Learning {
    fn ask(&mut self, _: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        let bits = 2 * self.told as i64;
        self.log.borrow_mut().push(format!("ask after {} trials: {bits}", history.len()));
        let candidate = [("bloom_bits".to_string(), Value::Int(bits))].into_iter().collect();
        Some(Proposal { candidate, origin: "model".into() })
    }

    fn tell(&mut self, trial: &TrialRecord) {
        self.told += 1;
        self.log.borrow_mut().push(format!("tell {}", trial.label));
    }
}

fn learning() -> (Box<dyn Sampler>, Rc<RefCell<Vec<String>>>) {
    let log = Rc::new(RefCell::new(vec![]));
    (Box::new(Learning { told: 0, log: log.clone() }), log)
}

/// Faster with more bloom bits: 1000 + 10 per bit ops/s, 10 s a trial.
fn by_bloom(c: &Candidate) -> Measurement {
    ok(1000.0 + 10.0 * bloom(c) as f64, 10.0)
}

#[test]
fn the_best_search_candidates_and_the_defaults_are_confirmed_in_shuffled_rounds() {
    let run = Run::new();
    let runner = ScriptedRunner::new(by_bloom);
    let (sampler, _) = learning();
    let outcome = run.study(header(5, 2, 4), None, sampler, &runner).unwrap();
    let search: Vec<&TrialRecord> = outcome.trials.iter().filter(|t| t.stage == Stage::Search).collect();
    assert_eq!(search.iter().map(|t| bloom(&t.candidate)).collect::<Vec<_>>(), vec![0, 2, 4, 6, 8]);
    // The two fastest search candidates (#4 with 8 bits, #3 with 6) and the
    // defaults, once each per round, in an order drawn afresh each round.
    let confirm: Vec<&TrialRecord> = outcome.trials.iter().filter(|t| t.stage == Stage::Confirm).collect();
    let mut orders = std::collections::HashSet::new();
    for round in 0..4 {
        let mut labels: Vec<&str> =
            confirm.iter().filter(|t| t.round == Some(round)).map(|t| t.label.as_str()).collect();
        orders.insert(labels.clone());
        labels.sort_unstable();
        assert_eq!(labels, ["#3", "#4", "defaults"], "round {round}");
    }
    assert!(orders.len() > 1, "every round ran in the same order: {orders:?}");
    let v = outcome.verdict.unwrap();
    assert_eq!(v.recommended().label, "#4");
    assert_eq!(v.contenders.iter().map(|c| c.summary.n).collect::<Vec<_>>(), [4, 4, 4]);
    // The report's inputs are complete: the options at the full budget and RocksDB's own file.
    assert!(outcome.options_files.unwrap()[0].text.contains("bloom"));
    assert!(outcome.option_rows.iter().any(|r| r.name == "bloom_bits_per_key" && r.changed()));
    assert!(run.out().join("preset.toml").exists() && run.out().join("report.md").exists());
    // trials.csv, appended trial by trial, is what one write of every trial gives.
    let written = std::fs::read(run.out().join("trials.csv")).unwrap();
    assert_eq!(written, report::csv::trials_csv(&space(), &outcome.phase_names, &outcome.trials).unwrap());
}

#[test]
fn a_full_disk_stops_the_study_with_the_trial_recorded_and_a_resume_goes_on() {
    let full = |c: &Candidate| match bloom(c) {
        4 => {
            Measurement::not_run(Status::Failed, "disk full in /work (1 MiB free when it failed): ...".into())
        }
        _ => by_bloom(c),
    };
    let run = Run::new();
    let (sampler, _) = learning();
    let stopped =
        run.study(header(5, 1, 2), None, sampler, &ScriptedRunner::new(full)).unwrap_err().to_string();
    assert!(stopped.contains("ran out of space") && stopped.contains("--resume"), "{stopped}");
    assert!(stopped.contains("stopped at trial 2 (#2)") && stopped.contains("needs about"), "{stopped}");
    // The journal keeps the trial as the study's stop, not as a result.
    let entries = Journal::read(&run.out().join("journal.jsonl")).unwrap();
    let stop = entries.iter().find_map(|e| match e {
        Entry::Stopped(t) => t.measurement.reason.clone(),
        _ => None,
    });
    assert!(stop.is_some_and(|r| r.starts_with("disk full")));
    let prior = run.journal_trials();
    assert_eq!(prior.len(), 2, "the trials before it");
    let page = std::fs::read_to_string(run.out().join("report.html")).unwrap();
    assert!(page.contains("stopped before it finished") && !page.contains("http-equiv=\"refresh\""));
    // With room again, the resumed study runs that trial again and goes on to its end.
    let (sampler, _) = learning();
    let outcome = run.study(header(5, 1, 2), Some(prior), sampler, &ScriptedRunner::new(by_bloom)).unwrap();
    let searched: Vec<i64> =
        outcome.trials.iter().filter(|t| t.stage == Stage::Search).map(|t| bloom(&t.candidate)).collect();
    assert_eq!(searched, [0, 2, 4, 6, 8], "the stopped trial (4 bits) ran again, once");
    assert!(outcome.verdict.is_some());
}

#[test]
fn the_engine_as_shipped_runs_beside_the_contenders_but_is_never_recommended() {
    let run = Run::new();
    // Stock RocksDB (a tiny block cache here) is the fastest of all, yet it is
    // a reference, not a candidate: the recommendation is measured against it.
    let stock = |c: &Candidate| c["block_cache_share"].as_f64().unwrap() < 0.2;
    let runner =
        ScriptedRunner::new(move |c: &Candidate| if stock(c) { ok(2000.0, 10.0) } else { by_bloom(c) });
    let (sampler, _) = learning();
    let (candidate, description) = RocksDb.shipped_defaults(BUDGET).unwrap();
    let baseline = Baseline { label: "stock-rocksdb".into(), candidate, description };
    let header = StudyHeader { baseline: Some(baseline), ..header(5, 2, 3) };
    assert_eq!(header.confirm_runs(), 12);
    let outcome = run.study(header, None, sampler, &runner).unwrap();
    let confirm: Vec<&TrialRecord> = outcome.trials.iter().filter(|t| t.stage == Stage::Confirm).collect();
    assert_eq!(confirm.len(), 12);
    for round in 0..3 {
        let stock_runs =
            confirm.iter().filter(|t| t.round == Some(round) && t.label == "stock-rocksdb").count();
        assert_eq!(stock_runs, 1, "round {round}");
    }
    let v = outcome.verdict.unwrap();
    assert_eq!(v.recommended().label, "#4");
    let stock = v.baseline().unwrap();
    assert!(stock.p_adjusted.is_none() && stock.paired.is_some(), "{stock:?}");
    let over = v.over_baseline.unwrap();
    assert_eq!(over.n, 3);
    assert!((over.change.point - (1080.0 / 2000.0 - 1.0)).abs() < 1e-9, "{over:?}");
    let report = std::fs::read_to_string(run.out().join("report.md")).unwrap();
    assert!(report.contains("Against stock-rocksdb (RocksDB as shipped: the fitted defaults but for the block cache, RocksDB's own 32 MiB"), "{report}");
    assert!(report.contains("baseline, not a candidate"), "{report}");
    assert!(report.contains("**The recommendation measured below stock-rocksdb (p < 0.05)**"), "{report}");
    let preset = std::fs::read_to_string(run.out().join("preset.toml")).unwrap();
    assert!(preset.contains("gain_over_baseline = -0.4"), "{preset}");
}

#[test]
fn the_engine_as_shipped_is_measured_where_the_memory_model_would_reject_it() {
    // At 48 MiB, RocksDB's own 32 MiB cache, its memtables and the model's
    // overhead do not fit the memory model; the baseline runs anyway and the
    // cgroup, not the model, decides (here it fits).
    let budget = 48 * MIB;
    let (candidate, description) = RocksDb.shipped_defaults(budget).unwrap();
    let request_budget = Scale { shift: 0 }.apply(budget);
    let resolved = RocksDb.resolve(&candidate, request_budget).unwrap();
    let shape = Dataset::find("spork").unwrap().workload(request_budget).shape();
    assert!(resolved.memory.misfit(shape, request_budget).is_some(), "the model rejects it at this budget");
    let run = Run::new();
    let (sampler, _) = learning();
    let baseline = Baseline { label: "stock-rocksdb".into(), candidate, description };
    let header = StudyHeader { baseline: Some(baseline), full_budget: budget, ..header(3, 1, 3) };
    let outcome = run.study(header, None, sampler, &ScriptedRunner::new(by_bloom)).unwrap();
    let stock: Vec<Status> =
        outcome.trials.iter().filter(|t| t.label == "stock-rocksdb").map(|t| t.measurement.status).collect();
    assert_eq!(stock, [Status::Ok; 3]);
    assert!(outcome.verdict.unwrap().over_baseline.is_some());
}

/// 10 s trials; the 9 confirmation runs alone take 90 s.
fn timed(limit: f64, calibration_secs: f64) -> StudyHeader {
    StudyHeader { time_budget_secs: Some(limit), calibration_secs, ..header(20, 2, 3) }
}

#[test]
fn a_time_limit_that_leaves_the_search_nothing_says_so_and_what_would_fit() {
    let study = |limit: f64, calibration_secs: f64| {
        let run = Run::new();
        let (sampler, _) = learning();
        run.study(timed(limit, calibration_secs), None, sampler, &ScriptedRunner::new(by_bloom))
    };
    // Room for the confirmation, not for much search: it confirms, and says so.
    let note = study(145.0, 0.0).unwrap().search_cut_short.expect("a note on the short limit");
    assert!(note.starts_with("--time 2m 25s left the search 4 trials beyond the defaults"), "{note}");
    assert!(note.contains("--time 7m gives the search about 30 trials"), "{note}");
    // Room for the search: no note.
    let outcome = study(600.0, 0.0).unwrap();
    assert!(outcome.trials.iter().filter(|t| t.stage == Stage::Search).count() > 5);
    assert_eq!(outcome.search_cut_short, None);
    // The calibration ran inside the limit: 520 s of it leave the search
    // nothing, and the confirmation no room either.
    let stop = format!("{:#}", study(600.0, 520.0).expect_err("the calibration used up the limit"));
    assert!(stop.contains("--time 16m` goes on"), "{stop}");
}

#[test]
fn a_time_limit_too_short_for_the_confirmation_stops_before_it_and_a_longer_one_goes_on() {
    let run = Run::new();
    let (sampler, _) = learning();
    let stop = run.study(timed(60.0, 0.0), None, sampler, &ScriptedRunner::new(by_bloom)).unwrap_err();
    let stop = format!("{stop:#}");
    assert!(stop.starts_with("--time 1m left the search 0 trials beyond the defaults"), "{stop}");
    assert!(
        stop.contains("about 2 min more, past the limit: the study stopped before its confirmation"),
        "{stop}"
    );
    assert!(stop.contains("--time 7m` goes on with a search of about 30 trials"), "{stop}");
    assert!(stop.contains("--time 7m --create-only` records the limit for them"), "{stop}");
    let prior = run.journal_trials();
    assert!(!prior.is_empty() && prior.iter().all(|t| t.stage == Stage::Search), "{prior:?}");
    let page = std::fs::read_to_string(run.out().join("report.html")).unwrap();
    assert!(page.contains("stopped before its confirmation") && page.contains("--time 7m"), "{page}");
    // The same limit again stops again, before any run.
    let (sampler, _) = learning();
    let again = run.study(timed(60.0, 0.0), Some(prior.clone()), sampler, &ScriptedRunner::new(by_bloom));
    assert!(format!("{:#}", again.unwrap_err()).contains("stopped before its confirmation"));
    assert_eq!(run.journal_trials().len(), prior.len());
    // The limit it named, as a resume records it: the search goes on, then the confirmation.
    let mut longer = timed(60.0, 0.0);
    longer.change_limits(SearchLimits { trials: 20, time_budget_secs: Some(420.0) });
    let journal = Journal::open(&run.out().join("journal.jsonl")).unwrap();
    journal.lock().unwrap().append(&Entry::Limits(longer.limits())).unwrap();
    // A worker that began with the old limits takes the new ones from the journal.
    let (sampler, _) = learning();
    let began = timed(60.0, 0.0);
    let outcome = run.study(began, Some(prior.clone()), sampler, &ScriptedRunner::new(by_bloom)).unwrap();
    let searched = outcome.trials.iter().filter(|t| t.stage == Stage::Search).count();
    assert!(searched > prior.len() + 5, "{searched} search trials");
    assert!(outcome.verdict.is_some());
}

#[test]
fn the_study_clock_counts_each_runs_overhead_shared_with_the_runs_beside_it() {
    let run = |number: usize, side_by_side: usize, overhead_secs: f64| TrialRecord {
        side_by_side,
        overhead_secs,
        ..TrialRecord::replayed(number, Candidate::default(), ok(1000.0, 10.0))
    };
    let header = StudyHeader { calibration_secs: 30.0, ..header(5, 1, 1) };
    let (space, trials) = (space(), [run(0, 1, 2.0), run(1, 2, 4.0)]);
    let history = History { header: &header, trials: &trials, space: &space, engine: &RocksDb };
    // 30 s of calibration, 10 + 2 s alone, (10 + 4) / 2 s beside another worker's run.
    assert_eq!(history.spent(), 49.0);
}

#[test]
fn the_time_reserved_errs_long_a_fast_contender_costed_as_a_slow_search_trial() {
    let run = |number: usize, label: &str, ops: f64, wall: f64| TrialRecord {
        label: label.into(),
        is_default: label == "defaults",
        ..TrialRecord::replayed(number, Candidate::default(), ok(ops, wall))
    };
    // The best candidate (#4) runs 8 s, most trials 10 s, one 30 s.
    let trials = [
        run(0, "defaults", 1000.0, 10.0),
        run(1, "#1", 900.0, 10.0),
        run(2, "#2", 900.0, 10.0),
        run(3, "#3", 800.0, 30.0),
        run(4, "#4", 1200.0, 8.0),
    ];
    let header = header(20, 1, 1);
    let space = space();
    let history = History { header: &header, trials: &trials, space: &space, engine: &RocksDb };
    let (typical, reserved) = history.time_after_search().unwrap();
    // Above the median (10 s), below the slowest.
    assert!(typical > 10.0 && typical < 30.0, "{typical}");
    // One round: #4 at the search's cost rather than its own 8 s, and the defaults' 10 s.
    assert_eq!(reserved, typical + 10.0);
}

#[test]
fn failed_and_pruned_candidates_are_not_contenders() {
    let run = Run::new();
    // 6 bits fails, 8 bits is OOM-killed, 4 bits is faster than all but far too slow to finish.
    let runner = ScriptedRunner::new(|c: &Candidate| match bloom(c) {
        4 => ok(5000.0, 100.0),
        6 => ended(Status::Failed, 2.0),
        8 => ended(Status::Infeasible, 2.0),
        _ => by_bloom(c),
    });
    let (sampler, _) = learning();
    let outcome = run.study(header(5, 2, 1), None, sampler, &runner).unwrap();
    let status: Vec<Status> =
        outcome.trials.iter().filter(|t| t.stage == Stage::Search).map(|t| t.measurement.status).collect();
    assert_eq!(status, [Status::Ok, Status::Ok, Status::Pruned, Status::Failed, Status::Infeasible]);
    let mut confirmed: Vec<&str> =
        outcome.trials.iter().filter(|t| t.stage == Stage::Confirm).map(|t| t.label.as_str()).collect();
    confirmed.sort_unstable();
    assert_eq!(confirmed, ["#1", "defaults"]);
}

#[test]
fn search_trials_are_pruned_at_three_times_the_defaults_time_and_confirmation_runs_never() {
    let run = Run::new();
    let runner = ScriptedRunner::new(by_bloom);
    let (sampler, _) = learning();
    run.study(header(3, 1, 2), None, sampler, &runner).unwrap();
    let limits: Vec<Option<Duration>> = runner.calls.borrow().iter().map(|(_, limit)| *limit).collect();
    let three_times = Some(Duration::from_secs_f64(10.0 * PRUNE_FACTOR));
    assert_eq!(limits, [None, three_times, three_times, None, None, None, None]);
}

#[test]
fn candidates_the_memory_model_rejects_are_recorded_but_never_run() {
    let run = Run::new();
    let runner = ScriptedRunner::new(by_bloom);
    // Every other ask wants a cache of the whole budget: it cannot fit.
    struct Greedy(usize);
    impl Sampler for Greedy {
        fn ask(&mut self, _: &Space, _: &[TrialRecord]) -> Option<Proposal> {
            self.0 += 1;
            let share = if self.0 % 2 == 1 { 1.0 } else { 0.1 };
            let candidate = [("block_cache_share".to_string(), Value::Float(share))].into_iter().collect();
            Some(Proposal { candidate, origin: "model".into() })
        }
    }
    let outcome = run.study(header(3, 1, 1), None, Box::new(Greedy(0)), &runner).unwrap();
    let status: Vec<Status> =
        outcome.trials.iter().filter(|t| t.stage == Stage::Search).map(|t| t.measurement.status).collect();
    assert_eq!(status, [Status::Ok, Status::Rejected, Status::Ok, Status::Rejected, Status::Ok]);
    let rejected = &outcome.trials[1].measurement;
    assert!(rejected.reason.as_deref().unwrap().contains("block cache 256 MiB"), "{rejected:?}");
    // Three search trials ran (the rejections do not count) and two confirmation runs.
    assert_eq!(runner.calls.borrow().len(), 3 + 2);
}

/// Confirmation runs in call order after `search` search trials: the round
/// of each, given `per_round` runs a round.
fn round_of(calls: usize, search: usize, per_round: usize) -> usize {
    calls.saturating_sub(search) / per_round
}

#[test]
fn a_contender_that_fails_a_confirmation_run_is_not_recommended() {
    let run = Run::new();
    let calls = RefCell::new(0);
    // The 8-bit candidate is far faster, but its second confirmation run is OOM-killed.
    let runner = ScriptedRunner::new(move |c: &Candidate| {
        *calls.borrow_mut() += 1;
        if bloom(c) == 8 && round_of(*calls.borrow() - 1, 5, 2) == 1 {
            return ended(Status::Infeasible, 1.0);
        }
        ok(if bloom(c) == 8 { 2000.0 } else { 1000.0 + 10.0 * bloom(c) as f64 }, 10.0)
    });
    let (sampler, _) = learning();
    let outcome = run.study(header(5, 1, 5), None, sampler, &runner).unwrap();
    let v = outcome.verdict.unwrap();
    let fast = v.contenders.iter().find(|c| c.label == "#4").unwrap();
    assert_eq!(fast.summary.n, 4, "{fast:?}");
    assert!(fast.disqualified.as_deref().unwrap().contains("round 2: infeasible"), "{fast:?}");
    assert!(!v.beats_defaults);
    assert_eq!(v.recommended().label, "defaults");
    let report = std::fs::read_to_string(run.out().join("report.md")).unwrap();
    assert!(report.contains("#4 cannot be recommended"), "{report}");
}

#[test]
fn a_steady_ten_percent_gain_wins_paired_where_drift_hides_it_from_an_unpaired_test() {
    let run = Run::new();
    let calls = RefCell::new(0);
    // Each round the machine is 15% faster than the round before; within a
    // round the 8-bit candidate is 10% faster than the defaults (+-1%).
    let runner = ScriptedRunner::new(move |c: &Candidate| {
        *calls.borrow_mut() += 1;
        let round = round_of(*calls.borrow() - 1, 5, 2);
        let drift = 1.15f64.powi(round as i32);
        let jitter = [1.01, 0.99, 1.0, 1.005, 0.995][round % 5];
        let gain = if bloom(c) == 8 { 1.1 * jitter } else { 1.0 };
        ok(1000.0 * drift * gain, 10.0)
    });
    let (sampler, _) = learning();
    let outcome = run.study(header(5, 1, 5), None, sampler, &runner).unwrap();
    let v = outcome.verdict.unwrap();
    let best = v.recommended();
    assert_eq!(best.label, "#4");
    assert!(v.beats_defaults);
    let paired = best.paired.unwrap();
    assert!((paired.change.point - 0.1).abs() < 0.01 && paired.p < 0.001, "{paired:?}");
    let defaults = &v.defaults().unwrap().runs;
    assert!(crate::stats::mann_whitney_p(&best.runs, defaults) > 0.05, "the unpaired test should not see it");
    assert!(v.min_detectable_change.unwrap() < 0.05, "{:?}", v.min_detectable_change);
}

#[test]
fn what_the_rounds_resolved_is_the_winners_own_noise_not_a_wild_round_beside_it() {
    let run = Run::new();
    let calls = RefCell::new(0);
    // The 8-bit candidate is a steady 10% faster (+-1%); the 6-bit one, 2%
    // faster, once ran at a quarter of its speed (as a trial thrashing its
    // page cache did in a real ycsb-c confirmation).
    let runner = ScriptedRunner::new(move |c: &Candidate| {
        *calls.borrow_mut() += 1;
        let round = round_of(*calls.borrow() - 1, 5, 3);
        let jitter = [1.01, 0.99, 1.0, 1.005, 0.995][round % 5];
        let gain = match bloom(c) {
            8 => 1.1 * jitter,
            6 if round == 2 && *calls.borrow() > 5 => 0.25,
            6 => 1.02,
            _ => 1.0,
        };
        ok(1000.0 * gain, 10.0)
    });
    let (sampler, _) = learning();
    let v = run.study(header(5, 2, 5), None, sampler, &runner).unwrap().verdict.unwrap();
    assert_eq!(v.recommended().label, "#4");
    assert!(v.beats_defaults);
    let wild = v.contenders.iter().find(|c| c.label == "#3").unwrap().paired.unwrap();
    assert!(wild.sd_log_ratio > 0.5, "{wild:?}");
    assert!(v.min_detectable_change.unwrap() < 0.05, "{:?}", v.min_detectable_change);
}

/// Proposes bloom_bits 2, 4, ... and then nothing, as a model that has
/// nothing left worth a trial does.
struct TwoThenNothing;

impl Sampler for TwoThenNothing {
    fn ask(&mut self, _: &Space, history: &[TrialRecord]) -> Option<Proposal> {
        let bits = 2 * history.len() as i64;
        let candidate = [("bloom_bits".to_string(), Value::Int(bits))].into_iter().collect();
        (history.len() <= 2).then(|| Proposal { candidate, origin: "model".into() })
    }
}

#[test]
fn a_sampler_that_stops_early_leaves_its_time_to_more_confirmation_rounds() {
    let runner = ScriptedRunner::new(by_bloom);
    let rounds = |outcome: &StudyOutcome| {
        let confirm = outcome.trials.iter().filter(|t| t.stage == Stage::Confirm);
        confirm.filter_map(|t| t.round).max().map_or(0, |r| r + 1)
    };
    let timed = |trials: usize, limit: Option<f64>, sampler: Box<dyn Sampler>| {
        let mut header = header(trials, 1, 3);
        header.time_budget_secs = limit;
        let run = Run::new();
        let outcome = run.study(header, None, sampler, &runner).unwrap();
        (rounds(&outcome), outcome, run)
    };
    // 3 search trials of 10 s; a round (#2 and the defaults) costs 20 s.
    // 150 s leave 150 - 30 spent - 10 margin - 3 asked rounds = 50 s: 2 more.
    let (n, outcome, run) = timed(10, Some(150.0), Box::new(TwoThenNothing));
    assert_eq!(n, 5);
    assert_eq!(outcome.search_ended.as_ref().unwrap().spare_rounds, 2);
    let summary = crate::report::text::answer(&outcome, &run.out());
    assert!(summary.contains("on 2 more rounds than --confirm-repeats asked (5 in all)"), "{summary}");
    let report = std::fs::read_to_string(run.out().join("report.md")).unwrap();
    assert!(report.contains("and the defaults in 5 rounds"), "{report}");
    // Time to spare for many: at most as many again as asked.
    assert_eq!(timed(10, Some(1e4), Box::new(TwoThenNothing)).0, 6);
    // No --time, or a search its --trials closed: the rounds asked.
    assert_eq!(timed(10, None, Box::new(TwoThenNothing)).0, 3);
    let header = header(3, 1, 3);
    assert_eq!(timed(3, Some(1e4), random(&header)).0, 3);
}

#[test]
fn the_report_says_why_the_search_stopped_and_the_summary_when_its_sampler_stopped_first() {
    let run = Run::new();
    let runner = ScriptedRunner::new(by_bloom);
    let outcome = run.study(header(10, 1, 3), None, Box::new(TwoThenNothing), &runner).unwrap();
    let end = outcome.search_ended.clone().expect("the confirmation began");
    assert!(end.by_sampler && end.why.contains("had nothing left"), "{end:?}");
    let summary = crate::report::text::answer(&outcome, &run.out());
    assert!(
        summary.contains("The search stopped after 3 trials, within its limits of 10 trials"),
        "{summary}"
    );

    let run = Run::new();
    let header = header(4, 1, 3);
    let outcome = run.study(header.clone(), None, random(&header), &runner).unwrap();
    let end = outcome.search_ended.clone().unwrap();
    assert_eq!((end.by_sampler, end.why.as_str()), (false, "it reached its limit of 4 trials"));
    assert!(!crate::report::text::answer(&outcome, &run.out()).contains("The search stopped"));
    let report = std::fs::read_to_string(run.out().join("report.md")).unwrap();
    assert!(
        report.contains("The search stopped after 4 trials: it reached its limit of 4 trials."),
        "{report}"
    );
}

#[test]
fn contenders_are_verified_at_a_larger_scale_and_their_ranks_compared() {
    let run = Run::new();
    let runner = ScriptedRunner::new(by_bloom);
    let (sampler, _) = learning();
    let mut header = header(5, 2, 4);
    header.scale = Scale { shift: 2 };
    header.verify_scale = Some(Scale { shift: 0 });
    let outcome = run.study(header, None, sampler, &runner).unwrap();
    let verify: Vec<&TrialRecord> = outcome.trials.iter().filter(|t| t.stage == Stage::Verify).collect();
    assert_eq!(verify.len(), 3);
    assert!(verify.iter().all(|t| t.budget == BUDGET), "verify runs at the larger budget");
    assert!(outcome.trials.iter().filter(|t| t.stage == Stage::Confirm).all(|t| t.budget == BUDGET / 4));
    let transfer = outcome.transfer.unwrap();
    assert_eq!(transfer.spearman, Some(1.0));
    assert_eq!(transfer.winner_still_wins, Some(true));
}

/// `by_bloom`, except that at the full budget 8 bits measures as given.
struct AtFullBudget(ScriptedRunner, Measurement);

impl TrialRunner for AtFullBudget {
    fn run(
        &self,
        spec: &crate::trial::TrialSpec,
        label: &str,
        prune_after: Option<Duration>,
    ) -> anyhow::Result<Measurement> {
        if spec.budget == BUDGET && bloom(&spec.candidate) == 8 {
            return Ok(self.1.clone());
        }
        self.0.run(spec, label, prune_after)
    }
}

#[test]
fn a_winner_that_loses_clearly_or_fails_at_the_larger_scale_is_not_recommended() {
    // Half as fast as the defaults there, or not finishing at all.
    for (there, why) in [
        (ok(500.0, 10.0), "at scale 1 it measured -50.0%"),
        (ended(Status::Failed, 2.0), "its run at scale 1 did not complete"),
    ] {
        let run = Run::new();
        let runner = AtFullBudget(ScriptedRunner::new(by_bloom), there);
        let (sampler, _) = learning();
        let mut header = header(5, 2, 4);
        header.scale = Scale { shift: 2 };
        header.verify_scale = Some(Scale { shift: 0 });
        let outcome = run.study(header, None, sampler, &runner).unwrap();
        let v = outcome.verdict.unwrap();
        let vetoed = v.contenders.iter().find(|c| c.label == "#4").unwrap();
        assert!(vetoed.disqualified.as_deref().unwrap().contains(why), "{vetoed:?}");
        // The next contender, 6 bits, beats the defaults at both scales.
        assert_eq!(v.recommended().label, "#3");
        assert!(v.beats_defaults);
        assert_eq!(outcome.transfer.unwrap().winner_still_wins, Some(true));
        let report = std::fs::read_to_string(run.out().join("report.md")).unwrap();
        assert!(report.contains(&format!("#4 cannot be recommended: {why}")), "{report}");
    }
}

/// Fails the study (as Ctrl-C does) at the `at`-th run.
struct StopAt<'a> {
    inner: &'a ScriptedRunner,
    at: usize,
}

impl TrialRunner for StopAt<'_> {
    fn run(
        &self,
        spec: &crate::trial::TrialSpec,
        label: &str,
        prune_after: Option<Duration>,
    ) -> anyhow::Result<Measurement> {
        if self.inner.calls.borrow().len() + 1 == self.at {
            return Err(Interrupted.into());
        }
        self.inner.run(spec, label, prune_after)
    }
}

/// A study run whole with the learning sampler, and the same study stopped
/// (as by Ctrl-C) at its 4th run.
struct LiveAndCut {
    header: StudyHeader,
    live: StudyOutcome,
    live_log: Rc<RefCell<Vec<String>>>,
    cut: Run,
    stopped: anyhow::Result<StudyOutcome>,
}

fn live_and_cut() -> LiveAndCut {
    let header = header(6, 1, 2);
    let whole = Run::new();
    let (sampler, live_log) = learning();
    let live = whole.study(header.clone(), None, sampler, &ScriptedRunner::new(by_bloom)).unwrap();
    let cut = Run::new();
    let (sampler, _) = learning();
    let scripted = ScriptedRunner::new(by_bloom);
    let stopped = cut.study(header.clone(), None, sampler, &StopAt { inner: &scripted, at: 4 });
    LiveAndCut { header, live, live_log, cut, stopped }
}

impl LiveAndCut {
    /// Resumes the cut study and checks it asked, told and ran what the live one did.
    fn resumed_as_live(self, prior: Vec<TrialRecord>) {
        let (sampler, resumed_log) = learning();
        let resumed =
            self.cut.study(self.header, Some(prior), sampler, &ScriptedRunner::new(by_bloom)).unwrap();
        assert_eq!(*resumed_log.borrow(), *self.live_log.borrow());
        let plan = |o: &StudyOutcome| {
            o.trials.iter().map(|t| (t.label.clone(), t.candidate.clone())).collect::<Vec<_>>()
        };
        assert_eq!(plan(&resumed), plan(&self.live));
    }
}

#[test]
fn a_resumed_study_tells_its_sampler_what_a_live_one_told_it() {
    let run = live_and_cut();
    let cut = &run.cut;
    assert!(run.stopped.as_ref().unwrap_err().downcast_ref::<Interrupted>().is_some());
    let prior = cut.journal_trials();
    assert_eq!(prior.len(), 3);
    // The report was rewritten when the study stopped, and says so.
    let stopped_page = std::fs::read_to_string(cut.out().join("report.html")).unwrap();
    assert!(stopped_page.contains("stopped before it finished"), "{stopped_page}");
    assert!(!stopped_page.contains("http-equiv=\"refresh\""), "a stopped study's page does not reload");
    assert!(stopped_page.contains("3 search trials so far"), "{stopped_page}");

    run.resumed_as_live(prior);
}

#[test]
fn random_search_is_the_same_for_a_seed() {
    let plan = || {
        let run = Run::new();
        let header = header(4, 0, 1);
        let outcome =
            run.study(header.clone(), None, random(&header), &ScriptedRunner::new(by_bloom)).unwrap();
        outcome.trials.iter().map(|t| t.candidate.clone()).collect::<Vec<_>>()
    };
    assert_eq!(plan(), plan());
}

#[test]
fn racing_keeps_a_lucky_single_run_from_becoming_the_incumbent() {
    let run = Run::new();
    let calls = RefCell::new(std::collections::HashMap::<i64, usize>::new());
    // The defaults: one lucky first run (1500), then 1000. 2 bits: one lucky
    // first run (1500), then 850 each time: worse than the defaults' 1000 by
    // more than a race forgives after one pair. 4 bits: a steady 1100, which
    // the defaults' lucky run alone would have kept from racing.
    // Everything else: 950.
    let runner = ScriptedRunner::new(move |c: &Candidate| {
        let mut calls = calls.borrow_mut();
        let n = calls.entry(bloom(c)).or_default();
        *n += 1;
        let ops = match (bloom(c), *n) {
            (0 | 2, 1) => 1500.0,
            (0, _) => 1000.0,
            (2, _) => 850.0,
            (4, _) => 1100.0 * (1.0 + 0.001 * *n as f64),
            _ => 950.0,
        };
        ok(ops, 10.0)
    });
    let (sampler, _) = learning();
    let mut header = header(4, 1, 3);
    header.racing = true;
    let outcome = run.study(header, None, sampler, &runner).unwrap();
    let races: Vec<(&str, &str)> = outcome
        .trials
        .iter()
        .filter(|t| t.stage == Stage::Race)
        .map(|t| (t.origin.as_str(), t.label.as_str()))
        .collect();
    // Labels are trial numbers, racing runs included. The defaults ran
    // three times (0-2): their median, 1000, is the first incumbent's
    // standing. #3 (2 bits) raced the defaults and lost after one pair; #6
    // (4 bits) won after two; #11 (6 bits, 950) was not within reach of the
    // new incumbent.
    let repeats: Vec<usize> =
        outcome.trials.iter().filter(|t| t.origin == racing::REPEAT_ORIGIN).map(|t| t.number).collect();
    assert_eq!(repeats, [1, 2]);
    assert_eq!(races.iter().filter(|(o, _)| *o == "race:#3").count(), 2, "{races:?}");
    assert_eq!(races.iter().filter(|(o, _)| *o == "race:#6").count(), 4, "{races:?}");
    assert!(!races.iter().any(|(o, _)| *o == "race:#11"), "{races:?}");
    assert_eq!(racing::incumbent(&outcome.trials, &Objective::Throughput).as_deref(), Some("#6"));
    let summary = &outcome.racing;
    assert_eq!(
        (summary.races, summary.won, summary.overturned, summary.runs, summary.repeats),
        (2, 1, 1, 6, 2)
    );
    // The confirmed contender is the race's winner, not the lucky run.
    let confirmed: Vec<&str> =
        outcome.trials.iter().filter(|t| t.stage == Stage::Confirm).map(|t| t.label.as_str()).collect();
    assert!(confirmed.contains(&"#6") && !confirmed.contains(&"#3"), "{confirmed:?}");
}

#[test]
fn a_latency_objective_is_minimised_and_its_gain_is_the_drop() {
    let run = Run::new();
    // Latency p99 of the only phase: 100 us less 5 per bloom bit.
    let runner = ScriptedRunner::new(|c: &Candidate| {
        let mut m = by_bloom(c);
        m.phases[0].latency.p99_us = 100.0 - 5.0 * bloom(c) as f64;
        m
    });
    let (sampler, _) = learning();
    let mut header = header(5, 1, 4);
    header.objectives = vec!["latency:only:p99".parse().unwrap()];
    let outcome = run.study(header, None, sampler, &runner).unwrap();
    let v = outcome.verdict.unwrap();
    assert_eq!(v.recommended().label, "#4");
    assert_eq!(v.recommended().summary.median.point, 60.0);
    // The merit gain is 100/60 - 1; the report reads it as -40% latency.
    assert!((v.recommended().paired.unwrap().change.point - (100.0 / 60.0 - 1.0)).abs() < 1e-9);
    let report = std::fs::read_to_string(run.out().join("report.md")).unwrap();
    assert!(report.contains("60.00 us") && report.contains("40.0% lower than the defaults"), "{report}");
}

/// A scripted runner that takes a little wall time, so workers in threads
/// side by side interleave.
struct Slow(ScriptedRunner);

impl TrialRunner for Slow {
    fn run(
        &self,
        spec: &crate::trial::TrialSpec,
        label: &str,
        prune_after: Option<Duration>,
    ) -> anyhow::Result<Measurement> {
        std::thread::sleep(Duration::from_millis(15));
        self.0.run(spec, label, prune_after)
    }
}

/// Runs the study in `out` as worker `name` (a new study when `create`).
fn work(out: PathBuf, header: StudyHeader, name: &str, create: bool) -> anyhow::Result<StudyOutcome> {
    let sampler = random(&header);
    let runner = Slow(ScriptedRunner::new(by_bloom));
    run(StudySettings {
        header,
        resume: !create,
        space: space(),
        sampler,
        out_dir: out.clone(),
        engine: &RocksDb,
        runner: &runner,
        scratch: out.with_extension(name),
        show_progress: false,
        worker: WorkerSettings { name: name.into(), stale_after: Duration::from_secs(60) },
    })
}

#[test]
fn workers_sharing_a_study_record_every_trial_once_and_keep_pairs_on_one_worker() {
    let run = Run::new();
    let mut header = header(12, 2, 4);
    header.racing = true;
    create(&run.out(), &header).unwrap();
    let workers: Vec<_> = ["w1", "w2", "w3"]
        .into_iter()
        .map(|name| {
            let (out, header) = (run.out(), header.clone());
            std::thread::spawn(move || work(out, header, name, false).map(|o| o.verdict.is_some()))
        })
        .collect();
    for worker in workers {
        assert!(worker.join().unwrap().unwrap(), "each worker ends with the study's verdict");
    }
    let entries = Journal::read(&run.out().join("journal.jsonl")).unwrap();
    let trials = run.journal_trials();
    // Every claimed run recorded once, under its number; nothing else.
    let claimed: Vec<usize> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Claimed(c) => Some(c.runs.iter().map(|r| r.number).collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect();
    let mut numbers: Vec<usize> = trials.iter().map(|t| t.number).collect();
    numbers.sort();
    let mut claimed_sorted = claimed.clone();
    claimed_sorted.sort();
    assert_eq!(numbers, claimed_sorted, "each claimed run recorded exactly once");
    assert_eq!(numbers, (0..numbers.len()).collect::<Vec<_>>());
    // The search ran its 12 trials, each candidate once, spread over the workers.
    let search: Vec<&TrialRecord> = trials.iter().filter(|t| t.stage == Stage::Search).collect();
    assert_eq!(search.len(), 12);
    let candidates: std::collections::BTreeSet<String> =
        search.iter().map(|t| serde_json::to_string(&t.candidate).unwrap()).collect();
    assert_eq!(candidates.len(), 12, "no candidate proposed twice");
    let by: std::collections::BTreeSet<&str> = search.iter().map(|t| t.worker.as_str()).collect();
    assert!(by.len() >= 2, "the search was shared: {by:?}");
    // A confirmation round, and a racing pair, ran on one worker.
    for stage in [Stage::Confirm, Stage::Race] {
        let mut rounds =
            std::collections::BTreeMap::<(String, usize), std::collections::BTreeSet<&str>>::new();
        for t in trials.iter().filter(|t| t.stage == stage) {
            rounds.entry((t.origin.clone(), t.round.unwrap())).or_default().insert(&t.worker);
        }
        assert!(rounds.values().all(|w| w.len() == 1), "{stage}: {rounds:?}");
    }
    assert_eq!(trials.iter().filter(|t| t.stage == Stage::Confirm).count(), 4 * 3);
    assert_eq!(entries.iter().filter(|e| matches!(e, Entry::Finished { .. })).count(), 1);
    assert!(run.out().join("report.md").exists() && run.out().join("preset.toml").exists());
    assert_eq!(csv::Reader::from_path(run.out().join("trials.csv")).unwrap().records().count(), trials.len());
}

#[test]
fn a_task_claimed_by_a_worker_that_stopped_is_run_again_by_another_under_its_numbers() {
    let run = Run::new();
    let header = header(4, 1, 2);
    // A worker ran the defaults and #1, claimed #2 and stopped (no heartbeat).
    let scripted = ScriptedRunner::new(by_bloom);
    let stopped = run.study(header.clone(), None, random(&header), &StopAt { inner: &scripted, at: 3 });
    assert!(stopped.unwrap_err().downcast_ref::<Interrupted>().is_some());
    let entries = Journal::read(&run.out().join("journal.jsonl")).unwrap();
    let Some(Entry::Claimed(orphan)) = entries.last() else { panic!("{entries:?}") };
    assert_eq!((orphan.task.as_str(), orphan.runs[0].number), ("search:#2", 2));

    let outcome = work(run.out(), header, "other", false).unwrap();
    let taken: Vec<&TrialRecord> = outcome.trials.iter().filter(|t| t.label == "#2").collect();
    assert_eq!(taken.len(), 1, "run once");
    assert_eq!((taken[0].number, taken[0].worker.as_str()), (2, "other"));
    assert_eq!(taken[0].candidate, orphan.runs[0].entrant.candidate, "the claimed candidate, not a new ask");
    let entries = Journal::read(&run.out().join("journal.jsonl")).unwrap();
    let claims_of_2 =
        entries.iter().filter(|e| matches!(e, Entry::Claimed(c) if c.task == "search:#2")).count();
    assert_eq!(claims_of_2, 2, "claimed, then taken over");
}

#[test]
fn a_worker_with_a_live_heartbeat_keeps_its_claim() {
    let run = Run::new();
    let header = header(3, 1, 2);
    let scripted = ScriptedRunner::new(by_bloom);
    let _ = run.study(header.clone(), None, random(&header), &StopAt { inner: &scripted, at: 2 });
    // The claim of #1 is rewritten as a live worker's, whose heartbeat beats.
    let path = run.out().join("journal.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let name = WorkerSettings::default().name;
    std::fs::write(&path, text.replace(&format!("\"worker\":\"{name}\""), "\"worker\":\"busy\"")).unwrap();
    let _beat = workers::Heartbeat::start(&run.out(), "busy").unwrap();
    let journal = Journal::open(&path).unwrap();
    let locked = journal.lock().unwrap();
    let trials: Vec<TrialRecord> = journal::trials(&locked.entries).into_iter().cloned().collect();
    let claims: Vec<Claim> = locked
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Claimed(c) => Some((**c).clone()),
            _ => None,
        })
        .collect();
    let recorded: BTreeSet<usize> = trials.iter().map(|t| t.number).collect();
    let rivals = BTreeMap::new();
    let defaults = RocksDb.defaults(BUDGET);
    let space = space();
    let history = History { header: &header, trials: &trials, space: &space, engine: &RocksDb };
    let watch = workers::Watch::new(&run.out(), Duration::from_secs(60));
    let alive = |c: &Claim| watch.alive(&c.worker);
    let board = Board {
        history,
        claims: claims.iter().collect(),
        recorded: &recorded,
        rivals: &rivals,
        held: &alive,
        defaults: &defaults,
        exhausted: false,
    };
    // Another worker does not take #1 over: it asks for a new candidate.
    assert_eq!(board.next(), Plan::Ask);
}

#[test]
fn a_journal_written_before_claims_resumes_with_the_same_proposals() {
    let run = live_and_cut();
    // As an older kvtune wrote it: no claims, no workers.
    let path = run.cut.out().join("journal.jsonl");
    let old: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("\"event\":\"claimed\""))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, old).unwrap();
    run.resumed_as_live(vec![]);
}

#[test]
fn a_journal_read_puts_the_last_limits_a_resume_set_in_force_and_keeps_the_first() {
    let dir = tempfile::tempdir().unwrap();
    create(dir.path(), &header(3, 1, 3)).unwrap();
    let journal = Journal::open(&dir.path().join("journal.jsonl")).unwrap();
    for limits in [(5, Some(600.0)), (7, None)] {
        let limits = SearchLimits { trials: limits.0, time_budget_secs: limits.1 };
        journal.lock().unwrap().append(&Entry::Limits(limits)).unwrap();
    }
    let read = journal::read_study(dir.path()).unwrap().header;
    assert_eq!((read.trials, read.time_budget_secs), (7, None));
    assert_eq!(read.limits_at_start, Some(SearchLimits { trials: 3, time_budget_secs: None }));
    // Without a change the header reads as it started.
    let plain = tempfile::tempdir().unwrap();
    create(plain.path(), &header(3, 1, 3)).unwrap();
    assert_eq!(journal::read_study(plain.path()).unwrap().header, header(3, 1, 3));
}

#[test]
fn a_study_of_a_dataset_that_deletes_ranges_searches_no_row_cache() {
    let space = Space::find("rocksdb", &RocksDb.param_names()).unwrap();
    let tbs = Dataset::find("tbs").unwrap();
    let (narrowed, held) = searched(&RocksDb, &space, &tbs);
    assert_eq!(held.iter().map(|h| h.name).collect::<Vec<_>>(), ["row_cache_share"]);
    assert_eq!(narrowed.params.len(), space.params.len() - 1);
    // Every draw of the searched space passes the dataset's rules; of
    // the whole space, most would not.
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(7);
    let passes = |s: &Space, rng: &mut rand::rngs::StdRng| {
        (0..100)
            .filter(|_| RocksDb.check_dataset(&RocksDb.complete(&s.sample(rng), 1 << 30), &tbs).is_ok())
            .count()
    };
    assert_eq!(passes(&narrowed, &mut rng), 100);
    assert!(passes(&space, &mut rng) < 50);
    let (all, none) = searched(&RocksDb, &space, &Dataset::find("spork").unwrap());
    assert_eq!(
        (all.params.len(), none),
        (space.params.len(), vec![]),
        "spork holds nothing the space searches"
    );
}

#[test]
fn a_memtable_share_below_the_floor_is_weighed_where_it_runs() {
    // At 64 MiB (the 128 GiB budget at 1/2048) a memtable is at least 2
    // MiB: 0.5% of the budget in 2 memtables runs as 2 x 2 MiB, 6.25%.
    let full = 128 * 1024 * MIB;
    let admissible = admissible(&RocksDb, Dataset::find("tbs").unwrap(), full, full / 2048);
    let mut asked = Candidate::new();
    asked.insert("memtable_share".into(), Value::Float(0.005));
    asked.insert("max_write_buffer_number".into(), Value::Int(2));
    let ran = admissible.as_run(&asked);
    assert_eq!(ran["memtable_share"], Value::Float(0.0625));
    assert!(admissible.runs_alike(&asked, &ran), "{ran:?} runs as {asked:?} does");
    asked.insert("memtable_share".into(), Value::Float(0.3));
    assert_eq!(admissible.as_run(&asked), asked, "above the floor it runs as asked");
}
