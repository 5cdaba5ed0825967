//! Search efficiency on real measurements: every strategy replayed against
//! a table of measured runs (`benches/data/spork-table.csv`, recorded by the
//! command in `benches/data/README.md`), over `KVTUNE_SEARCH_SEEDS` seeds
//! (100 unless set). Each replay is a study as kvtune runs one: the defaults
//! first, then the strategy's proposals, each a search trial whose result is
//! one of its measured runs drawn at random (so the strategies meet the
//! machine's real noise); a trial that comes within reach of the incumbent
//! is raced against it with the study's own racing rules, and the model
//! learns from every run. Prints, per strategy, the search trials (the
//! defaults' included, as `--trials` counts them) and the runs (racing's
//! included) needed before a candidate within 5% of the table's best mean
//! has been tried (found) and before the study's own first contender is one
//! (picked), median and quartiles; how close both are after 10, 20 and 40
//! trials; and what racing spent. Then the strategies on the full RocksDB
//! space against a made-up landscape (where the table cannot look: how a
//! model behaves in 24 dimensions), and the time one bayes ask takes with
//! 100 finished search trials and 30 racing runs. Run with `cargo bench --bench search`;
//! `KVTUNE_SEARCH_TABLE=FILE` runs it on another table of the same space,
//! `KVTUNE_SEARCH_ROWS=bayes,tpe` only those rows,
//! `KVTUNE_SEARCH_FULL_SEEDS=N` the full space over N seeds (unless set, the
//! seeds above, at most 40).

use std::collections::HashMap;
use std::time::Instant;

use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::racing;
use kvtune::record::{Measurement, Objective, Stage, Status, TrialRecord};
use kvtune::search::{Admissible, BayesSampler, Sampler, Strategy, PUT_BACK_ORIGIN, STEP_ORIGIN};
use kvtune::space::{Candidate, Space, Value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const TABLE: &str = include_str!("data/spork-table.csv");
const TRIALS: usize = 40;
const HORIZONS: [usize; 3] = [10, 20, 40];
/// The trials within which the issue asks bayes to have found a candidate
/// within 5% of the best, in the median: the share of searches that did.
const BY: usize = 15;

type Table = HashMap<Vec<String>, Vec<f64>>;

/// Each grid point's measured runs, keyed by its values in column order.
fn load(space: &Space) -> Table {
    let text = match std::env::var("KVTUNE_SEARCH_TABLE") {
        Ok(path) => std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
        Err(_) => TABLE.to_string(),
    };
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let names: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let n = space.params.len();
    assert_eq!(names[..n], space.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>()[..]);
    let mut table: Table = HashMap::new();
    for row in reader.records().map(Result::unwrap) {
        let ops: f64 = row[n + 2].parse().unwrap();
        let runs = table.entry(row.iter().take(n).map(String::from).collect()).or_default();
        if &row[n + 1] == "ok" {
            runs.push(ops);
        }
    }
    table
}

fn key(space: &Space, c: &Candidate) -> Vec<String> {
    space.params.iter().map(|p| c[&p.name].to_string()).collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// How one replayed study stood after each of its search trials (its
/// races run): the best true mean among the candidates tried (found), the
/// true mean of the study's first contender (picked), and the runs spent.
#[derive(Default)]
struct Curve {
    found: Vec<f64>,
    picked: Vec<f64>,
    runs: Vec<usize>,
    /// Races run, and how many ended against the single-run ranking.
    races: usize,
    overturned: usize,
}

/// One replayed study.
struct Replay<'a> {
    space: &'a Space,
    table: &'a Table,
    rng: StdRng,
    /// A run's result is its point's true mean: what the strategy could do
    /// on this landscape if runs did not scatter.
    noiseless: bool,
    history: Vec<TrialRecord>,
}

impl Replay<'_> {
    fn true_mean(&self, candidate: &Candidate) -> f64 {
        self.table.get(&key(self.space, candidate)).map_or(0.0, |runs| mean(runs))
    }

    /// Runs `candidate` once: one of its measured runs, or its mean.
    fn run(&mut self, stage: Stage, label: &str, candidate: &Candidate, origin: &str) -> TrialRecord {
        let runs = self.table.get(&key(self.space, candidate)).cloned().unwrap_or_default();
        let drawn = runs.get(self.rng.random_range(0..runs.len().max(1))).copied();
        let ops = if self.noiseless { (!runs.is_empty()).then(|| mean(&runs)) } else { drawn };
        let measurement = match ops {
            Some(ops) => Measurement { ops_per_sec: ops, ..Measurement::not_run(Status::Ok, String::new()) },
            None => Measurement::not_run(Status::Failed, "no run in the table".into()),
        };
        let mut t = TrialRecord::replayed(self.history.len(), candidate.clone(), measurement);
        t.stage = stage;
        t.label = label.into();
        t.is_default = label == "defaults";
        t.origin = origin.into();
        t
    }

    /// Races `challenger` against `rival` until racing decides, as the study does.
    fn race(&mut self, challenger: &TrialRecord, rival: &str, objective: &Objective) {
        let incumbent = self.history.iter().find(|t| t.stage == Stage::Search && t.label == rival).cloned();
        let Some(incumbent) = incumbent else { return };
        let origin = racing::origin(&challenger.label);
        for round in 0..racing::MAX_PAIRS {
            let pairs = racing::pairs(&self.history, &challenger.label, objective);
            // As the study: a race ends when decided, or when a run of a pair failed.
            if round > 0 && (pairs.len() < round || racing::decide(&pairs) != racing::Outcome::Running) {
                break;
            }
            for side in [challenger, &incumbent] {
                let mut t = self.run(Stage::Race, &side.label, &side.candidate, &origin);
                t.round = Some(round);
                self.history.push(t);
            }
        }
    }
}

fn replay(
    strategy: Strategy,
    space: &Space,
    table: &Table,
    defaults: &Candidate,
    seed: u64,
    noiseless: bool,
    racing_on: bool,
) -> Curve {
    let objective = Objective::Throughput;
    let mut sampler = strategy.sampler(space, TRIALS, seed, &objective, Admissible::any(), true);
    let rng = StdRng::seed_from_u64(seed ^ 0xBE7C4);
    let mut study = Replay { space, table, rng, noiseless, history: vec![] };
    let mut curve = Curve::default();
    let mut found: f64 = 0.0;
    for trial in 0..TRIALS {
        let (label, candidate, origin) = if trial == 0 {
            ("defaults".to_string(), defaults.clone(), "defaults".to_string())
        } else {
            let Some(proposal) = sampler.ask(space, &study.history) else { break };
            (format!("#{}", study.history.len()), proposal.candidate, proposal.origin)
        };
        let t = study.run(Stage::Search, &label, &candidate, &origin);
        found = found.max(study.true_mean(&candidate));
        sampler.tell(&t);
        study.history.push(t.clone());
        if racing_on && t.is_default {
            // As the study: the first incumbent runs racing::DEFAULTS_RUNS times.
            for round in 1..racing::DEFAULTS_RUNS {
                let mut repeat = study.run(Stage::Race, &t.label, &t.candidate, racing::REPEAT_ORIGIN);
                repeat.round = Some(round);
                study.history.push(repeat);
            }
        }
        if racing_on && !t.is_default {
            if let Some(rival) = racing::first_rival(&study.history, &t, &objective) {
                study.race(&t, &rival, &objective);
            }
        }
        let picked = racing::ranked(&study.history, &objective).first().map(|t| t.candidate.clone());
        curve.found.push(found);
        curve.picked.push(study.true_mean(picked.as_ref().unwrap_or(defaults)));
        curve.runs.push(study.history.len());
    }
    let summary = racing::summarize(&study.history, &objective);
    curve.races = summary.races;
    curve.overturned = summary.overturned;
    curve
}

fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Median and quartiles; `-` where it was not reached within the trials.
fn spread(v: Vec<f64>) -> String {
    let show = |x: f64| if x.is_finite() { format!("{x:.0}") } else { "-".into() };
    format!(
        "{:>3} ({:>3} .. {:>3})",
        show(quantile(v.clone(), 0.5)),
        show(quantile(v.clone(), 0.25)),
        show(quantile(v, 0.75))
    )
}

/// RocksDB's defaults fitted to the budget, as they ran at the table's
/// scale (memtables at the floor: a 16th of the budget; RocksDB 11's lz4 is
/// not among the table's compressions, so snappy stands in).
fn defaults() -> Candidate {
    [
        ("memtable_share", Value::Float(0.0625)),
        ("bloom_bits", Value::Int(0)),
        ("block_size", Value::Int(4096)),
        ("compression", Value::from("snappy")),
        ("level0_file_num_compaction_trigger", Value::Int(4)),
        ("block_cache_share", Value::Float(1.0 / 3.0)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn main() {
    let seeds: u64 = std::env::var("KVTUNE_SEARCH_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let space = Space::find("table-spork", &RocksDb.param_names()).expect("the table's space");
    let table = load(&space);
    let best = table.values().map(|r| mean(r)).fold(0.0, f64::max);
    let defaults = defaults();
    let default_mean = table.get(&key(&space, &defaults)).map(|r| mean(r));
    let near = table.values().filter(|r| mean(r) >= 0.95 * best).count();
    println!(
        "table: {} points, best mean {best:.0} ops/s ({near} within 5% of it), the defaults {}",
        table.len(),
        default_mean
            .map_or("not in the table".into(), |d| format!("{d:.0} ops/s ({:.2}x below the best)", best / d))
    );
    println!(
        "{:<13} {:>17} {:>6} {:>17} {:>17} {:>17}   {:>18}   {:>18}  {:>12}",
        "strategy",
        "found: trials",
        "by 15",
        "runs",
        "picked: trials",
        "runs",
        "found @10 @20 @40",
        "picked @10 @20 @40",
        "racing runs"
    );
    let rows = [
        ("random", Strategy::Random, false, true),
        ("tpe", Strategy::Tpe, false, true),
        ("bayes", Strategy::Bayes, false, true),
        ("bayes/no race", Strategy::Bayes, false, false),
        ("bayes*", Strategy::Bayes, true, true),
    ];
    let only = std::env::var("KVTUNE_SEARCH_ROWS").ok();
    for (name, strategy, noiseless, racing_on) in rows {
        if only.as_ref().is_some_and(|o| !o.split(',').any(|r| r == name)) {
            continue;
        }
        let curves: Vec<Curve> = (0..seeds)
            .map(|seed| replay(strategy, &space, &table, &defaults, seed, noiseless, racing_on))
            .collect();
        let reached = |of: &dyn Fn(&Curve) -> &Vec<f64>, cost: &dyn Fn(&Curve, usize) -> f64| -> String {
            let v = curves
                .iter()
                .map(|c| of(c).iter().position(|p| *p >= 0.95 * best).map_or(f64::INFINITY, |i| cost(c, i)))
                .collect();
            spread(v)
        };
        let trials = |_: &Curve, i: usize| (i + 1) as f64;
        let runs = |c: &Curve, i: usize| c.runs[i] as f64;
        let at = |of: &dyn Fn(&Curve) -> &Vec<f64>| -> String {
            HORIZONS
                .iter()
                .map(|&n| {
                    let v: Vec<f64> = curves
                        .iter()
                        .map(|c| of(c).get(n - 1).or(of(c).last()).copied().unwrap_or(0.0) / best)
                        .collect();
                    format!("{:>5.1}%", quantile(v, 0.5) * 100.0)
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let racing_runs: Vec<f64> =
            curves.iter().map(|c| (c.runs.last().copied().unwrap_or(0) - c.found.len()) as f64).collect();
        let races: usize = curves.iter().map(|c| c.races).sum();
        let overturned: usize = curves.iter().map(|c| c.overturned).sum();
        println!(
            "{name:<13} {:>17} {:>5.0}% {:>17} {:>17} {:>17}   {:>18}   {:>18}  {:>4.0} ({:.0}% of {:.1} races overturned)",
            reached(&|c| &c.found, &trials),
            100.0 * curves.iter().filter(|c| c.found.iter().take(BY).any(|f| *f >= 0.95 * best)).count() as f64
                / seeds as f64,
            reached(&|c| &c.found, &runs),
            reached(&|c| &c.picked, &trials),
            reached(&|c| &c.picked, &runs),
            at(&|c| &c.found),
            at(&|c| &c.picked),
            quantile(racing_runs, 0.5),
            100.0 * overturned as f64 / races.max(1) as f64,
            races as f64 / seeds as f64,
        );
    }
    println!(
        "(to within 5% of the best mean: median (quartiles) over {seeds} seeds, in search trials (the defaults' \
         included) and in runs (racing's too); - = not within {TRIALS} trials; found: a candidate that close \
         was tried (by {BY}: the share of searches that had tried one within {BY} trials); picked: the study's first contender (racing's incumbent, else the best mean) is one; @N: the best \
         true mean tried, and the first contender's true mean, as a share of the best, after N trials (median); \
         racing runs: median per study of {TRIALS} trials, and how often a race reversed the single runs' order; \
         bayes/no race: racing off; bayes*: every run its point's true mean, no noise)"
    );
    let full_seeds = std::env::var("KVTUNE_SEARCH_FULL_SEEDS").ok().and_then(|s| s.parse().ok());
    on_the_full_space(full_seeds.unwrap_or(seeds.min(40)));
    ask_time();
}

/// One bayes ask on the full RocksDB space with 100 finished trials, a
/// fifth of them killed for memory (so the feasibility model is fitted too),
/// with the study's memory-model gate on spork at a 64 MiB budget.
fn ask_time() {
    let space = Space::find("rocksdb", &RocksDb.param_names()).expect("the rocksdb space");
    let engine = kvtune::engine::find("rocksdb").expect("rocksdb");
    let dataset = kvtune::dataset::Dataset::find("spork").expect("spork");
    let admissible = kvtune::study::admissible(engine, dataset, 64 << 20, 64 << 20);
    let mut rng = StdRng::seed_from_u64(7);
    let run = |rng: &mut StdRng, ok: bool| match ok {
        true => Measurement {
            ops_per_sec: 1000.0 + rng.random_range(0.0..500.0),
            ..Measurement::not_run(Status::Ok, String::new())
        },
        false => Measurement::not_run(Status::Infeasible, "killed for memory".into()),
    };
    let mut history: Vec<TrialRecord> = (0..100)
        .map(|i| TrialRecord::replayed(i, space.sample(&mut rng), run(&mut rng, i % 5 != 0)))
        .collect();
    // 30 racing runs: 15 pairs, each a challenger (one of the first 15
    // successful trials) and the first trial as the incumbent.
    for pair in 0..15 {
        let challenger =
            history.iter().filter(|t| t.measurement.ok()).nth(pair + 1).cloned().expect("a trial");
        for side in [challenger.clone(), history[1].clone()] {
            let mut t = TrialRecord::replayed(history.len(), side.candidate, run(&mut rng, true));
            t.stage = Stage::Race;
            t.label = side.label;
            t.origin = racing::origin(&challenger.label);
            t.round = Some(0);
            history.push(t);
        }
    }
    // The model itself, past the seeds and the design it starts from.
    let mut sampler = BayesSampler::new(&space, Objective::Throughput, StdRng::seed_from_u64(1), admissible);
    let start = Instant::now();
    let _ = sampler.ask(&space, &history);
    println!(
        "bayes ask with 100 finished search trials (20 killed for memory) and 30 racing runs on the {}-parameter rocksdb space, memory-model gate on: \
         {:.0} ms (target: under 1000 ms)",
        space.params.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
}

/// A made-up landscape over the full RocksDB space: six of its parameters
/// matter (a bowl in cache share, bloom bits, memtable share and block
/// size, a cost for mmap reads and for zstd or no compression), the rest
/// not at all; log units, 0 at its best.
fn made_up(c: &Candidate) -> f64 {
    let number = |k: &str| c.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let choice = |k: &str| c.get(k).map(|v| v.to_string()).unwrap_or_default();
    let compression = match choice("compression").as_str() {
        "zstd" => 0.15,
        "none" => 0.1,
        _ => 0.0,
    };
    -0.3 * (number("block_cache_share").ln() - 0.15f64.ln()).powi(2)
        - 0.4 * ((number("bloom_bits") - 10.0) / 10.0).powi(2)
        - 0.05 * (number("memtable_share").ln() - 0.1f64.ln()).powi(2)
        - 0.1 * (number("block_size").ln() - 16384f64.ln()).abs() / 3.0
        - if choice("load_mode") == "mmap" { 0.3 } else { 0.0 }
        - compression
}

/// Where the table cannot look: the strategies on the full 24-parameter
/// space, 30 trials each (the defaults, the space's seeds, then the
/// strategy), against [`made_up`] with 12% noise a run. Prints the median
/// best true value found (as a share of the best) and the mean of the
/// strategy's own proposals: a model that guesses far from what it knows
/// shows there.
fn on_the_full_space(seeds: u64) {
    let space = Space::find("rocksdb", &RocksDb.param_names()).expect("the rocksdb space");
    println!("on the full {}-parameter rocksdb space, a made-up landscape, 12% noise a run, 30 trials, {seeds} seeds:", space.params.len());
    for strategy in [Strategy::Random, Strategy::Tpe, Strategy::Bayes] {
        let (mut bests, mut own) = (vec![], vec![]);
        for seed in 0..seeds {
            let mut noise = StdRng::seed_from_u64(seed + 100);
            let mut sampler =
                strategy.sampler(&space, 30, seed, &Objective::Throughput, Admissible::any(), true);
            let mut history: Vec<TrialRecord> = vec![];
            for number in 0..30 {
                let (candidate, origin) = match number {
                    0 => (RocksDb.defaults(1 << 30), "defaults".to_string()),
                    _ => {
                        let Some(p) = sampler.ask(&space, &history) else { break };
                        let mut c = RocksDb.defaults(1 << 30);
                        c.extend(p.candidate);
                        let model =
                            !["seed:", PUT_BACK_ORIGIN, STEP_ORIGIN].iter().any(|o| p.origin.starts_with(o));
                        if model && p.origin != "sobol" {
                            own.push(made_up(&c));
                        }
                        (c, p.origin)
                    }
                };
                let truth = made_up(&candidate);
                let ops = 1e5 * (truth + 0.12 * noise.sample::<f64, _>(rand_distr::StandardNormal)).exp();
                let measurement =
                    Measurement { ops_per_sec: ops, ..Measurement::not_run(Status::Ok, String::new()) };
                let mut t = TrialRecord::replayed(number, candidate, measurement);
                (t.is_default, t.origin) = (number == 0, origin);
                sampler.tell(&t);
                history.push(t);
            }
            bests.push(history.iter().map(|t| made_up(&t.candidate)).fold(f64::NEG_INFINITY, f64::max));
        }
        println!(
            "  {strategy:<7} best found {:>5.1}% (quartiles {:.1} .. {:.1}%), its own proposals {:>5.1}% on average",
            quantile(bests.clone(), 0.5).exp() * 100.0,
            quantile(bests.clone(), 0.25).exp() * 100.0,
            quantile(bests, 0.75).exp() * 100.0,
            (own.iter().sum::<f64>() / own.len().max(1) as f64).exp() * 100.0
        );
    }
}
