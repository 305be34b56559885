//! Drift over a long run: the first part of the per-second samples against the last part,
//! as a change with its interval (batch means on each side, so autocorrelated seconds do
//! not make the interval too narrow). A stability test passes when no drift is significant.

use super::{batch_means, change_batches, Change, Confidence};

/// The share of the run compared at each end: the first and the last third.
pub(crate) const PART: f64 = 1.0 / 3.0;

/// The change from the first third of `series` to its last third; `None` when either third
/// is too short for batch means (see `batch::MIN_BATCHES`) or has a non-positive mean.
pub(crate) fn drift(series: &[f64], conf: Confidence) -> Option<Change> {
    let n = (series.len() as f64 * PART).floor() as usize;
    let (first, last) = (&series[..n], &series[series.len() - n..]);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (a, b) = (batch_means(first)?, batch_means(last)?);
    change_batches(mean(first), &a.means, mean(last), &b.means, conf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic wobble around 1000 (no autocorrelation to speak of).
    fn steady(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| 1000.0 + [13.0, -7.0, 2.0, -11.0, 5.0, -2.0, 9.0][i % 7])
            .collect()
    }

    #[test]
    fn a_steady_run_does_not_drift() {
        let d = drift(&steady(300), Confidence::default()).unwrap();
        assert!(!Confidence::default().significant(d.p), "{d:?}");
        assert!(d.pct.abs() < 1.0, "{d:?}");
    }

    #[test]
    fn a_run_that_slows_down_drifts() {
        // Throughput falls 20% over the run.
        let s: Vec<f64> = steady(300)
            .iter()
            .enumerate()
            .map(|(i, v)| v * (1.0 - 0.2 * i as f64 / 300.0))
            .collect();
        let d = drift(&s, Confidence::default()).unwrap();
        assert!(Confidence::default().significant(d.p), "{d:?}");
        // The middle of the first third against the middle of the last: about -13%.
        assert!(d.pct < -10.0 && d.pct > -16.0, "{d:?}");
    }

    #[test]
    fn too_short_has_no_verdict() {
        assert!(drift(&steady(20), Confidence::default()).is_none());
        assert!(drift(&[], Confidence::default()).is_none());
    }
}
