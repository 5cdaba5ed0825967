//! Does the study's result hold at a larger scale? Each contender's
//! throughput at the study's scale (its confirmation median) beside its run
//! at the larger scale: their rank agreement and whether the winner still wins.

use crate::outcome::{Transfer, TransferRow, Verdict};
use crate::record::TrialRecord;
use crate::scale::Scale;
use crate::stats::median;

/// The contenders of `verdict` beside their runs at `scale`.
pub fn compare(verdict: &Verdict, larger: &[TrialRecord], scale: Scale) -> Transfer {
    let at_larger = |label: &str| {
        let ok: Vec<f64> = larger
            .iter()
            .filter(|t| t.label == label && t.measurement.ok())
            .map(|t| t.measurement.ops_per_sec)
            .collect();
        (!ok.is_empty()).then(|| median(&ok))
    };
    let defaults = verdict.defaults().map(|d| (d.summary.median.point, at_larger(&d.label)));
    let rows: Vec<TransferRow> = verdict
        .contenders
        .iter()
        .map(|c| {
            let (small, large) = (c.summary.median.point, at_larger(&c.label));
            TransferRow {
                label: c.label.clone(),
                at_study_scale: small,
                at_larger_scale: large,
                ratio_at_study_scale: defaults.map(|(d, _)| small / d),
                ratio_at_larger_scale: large.zip(defaults.and_then(|(_, d)| d)).map(|(l, d)| l / d),
            }
        })
        .collect();
    let measured: Vec<(f64, f64)> =
        rows.iter().filter_map(|r| Some((r.at_study_scale, r.at_larger_scale?))).collect();
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

/// Spearman's rank correlation of paired values (average ranks for ties);
/// `None` with fewer than three pairs or no spread.
pub fn spearman(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 3 {
        return None;
    }
    let ranks = |values: Vec<f64>| -> Vec<f64> {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        let mut ranks = vec![0.0; values.len()];
        let mut i = 0;
        while i < order.len() {
            let mut j = i;
            while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
                j += 1;
            }
            for &k in &order[i..=j] {
                ranks[k] = (i + j) as f64 / 2.0 + 1.0;
            }
            i = j + 1;
        }
        ranks
    };
    let a = ranks(pairs.iter().map(|p| p.0).collect());
    let b = ranks(pairs.iter().map(|p| p.1).collect());
    pearson(&a, &b)
}

fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let (va, vb): (f64, f64) =
        (a.iter().map(|x| (x - ma).powi(2)).sum(), b.iter().map(|y| (y - mb).powi(2)).sum());
    (va > 0.0 && vb > 0.0).then(|| cov / (va * vb).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_is_one_for_the_same_order_and_minus_one_for_the_reverse() {
        let same = [(1.0, 10.0), (2.0, 30.0), (3.0, 31.0), (4.0, 100.0)];
        assert!((spearman(&same).unwrap() - 1.0).abs() < 1e-12);
        let reverse: Vec<(f64, f64)> = same.iter().map(|(a, b)| (*a, -b)).collect();
        assert!((spearman(&reverse).unwrap() + 1.0).abs() < 1e-12);
        assert!(spearman(&same[..2]).is_none());
        assert!(spearman(&[(1.0, 1.0), (2.0, 1.0), (3.0, 1.0)]).is_none());
    }
}
