//! The change between two samples (a baseline and a candidate) as a ratio with its interval.
//!
//! When every value is positive (throughput, latency, seconds) the test runs on the
//! logarithms: benchmark changes are ratios and their noise is multiplicative. The change is
//! the ratio of the geometric means minus one, and its interval `exp(CI of the log
//! difference) - 1` is asymmetric and never reaches -100%. Otherwise (an error count of 0,
//! say) the test runs on the values and the change is relative to the baseline mean.
//!
//! The variance of the difference is Welch's (each side's own variance over its `n`), plus,
//! when the run-to-run noise of the cell is known from earlier runs ([`RunNoise`]), twice the
//! run effect's variance: each side is one run, and each run carries its own run effect,
//! which the iterations inside one run cannot show. Degrees of freedom by Satterthwaite over
//! every term.

use serde::Serialize;

use super::dist::{t_quantile, t_two_sided_p};
use super::Confidence;

/// The run-to-run variance of one cell, on the log scale, learned from earlier runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct RunNoise {
    /// Variance of the run effect: the spread of run means beyond what their iterations
    /// explain (method of moments, floored at 0).
    pub(crate) run_var: f64,
    /// Degrees of freedom of that estimate (runs - 1).
    pub(crate) df: f64,
    /// Runs it was learned from; 0 for an assumed run noise ([`RunNoise::assumed`]).
    pub(crate) runs: usize,
}

/// Runs needed before a run-to-run variance is estimated (2 degrees of freedom).
pub(crate) const MIN_NOISE_RUNS: usize = 3;

/// Degrees of freedom given to an assumed run noise: a value taken as known, not estimated.
pub(crate) const ASSUMED_DF: f64 = 1000.0;

impl RunNoise {
    /// A run effect assumed rather than learned: run means that vary by a coefficient of
    /// variation of `cv_pct` percent (log-normal: variance `ln(1 + cv^2)` on the log scale).
    pub(crate) fn assumed(cv_pct: f64) -> RunNoise {
        RunNoise {
            run_var: (cv_pct / 100.0).powi(2).ln_1p(),
            df: ASSUMED_DF,
            runs: 0,
        }
    }

    /// From one cell's iterations in each of several earlier runs (one slice per run). Runs
    /// with a non-positive value are left out (the model is on the log scale); `None` with
    /// fewer than [`MIN_NOISE_RUNS`] usable runs.
    pub(crate) fn learn(runs: &[Vec<f64>]) -> Option<RunNoise> {
        let stats: Vec<(f64, f64)> = runs
            .iter()
            .filter(|v| !v.is_empty() && v.iter().all(|x| *x > 0.0 && x.is_finite()))
            .map(|v| {
                let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
                let (m, var) = mean_var(&logs);
                (m, var.map_or(0.0, |var| var / logs.len() as f64))
            })
            .collect();
        let r = stats.len();
        if r < MIN_NOISE_RUNS {
            return None;
        }
        let means: Vec<f64> = stats.iter().map(|s| s.0).collect();
        let (_, between) = mean_var(&means);
        let within = stats.iter().map(|s| s.1).sum::<f64>() / r as f64;
        Some(RunNoise {
            run_var: (between.unwrap_or(0.0) - within).max(0.0),
            df: (r - 1) as f64,
            runs: r,
        })
    }
}

/// What the interval of a change accounts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Basis {
    /// The iterations of each side (within one run).
    Iterations,
    /// Batch means of one iteration's per-second samples on each side.
    BatchMeans,
    /// The iterations plus the run-to-run variance learned from earlier runs.
    IterationsAndRuns,
    /// The iterations plus an assumed run-to-run variance (no earlier runs to learn from).
    IterationsAndAssumedRuns,
    /// Per-round ratios of deployments measured in the same rounds: Hodges-Lehmann shift
    /// with the Wilcoxon signed-rank interval (`stats::paired_change`).
    PairedHodgesLehmann,
    /// Per-round ratios: the paired t interval of their mean (too few rounds for a rank
    /// interval).
    PairedMean,
    /// Counted instructions (`stats::counted`): the ratio of the means, the range of the
    /// counts, no test.
    Counted,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Change {
    /// The change in percent: ratio of geometric means - 1 on the log scale, else the
    /// difference of the means over |baseline mean|.
    pub(crate) pct: f64,
    pub(crate) lo_pct: f64,
    pub(crate) hi_pct: f64,
    /// Two-sided p-value of "no change".
    pub(crate) p: f64,
    pub(crate) df: f64,
    pub(crate) log_scale: bool,
    pub(crate) basis: Basis,
    /// The run-to-run noise that went into the interval, when `basis` says so.
    pub(crate) noise_runs: Option<usize>,
    /// The rounds a paired change rests on.
    pub(crate) rounds: Option<usize>,
}

impl Change {
    /// The change in the direction of `higher_is_better`: `better`, `worse`.
    pub(crate) fn direction(&self, higher_is_better: bool) -> &'static str {
        if (self.pct > 0.0) == higher_is_better {
            "better"
        } else {
            "worse"
        }
    }

    /// `-46.5% [-60.1%, -28.3%]`.
    pub(crate) fn text(&self) -> String {
        format!(
            "{:+.1}% [{:+.1}%, {:+.1}%]",
            self.pct, self.lo_pct, self.hi_pct
        )
    }
}

fn mean_var(v: &[f64]) -> (f64, Option<f64>) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = (v.len() > 1).then(|| v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0));
    (mean, var)
}

/// The change of `b` against `a`. Without `noise` each side needs two values (a variance);
/// with it, one value per side is enough (the run noise covers it). `None` when nothing can
/// be said (too few values, a baseline mean of 0 on the linear scale, non-finite values).
pub(crate) fn change(
    a: &[f64],
    b: &[f64],
    noise: Option<&RunNoise>,
    conf: Confidence,
) -> Option<Change> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let log_scale = a.iter().chain(b).all(|v| *v > 0.0);
    let tr = |v: &[f64]| -> Vec<f64> {
        if log_scale {
            v.iter().map(|x| x.ln()).collect()
        } else {
            v.to_vec()
        }
    };
    let (la, lb) = (tr(a), tr(b));
    let (ma, va) = mean_var(&la);
    let (mb, vb) = mean_var(&lb);
    // Only the log scale has a run-noise model.
    let noise = noise.filter(|_| log_scale);
    if noise.is_none() && (va.is_none() || vb.is_none()) {
        return None;
    }
    // Variance terms of the difference with their degrees of freedom.
    let mut terms: Vec<(f64, f64)> = Vec::new();
    if let Some(va) = va {
        terms.push((va / la.len() as f64, (la.len() - 1) as f64));
    }
    if let Some(vb) = vb {
        terms.push((vb / lb.len() as f64, (lb.len() - 1) as f64));
    }
    if let Some(n) = noise {
        terms.push((2.0 * n.run_var, n.df));
    }
    let diff = mb - ma;
    let noise_runs = noise.map(|n| n.runs).filter(|r| *r > 0);
    let basis = match noise {
        None => Basis::Iterations,
        Some(n) if n.runs == 0 => Basis::IterationsAndAssumedRuns,
        Some(_) => Basis::IterationsAndRuns,
    };
    let scale = if log_scale { None } else { Some(ma) };
    finish(diff, &terms, scale, basis, noise_runs, conf)
}

/// The change between two cells measured once, each with the batch means of its per-second
/// samples: centred on the ratio of the two measured values (what the tables show), with the
/// variance of each side's log mean from its batch means (`var / k`, `k - 1` degrees of
/// freedom). `None` unless both values are positive and both sides have 2+ batches.
pub(crate) fn change_batches(
    a: f64,
    a_batches: &[f64],
    b: f64,
    b_batches: &[f64],
    conf: Confidence,
) -> Option<Change> {
    let positive = |v: &[f64]| v.iter().all(|x| *x > 0.0 && x.is_finite());
    if !(positive(&[a, b]) && positive(a_batches) && positive(b_batches)) {
        return None;
    }
    let term = |v: &[f64]| -> Option<(f64, f64)> {
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let (_, var) = mean_var(&logs);
        Some((var? / logs.len() as f64, (logs.len() - 1) as f64))
    };
    let terms = [term(a_batches)?, term(b_batches)?];
    finish(b.ln() - a.ln(), &terms, None, Basis::BatchMeans, None, conf)
}

/// The test and interval of a difference `diff` (of logs, or of values when `linear_base`
/// gives the baseline mean to scale by) with variance terms `(variance, df)`.
fn finish(
    diff: f64,
    terms: &[(f64, f64)],
    linear_base: Option<f64>,
    basis: Basis,
    noise_runs: Option<usize>,
    conf: Confidence,
) -> Option<Change> {
    let var: f64 = terms.iter().map(|t| t.0).sum();
    let se = var.sqrt();
    let (p, df, q) = if se == 0.0 {
        // Both sides constant: equal means are identical, different ones differ for sure.
        (if diff == 0.0 { 1.0 } else { 0.0 }, f64::INFINITY, 0.0)
    } else {
        let den: f64 = terms
            .iter()
            .filter(|t| t.0 > 0.0)
            .map(|t| t.0 * t.0 / t.1)
            .sum();
        let df = var * var / den;
        let p = t_two_sided_p(diff / se, df);
        (p, df, t_quantile(0.5 + conf.level() / 2.0, df))
    };
    let (lo, hi) = (diff - q * se, diff + q * se);
    let (pct, lo_pct, hi_pct) = match linear_base {
        None => (diff.exp_m1(), lo.exp_m1(), hi.exp_m1()),
        Some(ma) => {
            if ma == 0.0 {
                return None;
            }
            (diff / ma.abs(), lo / ma.abs(), hi / ma.abs())
        }
    };
    Some(Change {
        pct: pct * 100.0,
        lo_pct: lo_pct * 100.0,
        hi_pct: hi_pct * 100.0,
        p,
        df,
        log_scale: linear_base.is_none(),
        basis,
        noise_runs,
        rounds: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    const A: [f64; 5] = [1639.0, 1702.0, 1588.0, 1650.0, 1677.0];
    const B: [f64; 4] = [1500.0, 1555.0, 1490.0, 1610.0];

    // scipy 1.17.1: r = ttest_ind(np.log(B), np.log(A), equal_var=False);
    //   r.pvalue = 0.019114845234458663, r.df = 5.374314317473746,
    //   r.confidence_interval(0.95) = (-0.12457935373843718, -0.016904155311564105),
    //   r.confidence_interval(0.99) = (-0.1539556169369618, 0.012472107886960501);
    //   mean(log B) - mean(log A) = -0.07074175452500064.
    #[test]
    fn welch_on_logs_matches_scipy() {
        let c = change(&A, &B, None, Confidence::default()).unwrap();
        assert!(c.log_scale);
        assert!(close(c.p, 0.019114845234458663, 1e-9), "p {}", c.p);
        assert!(close(c.df, 5.374314317473746, 1e-9), "df {}", c.df);
        assert!(close(
            c.pct,
            (-0.07074175452500064f64).exp_m1() * 100.0,
            1e-12
        ));
        assert!(close(
            c.lo_pct,
            (-0.12457935373843718f64).exp_m1() * 100.0,
            1e-8
        ));
        assert!(close(
            c.hi_pct,
            (-0.016904155311564105f64).exp_m1() * 100.0,
            1e-8
        ));
        let c99 = change(&A, &B, None, Confidence::new(0.99).unwrap()).unwrap();
        assert!(close(
            c99.lo_pct,
            (-0.1539556169369618f64).exp_m1() * 100.0,
            1e-8
        ));
        assert!(close(
            c99.hi_pct,
            (0.012472107886960501f64).exp_m1() * 100.0,
            1e-6
        ));
        // 95%: significant (the interval excludes 0); 99%: not, and the interval says so.
        assert!(Confidence::default().significant(c.p) && c.hi_pct < 0.0);
        assert!(!Confidence::new(0.99).unwrap().significant(c99.p) && c99.hi_pct > 0.0);
    }

    #[test]
    fn the_interval_never_implies_less_than_minus_100_percent() {
        // A drop to a tenth with enormous noise: a symmetric interval would reach -180%.
        let a = [1000.0, 10.0, 5000.0];
        let b = [100.0, 1.0, 500.0];
        let c = change(&a, &b, None, Confidence::default()).unwrap();
        assert!(
            c.lo_pct > -100.0 && c.lo_pct < c.pct && c.pct < c.hi_pct,
            "{c:?}"
        );
        assert!(close(c.pct, -90.0, 1e-9));
        assert!(c.hi_pct - c.pct > c.pct - c.lo_pct, "asymmetric: {c:?}");
    }

    #[test]
    fn zero_values_use_the_linear_scale() {
        let c = change(&[0.0, 2.0], &[2.0, 4.0], None, Confidence::default()).unwrap();
        assert!(!c.log_scale);
        assert!(close(c.pct, 200.0, 1e-12));
        assert!(change(&[0.0, 0.0], &[1.0, 2.0], None, Confidence::default()).is_none());
        assert!(change(&[1.0], &[2.0, 3.0], None, Confidence::default()).is_none());
    }

    // Run noise from three earlier runs, computed by hand (Python, math module):
    //   numpy: runs [100, 102], [110, 108], [95, 97]; m = mean(log run), w = var(log run,
    //   ddof=1) / 2; var(m, ddof=1) - mean(w) = 0.004087007002496234 - 9.690784289760443e-05
    //   = 0.00399009915959863
    // numpy: a = 1000 with batch means [950, 1000, 1050, 990, 1010], b = 1200 with
    // [1150, 1250, 1180, 1220, 1200]; se^2 = var(log ba, ddof=1)/5 + var(log bb, ddof=1)/5 =
    // 0.000260507 + 0.000201632, Satterthwaite df = 7.87223; t = log(1.2)/se = 8.48109,
    // p = 3.15206e-05 (scipy t.sf); interval expm1(log 1.2 -/+ t.ppf(0.975, df) * se):
    // +14.18% .. +26.12%.
    #[test]
    fn batch_change_is_centred_on_the_measured_values() {
        let ba = [950.0, 1000.0, 1050.0, 990.0, 1010.0];
        let bb = [1150.0, 1250.0, 1180.0, 1220.0, 1200.0];
        let c = change_batches(1000.0, &ba, 1200.0, &bb, Confidence::default()).unwrap();
        assert_eq!(c.basis, Basis::BatchMeans);
        assert!(close(c.pct, 20.0, 1e-12), "the ratio of the values: {c:?}");
        assert!(close(c.df, 7.872233388063145, 1e-9), "{c:?}");
        assert!(close(c.p, 3.1520557590638764e-05, 1e-6), "{c:?}");
        assert!(close(c.lo_pct, 14.180233367538603, 1e-8), "{c:?}");
        assert!(close(c.hi_pct, 26.11640014473743, 1e-8), "{c:?}");
        assert!(change_batches(1000.0, &ba[..1], 1200.0, &bb, Confidence::default()).is_none());
        assert!(change_batches(0.0, &ba, 1200.0, &bb, Confidence::default()).is_none());
    }

    #[test]
    fn run_noise_from_history() {
        let runs = vec![vec![100.0, 102.0], vec![110.0, 108.0], vec![95.0, 97.0]];
        let n = RunNoise::learn(&runs).unwrap();
        let logs: Vec<(f64, f64)> = runs
            .iter()
            .map(|r| {
                let (x, y) = (r[0].ln(), r[1].ln());
                ((x + y) / 2.0, (x - y).powi(2) / 2.0 / 2.0)
            })
            .collect();
        let mm = logs.iter().map(|l| l.0).sum::<f64>() / 3.0;
        let between = logs.iter().map(|l| (l.0 - mm).powi(2)).sum::<f64>() / 2.0;
        let within = logs.iter().map(|l| l.1).sum::<f64>() / 3.0;
        assert!(close(n.run_var, between - within, 1e-12));
        assert!(close(n.run_var, 0.00399009915959863, 1e-9), "{}", n.run_var);
        assert_eq!((n.df, n.runs), (2.0, 3));
        assert!(
            RunNoise::learn(&runs[..2]).is_none(),
            "two runs are not enough"
        );
    }

    /// With run noise the interval widens and the test has the run's degrees of freedom:
    /// a 5% step that the iterations alone call significant is not, when runs vary by ~6%.
    #[test]
    fn run_noise_widens_the_interval() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b = [95.0, 96.0, 94.0, 95.5, 94.5];
        let conf = Confidence::default();
        let within = change(&a, &b, None, conf).unwrap();
        assert!(conf.significant(within.p));
        let noise = RunNoise {
            run_var: 0.06f64.powi(2),
            df: 4.0,
            runs: 5,
        };
        let both = change(&a, &b, Some(&noise), conf).unwrap();
        assert_eq!(both.basis, Basis::IterationsAndRuns);
        assert_eq!(both.noise_runs, Some(5));
        assert!(!conf.significant(both.p), "{both:?}");
        assert!(both.lo_pct < within.lo_pct && both.hi_pct > 0.0);
        assert!(close(both.pct, within.pct, 1e-12));
        // By hand: var = var(log a)/5 + var(log b)/5 + 2 * 0.0036, df by Satterthwaite.
        let lv = |v: &[f64]| {
            let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
            let m = l.iter().sum::<f64>() / l.len() as f64;
            l.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (l.len() - 1) as f64 / 5.0
        };
        let (ta, tb, tr) = (lv(&a), lv(&b), 2.0 * 0.0036);
        let var = ta + tb + tr;
        let df = var * var / (ta * ta / 4.0 + tb * tb / 4.0 + tr * tr / 4.0);
        assert!(close(both.df, df, 1e-12));
        // One iteration per side is enough once the run noise is known.
        assert!(change(&[100.0], &[90.0], Some(&noise), conf).is_some());
    }

    /// An assumed CV of run means of 3%: log-scale variance ln(1 + 0.03^2) =
    /// 0.000899595... (Python: math.log1p(0.03**2)), taken as known.
    #[test]
    fn assumed_run_noise_is_a_known_variance() {
        let n = RunNoise::assumed(3.0);
        assert!(close(n.run_var, 0.000899595242836093, 1e-12), "{n:?}");
        assert_eq!((n.df, n.runs), (ASSUMED_DF, 0));
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b = [95.0, 96.0, 94.0, 95.5, 94.5];
        let c = change(&a, &b, Some(&n), Confidence::default()).unwrap();
        assert_eq!(
            (c.basis, c.noise_runs),
            (Basis::IterationsAndAssumedRuns, None)
        );
        let one = change(&[100.0], &[90.0], Some(&n), Confidence::default()).unwrap();
        assert!(one.df >= ASSUMED_DF && one.lo_pct < -10.0 && one.hi_pct > -10.0);
    }
}
