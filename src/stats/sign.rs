//! The median of paired differences with the sign test's interval: the order statistics
//! `[d_(k), d_(n+1-k)]`, `k` the largest count with `P(B <= k-1) <= alpha/2` for
//! `B ~ Binomial(n, 1/2)`. Exact at every `n`, assumes nothing of the shape of the noise, and
//! one wild round moves it by at most one position. The p-value is the exact two-sided
//! binomial test of the signs (zeros left out), as `scipy.stats.binomtest`.

use super::dist::ln_gamma;
use super::located::{median_sorted, Located};
use super::Confidence;

/// None for no values or a value that is not finite.
pub(crate) fn median_interval(d: &[f64], conf: Confidence) -> Option<Located> {
    if d.is_empty() || d.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mut s = d.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let k = order_statistic(n, conf.alpha() / 2.0);
    let positive = d.iter().filter(|x| **x > 0.0).count();
    let nonzero = d.iter().filter(|x| **x != 0.0).count();
    Some(Located {
        n,
        estimate: median_sorted(&s),
        low: (k >= 1).then(|| s[k - 1]),
        high: (k >= 1).then(|| s[n - k]),
        p: sign_p(positive, nonzero),
        exact: true,
    })
}

/// P(B = i) for B ~ Binomial(n, 1/2), in logs so that large `n` does not underflow.
fn pmf(n: usize, i: usize) -> f64 {
    let (n, i) = (n as f64, i as f64);
    (ln_gamma(n + 1.0) - ln_gamma(i + 1.0) - ln_gamma(n - i + 1.0) - n * std::f64::consts::LN_2)
        .exp()
}

/// The largest `k` with `P(B <= k-1) <= tail`; 0 when even `P(B = 0)` exceeds it.
fn order_statistic(n: usize, tail: f64) -> usize {
    let (mut k, mut cdf) = (0, 0.0);
    while k < n {
        cdf += pmf(n, k);
        // A relative slack so that a tail equal to alpha/2 in exact arithmetic counts.
        if cdf > tail * (1.0 + 1e-12) {
            break;
        }
        k += 1;
    }
    k
}

/// Two-sided exact binomial p-value of `x` positives among `n` signs.
fn sign_p(x: usize, n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let tail: f64 = (0..=x.min(n - x)).map(|i| pmf(n, i)).sum();
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs()
    }

    // tests/ref/paired_intervals.py, "12 rounds" and "30 rounds": median (est, lo, hi, p, k).
    #[test]
    fn median_and_sign_interval_match_scipy() {
        let d = crate::stats::paired_change::tests::logs(
            &crate::stats::paired_change::tests::BASE,
            &crate::stats::paired_change::tests::CAND,
        );
        let m = median_interval(&d, Confidence::default()).unwrap();
        assert!(close(m.estimate, -0.049861319591022225), "{m:?}");
        assert!(close(m.low.unwrap(), -0.05779611350502723), "{m:?}");
        assert!(close(m.high.unwrap(), -0.04463636659572582), "{m:?}");
        assert!(close(m.p, 0.00634765625), "{m:?}");
        assert_eq!(order_statistic(12, 0.025), 3);
        assert_eq!(order_statistic(30, 0.025), 10);
        let d30 = crate::stats::paired_change::tests::logs(
            &crate::stats::paired_change::tests::BASE30,
            &crate::stats::paired_change::tests::CAND30,
        );
        let m = median_interval(&d30, Confidence::default()).unwrap();
        assert!(close(m.estimate, -0.028097398934948933), "{m:?}");
        assert!(close(m.low.unwrap(), -0.03539960053862014), "{m:?}");
        assert!(close(m.high.unwrap(), -0.020800252018512707), "{m:?}");
        assert!(close(m.p, 8.430331945419312e-06), "{m:?}");
    }

    #[test]
    fn five_values_reach_no_95_percent_interval() {
        // P(B = 0) = 1/32 > 0.025: no order statistic covers 95%.
        let m = median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], Confidence::default()).unwrap();
        assert_eq!((m.estimate, m.low, m.high), (3.0, None, None));
        let m = median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], Confidence::default()).unwrap();
        assert_eq!((m.low, m.high), (Some(1.0), Some(6.0)));
        assert!(median_interval(&[], Confidence::default()).is_none());
    }
}
