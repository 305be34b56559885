//! The confidence of each look when rounds are added until a cell can tell. Looking again
//! after every batch and stopping at the first verdict is optional stopping: with K looks at
//! 95% each, an unchanged cell is flagged up to K times 5% of the time. A group-sequential
//! design spends the error rate over the looks instead: Lan and DeMets' Pocock-type spending
//! function `alpha(t) = alpha * ln(1 + (e - 1) t)` of the information fraction `t` (the
//! rounds so far over the most a cell may have). Each look is judged at the level its
//! increment leaves, so the looks together keep the false-alarm rate at `alpha` (Bonferroni
//! over the increments). Pocock's shape spends more early than O'Brien-Fleming's: a large
//! change is told in the first batch, which is what a side-by-side run is for.
//! A single look (`before` 0, `now` the most) is judged at the level asked.

use super::Confidence;

/// The error rate spent once a fraction `t` (0 to 1) of the most rounds has run.
pub(crate) fn spent(alpha: f64, t: f64) -> f64 {
    alpha * (1.0 + (std::f64::consts::E - 1.0) * t.clamp(0.0, 1.0)).ln()
}

/// The level of the look after rounds `before..now` of at most `most`: what spending
/// `conf`'s error rate over the looks leaves it.
pub(crate) fn look(conf: Confidence, before: u32, now: u32, most: u32) -> Confidence {
    let t = |n: u32| f64::from(n) / f64::from(most.max(1));
    let alpha = spent(conf.alpha(), t(now)) - spent(conf.alpha(), t(before));
    // A look with no new round (or past the most) spends nothing new: judge it at the
    // smallest increment a look can have, never at no level at all.
    Confidence::from_alpha(alpha.max(1e-9)).unwrap_or(conf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_look_is_judged_at_the_level_asked() {
        let c = look(Confidence::default(), 0, 6, 6);
        assert!((c.level() - 0.95).abs() < 1e-12, "{}", c.level());
    }

    /// Four equal batches of 20 in at most 80 rounds: alpha(t) = 0.05 ln(1 + (e - 1) t) is
    /// 0.0178687, 0.0310057, 0.0413994 and 0.05 at t = 1/4..1 (Python's math.log).
    #[test]
    fn four_looks_spend_five_percent_between_them() {
        let c = Confidence::default();
        let alphas: Vec<f64> = [(0, 20), (20, 40), (40, 60), (60, 80)]
            .iter()
            .map(|&(b, n)| look(c, b, n, 80).alpha())
            .collect();
        let want = [0.0178687, 0.0131370, 0.0103937, 0.0086006];
        for (a, w) in alphas.iter().zip(want) {
            assert!((a - w).abs() < 1e-7, "{alphas:?}");
        }
        assert!(
            (alphas.iter().sum::<f64>() - 0.05).abs() < 1e-9,
            "{alphas:?}"
        );
    }

    #[test]
    fn a_look_past_the_most_rounds_spends_nothing_new_but_still_has_a_level() {
        let c = look(Confidence::default(), 30, 36, 30);
        assert!(c.level() > 0.999_999 && c.level() < 1.0, "{}", c.level());
    }
}
