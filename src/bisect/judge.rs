//! Whether one measured commit is good or bad: its run compared (with `compare`'s model)
//! against the good end and the bad end, on the changes the bad end regressed.

use std::collections::BTreeSet;

use crate::compare::join::{Comparison, Verdict};

/// One change the bisection follows: a cell (by name) and a metric.
pub(crate) type Target = (String, String);

/// What a measured commit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Step {
    /// It has the regression: some target regressed against the good end.
    Bad,
    /// It has none: no target regressed against the good end, and one improved on the bad
    /// end.
    Good,
    /// The iterations cannot tell: it is measured again.
    TooNoisy,
    /// It does not build, its server does not start, or no target cell succeeded.
    Skipped,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Step::Bad => "bad",
            Step::Good => "good",
            Step::TooNoisy => "too noisy to tell",
            Step::Skipped => "skipped",
        })
    }
}

/// The changes the bad end regressed against the good end.
pub(crate) fn targets(ends: &Comparison) -> BTreeSet<Target> {
    ends.changes
        .iter()
        .filter(|c| c.verdict == Verdict::Regressed)
        .map(|c| (c.cell.clone(), c.metric.clone()))
        .collect()
}

/// The step of a commit from its run against the good end and the bad end.
pub(crate) fn judge(targets: &BTreeSet<Target>, vs_good: &Comparison, vs_bad: &Comparison) -> Step {
    let verdicts = |c: &Comparison| -> Vec<Verdict> {
        c.changes
            .iter()
            .filter(|ch| targets.contains(&(ch.cell.clone(), ch.metric.clone())))
            .map(|ch| ch.verdict)
            .collect()
    };
    let good = verdicts(vs_good);
    let bad = verdicts(vs_bad);
    if good.is_empty() {
        return Step::Skipped;
    }
    // Told apart from one end is enough: "unchanged" against the good end would need an
    // interval inside the threshold, which a few noisy iterations seldom give.
    if good.contains(&Verdict::Regressed) {
        return Step::Bad;
    }
    // Any target improved on the bad end: one the ends' noise flagged by chance (a cell no
    // commit changed) cannot hold a good commit back.
    if bad.contains(&Verdict::Improved) {
        Step::Good
    } else {
        Step::TooNoisy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(changes: &[(&str, Verdict)]) -> Comparison {
        let mut c = crate::compare::join::tests_support::empty_comparison();
        c.changes = changes
            .iter()
            .map(|(cell, v)| crate::compare::join::tests_support::change(cell, "qps", *v))
            .collect();
        c
    }

    fn set(cells: &[&str]) -> BTreeSet<Target> {
        cells
            .iter()
            .map(|c| (c.to_string(), "qps".to_string()))
            .collect()
    }

    #[test]
    fn targets_are_what_the_bad_end_regressed() {
        let ends = comparison(&[("get", Verdict::Regressed), ("set", Verdict::Unchanged)]);
        assert_eq!(targets(&ends), set(&["get"]));
    }

    #[test]
    fn a_commit_is_bad_good_noisy_or_skipped() {
        use Verdict::*;
        let t = set(&["get"]);
        let j = |g: Verdict, b: Verdict| {
            judge(
                &t,
                &comparison(&[("get", g), ("set", Regressed)]),
                &comparison(&[("get", b)]),
            )
        };
        assert_eq!(j(Regressed, Unchanged), Step::Bad);
        assert_eq!(j(Unchanged, Improved), Step::Good);
        assert_eq!(j(Improved, Improved), Step::Good);
        // Not told apart from the good end, but better than the bad end.
        assert_eq!(j(TooNoisy, Improved), Step::Good);
        // Told apart from neither end.
        assert_eq!(j(Unchanged, Unchanged), Step::TooNoisy);
        // Two targets, one a false alarm of the ends' noise: the real one decides.
        let two = set(&["get", "set"]);
        let vs_good = comparison(&[("get", Unchanged), ("set", TooNoisy)]);
        let vs_bad = comparison(&[("get", Improved), ("set", TooNoisy)]);
        assert_eq!(judge(&two, &vs_good, &vs_bad), Step::Good);
        assert_eq!(j(TooNoisy, TooNoisy), Step::TooNoisy);
        // The set cell regressed too, but it is not what is bisected.
        assert_eq!(
            judge(&t, &comparison(&[("set", Regressed)]), &comparison(&[])),
            Step::Skipped
        );
    }
}
