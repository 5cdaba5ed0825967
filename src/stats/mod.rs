//! Statistics for noisy measurements, as benchstat reports them: medians
//! with 95% confidence intervals (bootstrap), paired comparisons of runs made
//! side by side (t-test on log ratios), Holm's correction, and the
//! Mann-Whitney U test for unpaired samples; distributions from statrs.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

const RESAMPLES: usize = 10_000;

/// A point estimate with a 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub point: f64,
    pub low: f64,
    pub high: f64,
}

/// A sample described by its median and spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub median: Estimate,
    pub min: f64,
    pub max: f64,
    /// Largest distance from the median, as a share of it (benchstat's ±).
    pub spread: f64,
}

pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn resample_median(values: &[f64], rng: &mut StdRng, scratch: &mut Vec<f64>) -> f64 {
    scratch.clear();
    scratch.extend((0..values.len()).map(|_| values[rng.random_range(0..values.len())]));
    median(scratch)
}

fn percentile_interval(mut estimates: Vec<f64>, point: f64) -> Estimate {
    estimates.sort_by(f64::total_cmp);
    let at = |q: f64| estimates[((estimates.len() - 1) as f64 * q).round() as usize];
    Estimate { point, low: at(0.025), high: at(0.975) }
}

/// Median with a percentile-bootstrap 95% interval; deterministic for a seed.
pub fn summarize(values: &[f64], seed: u64) -> Summary {
    let point = median(values);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut scratch = Vec::new();
    let estimates = (0..RESAMPLES).map(|_| resample_median(values, &mut rng, &mut scratch)).collect();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let spread = if point != 0.0 { ((max - point).max(point - min) / point).abs() } else { 0.0 };
    Summary { n: values.len(), median: percentile_interval(estimates, point), min, max, spread }
}

/// Two-sided Mann-Whitney U test p value, for unpaired samples: exact (by
/// counting the orderings) for small samples without ties, normal
/// approximation with tie correction otherwise. Written here because statrs
/// 0.19.1's exact method returns p = 1 for two fully separated samples of
/// equal size (it takes the complement of the wrong tail).
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let mut all: Vec<(f64, usize)> = a.iter().map(|&x| (x, 0)).chain(b.iter().map(|&x| (x, 1))).collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Mid-ranks for ties.
    let mut ranks = vec![0.0; all.len()];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        for r in ranks.iter_mut().take(j + 1).skip(i) {
            *r = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    let rank_sum_a: f64 = all.iter().zip(&ranks).filter(|(x, _)| x.1 == 0).map(|(_, r)| r).sum();
    let u = rank_sum_a - (n1 * (n1 + 1)) as f64 / 2.0;
    if tie_term == 0.0 && n1 * n2 <= 400 {
        return exact_p(u.round() as usize, n1, n2);
    }
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let n = n1f + n2f;
    let mean = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * Normal::standard().sf(z)).min(1.0)
}

/// P(|U - mean| >= |u - mean|) under the null, by counting with the
/// recurrence f(n1, n2, u) = f(n1-1, n2, u-n2) + f(n1, n2-1, u).
fn exact_p(u: usize, n1: usize, n2: usize) -> f64 {
    let max_u = n1 * n2;
    // counts[i][j][k]: orderings of i a's and j b's with U = k, built up in j.
    let mut table = vec![vec![vec![0f64; max_u + 1]; n2 + 1]; n1 + 1];
    for (i, row) in table.iter_mut().enumerate() {
        for (j, counts) in row.iter_mut().enumerate() {
            if i == 0 || j == 0 {
                counts[0] = 1.0;
            }
        }
    }
    for i in 1..=n1 {
        for j in 1..=n2 {
            for k in 0..=i * j {
                let with_a_last = if k >= j { table[i - 1][j][k - j] } else { 0.0 };
                table[i][j][k] = with_a_last + table[i][j - 1][k];
            }
        }
    }
    let counts = &table[n1][n2];
    let total: f64 = counts.iter().sum();
    let low = u.min(max_u - u);
    let tail: f64 = counts[..=low].iter().sum();
    (2.0 * tail / total).min(1.0)
}

/// How one series compares with another run beside it, pair by pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedChange {
    /// Pairs compared.
    pub n: usize,
    /// The change of the geometric mean of the ratios new/old (0.10 = 10%
    /// more), with a 95% interval from Student's t on the log ratios.
    pub change: Estimate,
    /// Two-sided p value of the paired t-test on the log ratios.
    pub p: f64,
    /// Standard deviation of the log ratios: the pairs' own noise.
    pub sd_log_ratio: f64,
}

fn students_t(df: usize) -> StudentsT {
    StudentsT::new(0.0, 1.0, df as f64).expect("positive degrees of freedom")
}

/// Compares `new` with `old` pair by pair (`new[i]` ran beside `old[i]`):
/// the ratio's geometric mean, its interval and a paired t-test on the log
/// ratios. Drift that hits both sides of a pair cancels, so this resolves
/// far smaller changes than an unpaired test on the same runs. `None` with
/// fewer than two pairs.
pub fn paired_change(new: &[f64], old: &[f64]) -> Option<PairedChange> {
    let logs: Vec<f64> =
        new.iter().zip(old).filter(|(a, b)| **a > 0.0 && **b > 0.0).map(|(a, b)| (a / b).ln()).collect();
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let mean = logs.iter().sum::<f64>() / n as f64;
    let sd = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let se = sd / (n as f64).sqrt();
    let t = students_t(n - 1);
    // A mean of rounding error (100% against 100% of the time in scans,
    // whose ten log ratios average one ulp off zero) is no change.
    let p = if mean.abs() <= 1e-12 {
        1.0
    } else if se > 0.0 {
        (2.0 * t.sf((mean / se).abs())).min(1.0)
    } else {
        0.0 // every pair moved alike
    };
    let half = t.inverse_cdf(0.975) * se;
    let change =
        Estimate { point: mean.exp() - 1.0, low: (mean - half).exp() - 1.0, high: (mean + half).exp() - 1.0 };
    Some(PairedChange { n, change, p, sd_log_ratio: sd })
}

/// Holm's step-down adjustment of p values for testing several hypotheses
/// at once: controls the chance of any false "better" across them all.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; p.len()];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((p.len() - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The smallest relative change a paired t-test on `n` pairs can show at
/// significance `alpha` with 80% power, given the log ratios' standard
/// deviation: what a study of this many rounds can resolve on this machine.
pub fn min_detectable_change(sd_log_ratio: f64, n: usize, alpha: f64) -> Option<f64> {
    if n < 2 || !sd_log_ratio.is_finite() {
        return None;
    }
    let t = students_t(n - 1);
    let z = t.inverse_cdf(1.0 - alpha / 2.0) + t.inverse_cdf(0.8);
    Some((z * sd_log_ratio / (n as f64).sqrt()).exp() - 1.0)
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
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn mann_whitney_matches_tables() {
        // Complete separation of 5 vs 5: p = 2 / C(10,5) = 2/252.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        assert!((mann_whitney_p(&a, &b) - 2.0 / 252.0).abs() < 1e-9, "{}", mann_whitney_p(&a, &b));
        // 3 vs 3 can never reach 0.05: the smallest p is 0.1.
        assert!((mann_whitney_p(&a[..3], &b[..3]) - 0.1).abs() < 1e-9);
        assert!(mann_whitney_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]) > 0.5);
    }

    #[test]
    fn pairs_alike_to_rounding_error_are_no_change() {
        for n in [4, 10] {
            let same = paired_change(&vec![1.0 + 1e-15; n], &vec![1.0; n]).unwrap();
            assert_eq!(same.p, 1.0, "{n} pairs");
        }
        let uneven = paired_change(&[1.0 + 1e-15, 1.0 - 1e-15, 1.0, 1.0 + 2e-15], &[1.0; 4]).unwrap();
        assert_eq!(uneven.p, 1.0);
        let moved = paired_change(&[1.1; 4], &[1.0; 4]).unwrap();
        assert_eq!(moved.p, 0.0, "every pair 10% up: sure");
    }

    #[test]
    fn pairing_sees_through_drift_that_hides_a_gain_from_an_unpaired_test() {
        // Each round is 15% faster than the last (the machine warms up);
        // in every round the new side is 10% faster than the old, +-1%.
        let old = [100.0, 115.0, 132.0, 152.0, 175.0];
        let jitter = [1.01, 0.99, 1.0, 1.005, 0.995];
        let new: Vec<f64> = old.iter().zip(jitter).map(|(o, j)| o * 1.1 * j).collect();
        assert!(mann_whitney_p(&new, &old) > 0.05);
        let paired = paired_change(&new, &old).unwrap();
        assert!(paired.p < 0.001, "{paired:?}");
        assert!((paired.change.point - 0.1).abs() < 0.01);
        assert!(paired.change.low > 0.08 && paired.change.high < 0.12, "{paired:?}");
        assert!(paired_change(&old, &old).unwrap().p == 1.0);
        assert!(paired_change(&[1.0], &[2.0]).is_none());
    }

    #[test]
    fn holm_adjusts_the_smallest_p_by_the_number_of_tests() {
        let adjusted = holm(&[0.03, 0.01, 0.04]);
        assert!((adjusted[1] - 0.03).abs() < 1e-12);
        assert!((adjusted[0] - 0.06).abs() < 1e-12);
        assert!((adjusted[2] - 0.06).abs() < 1e-12, "monotone: {adjusted:?}");
    }

    #[test]
    fn more_pairs_resolve_smaller_changes() {
        let five = min_detectable_change(0.05, 5, 0.05).unwrap();
        let ten = min_detectable_change(0.05, 10, 0.05).unwrap();
        assert!(five > ten && ten > 0.0, "{five} {ten}");
        // 5% noise per pair, 5 pairs: about 8%.
        assert!((0.06..0.11).contains(&five), "{five}");
    }

    #[test]
    fn interval_contains_the_median_and_shrinks_with_n() {
        let narrow: Vec<f64> = (0..30).map(|i| 100.0 + (i % 7) as f64).collect();
        let wide = [90.0, 100.0, 110.0];
        let s = summarize(&narrow, 1);
        assert!(s.median.low <= s.median.point && s.median.point <= s.median.high);
        let w = summarize(&wide, 1);
        assert!(w.median.high - w.median.low > s.median.high - s.median.low);
    }

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
