//! The end of a study: the confirmed contenders compared with the defaults,
//! and the recommendation (the best median, if it beats the defaults).

use crate::outcome::{Contender, Verdict, ALPHA};
use crate::record::TrialRecord;
use crate::stats::{mann_whitney_p, relative_change, summarize};

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
                runs.iter().filter(|r| r.label == *label && r.measurement.ok()).collect();
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
