//! Statistics for noisy measurements, as benchstat reports them: medians
//! with 95% confidence intervals (bootstrap) and the Mann-Whitney U test.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

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

/// Each named series summarised, as `kvtune bench` prints them.
pub fn summarize_each(series: Vec<(String, Vec<f64>)>, seed: u64) -> Vec<(String, Summary)> {
    series.into_iter().map(|(name, values)| (name, summarize(&values, seed))).collect()
}

/// The relative change of median(`new`) over median(`old`) (0.25 = 25% more),
/// with a bootstrap 95% interval resampling both sides.
pub fn relative_change(new: &[f64], old: &[f64], seed: u64) -> Estimate {
    let point = median(new) / median(old) - 1.0;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut scratch = Vec::new();
    let estimates = (0..RESAMPLES)
        .map(|_| {
            let a = resample_median(new, &mut rng, &mut scratch);
            let b = resample_median(old, &mut rng, &mut scratch);
            a / b - 1.0
        })
        .collect();
    percentile_interval(estimates, point)
}

/// Two-sided Mann-Whitney U test p value: exact (by counting the orderings)
/// for small samples without ties, normal approximation with tie correction
/// otherwise.
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
    (2.0 * normal_upper_tail(z)).min(1.0)
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

/// Upper tail of the standard normal (Abramowitz-Stegun 7.1.26 on erfc).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    0.5 * poly * (-x * x).exp()
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
    fn exact_p_matches_tables() {
        // Complete separation of 5 vs 5: p = 2 / C(10,5) = 2/252.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        assert!((mann_whitney_p(&a, &b) - 2.0 / 252.0).abs() < 1e-12);
        // 3 vs 3 can never reach 0.05: the smallest p is 0.1.
        assert!((mann_whitney_p(&a[..3], &b[..3]) - 0.1).abs() < 1e-12);
        // Interleaved samples are not different.
        assert!(mann_whitney_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]) > 0.5);
    }

    #[test]
    fn normal_approximation_agrees_with_exact_for_larger_samples() {
        let a: Vec<f64> = (0..20).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..20).map(|i| i as f64 + 7.5).collect();
        let exact = mann_whitney_p(&a, &b);
        let tied_b: Vec<f64> = b.iter().map(|x| x.round()).collect();
        let approx = mann_whitney_p(&a, &tied_b);
        assert!(exact < 0.05 && approx < 0.05 && (exact - approx).abs() < 0.02, "{exact} {approx}");
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
    fn relative_change_finds_a_clear_gain() {
        let old = [100.0, 102.0, 98.0, 101.0, 99.0];
        let new = [120.0, 123.0, 118.0, 121.0, 119.0];
        let change = relative_change(&new, &old, 3);
        assert!((change.point - 0.2).abs() < 0.01);
        assert!(change.low > 0.1 && change.high < 0.3, "{change:?}");
    }
}
