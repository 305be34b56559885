//! Batch means: an honest interval for one long iteration from its per-second samples.
//!
//! Per-second throughput is autocorrelated (a slow second is often followed by another), so
//! the seconds are not independent samples and the naive interval over them is too narrow.
//! The measured phase is cut into `k` contiguous batches; the batch means are much less
//! correlated than the seconds. The lag-1 autocorrelation of the batch means is checked: when
//! it is significantly positive (one-sided, 5%), the batches are merged pairwise (twice as
//! long, half as many) and checked again; below [`MIN_BATCHES`] batches no interval is given.
//! The batch means then stand in for iterations (a t interval with `k - 1` degrees of freedom).

/// Fewer batches than this give too few degrees of freedom (and too weak a correlation
/// check) for an interval worth printing.
pub(crate) const MIN_BATCHES: usize = 5;
/// More batches than this only shorten them (and raise their correlation).
pub(crate) const MAX_BATCHES: usize = 20;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BatchMeans {
    pub(crate) means: Vec<f64>,
    /// Seconds per batch (the earliest `len % k` seconds, nearest the warm-up, are left out).
    pub(crate) batch_len: usize,
    /// Lag-1 autocorrelation of the batch means that passed the check.
    pub(crate) lag1: f64,
}

pub(crate) fn batch_means(series: &[f64]) -> Option<BatchMeans> {
    if series.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut k = MAX_BATCHES.min(series.len() / 2);
    while k >= MIN_BATCHES {
        let len = series.len() / k;
        let skip = series.len() - k * len;
        let means: Vec<f64> = series[skip..]
            .chunks(len)
            .map(|c| c.iter().sum::<f64>() / len as f64)
            .collect();
        let r1 = lag1(&means);
        // One-sided 5% bound of the lag-1 autocorrelation of white noise: 1.645 / sqrt(k).
        if r1 <= 1.645 / (k as f64).sqrt() {
            return Some(BatchMeans {
                means,
                batch_len: len,
                lag1: r1,
            });
        }
        k /= 2;
    }
    None
}

/// Lag-1 autocorrelation; 0 for a constant series.
pub(crate) fn lag1(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 3 {
        return 0.0;
    }
    let m = x.iter().sum::<f64>() / n as f64;
    let den: f64 = x.iter().map(|v| (v - m).powi(2)).sum();
    if den == 0.0 {
        return 0.0;
    }
    let num: f64 = x.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum();
    num / den
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{summarize, Confidence};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    fn normal(rng: &mut StdRng) -> f64 {
        // Box-Muller.
        let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// An AR(1) series around `mean`: x_t = mean + phi (x_{t-1} - mean) + e_t.
    fn ar1(rng: &mut StdRng, len: usize, phi: f64, mean: f64) -> Vec<f64> {
        let mut x = mean;
        (0..len)
            .map(|_| {
                x = mean + phi * (x - mean) + normal(rng);
                x
            })
            .collect()
    }

    // numpy: np.corrcoef-free definition, sum((x_t - m)(x_{t+1} - m)) / sum((x_t - m)^2):
    // [1, 2, 3, 4, 5] -> 0.4; [1, -1, 1, -1] -> -0.75.
    #[test]
    fn lag1_known_values() {
        assert!((lag1(&[1.0, 2.0, 3.0, 4.0, 5.0]) - 0.4).abs() < 1e-12);
        assert!((lag1(&[1.0, -1.0, 1.0, -1.0]) + 0.75).abs() < 1e-12);
        assert_eq!(lag1(&[3.0, 3.0, 3.0]), 0.0);
    }

    #[test]
    fn batches_of_a_short_series() {
        let b = batch_means(&(1..=21).map(f64::from).collect::<Vec<_>>());
        // 21 seconds: 10 batches of 2 (the first second left out) are a straight line,
        // lag-1 0.7 > 1.645/sqrt(10); 5 batches of 4 (the same second left out): 0.4 < 0.74.
        let b = b.unwrap();
        assert_eq!((b.means.len(), b.batch_len), (5, 4));
        assert_eq!(b.means, [3.5, 7.5, 11.5, 15.5, 19.5]);
        assert!(batch_means(&[1.0; 9]).is_none(), "under 5 batches of 2");
        assert!(batch_means(&[1.0, f64::NAN, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).is_none());
    }

    /// On autocorrelated series the interval from batch means covers the true mean about as
    /// often as it promises, where the naive interval over the seconds does not.
    #[test]
    fn coverage_on_autocorrelated_series() {
        let mut rng = StdRng::seed_from_u64(7);
        let conf = Confidence::default();
        let (trials, mut given, mut covered, mut naive_covered) = (2000, 0, 0, 0);
        for _ in 0..trials {
            let x = ar1(&mut rng, 120, 0.6, 100.0);
            let naive = summarize(&x, conf).unwrap();
            if (naive.mean - 100.0).abs() <= naive.half_width.unwrap() {
                naive_covered += 1;
            }
            let Some(b) = batch_means(&x) else { continue };
            given += 1;
            let s = summarize(&b.means, conf).unwrap();
            if (s.mean - 100.0).abs() <= s.half_width.unwrap() {
                covered += 1;
            }
        }
        let rate = covered as f64 / given as f64;
        let naive_rate = naive_covered as f64 / trials as f64;
        assert!(
            given > trials * 9 / 10,
            "an interval in most trials: {given}"
        );
        assert!((0.90..=0.99).contains(&rate), "batch-means coverage {rate}");
        assert!(naive_rate < 0.80, "naive coverage {naive_rate}");
    }
}
