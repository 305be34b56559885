//! Student's t distribution: the one implementation of its CDF and quantiles in rmatrix;
//! and the standard normal's, for the large-sample rank tests (`signed_rank`).
//!
//! The t CDF goes through the regularized incomplete beta function
//! (`P(|T| > t) = I_{df/(df+t^2)}(df/2, 1/2)`), evaluated with the Lentz continued fraction
//! of Numerical Recipes (2nd ed., section 6.4) and a Lanczos log-gamma. Quantiles are found by
//! bisection on the CDF. Accuracy is about 1e-10, far below what benchmark noise can use.

/// Natural log of the gamma function (Lanczos approximation, g = 7, n = 9), for x > 0.
pub(crate) fn ln_gamma(x: f64) -> f64 {
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
pub(crate) fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
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
pub(crate) fn t_cdf(t: f64, df: f64) -> f64 {
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
pub(crate) fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_infinite() {
        return 0.0;
    }
    inc_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// The t with P(T <= t) = p, for 0 < p < 1 (bisection on the CDF).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
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

/// P(Z <= z) for the standard normal, through the complementary error function of
/// Numerical Recipes (2nd ed., `erfcc`: fractional error below 1.2e-7, ample for a p-value
/// or a rank's critical value).
pub(crate) fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x);
    let poly = [
        -1.265_512_23,
        1.000_023_68,
        0.374_091_96,
        0.096_784_18,
        -0.186_288_06,
        0.278_868_07,
        -1.135_203_98,
        1.488_515_87,
        -0.822_152_23,
        0.170_872_77,
    ]
    .iter()
    .rev()
    .fold(0.0, |acc, c| c + t * acc);
    let erfc = t * (-x * x + poly).exp();
    if z >= 0.0 {
        1.0 - 0.5 * erfc
    } else {
        0.5 * erfc
    }
}

/// The z with P(Z <= z) = p, for 0 < p < 1 (bisection on [`normal_cdf`]).
pub(crate) fn normal_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let (mut lo, mut hi) = (-40.0, 40.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if normal_cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
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

    // scipy.stats.norm.cdf / norm.ppf.
    #[test]
    fn normal_matches_scipy() {
        assert!(close(normal_cdf(1.0), 0.8413447460685429, 1e-7));
        assert!(close(normal_cdf(-2.5), 0.006209665325776132, 1e-6));
        assert!(close(normal_cdf(0.0), 0.5, 1e-7));
        assert!(close(normal_quantile(0.975), 1.959963984540054, 1e-6));
        assert!(close(normal_quantile(0.005), -2.5758293035489004, 1e-6));
    }
}
