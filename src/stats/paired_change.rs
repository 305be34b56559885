//! The change between two deployments measured in the same rounds, judged on the per-round
//! log-ratios `d = ln(candidate / baseline)` with the round as a block: whatever slowed a
//! whole round (another job on the host, a noisy neighbour) cancels in its ratio.
//!
//! Three estimates stand side by side: the Hodges-Lehmann shift with the Wilcoxon signed-rank
//! interval ([`super::signed_rank`]), the median with the sign test's interval
//! ([`super::sign`]), and the mean with the paired t interval (`scipy.stats.ttest_rel` on the
//! logs). The verdict rests on the Hodges-Lehmann one, robust to a few wild rounds yet nearly
//! as tight as the t interval on quiet ones; under 6 rounds (no 95% rank interval) on the
//! mean's. Reference numbers: tests/ref/paired_intervals.py.

use serde::Serialize;

use super::change::{Basis, Change};
use super::dist::t_two_sided_p;
use super::located::Located;
use super::sign::median_interval;
use super::signed_rank::hodges_lehmann;
use super::summary::summarize;
use super::Confidence;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct PairedChange {
    pub(crate) rounds: usize,
    /// On the log scale, as every field below.
    pub(crate) hodges_lehmann: Located,
    pub(crate) median: Located,
    /// None under 2 rounds.
    pub(crate) mean: Option<Located>,
}

/// `(baseline, candidate)` per round. None for no rounds or a value that is not a positive
/// finite number (no ratio exists).
pub(crate) fn paired_change(pairs: &[(f64, f64)], conf: Confidence) -> Option<PairedChange> {
    let valid = |x: f64| x.is_finite() && x > 0.0;
    if pairs.iter().any(|&(a, b)| !valid(a) || !valid(b)) {
        return None;
    }
    let d: Vec<f64> = pairs.iter().map(|&(a, b)| (b / a).ln()).collect();
    Some(PairedChange {
        rounds: d.len(),
        hodges_lehmann: hodges_lehmann(&d, conf)?,
        median: median_interval(&d, conf)?,
        mean: paired_mean(&d, conf),
    })
}

/// The one-sample t interval of the mean log-ratio.
fn paired_mean(d: &[f64], conf: Confidence) -> Option<Located> {
    let s = summarize(d, conf)?;
    let sd = s.stddev?;
    let h = s.half_width?;
    let p = if sd == 0.0 {
        if s.mean == 0.0 {
            1.0
        } else {
            0.0
        }
    } else {
        t_two_sided_p(s.mean / (sd / (s.n as f64).sqrt()), (s.n - 1) as f64)
    };
    Some(Located {
        n: s.n,
        estimate: s.mean,
        low: Some(s.mean - h),
        high: Some(s.mean + h),
        p,
        exact: true,
    })
}

impl PairedChange {
    /// The change a verdict is judged on: the Hodges-Lehmann one where it has an interval,
    /// else the mean's; none when neither has one.
    pub(crate) fn change(&self) -> Option<Change> {
        let (l, basis) = match (self.hodges_lehmann, self.mean) {
            (h, _) if h.low.is_some() => (h, Basis::PairedHodgesLehmann),
            (_, Some(m)) => (m, Basis::PairedMean),
            _ => return None,
        };
        let pct = |x: f64| x.exp_m1() * 100.0;
        Some(Change {
            pct: pct(l.estimate),
            lo_pct: pct(l.low?),
            hi_pct: pct(l.high?),
            p: l.p,
            df: (self.rounds - 1) as f64,
            log_scale: true,
            basis,
            noise_runs: None,
            rounds: Some(self.rounds),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    // tests/ref/paired_intervals.py: 12 rounds of one cell, round 7 a noisy one.
    pub(crate) const BASE: [f64; 12] = [
        100.0, 98.0, 103.0, 97.0, 101.0, 99.0, 60.0, 102.0, 100.5, 98.5, 101.5, 99.5,
    ];
    pub(crate) const CAND: [f64; 12] = [
        95.0, 93.5, 97.0, 93.0, 96.2, 94.0, 70.0, 96.0, 95.5, 94.2, 95.8, 94.9,
    ];
    pub(crate) const BASE30: [f64; 30] = [
        959.544, 1012.199, 996.813, 995.293, 1016.304, 1033.858, 1009.52, 1008.958, 944.721,
        1029.325, 983.856, 1050.744, 1067.863, 921.612, 1068.749, 966.524, 949.443, 988.448,
        1015.072, 1051.74, 1151.563, 929.442, 981.844, 1018.989, 973.738, 917.623, 988.678,
        998.651, 1019.832, 980.597,
    ];
    pub(crate) const CAND30: [f64; 30] = [
        956.671, 986.589, 982.845, 946.189, 937.202, 1019.089, 986.801, 992.936, 919.625, 992.893,
        950.285, 1040.879, 1021.11, 889.558, 1036.821, 944.445, 963.157, 949.477, 1036.379,
        1024.247, 1118.344, 894.413, 970.81, 1023.071, 928.654, 889.051, 955.069, 959.024, 970.684,
        960.411,
    ];

    pub(crate) fn logs(base: &[f64], cand: &[f64]) -> Vec<f64> {
        base.iter().zip(cand).map(|(a, b)| (b / a).ln()).collect()
    }

    fn pairs(base: &[f64], cand: &[f64]) -> Vec<(f64, f64)> {
        base.iter().copied().zip(cand.iter().copied()).collect()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs()
    }

    #[test]
    fn paired_mean_matches_ttest_rel() {
        let c = paired_change(&pairs(&BASE, &CAND), Confidence::default()).unwrap();
        let m = c.mean.unwrap();
        assert!(close(m.estimate, -0.034018074960423826, 1e-9), "{m:?}");
        assert!(close(m.low.unwrap(), -0.07185098428583656, 1e-9), "{m:?}");
        assert!(close(m.high.unwrap(), 0.00381483436498891, 1e-7), "{m:?}");
        assert!(close(m.p, 0.07338817818336728, 1e-8), "{m:?}");
        let m = paired_change(&pairs(&BASE30, &CAND30), Confidence::default())
            .unwrap()
            .mean
            .unwrap();
        assert!(close(m.estimate, -0.026637682815346803, 1e-9), "{m:?}");
        assert!(close(m.low.unwrap(), -0.03426590791003194, 1e-9), "{m:?}");
        assert!(close(m.high.unwrap(), -0.01900945772066167, 1e-9), "{m:?}");
        assert!(close(m.p, 7.35375291531874e-08, 1e-6), "{m:?}");
    }

    #[test]
    fn one_wild_round_leaves_the_rank_interval_tight() {
        // The noisy round 7 (+15%) makes the mean's interval straddle zero; the
        // Hodges-Lehmann one, which the verdict uses, stays about -5%.
        let c = paired_change(&pairs(&BASE, &CAND), Confidence::default()).unwrap();
        let ch = c.change().unwrap();
        assert_eq!(
            (ch.basis, ch.rounds),
            (Basis::PairedHodgesLehmann, Some(12))
        );
        assert!(close(
            ch.pct,
            (-0.04972041139882381f64).exp_m1() * 100.0,
            1e-9
        ));
        assert!(ch.hi_pct < 0.0 && ch.lo_pct > -6.0, "{ch:?}");
        assert!(c.mean.unwrap().high.unwrap() > 0.0);
    }

    #[test]
    fn few_rounds_fall_back_to_the_mean() {
        let c = paired_change(
            &[(100.0, 95.0), (90.0, 86.0), (110.0, 104.0)],
            Confidence::default(),
        )
        .unwrap();
        assert_eq!(c.change().unwrap().basis, Basis::PairedMean);
        let one = paired_change(&[(100.0, 95.0)], Confidence::default()).unwrap();
        assert!(one.change().is_none());
        assert!(paired_change(&[(0.0, 1.0)], Confidence::default()).is_none());
    }
}
