//! Minimum detectable effect (MDE): the smallest regression the gate flags with 80% power.
//!
//! The gate flags a change when it is significant (|d| > t_{1-alpha/2,df} * SE, `d` the
//! measured log difference) **and** its point estimate is beyond the threshold
//! (|d| >= thr, on the log scale). Both cut on the measured `d`, so the flagged region is
//! |d| > c with `c = max(t_{1-alpha/2,df} * SE, thr)`, and a true change `delta` is flagged
//! with probability about `P(T_df > (c - delta) / SE)`. Power 0.8 needs
//!
//! ```text
//! MDE = max(t_{1-alpha/2,df} * SE, thr) + t_{0.8,df} * SE
//! ```
//!
//! the usual `(t_{1-alpha/2} + t_{power}) * SE` when the noise decides, and `thr + t_{0.8} *
//! SE` when the threshold does. A change exactly at the threshold is measured below it half
//! the time, so no cell sees the threshold itself with 80% power; a cell **sees the
//! threshold** when its noise alone would not hide a change of that size
//! (`(t_{1-alpha/2} + t_{0.8}) * SE <= thr`), i.e. when the threshold, not the noise, limits
//! it. The opposite tail is left out (a standard approximation, below 1% of power here).
//!
//! The MDE is reported in the direction that fails the gate: a drop for a higher-is-better
//! metric (`1 - exp(-MDE)`), a rise for a lower-is-better one (`exp(MDE) - 1`), in percent.

use serde::Serialize;

use super::dist::t_quantile;
use super::{Change, Confidence};

/// The power the MDE is quoted at.
pub(crate) const POWER: f64 = 0.8;

/// The smallest regression a cell flags with [`POWER`], and whether it sees the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Mde {
    /// In percent, in the regressing direction (a drop or a rise), never negative.
    pub(crate) pct: f64,
    /// The noise alone would not hide a change of the threshold's size.
    pub(crate) sees_threshold: bool,
}

/// The regressing direction of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Regression {
    /// Higher is better: a regression is a drop.
    Drop,
    /// Lower is better: a regression is a rise.
    Rise,
}

impl Regression {
    pub(crate) fn of(higher_is_better: bool) -> Regression {
        if higher_is_better {
            Regression::Drop
        } else {
            Regression::Rise
        }
    }
}

/// The MDE on the scale of the test (logs, or fractions of the baseline on the linear scale)
/// for a difference with standard error `se` and `df` degrees of freedom, and a threshold
/// `thr` on that scale.
pub(crate) fn mde_units(se: f64, df: f64, conf: Confidence, thr: f64) -> (f64, bool) {
    if se == 0.0 {
        return (thr, true);
    }
    let crit = t_quantile(1.0 - conf.alpha() / 2.0, df);
    let pow = t_quantile(POWER, df);
    ((crit * se).max(thr) + pow * se, (crit + pow) * se <= thr)
}

/// The MDE of a log-scale difference with standard error `se`.
pub(crate) fn mde_log(
    se: f64,
    df: f64,
    conf: Confidence,
    threshold_pct: f64,
    dir: Regression,
) -> Mde {
    let t = threshold_pct / 100.0;
    // The gate's threshold on the log scale in the regressing direction: a drop of 5% is
    // -ln(0.95), a rise of 5% is ln(1.05).
    let thr = match dir {
        Regression::Drop => -(-t).ln_1p(),
        Regression::Rise => t.ln_1p(),
    };
    let (m, sees_threshold) = mde_units(se, df, conf, thr);
    let pct = match dir {
        Regression::Drop => -(-m).exp_m1() * 100.0,
        Regression::Rise => m.exp_m1() * 100.0,
    };
    Mde {
        pct,
        sees_threshold,
    }
}

/// The MDE of a judged change, from the standard error its interval implies (the interval
/// is `d -/+ t_{1-alpha/2,df} * SE` at `conf`).
pub(crate) fn of_change(c: &Change, conf: Confidence, threshold_pct: f64, dir: Regression) -> Mde {
    let q = t_quantile(0.5 + conf.level() / 2.0, c.df);
    let half = if c.log_scale {
        ((c.hi_pct / 100.0).ln_1p() - (c.lo_pct / 100.0).ln_1p()) / 2.0
    } else {
        (c.hi_pct - c.lo_pct) / 200.0
    };
    let se = if half == 0.0 { 0.0 } else { half / q };
    if c.log_scale {
        mde_log(se, c.df, conf, threshold_pct, dir)
    } else {
        let (m, sees_threshold) = mde_units(se, c.df, conf, threshold_pct / 100.0);
        Mde {
            pct: m * 100.0,
            sees_threshold,
        }
    }
}

/// The standard error and degrees of freedom of a planned compare: `n` iterations a side
/// with iteration variance `iter_var` (`iter_df` degrees of freedom when `n` is 1 and the
/// compare cannot estimate it itself), plus a run effect `run_var` (`run_df`) on each side.
/// Satterthwaite over the three terms, as `stats::change` does.
pub(crate) fn planned_se(
    n: usize,
    (iter_var, iter_df): (f64, f64),
    (run_var, run_df): (f64, f64),
) -> (f64, f64) {
    let n = n.max(1) as f64;
    let own_df = if n > 1.0 { n - 1.0 } else { iter_df };
    let terms = [
        (iter_var / n, own_df),
        (iter_var / n, own_df),
        (2.0 * run_var, run_df),
    ];
    let var: f64 = terms.iter().map(|t| t.0).sum();
    let den: f64 = terms
        .iter()
        .filter(|t| t.0 > 0.0)
        .map(|t| t.0 * t.0 / t.1)
        .sum();
    (
        var.sqrt(),
        if den > 0.0 {
            var * var / den
        } else {
            f64::INFINITY
        },
    )
}

/// The smallest shift between two segments of `window` run means each (history passes its
/// `--min-points`: the fewest runs a change point needs on either side) that a t-test on
/// their logarithms flags with [`POWER`], from the spread of the series' own run means
/// (which holds the run-to-run noise, and any shifts, so it errs on the safe side). None
/// for fewer than 4 means, a window under 2, or a value that is not positive.
pub(crate) fn series_mde(
    means: &[f64],
    window: usize,
    conf: Confidence,
    threshold_pct: f64,
    dir: Regression,
) -> Option<Mde> {
    let w = window.min(means.len() / 2);
    if w < 2 || means.iter().any(|m| !(*m > 0.0 && m.is_finite())) {
        return None;
    }
    let logs: Vec<f64> = means.iter().map(|m| m.ln()).collect();
    let k = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / k;
    let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0);
    let se = (2.0 * var / w as f64).sqrt();
    Some(mde_log(
        se,
        2.0 * (w as f64 - 1.0),
        conf,
        threshold_pct,
        dir,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::change;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs()
    }

    // scipy 1.17.1: stats.t.ppf(0.975, 8) = 2.306004135204166, stats.t.ppf(0.8, 8) =
    // 0.8888895177670202; stats.t.ppf(0.975, 4) = 2.7764451051977934, ppf(0.8, 4) =
    // 0.9409645772351816.
    #[test]
    fn the_quantiles_are_scipys() {
        assert!(close(t_quantile(0.975, 8.0), 2.306004135204166, 1e-9));
        assert!(close(t_quantile(0.8, 8.0), 0.8888895177670202, 1e-9));
        assert!(close(t_quantile(0.975, 4.0), 2.7764451051977934, 1e-9));
        assert!(close(t_quantile(0.8, 4.0), 0.9409645772351816, 1e-9));
    }

    // statsmodels 0.15.0: TTestIndPower().solve_power(effect_size=None, nobs1=n, alpha=0.05,
    // power=0.8, ratio=1.0), the exact noncentral-t answer in units of the sd:
    //   n = 5: 2.024440145655355, n = 10: 1.324947368330822, n = 3: 3.070892269599019.
    // The approximation (t_{0.975,df} + t_{0.8,df}) * sqrt(2/n), df = 2n - 2, gives
    // 2.0206 / 1.3251 / 3.0353: within 0.2% at 5 and 10 iterations, 1.2% at 3 (statsmodels'
    // power at the n = 5 value: 0.7985).
    #[test]
    fn mde_without_threshold_matches_statsmodels() {
        let conf = Confidence::default();
        for (n, exact, tol) in [
            (5usize, 2.024440145655355, 0.002),
            (10, 1.324947368330822, 0.001),
            (3, 3.070892269599019, 0.012),
        ] {
            let se = (2.0 / n as f64).sqrt();
            let (m, _) = mde_units(se, 2.0 * n as f64 - 2.0, conf, 0.0);
            assert!(close(m, exact, tol), "n {n}: {m} vs {exact}");
        }
    }

    #[test]
    fn the_threshold_binds_when_the_noise_is_low() {
        let conf = Confidence::default();
        // Low noise: threshold + t_{0.8} * se; sees the threshold.
        let se = 0.005;
        let (m, sees) = mde_units(se, 8.0, conf, 0.05);
        assert!(close(m, 0.05 + 0.8888895177670202 * se, 1e-9) && sees);
        // High noise: the significance test binds; the threshold is not seen.
        let (m, sees) = mde_units(0.05, 8.0, conf, 0.05);
        assert!(close(m, (2.306004135204166 + 0.8888895177670202) * 0.05, 1e-9) && !sees);
        // No noise at all: exactly the threshold.
        assert_eq!(mde_units(0.0, f64::INFINITY, conf, 0.05), (0.05, true));
    }

    #[test]
    fn percent_in_the_regressing_direction() {
        let conf = Confidence::default();
        // A 10% drop is -ln(0.9) = 0.10536 on the log scale, a 10% rise ln(1.1) = 0.09531.
        let drop = mde_log(0.01, 8.0, conf, 10.0, Regression::Drop);
        let want = -0.9f64.ln() + 0.8888895177670202 * 0.01;
        assert!(close(drop.pct, -(-want).exp_m1() * 100.0, 1e-9), "{drop:?}");
        let rise = mde_log(0.01, 8.0, conf, 10.0, Regression::Rise);
        let want = 1.1f64.ln() + 0.8888895177670202 * 0.01;
        assert!(close(rise.pct, want.exp_m1() * 100.0, 1e-9), "{rise:?}");
        assert!(drop.pct > 10.0 && rise.pct > 10.0 && drop.sees_threshold);
    }

    /// The SE recovered from a judged change's interval is Welch's, so the MDE of a compare
    /// equals the one computed from its samples directly.
    #[test]
    fn a_changes_mde_uses_its_own_standard_error() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b = [95.0, 96.0, 94.0, 95.5, 94.5];
        let conf = Confidence::default();
        let c = change(&a, &b, None, conf).unwrap();
        let lv = |v: &[f64]| {
            let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
            let m = l.iter().sum::<f64>() / 5.0;
            l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 4.0 / 5.0
        };
        let se = (lv(&a) + lv(&b)).sqrt();
        let want = mde_log(se, c.df, conf, 5.0, Regression::Drop);
        let got = of_change(&c, conf, 5.0, Regression::Drop);
        assert!(close(got.pct, want.pct, 1e-9), "{got:?} {want:?}");
    }

    #[test]
    fn planned_compares_and_series() {
        // 5 iterations of CV ~2% and a run effect of 3% with 9 df.
        let (se, df) = planned_se(5, (0.0004, 40.0), (0.0009, 9.0));
        assert!(close(se, (2.0 * 0.0004 / 5.0 + 0.0018f64).sqrt(), 1e-12));
        let terms = [(0.00008f64, 4.0f64), (0.00008, 4.0), (0.0018, 9.0)];
        let var: f64 = terms.iter().map(|t| t.0).sum();
        let den: f64 = terms.iter().map(|t| t.0 * t.0 / t.1).sum();
        assert!(close(df, var * var / den, 1e-12));
        // One iteration a side takes the store's degrees of freedom for the iterations.
        let (se1, _) = planned_se(1, (0.0004, 40.0), (0.0, 1.0));
        assert!(close(se1, 0.0008f64.sqrt(), 1e-12));
        let flat = [100.0, 102.0, 98.0, 101.0, 99.0, 100.0, 101.0, 99.0];
        let m = series_mde(&flat, 5, Confidence::default(), 5.0, Regression::Drop).unwrap();
        assert!(m.pct > 5.0 && m.pct < 10.0, "{m:?}");
        assert!(series_mde(&flat[..3], 5, Confidence::default(), 5.0, Regression::Drop).is_none());
    }
}
