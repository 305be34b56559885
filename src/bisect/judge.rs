//! Whether one measured commit is good or bad: its run compared (with `compare`'s model)
//! against the good end and the bad end, on the changes the bad end regressed.
//! A paired step (`paired`, `scan`) is judged from its side-by-side changes against the good
//! end instead, on the targets' metrics at half of their change.

use std::collections::BTreeSet;

use crate::ab::{self, CellChange};
use crate::compare::join::{Comparison, Verdict};
use crate::escape::md_cell as md;
use crate::stats::Basis;

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
    CannotTell,
    /// It does not build, its server does not start, or no target cell succeeded.
    Skipped,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Step::Bad => "bad",
            Step::Good => "good",
            Step::CannotTell => "cannot tell",
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

/// The step of a commit from its run against the good end (`vs_good`), placed between the
/// ends (`ends`: the bad end against the good one). Per target, the commit's change and its
/// interval are a position on the way from the good end (0) to the bad end (1), on the log
/// scale: an interval wholly below one half is good, wholly above it bad, else too noisy to
/// tell. Any bad target makes the commit bad; else one good target makes it good (a target
/// the ends' noise flagged by chance, a cell no commit changed, cannot hold it back).
pub(crate) fn judge(targets: &BTreeSet<Target>, ends: &Comparison, vs_good: &Comparison) -> Step {
    let sides: Vec<Step> = positions(targets, ends, vs_good).map(side).collect();
    if sides.is_empty() {
        Step::Skipped
    } else if sides.contains(&Step::Bad) {
        Step::Bad
    } else if sides.contains(&Step::Good) {
        Step::Good
    } else {
        Step::CannotTell
    }
}

/// Whether some target's interval lies wholly beyond an end by more than half the ends'
/// distance. A machine that slowed down (or sped up) for the whole run looks like that, and
/// would pass for a verdict: such a step is measured again before its verdict counts.
pub(crate) fn beyond_ends(
    targets: &BTreeSet<Target>,
    ends: &Comparison,
    vs_good: &Comparison,
) -> bool {
    positions(targets, ends, vs_good).any(|p| p.is_some_and(|(lo, hi)| lo > 1.5 || hi < -0.5))
}

/// Per target of `vs_good`, its interval as positions between the ends (None: unplaceable).
fn positions<'a>(
    targets: &'a BTreeSet<Target>,
    ends: &'a Comparison,
    vs_good: &'a Comparison,
) -> impl Iterator<Item = Option<(f64, f64)>> + 'a {
    vs_good
        .changes
        .iter()
        .filter(|c| targets.contains(&(c.cell.clone(), c.metric.clone())))
        .map(|ch| {
            let end = ends
                .changes
                .iter()
                .find(|e| e.cell == ch.cell && e.metric == ch.metric)
                .and_then(|e| e.change_pct);
            // A counted change has no noise to bound: its point is placed, so one run per
            // step decides (the range of its counts is the heap's layout, not doubt).
            match ch.basis {
                Some(Basis::Counted) => position(end, ch.change_pct, ch.change_pct),
                _ => position(end, ch.ci_low_pct, ch.ci_high_pct),
            }
        })
}

/// Which end an interval of positions (see `position`) is nearer.
fn side(position: Option<(f64, f64)>) -> Step {
    match position {
        Some((_, hi)) if hi < 0.5 => Step::Good,
        Some((lo, _)) if lo > 0.5 => Step::Bad,
        _ => Step::CannotTell,
    }
}

/// The interval `low..high` as positions on the way from the good end (0) to the bad end
/// (1), on the log scale; None without an interval or with ends that did not move.
fn position(end: Option<f64>, low: Option<f64>, high: Option<f64>) -> Option<(f64, f64)> {
    let (end, low, high) = (end?, low?, high?);
    let ln = |pct: f64| (1.0 + pct / 100.0).max(1e-9).ln();
    let scale = ln(end);
    if scale.abs() < 1e-9 {
        return None;
    }
    let (a, b) = (ln(low) / scale, ln(high) / scale);
    Some((a.min(b), a.max(b)))
}

/// The plan a step is judged with: against half of the smallest targeted change (on the log
/// scale), beyond which the step is nearer the bad end, on the targets' metrics only.
pub(super) fn step_plan(plan: &ab::Plan, targets: &[CellChange]) -> ab::Plan {
    let mut step_plan = plan.clone();
    step_plan.threshold_pct = (targets.iter())
        .filter_map(|t| t.change_pct)
        .map(|p| ((p / 100.0).ln_1p() / 2.0).exp_m1().abs() * 100.0)
        .fold(f64::INFINITY, f64::min);
    step_plan
        .metrics
        .retain(|m| targets.iter().any(|t| t.metric == m.name));
    step_plan
}

/// A commit from its changes against the good end (judged at the step plan's threshold): any
/// target regressed is bad; else a target told to be less than that is good; else it cannot
/// tell, or is skipped when no target has two rounds in which both sides succeeded (it did
/// not build or start: more rounds cannot help).
pub(super) fn step_of(targets: &[CellChange], changes: &[CellChange]) -> Step {
    let of_targets: Vec<&CellChange> = (changes.iter()).filter(|c| is_target(targets, c)).collect();
    if of_targets.iter().any(|c| c.verdict == Verdict::Regressed) {
        return Step::Bad;
    }
    if of_targets.iter().any(|c| c.verdict != Verdict::CannotTell) {
        return Step::Good;
    }
    match of_targets.iter().any(|c| c.rounds >= 2) {
        true => Step::CannotTell,
        false => Step::Skipped,
    }
}

/// Whether `c` is a change of a target's cell and metric.
pub(super) fn is_target(targets: &[CellChange], c: &CellChange) -> bool {
    (targets.iter()).any(|t| t.cell == c.cell && t.metric == c.metric)
}

/// Why there is nothing to bisect: the ends' changes with their intervals.
pub(super) fn nothing_to_bisect(changes: &[CellChange]) -> String {
    let cannot = changes.iter().any(|c| c.verdict == Verdict::CannotTell);
    let mut out = match cannot {
        true => "Cannot tell: the bad end regressed nothing the side-by-side rounds could tell, \
                 but some change's interval reaches past the threshold. Measure more \
                 (--max-rounds).\n\n"
            .to_string(),
        false => "No regression: the bad end, side by side with the good end, regressed \
                  nothing.\n\n"
            .to_string(),
    };
    out.push_str(
        "| cell | metric | change [interval] | verdict | rounds |\n|---|---|---:|---|---:|\n",
    );
    for c in changes {
        let change = match (c.change_pct, c.ci_low_pct, c.ci_high_pct) {
            (Some(p), Some(lo), Some(hi)) => format!("{p:+.1}% [{lo:+.1}%, {hi:+.1}%]"),
            _ => "n/a".into(),
        };
        out.push_str(&format!(
            "| {} | {} | {change} | {} | {} |\n",
            md(&c.cell),
            md(&c.metric),
            c.verdict,
            c.rounds
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The side of a change with interval `low..high` when the bad end changed by `end`.
    fn side_of(end: Option<f64>, low: Option<f64>, high: Option<f64>) -> Step {
        side(position(end, low, high))
    }

    fn comparison(changes: &[(&str, Verdict)]) -> Comparison {
        let mut c = crate::compare::join::tests_support::empty_comparison();
        c.changes = changes
            .iter()
            .map(|(cell, v)| crate::compare::join::tests_support::change(cell, "qps", *v))
            .collect();
        c
    }

    /// Changes of (cell, change, interval low, high) in percent.
    fn with(rows: &[(&str, f64, f64, f64)]) -> Comparison {
        let mut c = comparison(&[]);
        c.changes = rows
            .iter()
            .map(|(cell, pct, lo, hi)| {
                let mut ch =
                    crate::compare::join::tests_support::change(cell, "qps", Verdict::CannotTell);
                (ch.change_pct, ch.ci_low_pct, ch.ci_high_pct) = (Some(*pct), Some(*lo), Some(*hi));
                ch
            })
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
    fn a_commit_is_placed_between_the_ends() {
        // The bad end is 40% slower.
        assert_eq!(side_of(Some(-40.0), Some(-8.0), Some(3.0)), Step::Good);
        assert_eq!(side_of(Some(-40.0), Some(-45.0), Some(-30.0)), Step::Bad);
        // Its interval reaches the middle (-22.5% on the log scale): measure again.
        assert_eq!(
            side_of(Some(-40.0), Some(-30.0), Some(-10.0)),
            Step::CannotTell
        );
        assert_eq!(side_of(Some(-40.0), None, None), Step::CannotTell);
        // A metric where higher is worse (latency up 50%): the same positions.
        assert_eq!(side_of(Some(50.0), Some(40.0), Some(60.0)), Step::Bad);
        assert_eq!(side_of(Some(50.0), Some(-5.0), Some(5.0)), Step::Good);
    }

    #[test]
    fn any_bad_target_is_a_bad_commit_and_one_good_one_a_good_commit() {
        let t = set(&["get", "set"]);
        let ends = with(&[("get", -40.0, -40.0, -40.0), ("set", -20.0, -20.0, -20.0)]);
        let j = |rows: &[(&str, f64, f64, f64)]| judge(&t, &ends, &with(rows));
        assert_eq!(
            j(&[("get", -40.0, -45.0, -35.0), ("set", 0.0, -5.0, 5.0)]),
            Step::Bad
        );
        // set is a false alarm of the ends: get decides.
        assert_eq!(
            j(&[("get", 0.0, -5.0, 5.0), ("set", -10.0, -25.0, 5.0)]),
            Step::Good
        );
        assert_eq!(j(&[("get", -20.0, -30.0, -10.0)]), Step::CannotTell);
        assert_eq!(j(&[("other", -40.0, -45.0, -35.0)]), Step::Skipped);
    }

    #[test]
    fn a_counted_step_is_placed_by_its_change_alone() {
        let t = set(&["get"]);
        // The bad end counts 0.9% more instructions; this step's counts span 0.3% to 0.9%
        // (one iteration's heap layout), their means 0.7% apart from the good end's.
        let ends = with(&[("get", 0.9, 0.8, 1.0)]);
        let mut step = with(&[("get", 0.7, 0.3, 0.9)]);
        assert_eq!(judge(&t, &ends, &step), Step::CannotTell);
        step.changes[0].basis = Some(Basis::Counted);
        assert_eq!(judge(&t, &ends, &step), Step::Bad);
        step.changes[0].change_pct = Some(0.1);
        assert_eq!(judge(&t, &ends, &step), Step::Good);
    }

    #[test]
    fn a_step_far_beyond_an_end_is_measured_again() {
        let t = set(&["get"]);
        // The bad end is 50% slower: ln 0.5 is the distance between the ends.
        let ends = with(&[("get", -50.0, -50.0, -50.0)]);
        let far = |lo: f64, hi: f64| beyond_ends(&t, &ends, &with(&[("get", lo, lo, hi)]));
        // A run of a good commit on a machine that slowed everything 4 times.
        assert!(far(-78.0, -72.0));
        // Just past the bad end, or just past the good one: a verdict as it stands.
        assert!(!far(-60.0, -55.0));
        assert!(!far(1.0, 20.0));
        // Faster than the good end by more than half the ends' distance (1/0.5^0.5 = +41%).
        assert!(far(45.0, 60.0));
    }
}
