//! Many cells judged at once: how the per-cell alpha adds up, and Benjamini-Hochberg
//! false-discovery control over the cells' p-values (`compare --fdr`).
//!
//! With `m` independent tests at level alpha and nothing changed, `m * alpha` significant
//! results are expected by chance, and at least one with probability `1 - (1 - alpha)^m`
//! (60 cells at 0.05: 3 expected, 95%). Bonferroni (alpha / m per test) bounds the chance
//! of any false flag but loses power as `m` grows; Benjamini-Hochberg bounds the expected
//! share of false flags among the flagged (the false-discovery rate) at alpha, which keeps
//! most of the power and still lets a false flag through on some nights.

use serde::Serialize;

/// What alpha per test means for a family of `tests` tests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct FamilyRate {
    pub(crate) tests: usize,
    pub(crate) alpha: f64,
    /// `tests * alpha`: significant results expected when nothing changed.
    pub(crate) expected_false_alarms: f64,
    /// `1 - (1 - alpha)^tests`: the chance of at least one, for independent tests.
    pub(crate) p_any_false_alarm: f64,
}

pub(crate) fn family_rate(tests: usize, alpha: f64) -> FamilyRate {
    FamilyRate {
        tests,
        alpha,
        expected_false_alarms: tests as f64 * alpha,
        p_any_false_alarm: 1.0 - (1.0 - alpha).powi(tests as i32),
    }
}

/// Benjamini-Hochberg adjusted p-values, in the input's order: the `i`-th smallest p becomes
/// `min over j >= i of (m / j) * p_(j)`, capped at 1. A cell is a discovery at FDR level q
/// when its adjusted p is below q.
pub(crate) fn bh_adjust(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    // The 15 p-values of Benjamini and Hochberg (1995), section 4. statsmodels 0.15.0,
    // multipletests(p, alpha=0.05, method='fdr_bh') (the same as R's p.adjust(p, "BH")):
    // rejects the first 4; adjusted p below.
    #[test]
    fn bh_matches_statsmodels_on_the_papers_example() {
        let p = [
            0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
            0.5719, 0.6528, 0.7590, 1.0,
        ];
        let want = [
            0.0015,
            0.003,
            0.0095,
            0.035625,
            0.0603,
            0.06385714285714286,
            0.06385714285714286,
            0.0645,
            0.07650000000000001,
            0.48600000000000004,
            0.5811818181818182,
            0.7148749999999999,
            0.7532307692307693,
            0.8132142857142857,
            1.0,
        ];
        // Shuffled: the adjustment follows each p-value, not its position.
        let idx = [7, 2, 14, 0, 9, 4, 11, 1, 13, 3, 6, 10, 5, 12, 8];
        let shuffled: Vec<f64> = idx.iter().map(|&i| p[i]).collect();
        let got = bh_adjust(&shuffled);
        for (k, &i) in idx.iter().enumerate() {
            assert!((got[k] - want[i]).abs() < 1e-12, "p {} -> {}", p[i], got[k]);
        }
        assert_eq!(got.iter().filter(|a| **a < 0.05).count(), 4);
        assert!(bh_adjust(&[]).is_empty());
    }

    #[test]
    fn alpha_adds_up_over_cells() {
        let f = family_rate(60, 0.05);
        assert!((f.expected_false_alarms - 3.0).abs() < 1e-12);
        // 1 - 0.95^60 = 0.953930...
        assert!((f.p_any_false_alarm - 0.9539302).abs() < 1e-6, "{f:?}");
        assert_eq!(family_rate(0, 0.05).p_any_false_alarm, 0.0);
    }
}
