//! Where a load curve stops paying: the knee of a sweep (more load, hardly more throughput,
//! worse latency) and the highest load that stays within a stress test's limits.

/// One load level of a sweep: its load (connections or target rate), what it achieved, and
/// its tail latency and error rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadPoint {
    pub load: f64,
    pub throughput: f64,
    pub p99_ms: f64,
    /// Failed operations / all operations, 0..=1.
    pub error_rate: f64,
}

/// The knee: the last level whose step up still raised throughput by more than `min_gain_pct`
/// percent, when the step after it gains less while p99 rises. `None` while the curve still
/// climbs (the sweep has not reached the knee) or with fewer than two points. Points must be
/// in increasing load.
pub fn knee(points: &[LoadPoint], min_gain_pct: f64) -> Option<usize> {
    points.windows(2).position(|w| {
        let gain_pct = (w[1].throughput / w[0].throughput - 1.0) * 100.0;
        gain_pct <= min_gain_pct && w[1].p99_ms > w[0].p99_ms
    })
}

/// Limits of a stress test: past either, the load is not sustainable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub p99_ms: Option<f64>,
    pub error_rate: Option<f64>,
}

impl Limits {
    pub fn holds(&self, p: &LoadPoint) -> bool {
        self.p99_ms.is_none_or(|l| p.p99_ms <= l)
            && self.error_rate.is_none_or(|l| p.error_rate <= l)
    }
}

/// The maximum sustainable load: the last level before the first one that breaks a limit
/// (a stress test stops there; a later level that happens to pass again does not count).
/// `None` when the first level already breaks one.
pub fn max_sustainable(points: &[LoadPoint], limits: Limits) -> Option<usize> {
    match points.iter().position(|p| !limits.holds(p)) {
        Some(0) => None,
        Some(i) => Some(i - 1),
        None => points.len().checked_sub(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(rows: &[(f64, f64, f64)]) -> Vec<LoadPoint> {
        rows.iter()
            .map(|&(load, throughput, p99_ms)| LoadPoint {
                load,
                throughput,
                p99_ms,
                error_rate: 0.0,
            })
            .collect()
    }

    #[test]
    fn finds_the_knee_of_a_saturating_curve() {
        // Throughput doubles to 8 connections, then flattens while p99 climbs.
        let c = curve(&[
            (1.0, 1000.0, 1.0),
            (2.0, 1990.0, 1.1),
            (4.0, 3900.0, 1.3),
            (8.0, 7000.0, 1.9),
            (16.0, 7200.0, 4.0),
            (32.0, 7150.0, 9.0),
        ]);
        assert_eq!(knee(&c, 5.0), Some(3));
        assert_eq!(c[knee(&c, 5.0).unwrap()].load, 8.0);
    }

    #[test]
    fn no_knee_while_climbing_or_when_latency_does_not_rise() {
        let climbing = curve(&[(1.0, 100.0, 1.0), (2.0, 200.0, 1.0), (4.0, 390.0, 1.2)]);
        assert_eq!(knee(&climbing, 5.0), None);
        // A flat step with flat latency is noise, not a knee.
        let flat = curve(&[(1.0, 100.0, 1.0), (2.0, 101.0, 1.0), (4.0, 300.0, 1.1)]);
        assert_eq!(knee(&flat, 5.0), None);
        assert_eq!(knee(&curve(&[(1.0, 100.0, 1.0)]), 5.0), None);
        assert_eq!(knee(&[], 5.0), None);
    }

    #[test]
    fn max_sustainable_stops_at_the_first_broken_limit() {
        let mut c = curve(&[
            (100.0, 100.0, 2.0),
            (200.0, 200.0, 5.0),
            (400.0, 380.0, 60.0),
            (800.0, 390.0, 400.0),
            (1600.0, 300.0, 50.0),
        ]);
        let p99 = Limits {
            p99_ms: Some(100.0),
            error_rate: None,
        };
        assert_eq!(max_sustainable(&c, p99), Some(2));
        c[1].error_rate = 0.02;
        let both = Limits {
            p99_ms: Some(100.0),
            error_rate: Some(0.01),
        };
        assert_eq!(max_sustainable(&c, both), Some(0));
        c[0].p99_ms = 150.0;
        assert_eq!(max_sustainable(&c, both), None);
        let none = Limits {
            p99_ms: None,
            error_rate: None,
        };
        assert_eq!(max_sustainable(&c, none), Some(4));
    }
}
