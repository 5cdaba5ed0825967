//! `bench` and `compare`: option sets run side by side in rounds (each round
//! in a random order, so drift hits all alike), and every metric summarised
//! as benchstat does: each side's median and spread, and each side against
//! the first, pair by pair.

use crate::outcome::{Comparison, MetricRow, SideRuns};
use crate::record::{metrics, Better, Measurement};
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
    let mut runs: Vec<SideRuns> =
        sides.labels.iter().map(|label| SideRuns { label: label.clone(), runs: vec![] }).collect();
    for (round, index) in trial::rounds(sides.labels.len(), rounds, seed) {
        let label = format!("r{round}-s{index}");
        let m = trial::attempt(runner, &sides.requests[index], &label, None)?.measurement;
        on_run(round, &sides.labels[index], &m);
        runs[index].runs.push(m);
    }
    Ok(runs)
}

/// Every metric of every side, and each side against the first.
pub fn tabulate(sides: Vec<SideRuns>, dataset: &str, budget: u64, scale: Scale, seed: u64) -> Comparison {
    let rounds = sides.iter().map(|s| s.runs.len()).max().unwrap_or(0);
    // Per side, per round: the metrics of the runs that succeeded.
    let by_round: Vec<Vec<Option<Vec<crate::record::Metric>>>> =
        sides.iter().map(|s| s.runs.iter().map(|m| m.ok().then(|| metrics(m))).collect()).collect();
    let mut names: Vec<(String, Better)> = vec![];
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
    let noise = throughput_noise(&sides, &metrics);
    Comparison {
        dataset: dataset.to_string(),
        budget,
        scale: scale.to_string(),
        scaled_budget: scale.apply(budget),
        rounds,
        min_detectable_change: noise.and_then(|sd| min_detectable_change(sd, rounds, crate::outcome::ALPHA)),
        sides,
        metrics,
    }
}

/// The spread of whole-replay throughput between runs of the same set: the
/// pairs' own noise where there are two sides, else the runs' log spread.
fn throughput_noise(sides: &[SideRuns], metrics: &[MetricRow]) -> Option<f64> {
    let row = metrics.first()?;
    if let Some(paired) = row.vs_first.iter().flatten().next() {
        return Some(paired.sd_log_ratio);
    }
    // One side: pairs of consecutive runs differ by sqrt(2) times one run's spread.
    let logs: Vec<f64> = sides.first()?.runs.iter().filter(|m| m.ok()).map(|m| m.ops_per_sec.ln()).collect();
    (logs.len() >= 2).then(|| {
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
        (2.0 * var).sqrt()
    })
}
