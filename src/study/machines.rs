//! Which worker and machine measured what, and whether a contender's gain
//! over the defaults holds on every machine. A confirmation round runs on
//! one worker, so each round's ratio is measured on one machine; a
//! contender whose ratios differ across machines beyond
//! [`crate::outcome::UNSTABLE_SPREAD`] is flagged, as the TUNA paper's unstable configurations are (a single
//! machine's winner that does not carry to the others).

use std::collections::BTreeMap;

use crate::outcome::{MachineRatios, Machines, WorkerRuns, UNSTABLE_SPREAD};
use crate::record::{Objective, Stage, TrialRecord};

pub fn machines(trials: &[TrialRecord], objective: &Objective) -> Machines {
    let mut workers: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for t in trials.iter().filter(|t| t.measurement.ran()) {
        *workers.entry((t.worker.as_str(), t.host.as_str())).or_default() += 1;
    }
    let workers = workers
        .into_iter()
        .map(|((name, host), runs)| WorkerRuns { name: name.into(), host: host.into(), runs })
        .collect();
    Machines { workers, ratios: ratios(trials, objective) }
}

/// Each confirmed contender's mean ratio to the defaults of its rounds, per
/// machine; empty when one machine measured everything.
fn ratios(trials: &[TrialRecord], objective: &Objective) -> Vec<MachineRatios> {
    let confirm: Vec<&TrialRecord> = trials.iter().filter(|t| t.stage == Stage::Confirm).collect();
    let hosts: std::collections::BTreeSet<&str> = confirm.iter().map(|t| t.host.as_str()).collect();
    if hosts.len() < 2 {
        return vec![];
    }
    let merit = |label: &str, round: usize| {
        confirm
            .iter()
            .find(|t| t.round == Some(round) && t.label == label)
            .and_then(|t| objective.merit(&t.measurement))
    };
    let mut labels: Vec<&str> = confirm.iter().filter(|t| !t.is_default).map(|t| t.label.as_str()).collect();
    labels.sort();
    labels.dedup();
    labels
        .into_iter()
        .map(|label| {
            let mut by_host: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for t in confirm.iter().filter(|t| t.label == label) {
                let round = t.round.unwrap_or_default();
                if let (Some(mine), Some(theirs)) = (merit(label, round), merit("defaults", round)) {
                    by_host.entry(t.host.clone()).or_default().push((mine / theirs).ln());
                }
            }
            let per_host: Vec<(String, f64, usize)> = by_host
                .into_iter()
                .map(|(host, logs)| {
                    let n = logs.len();
                    (host, (logs.iter().sum::<f64>() / n as f64).exp(), n)
                })
                .collect();
            let (low, high) =
                per_host.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), (_, r, _)| (lo.min(*r), hi.max(*r)));
            let unstable = per_host.len() >= 2 && high / low - 1.0 > UNSTABLE_SPREAD;
            MachineRatios { label: label.into(), per_host, unstable }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trial::scripted::ok;

    fn run(label: &str, round: usize, host: &str, ops: f64) -> TrialRecord {
        TrialRecord {
            stage: Stage::Confirm,
            label: label.into(),
            is_default: label == "defaults",
            round: Some(round),
            worker: format!("w-{host}"),
            host: host.into(),
            ..TrialRecord::replayed(0, Default::default(), ok(ops, 1.0))
        }
    }

    #[test]
    fn a_gain_that_holds_on_one_machine_only_is_flagged() {
        let trials = vec![
            run("defaults", 0, "a", 100.0),
            run("#3", 0, "a", 130.0),
            run("#5", 0, "a", 110.0),
            run("defaults", 1, "b", 100.0),
            run("#3", 1, "b", 99.0),
            run("#5", 1, "b", 108.0),
        ];
        let m = machines(&trials, &Objective::Throughput);
        assert_eq!(m.workers.len(), 2);
        assert_eq!(m.workers[0].runs, 3);
        let flagged: Vec<(&str, bool)> = m.ratios.iter().map(|r| (r.label.as_str(), r.unstable)).collect();
        assert_eq!(flagged, vec![("#3", true), ("#5", false)]);
        assert!((m.ratios[0].per_host[0].1 - 1.3).abs() < 1e-9);
        // One machine: nothing to compare.
        assert!(machines(&trials[..3], &Objective::Throughput).ratios.is_empty());
    }
}
