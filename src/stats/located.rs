//! A location (a median, a mean, a shift) with its interval and the p-value of "zero": what
//! each paired analysis ([`super::signed_rank`], [`super::sign`], [`super::paired_change`])
//! returns, on the scale of its input (log-ratios for `paired_change`).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Located {
    /// Values it rests on.
    pub(crate) n: usize,
    pub(crate) estimate: f64,
    /// The interval at the confidence level; none when `n` is too small to reach it (a rank
    /// interval needs at least 6 values at 95%).
    pub(crate) low: Option<f64>,
    pub(crate) high: Option<f64>,
    /// Two-sided p-value of a location of zero.
    pub(crate) p: f64,
    /// The interval and p come from the exact distribution (else a large-sample one).
    pub(crate) exact: bool,
}

/// The median of sorted values (the mean of the middle two for an even count).
pub(crate) fn median_sorted(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The median of the finite ones of `values` when there are at least 3 (no median to judge
/// a round against under that): what [`super::jumps`] and [`super::uneven`] measure rounds
/// from.
pub(crate) fn median_of_rounds(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.len() < 3 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(median_sorted(&v))
}
