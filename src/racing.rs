//! Racing (SMAC's intensification): a search candidate whose single run
//! comes within reach of the incumbent is re-run beside it, in pairs (order
//! random within a pair), until it is clearly worse, or clearly better and
//! becomes the incumbent. Noise then cannot crown a lucky single run. Every
//! decision is a function of the recorded trials, so a resumed study reaches
//! the same incumbent.

use crate::outcome::RacingSummary;
use crate::record::{Objective, Stage, TrialRecord};
use crate::stats::paired_change;

/// A challenger is raced when its single run is at most this far below the
/// incumbent's mean (in log units: about 10%). A run here scatters by 10-15%,
/// so at 5% a candidate truly 5% better than the incumbent went unraced
/// about one time in four; on the benchmark table (`cargo bench --bench
/// search`) 10% made the study's first contender within 5% of the table's
/// best in 16 trials in the median rather than 20, for a third more racing
/// runs. A race also ends after its first pair when the challenger is
/// further behind than this.
pub const WITHIN_REACH: f64 = 0.10;
/// Pairs after which a race ends whatever it shows.
pub const MAX_PAIRS: usize = 3;
/// A race is decided early when the paired test is this sure.
const DECISIVE_P: f64 = 0.1;
/// Runs of the defaults at the start of a racing study, the first incumbent:
/// one run can be far from its median (mixgraph's first was 55% above it),
/// and every challenger after would be judged against that luck.
pub const DEFAULTS_RUNS: usize = 3;
/// The `origin` of the defaults' runs at the start beyond their first.
pub const REPEAT_ORIGIN: &str = "repeat";

/// The `origin` racing runs carry: which challenger's race they belong to.
pub fn origin(challenger: &str) -> String {
    format!("race:{challenger}")
}

/// How a race stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Running,
    Better,
    Worse,
}

/// The decision after `pairs` of (challenger, incumbent) scores.
pub fn decide(pairs: &[(f64, f64)]) -> Outcome {
    if pairs.is_empty() {
        return Outcome::Running;
    }
    let mean = pairs.iter().map(|(c, i)| c - i).sum::<f64>() / pairs.len() as f64;
    let verdict = if mean > 0.0 { Outcome::Better } else { Outcome::Worse };
    if pairs.len() == 1 {
        return if mean < -WITHIN_REACH { Outcome::Worse } else { Outcome::Running };
    }
    let (c, i): (Vec<f64>, Vec<f64>) = pairs.iter().map(|(c, i)| (c.exp(), i.exp())).unzip();
    let decisive = paired_change(&c, &i).is_some_and(|p| p.p < DECISIVE_P);
    if decisive || pairs.len() >= MAX_PAIRS {
        verdict
    } else {
        Outcome::Running
    }
}

/// A label's scores over its successful search and racing runs.
fn scores(trials: &[TrialRecord], label: &str, objective: &Objective) -> Vec<f64> {
    trials
        .iter()
        .filter(|t| t.stage.is_search() && t.label == label)
        .filter_map(|t| objective.score(&t.measurement))
        .collect()
}

/// The mean of some scores, if any.
fn mean(scores: &[f64]) -> Option<f64> {
    (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64)
}

/// A label's mean score over its successful search and racing runs.
pub fn mean_score(trials: &[TrialRecord], label: &str, objective: &Objective) -> Option<f64> {
    mean(&scores(trials, label, objective))
}

/// A label's median score over its successful search and racing runs: the
/// incumbent's standing, which one lucky run does not lift.
fn median_score(trials: &[TrialRecord], label: &str, objective: &Objective) -> Option<f64> {
    let scores = scores(trials, label, objective);
    (!scores.is_empty()).then(|| crate::stats::median(&scores))
}

/// The (challenger, incumbent) scores of a race's completed pairs.
pub fn pairs(trials: &[TrialRecord], challenger: &str, objective: &Objective) -> Vec<(f64, f64)> {
    let tag = origin(challenger);
    let runs: Vec<&TrialRecord> =
        trials.iter().filter(|t| t.stage == Stage::Race && t.origin == tag).collect();
    let rounds = runs.iter().filter_map(|t| t.round).max().map_or(0, |r| r + 1);
    (0..rounds)
        .filter_map(|round| {
            let side = |mine: bool| {
                runs.iter()
                    .find(|t| t.round == Some(round) && (t.label == challenger) == mine)
                    .and_then(|t| objective.score(&t.measurement))
            };
            Some((side(true)?, side(false)?))
        })
        .collect()
}

/// The incumbent after every race so far: the defaults, replaced by each
/// challenger that won its race.
pub fn incumbent(trials: &[TrialRecord], objective: &Objective) -> Option<String> {
    let mut incumbent = trials.iter().find(|t| t.is_default && t.stage == Stage::Search)?.label.clone();
    for t in trials.iter().filter(|t| t.stage == Stage::Search && !t.is_default) {
        if decide(&pairs(trials, &t.label, objective)) == Outcome::Better {
            incumbent = t.label.clone();
        }
    }
    Some(incumbent)
}

/// The incumbent a search trial must race, if its single run came within
/// reach of the incumbent's median: judged on `before`, the journal's trials
/// up to and with the challenger's (so every worker, at any time, works out
/// the same).
pub fn first_rival(
    before: &[TrialRecord],
    challenger: &TrialRecord,
    objective: &Objective,
) -> Option<String> {
    let incumbent = incumbent(before, objective).filter(|i| *i != challenger.label)?;
    let mine = objective.score(&challenger.measurement)?;
    let theirs = median_score(before, &incumbent, objective)?;
    (mine >= theirs - WITHIN_REACH).then_some(incumbent)
}

/// The search candidates in the order the study would confirm them: the
/// incumbent racing crowned first, then the others by their mean over every
/// search and racing run, leaving out the defaults, failures and those that
/// lost a race.
pub fn ranked<'a>(trials: &'a [TrialRecord], objective: &Objective) -> Vec<&'a TrialRecord> {
    let incumbent = incumbent(trials, objective);
    let lost = |label: &str| decide(&pairs(trials, label, objective)) == Outcome::Worse;
    let mut ranked: Vec<(f64, &TrialRecord)> = trials
        .iter()
        .filter(|t| t.stage == Stage::Search && t.measurement.ok() && !t.is_default && !lost(&t.label))
        .filter_map(|t| {
            let crowned = incumbent.as_deref() == Some(t.label.as_str());
            let mean = mean_score(trials, &t.label, objective)?;
            Some((if crowned { f64::INFINITY } else { mean }, t))
        })
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranked.into_iter().map(|(_, t)| t).collect()
}

/// The candidate the study would confirm first ([`ranked`]), if it stands
/// above the defaults: racing crowned it, or its mean over its runs so far
/// beats theirs (a study that does not race; a race still running). `None`
/// while the defaults lead, or when they have no successful run to beat.
pub fn best_beyond_defaults<'a>(trials: &'a [TrialRecord], objective: &Objective) -> Option<&'a TrialRecord> {
    let first = *ranked(trials, objective).first()?;
    let defaults = trials.iter().find(|t| t.is_default && t.stage == Stage::Search)?;
    let crowned = incumbent(trials, objective).as_deref() == Some(first.label.as_str());
    let mean = |label: &str| mean_score(trials, label, objective);
    let beats = mean(&first.label).zip(mean(&defaults.label)).is_some_and(|(mine, theirs)| mine > theirs);
    (crowned || beats).then_some(first)
}

/// The search candidate with the best mean score so far, with the number of
/// runs behind it: what the progress bar shows (a best single run would
/// show the luckiest run instead).
pub fn leader<'a>(trials: &'a [TrialRecord], objective: &Objective) -> Option<(&'a str, f64, usize)> {
    trials
        .iter()
        .filter(|t| t.stage == Stage::Search && t.measurement.ok())
        .filter_map(|t| {
            let scores = scores(trials, &t.label, objective);
            Some((t.label.as_str(), mean(&scores)?, scores.len()))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

pub fn summarize(trials: &[TrialRecord], objective: &Objective) -> RacingSummary {
    let (repeats, runs): (Vec<&TrialRecord>, Vec<&TrialRecord>) =
        trials.iter().filter(|t| t.stage == Stage::Race).partition(|t| t.origin == REPEAT_ORIGIN);
    let mut summary = RacingSummary { runs: runs.len(), repeats: repeats.len(), ..RacingSummary::default() };
    for t in trials.iter().filter(|t| t.stage == Stage::Search && !t.is_default) {
        let pairs = pairs(trials, &t.label, objective);
        if pairs.is_empty() {
            continue;
        }
        summary.races += 1;
        match decide(&pairs) {
            Outcome::Better => summary.won += 1,
            Outcome::Worse
                if objective.score(&t.measurement).zip(Some(pairs[0].1)).is_some_and(|(s, i)| s > i) =>
            {
                summary.overturned += 1
            }
            _ => {}
        }
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_race_ends_when_the_pairs_are_clear_or_after_the_last_pair() {
        assert_eq!(decide(&[]), Outcome::Running);
        assert_eq!(decide(&[(1.0, 1.2)]), Outcome::Worse, "clearly behind after one pair");
        assert_eq!(decide(&[(1.0, 1.01)]), Outcome::Running);
        let steady_gain = [(1.10, 1.0), (1.12, 1.01), (1.11, 1.0)];
        assert_eq!(decide(&steady_gain[..2]), Outcome::Better, "a steady 10% is decisive after two pairs");
        let noisy = [(1.0, 1.05), (1.1, 1.0), (0.98, 1.0)];
        assert_eq!(decide(&noisy[..2]), Outcome::Running);
        assert_eq!(decide(&noisy), Outcome::Better, "after the last pair the better mean wins");
        let behind = [(1.0, 1.05), (1.1, 1.0), (0.9, 1.0)];
        assert_eq!(decide(&behind), Outcome::Worse);
    }
}
