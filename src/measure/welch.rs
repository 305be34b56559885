//! Welch's unequal-variances t-test and the Student t distribution it needs.
//!
//! The t CDF goes through the regularized incomplete beta function
//! (`P(|T| > t) = I_{df/(df+t^2)}(df/2, 1/2)`), evaluated with the Lentz continued fraction
//! of Numerical Recipes (2nd ed., section 6.4) and a Lanczos log-gamma. Quantiles are found by
//! bisection on the CDF. Accuracy is about 1e-10, far below what benchmark noise can use.

use serde::Serialize;

/// Natural log of the gamma function (Lanczos approximation, g = 7, n = 9), for x > 0.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Gamma(x) Gamma(1-x) = pi / sin(pi x).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1.
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The continued fraction converges fast for x < (a+1)/(a+b+2); use the symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const EPS: f64 = 1e-15;
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// P(T <= t) for Student's t with `df` (> 0, not necessarily whole) degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, df / (df + t * t));
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// Two-sided p-value of a t statistic: P(|T| >= |t|).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_infinite() {
        return 0.0;
    }
    inc_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The t with P(T <= t) = p, for 0 < p < 1 (bisection on the CDF).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let (mut lo, mut hi) = (-1.0, 1.0);
    while t_cdf(lo, df) > p {
        lo *= 2.0;
    }
    while t_cdf(hi, df) < p {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi.abs().max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Welch's t-test of `b` against `a` (difference = mean(b) - mean(a)), two-sided.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Welch {
    pub mean_a: f64,
    pub mean_b: f64,
    /// mean(b) - mean(a).
    pub diff: f64,
    /// Standard error of the difference.
    pub se: f64,
    /// Welch-Satterthwaite degrees of freedom (infinite when both variances are zero).
    pub df: f64,
    pub t: f64,
    /// Two-sided p-value.
    pub p: f64,
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// `None` when either side has fewer than two values (no variance, nothing to test).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mean_a, var_a) = mean_var(a);
    let (mean_b, var_b) = mean_var(b);
    let (ea, eb) = (var_a / na, var_b / nb);
    let se = (ea + eb).sqrt();
    let diff = mean_b - mean_a;
    let (t, df, p) = if se == 0.0 {
        // Both sides constant: equal means are identical, different ones differ for sure.
        if diff == 0.0 {
            (0.0, f64::INFINITY, 1.0)
        } else {
            (diff.signum() * f64::INFINITY, f64::INFINITY, 0.0)
        }
    } else {
        let df = (ea + eb).powi(2) / (ea * ea / (na - 1.0) + eb * eb / (nb - 1.0));
        let t = diff / se;
        (t, df, t_two_sided_p(t, df))
    };
    Some(Welch {
        mean_a,
        mean_b,
        diff,
        se,
        df,
        t,
        p,
    })
}

impl Welch {
    /// Confidence interval of the difference at `level` (e.g. 0.95).
    pub fn ci(&self, level: f64) -> (f64, f64) {
        if self.se == 0.0 {
            return (self.diff, self.diff);
        }
        let q = t_quantile(0.5 + level / 2.0, self.df);
        (self.diff - q * self.se, self.diff + q * self.se)
    }
}

/// The change of `b` against `a` as a test plus a confidence interval in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Relative {
    /// On the logarithms when `log`, else on the values.
    pub test: Welch,
    pub log: bool,
    /// Interval of the change in percent (of the geometric mean of `a` when `log`, else of
    /// its mean); none when the mean of `a` is 0.
    pub ci_pct: Option<(f64, f64)>,
}

/// Welch's test of a relative change. When every value is positive (throughput, latency,
/// time) the test runs on the logarithms, since benchmark changes are ratios and their noise
/// is multiplicative; the interval `exp(CI of the log difference) - 1` is then the interval of
/// the ratio of geometric means, asymmetric and never below -100%. Otherwise (a zero error
/// count, say) the test runs on the values and the interval is divided by `|mean(a)|`.
pub fn relative(a: &[f64], b: &[f64], level: f64) -> Option<Relative> {
    let positive = a.iter().chain(b).all(|v| *v > 0.0);
    if positive {
        let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
        let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
        let test = welch(&la, &lb)?;
        let (lo, hi) = test.ci(level);
        Some(Relative {
            test,
            log: true,
            ci_pct: Some((lo.exp_m1() * 100.0, hi.exp_m1() * 100.0)),
        })
    } else {
        let test = welch(a, b)?;
        let (lo, hi) = test.ci(level);
        let scale = test.mean_a.abs();
        Some(Relative {
            test,
            log: false,
            ci_pct: (scale != 0.0).then(|| (lo / scale * 100.0, hi / scale * 100.0)),
        })
    }
}

/// Conventional significance stars: `***` p < 0.001, `**` p < 0.01, `*` p < 0.05, else "".
pub fn stars(p: f64) -> &'static str {
    if p < 0.001 {
        "***"
    } else if p < 0.01 {
        "**"
    } else if p < 0.05 {
        "*"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-300)
    }

    // Reference values: Python 3 with scipy 1.17.1 (`pip install scipy`):
    //   scipy.special.gammaln, scipy.special.betainc, scipy.stats.t.cdf / t.ppf,
    //   scipy.stats.ttest_ind(a, b, equal_var=False) and its .confidence_interval(0.95).
    #[test]
    fn special_functions_match_scipy() {
        assert!(close(ln_gamma(0.5), 0.5723649429247, 1e-13));
        assert!(close(ln_gamma(10.0), 12.801827480081469, 1e-13));
        assert!(close(ln_gamma(123.4), 469.3360974421906, 1e-13));
        assert!(close(inc_beta(2.0, 3.0, 0.4), 0.5247999999999999, 1e-12));
        assert!(close(inc_beta(0.5, 0.5, 0.1), 0.20483276469913345, 1e-11));
        assert!(close(inc_beta(30.0, 0.5, 0.97), 0.17821754497024148, 1e-10));
        assert!(close(t_cdf(1.5, 3.0), 0.8847080673775886, 1e-11));
        assert!(close(t_cdf(-2.0, 7.5), 0.041448497649083156, 1e-10));
        assert!(close(t_cdf(0.3, 1000.0), 0.617880247916378, 1e-11));
        assert!(close(t_quantile(0.975, 4.0), 2.7764451051977934, 1e-9));
        assert!(close(t_quantile(0.995, 2.5), 7.163728138948783, 1e-9));
        assert!(close(t_quantile(0.975, 1e6), 1.959966356814107, 1e-9));
    }

    #[test]
    fn welch_matches_scipy() {
        let a = [1639.0, 1702.0, 1588.0, 1650.0, 1677.0];
        let b = [1500.0, 1555.0, 1490.0, 1610.0];
        let w = welch(&a, &b).unwrap();
        assert!(close(w.t, -3.3337450175696834, 1e-11), "t = {}", w.t);
        assert!(close(w.df, 5.607246544418722, 1e-11), "df = {}", w.df);
        assert!(close(w.p, 0.017411457088321185, 1e-9), "p = {}", w.p);
        let (lo, hi) = w.ci(0.95);
        assert!(close(lo, -196.4082130505781, 1e-9), "lo = {lo}");
        assert!(close(hi, -28.491786949421993, 1e-9), "hi = {hi}");

        let same = welch(&[5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
        assert_eq!((same.p, same.ci(0.95)), (1.0, (0.0, 0.0)));
        let apart = welch(&[5.0, 5.0], &[6.0, 6.0]).unwrap();
        assert_eq!(apart.p, 0.0);
        assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
    }

    // scipy 1.17.1: ttest_ind(log(b), log(a), equal_var=False) with a, b as in
    // welch_matches_scipy: p = 0.019114845234458663, CI(0.99) of the log difference
    // -0.1539556169369618 .. 0.012472107886960501.
    #[test]
    fn relative_change_on_logs_matches_scipy() {
        let a = [1639.0, 1702.0, 1588.0, 1650.0, 1677.0];
        let b = [1500.0, 1555.0, 1490.0, 1610.0];
        let r = relative(&a, &b, 0.99).unwrap();
        assert!(r.log);
        assert!(
            close(r.test.p, 0.019114845234458663, 1e-9),
            "p = {}",
            r.test.p
        );
        let (lo, hi) = r.ci_pct.unwrap();
        assert!(
            close(lo, (-0.1539556169369618f64).exp_m1() * 100.0, 1e-8),
            "{lo}"
        );
        assert!(
            close(hi, (0.012472107886960501f64).exp_m1() * 100.0, 1e-6),
            "{hi}"
        );
        let raw = relative(&[0.0, 1.0], &[2.0, 3.0], 0.95).unwrap();
        assert!(!raw.log && raw.ci_pct.is_some());
    }

    #[test]
    fn stars_by_p() {
        assert_eq!(
            [0.0005, 0.005, 0.03, 0.2].map(stars),
            ["***", "**", "*", ""]
        );
    }
}
