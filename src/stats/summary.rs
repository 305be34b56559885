//! One cell's iterations: mean, spread, and the confidence interval of the mean.

use super::dist::t_quantile;
use super::Confidence;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    pub(crate) n: usize,
    pub(crate) mean: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    /// Sample standard deviation (n-1); none for a single value (there is no spread to see).
    pub(crate) stddev: Option<f64>,
    /// stddev / |mean|, as a fraction; none for a single value or a zero mean.
    pub(crate) cv: Option<f64>,
    /// Half-width of the interval of the mean (Student's t at the confidence level);
    /// none for a single value.
    pub(crate) half_width: Option<f64>,
}

impl Summary {
    /// The half-width relative to the mean, in percent.
    pub(crate) fn half_width_pct(&self) -> Option<f64> {
        let h = self.half_width?;
        (self.mean != 0.0).then(|| h / self.mean.abs() * 100.0)
    }
}

pub(crate) fn summarize(values: &[f64], conf: Confidence) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let stddev = (n > 1)
        .then(|| (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
    let cv = stddev.filter(|_| mean != 0.0).map(|s| s / mean.abs());
    let half_width = stddev.map(|s| t_half(conf, (n - 1) as f64) * s / (n as f64).sqrt());
    Some(Summary {
        n,
        mean,
        min,
        max,
        stddev,
        cv,
        half_width,
    })
}

/// The two-sided t quantile at the confidence level.
pub(crate) fn t_half(conf: Confidence, df: f64) -> f64 {
    t_quantile(0.5 + conf.level() / 2.0, df)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs()
    }

    // Reference values, Python 3.11 with scipy 1.17.1:
    //   statistics.stdev([10,12,11,13,9]) = 1.5811388300841898
    //   scipy.stats.t.ppf(0.975, 4) = 2.7764451051977934, t.ppf(0.995, 4) = 4.604094871415897
    //   scipy.stats.t.ppf(0.975, 31) = 2.0395134463964077 (a table gave 2.000 for 31..60)
    #[test]
    fn known_values() {
        let c95 = Confidence::default();
        let s = summarize(&[10.0, 12.0, 11.0, 13.0, 9.0], c95).unwrap();
        assert_eq!(s.n, 5);
        assert!(close(s.mean, 11.0, 1e-15));
        assert!(close(s.stddev.unwrap(), 1.5811388300841898, 1e-14));
        assert!(close(s.cv.unwrap(), 1.5811388300841898 / 11.0, 1e-14));
        let want = 2.7764451051977934 * 1.5811388300841898 / 5f64.sqrt();
        assert!(close(s.half_width.unwrap(), want, 1e-9));
        let c99 = Confidence::new(0.99).unwrap();
        let s99 = summarize(&[10.0, 12.0, 11.0, 13.0, 9.0], c99).unwrap();
        let want = 4.604094871415897 * 1.5811388300841898 / 5f64.sqrt();
        assert!(close(s99.half_width.unwrap(), want, 1e-9));
        assert_eq!((s.min, s.max), (9.0, 13.0));
        assert!(close(t_half(c95, 31.0), 2.0395134463964077, 1e-9));
    }

    #[test]
    fn one_value_has_no_spread_and_no_interval() {
        let one = summarize(&[4.0], Confidence::default()).unwrap();
        assert_eq!((one.stddev, one.cv, one.half_width), (None, None, None));
        assert!(summarize(&[], Confidence::default()).is_none());
    }
}
