//! The end of a study: the confirmed contenders compared with the defaults,
//! and the recommendation (the best median, if it beats the defaults).

use serde::{Deserialize, Serialize};

use super::TrialRecord;
use crate::space::Candidate;
use crate::stats::{mann_whitney_p, relative_change, summarize, Estimate, Summary};
use crate::trial::Status;

/// Significance level for "beats the defaults".
pub const ALPHA: f64 = 0.05;

/// One candidate re-run in the confirmation rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contender {
    pub label: String,
    pub candidate: Candidate,
    pub is_default: bool,
    /// Whole-replay ops/s of each successful confirmation run.
    pub runs: Vec<f64>,
    pub summary: Summary,
    /// Median peak memory and disk size over the runs.
    pub peak_memory: u64,
    pub disk_bytes: u64,
    /// Against the defaults (None for the defaults themselves).
    pub change: Option<Estimate>,
    pub p_value: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Contenders, best median first.
    pub contenders: Vec<Contender>,
    /// Index into `contenders` of the recommendation.
    pub recommended: usize,
    pub beats_defaults: bool,
}

impl Verdict {
    pub fn recommended(&self) -> &Contender {
        &self.contenders[self.recommended]
    }

    pub fn defaults(&self) -> Option<&Contender> {
        self.contenders.iter().find(|c| c.is_default)
    }

    /// One sentence for people: what to use, how fast, how sure.
    pub fn headline(&self) -> String {
        let best = self.recommended();
        let s = &best.summary;
        let measured = format!(
            "{:.0} ops/s (median of {} runs, 95% CI {:.0} to {:.0})",
            s.median.point, s.n, s.median.low, s.median.high
        );
        match (self.defaults(), self.beats_defaults, best.change, best.p_value) {
            (None, ..) => format!(
                "RocksDB's defaults completed no confirmation run, so nothing could be compared with them; the best measured was {}: {measured}",
                best.label
            ),
            (Some(_), true, Some(c), Some(p)) => format!(
                "Use {}: {measured}, {:+.1}% over RocksDB's defaults fitted to the budget (95% CI {:+.1}% to {:+.1}%, Mann-Whitney p = {p:.3})",
                best.label,
                c.point * 100.0,
                c.low * 100.0,
                c.high * 100.0
            ),
            _ => format!(
                "No candidate beat RocksDB's defaults significantly (p < {ALPHA}), so kvtune recommends the defaults, fitted to the budget: {measured}"
            ),
        }
    }
}

fn median_u64(values: impl Iterator<Item = u64>) -> u64 {
    let mut v: Vec<u64> = values.collect();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Judges the confirmation runs: `runs` are the confirmation trials, labelled
/// by contender.
pub fn judge(runs: &[TrialRecord], seed: u64) -> Option<Verdict> {
    let mut labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
    labels.dedup();
    labels.sort_unstable();
    labels.dedup();
    let mut contenders: Vec<Contender> = labels
        .iter()
        .filter_map(|label| {
            let mine: Vec<&TrialRecord> =
                runs.iter().filter(|r| r.label == *label && r.measurement.status == Status::Ok).collect();
            let first = mine.first()?;
            let values: Vec<f64> = mine.iter().map(|r| r.measurement.ops_per_sec).collect();
            Some(Contender {
                label: label.to_string(),
                candidate: first.candidate.clone(),
                is_default: first.is_default,
                summary: summarize(&values, seed),
                runs: values,
                peak_memory: median_u64(mine.iter().map(|r| r.measurement.peak_memory)),
                disk_bytes: median_u64(mine.iter().map(|r| r.measurement.disk_bytes)),
                change: None,
                p_value: None,
            })
        })
        .collect();
    if contenders.is_empty() {
        return None;
    }
    contenders.sort_by(|a, b| b.summary.median.point.total_cmp(&a.summary.median.point));
    if let Some(defaults) = contenders.iter().find(|c| c.is_default).map(|c| c.runs.clone()) {
        for c in contenders.iter_mut().filter(|c| !c.is_default) {
            c.change = Some(relative_change(&c.runs, &defaults, seed));
            c.p_value = Some(mann_whitney_p(&c.runs, &defaults));
        }
    }
    let best = &contenders[0];
    let beats_defaults = !best.is_default && best.p_value.is_some_and(|p| p < ALPHA);
    let recommended = if beats_defaults || best.is_default {
        0
    } else {
        contenders.iter().position(|c| c.is_default).unwrap_or(0)
    };
    Some(Verdict { contenders, recommended, beats_defaults })
}
