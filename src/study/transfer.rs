//! Does the study's result hold at a larger scale? Each contender's
//! objective at the study's scale (its confirmation median) beside its run
//! at the larger scale: their rank agreement and whether the winner still
//! wins; a contender that loses to the defaults there beyond the noise is
//! vetoed.

use crate::outcome::{Transfer, TransferRow, Verdict};
use crate::record::TrialRecord;
use crate::scale::Scale;
use crate::stats::{median, spearman};

/// The least noise a veto allows for, in log ratio: a single run a side
/// is never trusted to within 5%.
const MIN_NOISE: f64 = 0.05;

/// The contenders of `verdict` beside their runs at `scale`.
pub fn compare(verdict: &Verdict, larger: &[TrialRecord], scale: Scale) -> Transfer {
    let objective = &verdict.objective;
    let at_larger = |label: &str| {
        let ok: Vec<f64> = larger
            .iter()
            .filter(|t| t.label == label)
            .filter_map(|t| objective.value(&t.measurement))
            .collect();
        (!ok.is_empty()).then(|| median(&ok))
    };
    // Ratios and ranks are of merit: better is higher whichever way the
    // objective goes.
    let merit = |value: f64| objective.merit_of(value);
    let defaults = verdict.defaults().map(|d| (d.summary.median.point, at_larger(&d.label)));
    let rows: Vec<TransferRow> = verdict
        .contenders
        .iter()
        .filter(|c| !c.is_baseline)
        .map(|c| {
            let (small, large) = (c.summary.median.point, at_larger(&c.label));
            TransferRow {
                label: c.label.clone(),
                at_study_scale: small,
                at_larger_scale: large,
                ratio_at_study_scale: defaults.map(|(d, _)| merit(small) / merit(d)),
                ratio_at_larger_scale: large
                    .zip(defaults.and_then(|(_, d)| d))
                    .map(|(l, d)| merit(l) / merit(d)),
            }
        })
        .collect();
    let measured: Vec<(f64, f64)> =
        rows.iter().filter_map(|r| Some((merit(r.at_study_scale), merit(r.at_larger_scale?)))).collect();
    let recommended = &verdict.recommended().label;
    let winner_still_wins = match verdict.beats_defaults {
        true => rows
            .iter()
            .find(|r| &r.label == recommended)
            .and_then(|r| r.ratio_at_larger_scale)
            .map(|r| r > 1.0),
        false => None,
    };
    Transfer { scale, rows, spearman: spearman(&measured), winner_still_wins }
}

/// Contenders (other than the defaults) that measured below the defaults at
/// the larger scale by more than twice the noise of one run against one
/// (the confirmation pairs' median spread), or whose run there did not
/// complete where the defaults' did, with why: a gain that turns into a
/// clear loss at four times the size is not one to recommend.
pub fn vetoes(transfer: &Transfer, verdict: &Verdict) -> Vec<(String, String)> {
    let spreads: Vec<f64> = verdict.contenders.iter().filter_map(|c| Some(c.paired?.sd_log_ratio)).collect();
    let noise = if spreads.is_empty() { MIN_NOISE } else { median(&spreads).max(MIN_NOISE) };
    let limit = (-2.0 * noise).exp();
    let is_default = |label: &str| verdict.contenders.iter().any(|c| c.label == label && c.is_default);
    let defaults_ran = transfer.rows.iter().any(|r| is_default(&r.label) && r.at_larger_scale.is_some());
    transfer
        .rows
        .iter()
        .filter(|r| !is_default(&r.label))
        .filter_map(|r| {
            // A run that failed, was killed or ran out of time where the
            // defaults' run finished is the clearest loss of all.
            if r.at_larger_scale.is_none() && defaults_ran {
                let why = format!(
                    "its run at scale {} did not complete (failed, killed or past the time limit) where the \
                     defaults' did, so its gain at the study's scale does not hold",
                    transfer.scale
                );
                return Some((r.label.clone(), why));
            }
            let ratio = r.ratio_at_larger_scale?;
            (ratio < limit).then(|| {
                let why = format!(
                    "at scale {} it measured {:+.1}% against the defaults (one run each; a loss beyond twice the \
                     run-to-run noise of {:.1}%), so its gain at the study's scale does not hold",
                    transfer.scale,
                    (ratio - 1.0) * 100.0,
                    noise * 100.0
                );
                (r.label.clone(), why)
            })
        })
        .collect()
}
