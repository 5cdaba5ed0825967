//! The end of a study: each confirmed contender compared with the defaults
//! run beside it, round by round (a paired t-test on the log ratios, Holm's
//! correction across contenders), and the recommendation: the largest
//! significant gain among contenders that never failed, else the defaults;
//! and the recommendation against the engine as it ships, if that ran.

use std::collections::BTreeMap;

use crate::outcome::{Contender, Verdict, ALPHA, BASELINE_ORIGIN};
use crate::record::{Better, Objective, TrialRecord};
use crate::stats::{holm, median, min_detectable_change, paired_change, summarize};

fn median_u64(values: impl Iterator<Item = u64>) -> u64 {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// One contender's confirmation runs, round by round: the objective's merit
/// (higher is better), `None` where the run failed.
struct Runs<'a> {
    first: &'a TrialRecord,
    by_round: BTreeMap<usize, Option<f64>>,
    ok: Vec<&'a TrialRecord>,
    failures: Vec<String>,
}

fn group<'a>(runs: &'a [TrialRecord], objective: &Objective) -> BTreeMap<&'a str, Runs<'a>> {
    let mut groups: BTreeMap<&str, Runs> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        let entry = groups.entry(r.label.as_str()).or_insert_with(|| Runs {
            first: r,
            by_round: BTreeMap::new(),
            ok: vec![],
            failures: vec![],
        });
        let round = r.round.unwrap_or(i);
        if let Some(merit) = objective.merit(&r.measurement) {
            entry.ok.push(r);
            entry.by_round.insert(round, Some(merit));
        } else {
            entry.by_round.insert(round, None);
            entry.failures.push(format!("round {}: {}", round + 1, r.measurement.status));
        }
    }
    groups
}

/// The values of `a` and `b` in the rounds where both succeeded.
fn pairs(a: &BTreeMap<usize, Option<f64>>, b: &BTreeMap<usize, Option<f64>>) -> (Vec<f64>, Vec<f64>) {
    a.iter().filter_map(|(round, x)| Some(((*x)?, (*b.get(round)?)?))).unzip()
}

/// Judges the confirmation runs (labelled by contender, each with its round)
/// on `objective`; `vetoed` names contenders that cannot be recommended
/// whatever they measured here (label, why).
pub fn judge(
    runs: &[TrialRecord],
    objective: &Objective,
    seed: u64,
    vetoed: &[(String, String)],
) -> Option<Verdict> {
    let groups = group(runs, objective);
    let defaults = groups.values().find(|g| g.first.is_default).map(|g| &g.by_round);
    let mut contenders: Vec<Contender> = groups
        .iter()
        .map(|(label, g)| {
            let values: Vec<f64> = g.ok.iter().filter_map(|r| objective.value(&r.measurement)).collect();
            let paired = match (g.first.is_default, defaults) {
                (false, Some(d)) => {
                    let (mine, theirs) = pairs(&g.by_round, d);
                    paired_change(&mine, &theirs)
                }
                _ => None,
            };
            let veto = vetoed.iter().find(|(l, _)| l == label).map(|(_, why)| why.clone());
            let disqualified = (!g.failures.is_empty())
                .then(|| format!("it did not complete every confirmation run ({})", g.failures.join(", ")))
                .or(veto);
            Contender {
                label: label.to_string(),
                candidate: g.first.candidate.clone(),
                is_default: g.first.is_default,
                summary: summarize(&values, seed),
                runs: values,
                peak_memory: median_u64(g.ok.iter().map(|r| r.measurement.peak_memory)),
                disk_bytes: median_u64(g.ok.iter().map(|r| r.measurement.disk_bytes)),
                paired,
                p_adjusted: None,
                disqualified,
                is_baseline: g.first.origin == BASELINE_ORIGIN,
            }
        })
        .filter(|c| !c.runs.is_empty() || c.disqualified.is_some())
        .collect();
    if contenders.iter().all(|c| c.runs.is_empty()) {
        return None;
    }
    // The baseline is a reference, not a candidate: outside the family Holm corrects for.
    let tested: Vec<usize> = (0..contenders.len())
        .filter(|&i| contenders[i].paired.is_some() && !contenders[i].is_baseline)
        .collect();
    let p: Vec<f64> = tested.iter().map(|&i| contenders[i].paired.map_or(1.0, |x| x.p)).collect();
    for (&i, adjusted) in tested.iter().zip(holm(&p)) {
        contenders[i].p_adjusted = Some(adjusted);
    }
    // Best first, by the objective's direction; a contender that never
    // completed a run last.
    let sign = if objective.better() == Better::Lower { -1.0 } else { 1.0 };
    let rank =
        |c: &Contender| if c.runs.is_empty() { f64::NEG_INFINITY } else { sign * c.summary.median.point };
    contenders.sort_by(|a, b| rank(b).total_cmp(&rank(a)));
    let winner = contenders
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((i, c.significant_gain()?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    // Without a significant winner: the defaults; where they never completed
    // a run, the best contender that never failed; else nothing to recommend.
    let fallback = contenders.iter().position(|c| c.is_default && !c.runs.is_empty()).or_else(|| {
        contenders.iter().position(|c| !c.runs.is_empty() && c.disqualified.is_none() && !c.is_baseline)
    });
    let recommended = winner.or(fallback)?;
    let over_baseline = contenders.iter().find(|c| c.is_baseline).and_then(|baseline| {
        let (mine, theirs) = pairs(
            &groups[contenders[recommended].label.as_str()].by_round,
            &groups[baseline.label.as_str()].by_round,
        );
        paired_change(&mine, &theirs)
    });
    // A winner's gain rests on its own pairs, so what the rounds resolved is
    // their noise, not one wild round of a contender beside it; without a
    // winner, the contenders' median.
    let sds: Vec<f64> = match winner {
        Some(i) => contenders[i].paired.iter().map(|p| p.sd_log_ratio).collect(),
        None => tested.iter().filter_map(|&i| Some(contenders[i].paired?.sd_log_ratio)).collect(),
    };
    let rounds = tested.iter().filter_map(|&i| Some(contenders[i].paired?.n)).max().unwrap_or(0);
    Some(Verdict {
        objective: objective.clone(),
        recommended,
        beats_defaults: winner.is_some(),
        min_detectable_change: min_detectable_change(
            median(&sds),
            rounds,
            ALPHA / tested.len().max(1) as f64,
        ),
        contenders,
        over_baseline,
    })
}
