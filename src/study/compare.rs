//! `bench` and `compare`: option sets run side by side in rounds (each round
//! in a random order, so drift hits all alike), and every metric summarised
//! as benchstat does: each side's median and spread, and each side against
//! the first, pair by pair.

use crate::outcome::{Comparison, MetricRow, SideRuns};
use crate::record::{metrics, Better, Measurement, Objective};
use crate::scale::Scale;
use crate::stats::{min_detectable_change, paired_change, summarize, PairedChange, Summary};
use crate::trial::{self, Request, TrialRunner};

/// What is compared: labelled candidates of one engine on one dataset and budget.
pub struct Sides<'a> {
    pub labels: Vec<String>,
    /// One request per side.
    pub requests: Vec<Request<'a>>,
}

/// Runs every side once per round, `rounds` rounds; `on_run` hears of each run.
pub fn measure(
    runner: &dyn TrialRunner,
    sides: &Sides,
    rounds: usize,
    seed: u64,
    on_run: &mut dyn FnMut(usize, &str, &Measurement),
) -> anyhow::Result<Vec<SideRuns>> {
    let mut runs: Vec<SideRuns> = sides
        .labels
        .iter()
        .map(|label| SideRuns { label: label.clone(), options: Default::default(), runs: vec![] })
        .collect();
    for (round, index) in trial::rounds(sides.labels.len(), rounds, seed) {
        let label = format!("r{round}-s{index}");
        let attempt = trial::attempt(runner, &sides.requests[index], &label, None)?;
        on_run(round, &sides.labels[index], &attempt.measurement);
        runs[index].options = attempt.options;
        runs[index].runs.push(attempt.measurement);
    }
    Ok(runs)
}

/// Where the sides were compared, and what on.
pub struct ComparedOn<'a> {
    pub dataset: &'a str,
    pub budget: u64,
    pub scale: Scale,
    pub seed: u64,
    /// Its row comes first, and its noise says what the rounds resolve.
    pub objective: &'a Objective,
}

/// Every metric of every side, and each side against the first; the
/// objective's row first.
pub fn tabulate(sides: Vec<SideRuns>, on: &ComparedOn) -> Comparison {
    let ComparedOn { dataset, budget, scale, seed, objective } = *on;
    let rounds = sides.iter().map(|s| s.runs.len()).max().unwrap_or(0);
    // Per side, per round: the metrics of the runs that succeeded.
    let by_round: Vec<Vec<Option<Vec<crate::record::Metric>>>> =
        sides.iter().map(|s| s.runs.iter().map(|m| m.ok().then(|| metrics(m))).collect()).collect();
    let mut names: Vec<(String, Better)> = vec![(objective.metric_name(), objective.better())];
    for metric in by_round.iter().flatten().flatten().flatten() {
        if !names.iter().any(|(n, _)| *n == metric.name) {
            names.push((metric.name.clone(), metric.better));
        }
    }
    let value = |side: usize, round: usize, name: &str| -> Option<f64> {
        by_round[side].get(round)?.as_ref()?.iter().find(|m| m.name == name).map(|m| m.value)
    };
    let metrics: Vec<MetricRow> = names
        .into_iter()
        .map(|(name, better)| {
            let summaries: Vec<Option<Summary>> = (0..sides.len())
                .map(|side| {
                    let values: Vec<f64> = (0..rounds).filter_map(|r| value(side, r, &name)).collect();
                    (!values.is_empty()).then(|| summarize(&values, seed))
                })
                .collect();
            let vs_first: Vec<Option<PairedChange>> = (0..sides.len())
                .map(|side| {
                    if side == 0 {
                        return None;
                    }
                    let (mine, first): (Vec<f64>, Vec<f64>) = (0..rounds)
                        .filter_map(|r| Some((value(side, r, &name)?, value(0, r, &name)?)))
                        .unzip();
                    paired_change(&mine, &first)
                })
                .collect();
            MetricRow { name, better, sides: summaries, vs_first }
        })
        .collect();
    let noise = objective_noise(&sides, &metrics, objective);
    Comparison {
        dataset: dataset.to_string(),
        objective: objective.to_string(),
        budget,
        scale: scale.to_string(),
        scaled_budget: scale.apply(budget),
        rounds,
        min_detectable_change: noise.and_then(|sd| min_detectable_change(sd, rounds, crate::outcome::ALPHA)),
        sides,
        metrics,
    }
}

/// The objective's spread between runs of the same set (its row comes
/// first): the pairs' own noise where there are two sides, else the runs'
/// log spread.
fn objective_noise(sides: &[SideRuns], metrics: &[MetricRow], objective: &Objective) -> Option<f64> {
    let row = metrics.first()?;
    if let Some(paired) = row.vs_first.iter().flatten().next() {
        return Some(paired.sd_log_ratio);
    }
    // One side: pairs of consecutive runs differ by sqrt(2) times one run's spread.
    let logs: Vec<f64> = sides.first()?.runs.iter().filter_map(|m| objective.score(m)).collect();
    (logs.len() >= 2).then(|| {
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
        (2.0 * var).sqrt()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::paired_change;
    use crate::trial::scripted::ok;

    /// A run of `ops` over the whole replay whose one phase ran at `phase`.
    fn run(ops: f64, phase: f64) -> Measurement {
        let mut m = ok(ops, 10.0);
        m.phases[0].ops_per_sec = phase;
        m.phases[0].latency.p99_us = 1e6 / phase;
        m.bytes_per_key = Some(100.0);
        m
    }

    #[test]
    fn every_objective_names_a_row_of_the_runs_metrics() {
        let names: Vec<String> = metrics(&run(100.0, 50.0)).into_iter().map(|m| m.name).collect();
        for objective in ["throughput", "phase:only", "latency:only:p99", "bytes_per_key"] {
            let objective: Objective = objective.parse().unwrap();
            assert!(names.contains(&objective.metric_name()), "{objective}: {names:?}");
        }
    }

    #[test]
    fn the_objectives_row_comes_first_and_its_noise_is_what_the_rounds_resolve() {
        // The whole replay moves in step; the phase is noisy.
        let (whole_a, whole_b) = ([100.0, 101.0, 99.0], [110.0, 111.1, 108.9]);
        let (phase_a, phase_b) = ([50.0, 60.0, 55.0], [60.0, 58.0, 70.0]);
        let side = |label: &str, whole: &[f64; 3], phase: &[f64; 3]| SideRuns {
            label: label.into(),
            options: Default::default(),
            runs: whole.iter().zip(phase).map(|(w, p)| run(*w, *p)).collect(),
        };
        let sides = vec![side("a", &whole_a, &phase_a), side("b", &whole_b, &phase_b)];
        let objective: Objective = "phase:only".parse().unwrap();
        let on = ComparedOn {
            dataset: "d",
            budget: 1 << 30,
            scale: Scale { shift: 0 },
            seed: 1,
            objective: &objective,
        };
        let table = tabulate(sides, &on);
        assert_eq!(table.objective, "phase:only");
        assert_eq!(table.metrics[0].name, "only ops/s");
        let phase_sd = paired_change(&phase_b, &phase_a).unwrap().sd_log_ratio;
        let whole_sd = paired_change(&whole_b, &whole_a).unwrap().sd_log_ratio;
        assert!(phase_sd > 10.0 * whole_sd);
        assert_eq!(table.min_detectable_change, min_detectable_change(phase_sd, 3, crate::outcome::ALPHA));
    }
}
