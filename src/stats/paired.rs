//! Two tools measured in the same rounds (`rmatrix ratio`, the side-by-side scripts under
//! scripts/bench/): the per-round ratios A / B, their median, and their geometric mean with
//! its interval. A round's two runs share the machine's state, so the ratio is taken per
//! round and the interval is one-sample Student's t on the logarithms of the ratios (the
//! interval of a mean, [`summarize`]), never below 0. Beside them the robust ones
//! (`stats::paired_change`): the median's sign-test interval and the Hodges-Lehmann ratio with
//! its signed-rank interval, which an outlier round cannot blow up.

use serde::Serialize;

use super::summary::summarize;
use super::Confidence;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct PairedRatio {
    /// Rounds.
    pub(crate) n: usize,
    /// Median of the per-round ratios.
    pub(crate) median: f64,
    /// Geometric mean of the per-round ratios.
    pub(crate) geomean: f64,
    /// The interval of the geometric mean; none under 2 rounds.
    pub(crate) low: Option<f64>,
    pub(crate) high: Option<f64>,
    /// Its level, as a fraction (0.95).
    pub(crate) confidence: f64,
    /// The median's interval (sign test); none under 6 rounds at 95%.
    pub(crate) median_low: Option<f64>,
    pub(crate) median_high: Option<f64>,
    /// The Hodges-Lehmann ratio (exp of the median Walsh average of the log-ratios) and its
    /// Wilcoxon signed-rank interval; none under 6 rounds at 95%.
    pub(crate) hodges_lehmann: f64,
    pub(crate) hodges_lehmann_low: Option<f64>,
    pub(crate) hodges_lehmann_high: Option<f64>,
}

/// None for no rounds, or a value or ratio that is not a positive finite number (no ratio
/// exists, or it is beyond f64: 1e300 / 1e-300).
pub(crate) fn paired_ratio(pairs: &[(f64, f64)], conf: Confidence) -> Option<PairedRatio> {
    let valid = |x: f64| x.is_finite() && x > 0.0;
    if pairs
        .iter()
        .any(|&(a, b)| !valid(a) || !valid(b) || !valid(a / b))
    {
        return None;
    }
    let mut ratios: Vec<f64> = pairs.iter().map(|&(a, b)| a / b).collect();
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let s = summarize(&logs, conf)?;
    // paired_change judges ln(second / first): B then A gives ln(A / B).
    let swapped: Vec<(f64, f64)> = pairs.iter().map(|&(a, b)| (b, a)).collect();
    let robust = super::paired_change::paired_change(&swapped, conf)?;
    let (m, h) = (robust.median, robust.hodges_lehmann);
    ratios.sort_by(f64::total_cmp);
    let mid = ratios.len() / 2;
    let median = if ratios.len() % 2 == 1 {
        ratios[mid]
    } else {
        (ratios[mid - 1] + ratios[mid]) / 2.0
    };
    Some(PairedRatio {
        n: s.n,
        median,
        geomean: s.mean.exp(),
        low: s.half_width.map(|h| (s.mean - h).exp()),
        high: s.half_width.map(|h| (s.mean + h).exp()),
        confidence: conf.level(),
        median_low: m.low.map(f64::exp),
        median_high: m.high.map(f64::exp),
        hodges_lehmann: h.estimate.exp(),
        hodges_lehmann_low: h.low.map(f64::exp),
        hodges_lehmann_high: h.high.map(f64::exp),
    })
}

/// One round per line, `A B` (whitespace between); blank lines are skipped. The error names
/// the 1-based line.
pub(crate) fn parse_pairs(text: &str) -> Result<Vec<(f64, f64)>, String> {
    let mut pairs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields[..] {
            [] => continue,
            [a, b] => {
                let num = |t: &str| t.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0);
                match (num(a), num(b)) {
                    (Some(a), Some(b)) => pairs.push((a, b)),
                    _ => return Err(format!("line {}: values must be positive numbers", i + 1)),
                }
            }
            _ => {
                return Err(format!(
                    "line {}: expected two values `A B`, found {}",
                    i + 1,
                    fields.len()
                ))
            }
        }
    }
    if pairs.is_empty() {
        return Err("no rounds: expected one line `A B` per round".into());
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs()
    }

    // Reference values computed apart from rmatrix, Python 3.11 standard library:
    //   r = [1.1/1.0, 2.0/2.1, 3.3/3.0, 0.9/1.0, 5.25/5.0]
    //   logs = [math.log(x) for x in r]; m = statistics.mean(logs); sd = statistics.stdev(logs)
    //   h = 2.7764451051977934 * sd / math.sqrt(5)   # scipy.stats.t.ppf(0.975, 4)
    //   math.exp(m) = 1.0171981835106176
    //   math.exp(m - h) = 0.9093721007107318, math.exp(m + h) = 1.137809422269083
    //   statistics.median(r) = 1.05
    #[test]
    fn five_rounds_against_independent_values() {
        let pairs = [(1.1, 1.0), (2.0, 2.1), (3.3, 3.0), (0.9, 1.0), (5.25, 5.0)];
        let r = paired_ratio(&pairs, Confidence::default()).unwrap();
        assert_eq!(r.n, 5);
        assert!(close(r.geomean, 1.0171981835106176), "{r:?}");
        assert!(close(r.low.unwrap(), 0.9093721007107318), "{r:?}");
        assert!(close(r.high.unwrap(), 1.137809422269083), "{r:?}");
        assert!(close(r.median, 1.05), "{r:?}");
        assert_eq!(r.confidence, 0.95);
    }

    // tests/ref/paired_intervals.py, "12 rounds" (A = CAND, B = BASE): the median and the
    // Hodges-Lehmann log-ratio with their intervals, exponentiated.
    #[test]
    fn twelve_rounds_have_robust_intervals() {
        use crate::stats::paired_change::tests::{BASE, CAND};
        let pairs: Vec<(f64, f64)> = CAND.iter().copied().zip(BASE.iter().copied()).collect();
        let r = paired_ratio(&pairs, Confidence::default()).unwrap();
        assert!(
            close(r.median_low.unwrap(), (-0.05779611350502723f64).exp()),
            "{r:?}"
        );
        assert!(
            close(r.median_high.unwrap(), (-0.04463636659572582f64).exp()),
            "{r:?}"
        );
        assert!(
            close(r.hodges_lehmann, (-0.04972041139882381f64).exp()),
            "{r:?}"
        );
        assert!(close(
            r.hodges_lehmann_low.unwrap(),
            (-0.05465789049301671f64).exp()
        ));
        assert!(close(
            r.hodges_lehmann_high.unwrap(),
            (-0.04337392597292633f64).exp()
        ));
        // The median of the ratios themselves (the mean of the middle two, not of their logs).
        assert!(r.median > r.median_low.unwrap() && r.median < r.median_high.unwrap());
    }

    #[test]
    fn one_round_has_a_ratio_and_no_interval() {
        let r = paired_ratio(&[(3.0, 2.0)], Confidence::default()).unwrap();
        assert_eq!((r.n, r.median, r.low, r.high), (1, 1.5, None, None));
        assert!(close(r.geomean, 1.5));
        assert!(paired_ratio(&[], Confidence::default()).is_none());
        assert!(paired_ratio(&[(1.0, 0.0)], Confidence::default()).is_none());
    }

    #[test]
    fn even_rounds_take_the_middle_two() {
        let r = paired_ratio(
            &[(1.0, 1.0), (2.0, 1.0), (4.0, 1.0), (3.0, 1.0)],
            Confidence::default(),
        )
        .unwrap();
        assert_eq!(r.median, 2.5);
    }

    #[test]
    fn parse_names_the_bad_line() {
        assert_eq!(
            parse_pairs("1 2\n\n3.5 4e3\n").unwrap(),
            vec![(1.0, 2.0), (3.5, 4000.0)]
        );
        assert_eq!(
            parse_pairs("1 2\n3\n").unwrap_err(),
            "line 2: expected two values `A B`, found 1"
        );
        assert_eq!(
            parse_pairs("1 -2\n").unwrap_err(),
            "line 1: values must be positive numbers"
        );
        assert_eq!(
            parse_pairs("1 nan\n").unwrap_err(),
            "line 1: values must be positive numbers"
        );
        assert!(parse_pairs("\n").unwrap_err().starts_with("no rounds"));
    }
}
