//! kvtune's own cost per trial as a study grows: a study whose trials cost
//! nothing (a runner that answers at once with a made-up throughput) runs
//! 10, 100 and 500 search trials, and the gap between one trial's end and
//! the next one's start (the sampler's ask, the journal append, the CSV and
//! live-report rewrites) is printed, median over the last tenth of each
//! study. Grid is what a long study at a tiny scale runs; bayes, whose
//! model grows with the history, is asked for 200 (it stops by itself once
//! its expected improvement stays below what a run can resolve, so "ran"
//! says how many it ran). `cargo bench --bench overhead`.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use kvtune::dataset::Dataset;
use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::outcome::{Strategy, StudyHeader};
use kvtune::record::{Measurement, Objective, Status};
use kvtune::scale::Scale;
use kvtune::search::Admissible;
use kvtune::space::Space;
use kvtune::study::{self, StudySettings};
use kvtune::trial::{TrialRunner, TrialSpec};

/// Answers at once; remembers when each trial was asked for.
struct Instant0 {
    starts: RefCell<Vec<Instant>>,
}

impl TrialRunner for Instant0 {
    fn run(&self, spec: &TrialSpec, _: &str, _: Option<Duration>) -> anyhow::Result<Measurement> {
        self.starts.borrow_mut().push(Instant::now());
        // A throughput that depends on the candidate, so models have something to fit.
        let bloom = spec.candidate.get("bloom_bits").and_then(|v| v.as_f64()).unwrap_or(0.0);
        let ops = 100_000.0 + 1_000.0 * bloom + 10.0 * (self.starts.borrow().len() % 7) as f64;
        Ok(Measurement {
            ops_per_sec: ops,
            wall_secs: 1.0,
            ..Measurement::not_run(Status::Ok, String::new())
        })
    }
}

fn header(strategy: Strategy, trials: usize, space: &Space) -> StudyHeader {
    StudyHeader {
        kvtune_version: env!("CARGO_PKG_VERSION").into(),
        engine: "rocksdb".into(),
        dataset: Dataset::find("spork").unwrap(),
        full_budget: 64 << 20,
        scale: Scale { shift: 0 },
        scale_reason: "bench".into(),
        space_name: space.name.clone(),
        space_text: space.text.clone(),
        strategy,
        objectives: vec![Objective::Throughput],
        trials,
        time_budget_secs: None,
        calibration_secs: 0.0,
        racing: false,
        early_stop: true,
        quiet: Default::default(),
        confirm_top: 1,
        confirm_repeats: 2,
        verify_scale: None,
        verify_note: String::new(),
        baseline: None,
        seed: 5,
        limits_at_start: None,
    }
}

/// Milliseconds between trials over the last tenth of a study of `trials`.
fn overhead(strategy: Strategy, trials: usize) -> (usize, f64, f64) {
    let space = Space::find("rocksdb", &RocksDb.param_names()).unwrap();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let runner = Instant0 { starts: RefCell::new(vec![]) };
    let header = header(strategy, trials, &space);
    let sampler =
        strategy.sampler(&space, trials, header.seed, &Objective::Throughput, Admissible::any(), true);
    let began = Instant::now();
    study::run(StudySettings {
        header,
        resume: false,
        worker: Default::default(),
        space,
        sampler,
        out_dir: dir.path().join("out"),
        engine: &RocksDb,
        runner: &runner,
        scratch: dir.path().join("scratch"),
        show_progress: false,
    })
    .unwrap();
    let total = began.elapsed().as_secs_f64();
    let starts = runner.starts.into_inner();
    // The confirmation's runs (one contender and the defaults, twice) come last.
    let search = &starts[..starts.len() - 4];
    let mut gaps: Vec<f64> = search.windows(2).map(|w| (w[1] - w[0]).as_secs_f64() * 1e3).collect();
    let last = gaps.split_off(gaps.len() - (gaps.len() / 10).max(1));
    let mut last = last;
    last.sort_by(f64::total_cmp);
    (search.len(), last[last.len() / 2], total)
}

fn main() {
    println!(
        "kvtune's own time per trial (trials that cost nothing; median over the last tenth of the study):"
    );
    println!("{:<8} {:>7} {:>7} {:>14} {:>10}", "strategy", "asked", "ran", "ms per trial", "study s");
    for (strategy, sizes) in [(Strategy::Grid, &[10, 100, 500][..]), (Strategy::Bayes, &[10, 100, 200][..])] {
        for &trials in sizes {
            let (ran, ms, total) = overhead(strategy, trials);
            println!("{:<8} {:>7} {:>7} {:>14.1} {:>10.1}", strategy.to_string(), trials, ran, ms, total);
        }
    }
}
