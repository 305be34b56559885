//! Summary statistics over iterations: mean, sample standard deviation, coefficient of
//! variation and a 95% confidence interval (Student's t).

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n-1); 0 for a single value.
    pub stddev: f64,
    /// stddev / mean, as a fraction.
    pub cv: f64,
    /// Half-width of the 95% confidence interval of the mean; 0 for a single value.
    pub ci95: f64,
}

pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let stddev = if n > 1 {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let cv = if mean != 0.0 {
        stddev / mean.abs()
    } else {
        0.0
    };
    let ci95 = if n > 1 {
        t_975(n - 1) * stddev / (n as f64).sqrt()
    } else {
        0.0
    };
    Some(Summary {
        n,
        mean,
        min,
        max,
        stddev,
        cv,
        ci95,
    })
}

/// Two-sided 95% Student's t quantile (0.975) for `df` degrees of freedom.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from Python 3.11: statistics.mean/stdev and
    // scipy.stats.t.ppf(0.975, 4) = 2.7764.
    #[test]
    fn known_values() {
        let s = summarize(&[10.0, 12.0, 11.0, 13.0, 9.0]).unwrap();
        assert_eq!(s.n, 5);
        assert!((s.mean - 11.0).abs() < 1e-12);
        assert!((s.stddev - 1.5811388300841898).abs() < 1e-12);
        assert!((s.cv - 0.14373989364401725).abs() < 1e-12);
        assert!((s.ci95 - 2.776 * 1.5811388300841898 / 5f64.sqrt()).abs() < 1e-9);
        assert_eq!((s.min, s.max), (9.0, 13.0));
        let one = summarize(&[4.0]).unwrap();
        assert_eq!((one.stddev, one.ci95), (0.0, 0.0));
        assert!(summarize(&[]).is_none());
    }
}
