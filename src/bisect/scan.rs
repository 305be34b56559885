//! `rmatrix bisect --paired` on a short range (`--scan-up-to`, 16 commits by default): instead
//! of binary steps, each an A/B of the good end and one commit, one run measures them all. The
//! matrix is derived with the server once per build, `<server>-0` the good end and
//! `<server>-1` to `<server>-n` the commits of the range (the bad end last), in shuffled
//! rounds with a fresh server for every iteration, so that whatever slows a round slows every
//! commit of it. Each pair is judged on its per-round ratios (`ab::Pooled`): the ends (`-n`
//! against `-0`, at `--threshold`) name the targets; per target, every commit against the
//! good end and against the commit before it, at half the ends' change. The first bad commit
//! is the first one that regressed while every commit before it was told good (`decide`);
//! the adjacent pairs show where the change happened. While the first bad commit is not
//! decided, another batch measures the target cells only, within `--max-rounds`, each look
//! judged at the level the spending of the error rate leaves it (`stats::spending`).

mod report;

use anyhow::Result;

use super::judge::{self, Step};
use super::paired::Paired;
use crate::ab::{self, CellChange, Dims, Plan, Side};
use crate::compare::input;
use crate::compare::join::Verdict;
use crate::error::Outcome;
use crate::servers::images::git;
use crate::stats::Confidence;

/// What the scan's servers are, for the refusal of a name the matrix has already.
const WHAT: &str = "scanned commits";

/// What the scan says of the commits from their steps against the good end (indices into the
/// commits after the good end, the bad end last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Decision {
    /// The first bad commit: it regressed, and every commit before it was told good.
    Found(usize),
    /// Not decided: the first commit that regressed (None: none did), and the commits before
    /// it that cannot tell or were skipped.
    Open {
        undecided: Vec<usize>,
        bad: Option<usize>,
    },
}

/// The first bad commit from each commit's step against the good end: the first that is bad,
/// if every commit before it is good. Binary steps assume that a commit before a good one is
/// good; a scan measured them all and asks each.
pub(super) fn decide(steps: &[Step]) -> Decision {
    let bad = steps.iter().position(|s| *s == Step::Bad);
    let before = bad.unwrap_or(steps.len());
    let undecided: Vec<usize> = (0..before).filter(|&i| steps[i] != Step::Good).collect();
    match (bad, undecided.is_empty()) {
        (Some(i), true) => Decision::Found(i),
        _ => Decision::Open { undecided, bad },
    }
}

/// Whether more rounds could decide: some commit before the first regressed one (or any,
/// when none regressed) cannot tell yet. A skipped one did not build or start.
fn more_rounds_help(steps: &[Step], decision: &Decision) -> bool {
    match decision {
        Decision::Found(_) => false,
        Decision::Open { undecided, .. } => undecided.iter().any(|&i| steps[i] == Step::CannotTell),
    }
}

/// Every pair the scan judges, each as the last look it was measured in left it.
#[derive(Default)]
struct Looks {
    /// The bad end against the good end, every cell and metric, at the plan's threshold.
    ends: Vec<CellChange>,
    /// The ends' regressed changes, fixed at the first look that had any, and the plan
    /// their commits are judged with (half the ends' change, their metrics).
    targets: Vec<CellChange>,
    step: Option<Plan>,
    /// Per commit after the good end (`-1` first): its target changes against the good end,
    /// and against the commit before it.
    vs_good: Vec<Vec<CellChange>>,
    vs_prev: Vec<Vec<CellChange>>,
}

impl Looks {
    /// Judge every pair over `batches` at `conf`; `measured`: the cells the last batch
    /// measured (None: every cell), which alone take this look's verdicts.
    fn look(
        &mut self,
        batches: &[(u32, input::Run)],
        names: &[String],
        plan: &Plan,
        conf: Confidence,
        measured: Option<&[Dims]>,
    ) {
        let n = names.len() - 1;
        let ends = judge_pair(batches, (&names[0], &names[n]), plan, conf);
        ab::update(&mut self.ends, ends, measured);
        if self.targets.is_empty() {
            self.targets = (self.ends.iter())
                .filter(|c| c.verdict == Verdict::Regressed)
                .cloned()
                .collect();
            if self.targets.is_empty() {
                return;
            }
            self.step = Some(judge::step_plan(plan, &self.targets));
        }
        let step = self
            .step
            .as_ref()
            .expect("invariant: targets have a step plan");
        self.vs_good.resize(n, Vec::new());
        self.vs_prev.resize(n, Vec::new());
        for i in 1..=n {
            let mut vs_good = judge_pair(batches, (&names[0], &names[i]), step, conf);
            let mut vs_prev = judge_pair(batches, (&names[i - 1], &names[i]), step, conf);
            vs_good.retain(|c| judge::is_target(&self.targets, c));
            vs_prev.retain(|c| judge::is_target(&self.targets, c));
            ab::update(&mut self.vs_good[i - 1], vs_good, measured);
            ab::update(&mut self.vs_prev[i - 1], vs_prev, measured);
        }
    }

    /// Each commit's step against the good end.
    fn steps(&self) -> Vec<Step> {
        (self.vs_good.iter())
            .map(|c| judge::step_of(&self.targets, c))
            .collect()
    }

    /// The cells the next batch measures, or None when more rounds cannot change the answer:
    /// the targets' while the first bad commit is undecided; without targets, the ends' cells
    /// that cannot tell yet (one of them may be a regression).
    fn open_cells(&self) -> Option<Vec<Dims>> {
        let cells: Vec<&CellChange> = match self.targets.is_empty() {
            true => (self.ends.iter())
                .filter(|c| c.verdict == Verdict::CannotTell && c.rounds >= 2)
                .collect(),
            false => {
                let steps = self.steps();
                match more_rounds_help(&steps, &decide(&steps)) {
                    true => self.targets.iter().collect(),
                    false => Vec::new(),
                }
            }
        };
        let mut out: Vec<Dims> = Vec::new();
        for c in cells {
            if !out.contains(&c.dims) {
                out.push(c.dims.clone());
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

/// The change of `y` against `x`, per cell and metric of `plan`, over every batch's rounds.
fn judge_pair(
    batches: &[(u32, input::Run)],
    (x, y): (&str, &str),
    plan: &Plan,
    conf: Confidence,
) -> Vec<CellChange> {
    // A scan runs its commits one after another in each round, never as a duet.
    ab::Pooled::new(batches, (x, y), &plan.metrics, false).judge(
        &plan.metrics,
        plan.threshold_pct,
        conf,
    )
}

/// Scan `commits` (those after `good`, the bad end last) side by side with `good` into
/// `DIR/scan/batch-K`; report into `DIR/scan.md` and `DIR/scan.json`. The outcome: done, the
/// first bad commit found; not reproduced or cannot tell, the ends regressed nothing (cannot
/// tell when some cell cannot); only skipped, out of rounds with commits before the first
/// regressed one still undecided (they are listed); cannot tell, out of rounds with no commit
/// told regressed (cannot tell is never "no regression").
pub(super) async fn scan(
    p: &Paired<'_>,
    plan: &Plan,
    good: &str,
    commits: &[String],
    only: &[String],
) -> Result<Outcome> {
    let names = ab::numbered_names(p.server, commits.len() + 1);
    let revs: Vec<Side> = (std::iter::once(good).chain(commits.iter().map(String::as_str)))
        .map(|c| Side::Rev(c.to_string()))
        .collect();
    let sides: Vec<(String, &Side)> = names.iter().cloned().zip(revs.iter()).collect();
    let derive = |batch: u64, count: u32| {
        let rounds = ab::layout(plan, batch, count);
        ab::derive_named(p.loaded, p.server, (WHAT, &sides), rounds)
    };
    // A name the matrix has already is refused before anything is built.
    derive(0, plan.rounds)?;
    let dir = p.dir.join("scan");
    std::fs::create_dir_all(&dir)?;
    eprintln!(
        "bisect: {} commits and the good end side by side in one run (a scan); batches in {}",
        commits.len(),
        crate::escape::terminal(&dir.display().to_string())
    );
    let mut looks = Looks::default();
    let look = |runs: &[_], conf, measured: Option<&[Dims]>| {
        looks.look(runs, &names, plan, conf, measured);
        looks.open_cells()
    };
    let place = ab::Place {
        root: p.dir,
        sub: "scan",
        who: "bisect: scan",
    };
    let Some(batched) = ab::in_batches(plan, &place, only, derive, look).await? else {
        eprintln!("bisect: the scan's first batch has no successful cell: nothing to compare");
        return Ok(Outcome::NotReproduced);
    };
    let resolved: Vec<git::Commit> = (std::iter::once(good)
        .chain(commits.iter().map(String::as_str)))
    .map(|c| git::resolve(p.repo, c))
    .collect::<Result<_>>()?;
    let r = report::Report::new(report::Inputs {
        loaded: p.loaded,
        server: p.server,
        plan,
        names: &names,
        commits: &resolved,
        batches: batched.batches,
        stopped: batched.stopped,
        looks: &looks,
    });
    r.write(p.dir)?;
    println!("{}", r.markdown());
    Ok(r.outcome())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change of `get qps` with this verdict (over `rounds` rounds).
    pub(super) fn change(verdict: Verdict, pct: f64, rounds: usize) -> CellChange {
        CellChange {
            rounds,
            change_pct: Some(pct),
            ci_low_pct: Some(pct - 5.0),
            ci_high_pct: Some(pct + 5.0),
            ..CellChange::of_test("get", verdict)
        }
    }

    /// The decision from each commit's change of the one target against the good end.
    fn decided(vs_good: &[CellChange]) -> (Decision, bool) {
        let target = [change(Verdict::Regressed, -60.0, 6)];
        let steps: Vec<Step> = (vs_good.iter())
            .map(|c| judge::step_of(&target, std::slice::from_ref(c)))
            .collect();
        let d = decide(&steps);
        let more = more_rounds_help(&steps, &d);
        (d, more)
    }

    use Verdict::{CannotTell, Improved, Regressed, Small, Unchanged};

    #[test]
    fn one_step_is_the_first_commit_that_regressed_after_good_ones() {
        let (d, more) = decided(&[
            change(Unchanged, -1.0, 6),
            change(Small, -3.0, 6),
            change(Regressed, -58.0, 6),
            change(Regressed, -61.0, 6),
        ]);
        assert_eq!(d, Decision::Found(2));
        assert!(!more);
        // An improvement is told too: not the regression.
        let (d, _) = decided(&[change(Improved, 8.0, 6), change(Regressed, -60.0, 6)]);
        assert_eq!(d, Decision::Found(1));
    }

    /// Two steps of half the change each: the first commit that regressed against the good end
    /// beyond half is first bad, however the later step looks.
    #[test]
    fn of_two_steps_the_first_regressed_one_is_first_bad() {
        let (d, _) = decided(&[
            change(Unchanged, 0.0, 6),
            change(Regressed, -35.0, 6),
            change(Regressed, -36.0, 6),
            change(Regressed, -60.0, 6),
        ]);
        assert_eq!(d, Decision::Found(1));
    }

    #[test]
    fn an_undecided_commit_before_the_regressed_one_asks_for_rounds() {
        let vs_good = [
            change(Unchanged, 0.0, 6),
            change(CannotTell, -20.0, 6),
            change(Unchanged, -2.0, 6),
            change(Regressed, -60.0, 6),
        ];
        let (d, more) = decided(&vs_good);
        assert_eq!(
            d,
            Decision::Open {
                undecided: vec![1],
                bad: Some(3)
            }
        );
        assert!(more);
        // A commit that did not build (no round with both sides) is skipped: more rounds
        // cannot tell it, and the first bad commit is it or the next regressed one.
        let mut failed = vs_good.clone();
        failed[1] = change(CannotTell, 0.0, 0);
        let (d, more) = decided(&failed);
        assert_eq!(
            d,
            Decision::Open {
                undecided: vec![1],
                bad: Some(3)
            }
        );
        assert!(!more);
    }

    #[test]
    fn nothing_regressed_is_undecided_and_never_found() {
        let (d, more) = decided(&[change(Unchanged, 0.0, 6), change(CannotTell, -30.0, 6)]);
        assert_eq!(
            d,
            Decision::Open {
                undecided: vec![1],
                bad: None
            }
        );
        assert!(more);
        let (d, more) = decided(&[change(Unchanged, 0.0, 6), change(Unchanged, 1.0, 6)]);
        assert_eq!(
            d,
            Decision::Open {
                undecided: vec![],
                bad: None
            }
        );
        assert!(!more);
    }
}
