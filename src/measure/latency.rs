//! Per-statement latency in microseconds, in a mergeable HdrHistogram (1 us .. 1 h, 3
//! significant digits: 0.1% resolution at every scale).

use hdrhistogram::Histogram;

use crate::stats::apdex::Apdex;

#[derive(Debug, Clone)]
pub(crate) struct Latency {
    hist: Histogram<u64>,
}

/// Latency summary in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct LatencySummary {
    pub(crate) count: u64,
    pub min_ms: f64,
    pub avg_ms: f64,
    pub(crate) p50_ms: f64,
    pub p95_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) p999_ms: f64,
    pub max_ms: f64,
}

impl Default for Latency {
    fn default() -> Self {
        Latency {
            hist: Histogram::new_with_bounds(1, 3_600_000_000, 3)
                .expect("invariant: valid histogram bounds"),
        }
    }
}

impl Latency {
    pub(crate) fn record_us(&mut self, us: u64) {
        self.hist.saturating_record(us.max(1));
    }

    pub(crate) fn merge(&mut self, other: &Latency) {
        self.hist
            .add(&other.hist)
            .expect("invariant: same bounds for every histogram");
    }

    pub(crate) fn count(&self) -> u64 {
        self.hist.len()
    }

    /// Apdex[T] of these operations and `errors` failed ones (each counted frustrated).
    pub(crate) fn apdex(&self, threshold_ms: f64, errors: u64) -> Apdex {
        let (t, t4) = (threshold_ms * 1000.0, 4.0 * threshold_ms * 1000.0);
        let (mut within_t, mut within_4t) = (0, 0);
        for v in self.hist.iter_recorded() {
            // A bucket (0.1% wide) is within T when it starts within T: T itself is exact.
            let us = self.hist.lowest_equivalent(v.value_iterated_to()) as f64;
            if us <= t {
                within_t += v.count_at_value();
            }
            if us <= t4 {
                within_4t += v.count_at_value();
            }
        }
        Apdex::from_counts(threshold_ms, self.hist.len(), within_t, within_4t, errors)
    }

    pub(crate) fn summary(&self) -> Option<LatencySummary> {
        if self.hist.is_empty() {
            return None;
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Some(LatencySummary {
            count: self.hist.len(),
            min_ms: ms(self.hist.min()),
            avg_ms: self.hist.mean() / 1000.0,
            p50_ms: ms(self.hist.value_at_quantile(0.50)),
            p95_ms: ms(self.hist.value_at_quantile(0.95)),
            p99_ms: ms(self.hist.value_at_quantile(0.99)),
            p999_ms: ms(self.hist.value_at_quantile(0.999)),
            max_ms: ms(self.hist.max()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut a = Latency::default();
        let mut b = Latency::default();
        for us in 1..=500 {
            a.record_us(us * 10);
        }
        for us in 501..=1000 {
            b.record_us(us * 10);
        }
        a.merge(&b);
        let s = a.summary().unwrap();
        assert_eq!(s.count, 1000);
        assert!((s.avg_ms - 5.005).abs() < 0.01, "{s:?}");
        assert!((s.p50_ms - 5.0).abs() < 0.01, "{s:?}");
        assert!((s.p95_ms - 9.5).abs() < 0.01, "{s:?}");
        assert!((s.p99_ms - 9.9).abs() < 0.01, "{s:?}");
        assert!((s.max_ms - 10.0).abs() < 0.01, "{s:?}");
        assert!(Latency::default().summary().is_none());
        // T = 2 ms over 0.01..10 ms: 200 satisfied, 600 tolerating (to 8 ms), 200 + 10
        // errors frustrated.
        let ap = a.apdex(2.0, 10);
        assert_eq!(
            (ap.satisfied, ap.tolerating, ap.frustrated),
            (200, 600, 210)
        );
    }
}
