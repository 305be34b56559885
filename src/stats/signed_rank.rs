//! The Hodges-Lehmann estimate of paired differences with the Wilcoxon signed-rank interval.
//!
//! The estimate is the median of the `M = n(n+1)/2` Walsh averages `(d_i + d_j)/2, i <= j`;
//! the interval is `[W_(k), W_(M+1-k)]` of the sorted Walsh averages, `k` the largest count
//! with `P(T+ <= k-1) <= alpha/2` under the null distribution of the signed-rank statistic
//! `T+`. That distribution is counted exactly for `n <= EXACT_MAX` (25); above it `k =
//! floor(n(n+1)/4 - z sqrt(n(n+1)(2n+1)/24) + 0.5)` (normal, continuity-corrected). Robust to
//! a few wild rounds, and nearly as tight as the t interval when the noise is normal.
//!
//! The p-value is the signed-rank test's as `scipy.stats.wilcoxon` computes it: zeros left
//! out, exact for `n <= 25` without tied magnitudes, else normal with the tie correction.

use super::dist::normal_cdf;
use super::dist::normal_quantile;
use super::located::{median_sorted, Located};
use super::Confidence;

/// Largest count whose signed-rank distribution is counted exactly.
pub(crate) const EXACT_MAX: usize = 25;

/// None for no values or a value that is not finite.
pub(crate) fn hodges_lehmann(d: &[f64], conf: Confidence) -> Option<Located> {
    if d.is_empty() || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = d.len();
    let mut walsh: Vec<f64> = (0..n)
        .flat_map(|i| (i..n).map(move |j| (i, j)))
        .map(|(i, j)| (d[i] + d[j]) / 2.0)
        .collect();
    walsh.sort_by(f64::total_cmp);
    let m = walsh.len();
    let tail = conf.alpha() / 2.0;
    let k = if n <= EXACT_MAX {
        exact_critical(n, tail)
    } else {
        normal_critical(n, tail)
    };
    let (p, exact) = signed_rank_p(d);
    Some(Located {
        n,
        estimate: median_sorted(&walsh),
        low: (k >= 1).then(|| walsh[k - 1]),
        high: (k >= 1).then(|| walsh[m - k]),
        p,
        exact,
    })
}

/// P(T+ <= t) for t = 0..=M, the null distribution of the signed-rank statistic of `n`
/// values (each rank's sign a fair coin), by counting the subsets of ranks per sum.
fn null_cdf(n: usize) -> Vec<f64> {
    let m = n * (n + 1) / 2;
    let mut counts = vec![0.0f64; m + 1];
    counts[0] = 1.0;
    for r in 1..=n {
        for t in (r..=m).rev() {
            counts[t] += counts[t - r];
        }
    }
    let total = 2f64.powi(n as i32);
    let mut acc = 0.0;
    counts
        .iter()
        .map(|c| {
            acc += c;
            acc / total
        })
        .collect()
}

/// The largest `k` with `P(T+ <= k-1) <= tail`, exactly.
fn exact_critical(n: usize, tail: f64) -> usize {
    let cdf = null_cdf(n);
    cdf.iter()
        .take_while(|c| **c <= tail * (1.0 + 1e-12))
        .count()
}

fn normal_critical(n: usize, tail: f64) -> usize {
    let n = n as f64;
    let z = normal_quantile(1.0 - tail);
    let k = n * (n + 1.0) / 4.0 - z * (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt() + 0.5;
    k.floor().max(0.0) as usize
}

/// The two-sided p-value of the signed-rank test and whether it is exact.
fn signed_rank_p(d: &[f64]) -> (f64, bool) {
    let mut nz: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return (1.0, true);
    }
    nz.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    // Average ranks of tied magnitudes, and the tie correction of the variance.
    let (mut t_plus, mut ties, mut i) = (0.0, 0.0, 0);
    while i < n {
        let j = (i..n).take_while(|&j| nz[j].abs() == nz[i].abs()).count() + i;
        let rank = (i + 1 + j) as f64 / 2.0;
        t_plus += rank * nz[i..j].iter().filter(|x| **x > 0.0).count() as f64;
        let t = (j - i) as f64;
        ties += t * t * t - t;
        i = j;
    }
    if n <= EXACT_MAX && ties == 0.0 {
        let cdf = null_cdf(n);
        let t = t_plus as usize;
        let low = cdf[t];
        let high = 1.0 - if t == 0 { 0.0 } else { cdf[t - 1] };
        return ((2.0 * low.min(high)).min(1.0), true);
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - ties / 48.0;
    let z = (t_plus - mean) / var.sqrt();
    ((2.0 * normal_cdf(-z.abs())).min(1.0), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::paired_change::tests::{logs, BASE, BASE30, CAND, CAND30};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs()
    }

    // tests/ref/paired_intervals.py: hodges-lehmann (est, lo, hi, p, k).
    #[test]
    fn exact_interval_matches_scipy_reference() {
        let h = hodges_lehmann(&logs(&BASE, &CAND), Confidence::default()).unwrap();
        assert!(close(h.estimate, -0.04972041139882381, 1e-9), "{h:?}");
        assert!(close(h.low.unwrap(), -0.05465789049301671, 1e-9), "{h:?}");
        assert!(close(h.high.unwrap(), -0.04337392597292633, 1e-9), "{h:?}");
        assert!(close(h.p, 0.0341796875, 1e-9), "{h:?}");
        assert!(h.exact);
        assert_eq!(exact_critical(12, 0.025), 14);
    }

    #[test]
    fn normal_interval_above_25_matches_scipy_reference() {
        let h = hodges_lehmann(&logs(&BASE30, &CAND30), Confidence::default()).unwrap();
        assert_eq!(normal_critical(30, 0.025), 137);
        assert!(close(h.estimate, -0.02737035301093827, 1e-9), "{h:?}");
        assert!(close(h.low.unwrap(), -0.03384394960575612, 1e-9), "{h:?}");
        assert!(close(h.high.unwrap(), -0.019869347017023354, 1e-9), "{h:?}");
        assert!(close(h.p, 9.315658591105142e-06, 1e-5), "{h:?}");
        assert!(!h.exact);
    }

    #[test]
    fn the_exact_distribution_is_a_distribution() {
        let cdf = null_cdf(6);
        assert_eq!(cdf.len(), 22);
        assert_eq!(cdf[0], 1.0 / 64.0);
        assert_eq!(*cdf.last().unwrap(), 1.0);
        // Five values cannot reach 95% (P(T+ = 0) = 1/32); six reach [min, max].
        assert_eq!(exact_critical(5, 0.025), 0);
        assert_eq!(exact_critical(6, 0.025), 1);
        let h = hodges_lehmann(&[1.0, 2.0, 3.0, 4.0, 5.0], Confidence::default()).unwrap();
        assert_eq!((h.low, h.high), (None, None));
    }
}
