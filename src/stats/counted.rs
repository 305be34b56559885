//! The change of a counted metric (instructions counted under callgrind): the same build
//! gives the same count to within a fraction of a percent on any machine, so there is no
//! run-to-run noise to model and no test to run. The change is the ratio of the means; its
//! range is what the counts themselves span (the lowest candidate over the highest baseline
//! to the highest over the lowest), and a change counts when it is at least the counted
//! threshold and the two sides' counts do not overlap.

/// A counted change in percent of the baseline mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CountedChange {
    pub(crate) pct: f64,
    /// The range of candidate / baseline over every pair of counts, in percent.
    pub(crate) lo_pct: f64,
    pub(crate) hi_pct: f64,
}

impl CountedChange {
    /// The counts of the two sides do not overlap: every candidate count lies above every
    /// baseline count, or every one below.
    pub(crate) fn separated(&self) -> bool {
        self.lo_pct > 0.0 || self.hi_pct < 0.0
    }
}

/// The change of `b` against `a`; None unless both sides hold positive finite counts.
pub(crate) fn change(a: &[f64], b: &[f64]) -> Option<CountedChange> {
    let ok = |v: &[f64]| !v.is_empty() && v.iter().all(|x| x.is_finite() && *x > 0.0);
    if !(ok(a) && ok(b)) {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let pct = |r: f64| (r - 1.0) * 100.0;
    Some(CountedChange {
        pct: pct(mean(b) / mean(a)),
        lo_pct: pct(min(b) / max(a)),
        hi_pct: pct(max(b) / min(a)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_change_is_the_ratio_of_means_within_the_counts_range() {
        let c = change(&[5000.0, 5010.0], &[5050.0, 5060.0]).unwrap();
        assert!(
            (c.pct - (5055.0 / 5005.0 - 1.0) * 100.0).abs() < 1e-9,
            "{c:?}"
        );
        assert!((c.lo_pct - (5050.0 / 5010.0 - 1.0) * 100.0).abs() < 1e-9);
        assert!((c.hi_pct - (5060.0 / 5000.0 - 1.0) * 100.0).abs() < 1e-9);
        assert!(c.separated());
        // Overlapping counts: not separated, whatever the means say.
        assert!(!change(&[5000.0, 5030.0], &[5020.0, 5040.0])
            .unwrap()
            .separated());
        // One count a side: a point.
        let one = change(&[100.0], &[99.0]).unwrap();
        assert_eq!((one.lo_pct, one.hi_pct), (one.pct, one.pct));
        assert!(one.separated());
        assert_eq!(change(&[], &[1.0]), None);
        assert_eq!(change(&[0.0], &[1.0]), None);
        assert_eq!(change(&[f64::NAN], &[1.0]), None);
    }
}
