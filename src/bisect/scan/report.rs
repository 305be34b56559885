//! What a scan says: `scan.json` (everything, for tools) and `scan.md` (what a person reads):
//! the targets, the first bad commit (or the commits it is among), what the adjacent pairs
//! say of where the change happened, and one row per build: its change against the good end
//! and against the commit before it, each with its interval and verdict.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use super::{decide, Decision, Looks};
use crate::ab::{Batch, CellChange, Plan};
use crate::bisect::judge::{self, Step};
use crate::compare::join::Verdict;
use crate::error;
use crate::escape::{md_cell as md, md_text};
use crate::matrix::LoadedMatrix;
use crate::servers::images::git;

/// Bumped when a field changes meaning or goes away.
pub(super) const SCAN_FORMAT_VERSION: u32 = 1;

/// One build of the scan: `<server>-<number>`, 0 the good end, the bad end last.
#[derive(Debug, Serialize)]
struct Build {
    number: usize,
    server: String,
    commit: String,
    subject: String,
    describe: String,
}

/// A commit after the good end: its step and its targets' changes.
#[derive(Debug, Serialize)]
struct Row {
    number: usize,
    /// Against the good end: bad, good, cannot tell or skipped (did not build or start).
    step: Step,
    vs_good: Vec<CellChange>,
    /// Against the commit before it (the good end for the first).
    vs_previous: Vec<CellChange>,
}

/// The scan's answer; commits by their build number.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Outcome {
    /// The ends regressed nothing, and every change could be told.
    NoRegression,
    /// The ends regressed nothing, but some change cannot tell.
    CannotTell,
    Found {
        first_bad: usize,
        /// The commits whose change against the commit before them regressed.
        adjacent_regressed: Vec<usize>,
    },
    /// Out of rounds: the first bad commit is one of `candidates` (the commits before the
    /// first regressed one that could not tell or were skipped, then that one, if any).
    Undecided {
        candidates: Vec<usize>,
        regressed: Option<usize>,
        adjacent_regressed: Vec<usize>,
    },
}

/// What the report is made of.
pub(super) struct Inputs<'a> {
    pub(super) loaded: &'a LoadedMatrix,
    pub(super) server: &'a str,
    pub(super) plan: &'a Plan,
    pub(super) names: &'a [String],
    /// The good end, then the commits after it.
    pub(super) commits: &'a [git::Commit],
    pub(super) batches: Vec<Batch>,
    pub(super) stopped: String,
    pub(super) looks: &'a Looks,
}

#[derive(Debug, Serialize)]
pub(super) struct Report {
    format_version: u32,
    matrix: String,
    server: String,
    design: &'static str,
    order: &'static str,
    seed: u64,
    threshold_pct: f64,
    /// Half the ends' change: what the commits are judged against (none without targets).
    step_threshold_pct: Option<f64>,
    confidence: f64,
    commits: Vec<Build>,
    batches: Vec<Batch>,
    /// Why no more rounds were added while the first bad commit was undecided (empty
    /// otherwise).
    stopped: String,
    /// The bad end against the good end, every cell and metric.
    ends: Vec<CellChange>,
    targets: Vec<CellChange>,
    rows: Vec<Row>,
    outcome: Outcome,
}

const DESIGN: &str = "every commit and the good end side by side in one run of shuffled \
                      rounds, a fresh server for every iteration, each pair judged paired on \
                      its per-round ratios";

impl Report {
    pub(super) fn new(i: Inputs<'_>) -> Report {
        let looks = i.looks;
        let steps = looks.steps();
        let adjacent: Vec<usize> = (looks.vs_prev.iter().enumerate())
            .filter(|(_, c)| c.iter().any(|c| c.verdict == Verdict::Regressed))
            .map(|(k, _)| k + 1)
            .collect();
        let outcome = match (looks.targets.is_empty(), decide(&steps)) {
            (true, _) if looks.ends.iter().any(|c| c.verdict == Verdict::CannotTell) => {
                Outcome::CannotTell
            }
            (true, _) => Outcome::NoRegression,
            (false, Decision::Found(k)) => Outcome::Found {
                first_bad: k + 1,
                adjacent_regressed: adjacent,
            },
            (false, Decision::Open { undecided, bad }) => Outcome::Undecided {
                candidates: undecided.iter().chain(bad.iter()).map(|k| k + 1).collect(),
                regressed: bad.map(|k| k + 1),
                adjacent_regressed: adjacent,
            },
        };
        let commits = (i.commits.iter().zip(i.names).enumerate())
            .map(|(number, (c, server))| Build {
                number,
                server: server.clone(),
                commit: c.commit.clone(),
                subject: c.subject.clone(),
                describe: c.describe.clone(),
            })
            .collect();
        let rows = (steps.iter().enumerate())
            .map(|(k, step)| Row {
                number: k + 1,
                step: *step,
                vs_good: looks.vs_good[k].clone(),
                vs_previous: looks.vs_prev[k].clone(),
            })
            .collect();
        Report {
            format_version: SCAN_FORMAT_VERSION,
            matrix: i.loaded.name(),
            server: i.server.to_string(),
            design: DESIGN,
            order: "shuffled",
            seed: i.plan.seed,
            threshold_pct: i.plan.threshold_pct,
            step_threshold_pct: looks.step.as_ref().map(|s| s.threshold_pct),
            confidence: i.plan.conf.level(),
            commits,
            batches: i.batches,
            stopped: i.stopped,
            ends: looks.ends.clone(),
            targets: looks.targets.clone(),
            rows,
            outcome,
        }
    }

    /// How the bisection ends: done when the first bad commit is found; not reproduced when
    /// the ends regressed nothing; only skipped when the first bad commit is among commits
    /// that could not tell within the rounds (or were skipped) and the first regressed one;
    /// cannot tell when the ends or every commit cannot tell.
    pub(super) fn outcome(&self) -> error::Outcome {
        match &self.outcome {
            Outcome::Found { .. } => error::Outcome::Done,
            Outcome::NoRegression => error::Outcome::NotReproduced,
            Outcome::CannotTell => error::Outcome::CannotTell,
            Outcome::Undecided {
                regressed: Some(_), ..
            } => error::Outcome::OnlySkipped,
            Outcome::Undecided {
                regressed: None, ..
            } => error::Outcome::CannotTell,
        }
    }

    pub(super) fn write(&self, dir: &Path) -> Result<()> {
        let json = crate::escape::json(&serde_json::to_string_pretty(self)?) + "\n";
        for (name, text) in [("scan.json", json), ("scan.md", self.markdown())] {
            let path = dir.join(name);
            std::fs::write(&path, text)
                .with_context(|| format!("failed to write {}", path.display()))?;
        }
        Ok(())
    }

    pub(super) fn markdown(&self) -> String {
        let rounds: u32 = self.batches.iter().map(|b| b.rounds).sum();
        let design = format!(
            "paired scan: the good end and {} commits side by side in one run, {rounds} \
             shuffled rounds with a fresh server for every iteration, each pair judged paired \
             on its per-round ratios",
            self.commits.len() - 1
        );
        let Some(half) = self.step_threshold_pct else {
            let mut out = judge::nothing_to_bisect(&self.ends);
            out.push_str(&format!("\n({design}.)\n"));
            return out;
        };
        let names: Vec<String> = (self.targets.iter())
            .map(|t| format!("{} {}", md(&t.cell), md(&t.metric)))
            .collect();
        let mut out = format!(
            "Bisected: {} ({design}; a commit is bad beyond {half:.1}%, half the ends' \
             change).\n\n",
            names.join(", ")
        );
        out.push_str(&self.answer(half));
        out.push_str(&self.notes());
        out.push_str(&self.table());
        out
    }

    /// The first bad commit and what the adjacent pairs say, or the commits it is among.
    fn answer(&self, half: f64) -> String {
        let line = |n: usize| {
            let c = &self.commits[n];
            format!("- {} `{}` {}\n", n, &c.commit[..12], md(&c.subject))
        };
        match &self.outcome {
            Outcome::Found {
                first_bad,
                adjacent_regressed,
            } => {
                let c = &self.commits[*first_bad];
                format!(
                    "**First bad commit: {} `{}`** ({})\n\n{}\n\n",
                    md(&c.subject),
                    &c.commit,
                    md(&c.describe),
                    adjacent_note(*first_bad, adjacent_regressed, half)
                )
            }
            Outcome::Undecided {
                candidates,
                regressed: Some(_),
                ..
            } => {
                let mut out = "**Only skipped commits are left**: the first bad commit is one of \
                               these (they did not build, their server did not start, or their \
                               rounds ran out before they could tell; the last regressed):\n\n"
                    .to_string();
                candidates.iter().for_each(|n| out.push_str(&line(*n)));
                out.push('\n');
                out
            }
            Outcome::Undecided { candidates, .. } => {
                let mut out = format!(
                    "**Cannot tell**: within the rounds, no commit's change against the good end \
                     was told beyond {half:.1}%; the first bad commit is one of these:\n\n"
                );
                candidates.iter().for_each(|n| out.push_str(&line(*n)));
                out.push('\n');
                out
            }
            Outcome::NoRegression | Outcome::CannotTell => {
                unreachable!("invariant: targets were found")
            }
        }
    }

    /// The looks' levels and why rounds stopped.
    fn notes(&self) -> String {
        let mut out = String::new();
        if let Some(note) = crate::ab::looks_note(&self.batches, self.confidence) {
            let more = match self.batches.len() {
                1 => "",
                _ => " Batches after the first measured the targets' cells only.",
            };
            out.push_str(&format!("{note}{more}\n"));
        }
        if !self.stopped.is_empty() {
            out.push_str(&format!("- No more rounds: {}.\n", md_text(&self.stopped)));
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out
    }

    /// One row per build, the good end first.
    fn table(&self) -> String {
        let mut out =
            "| # | commit | subject | change vs good end [interval] | change vs previous \
                       commit [interval] | rounds |\n|---:|---|---|---|---|---:|\n"
                .to_string();
        let good = &self.commits[0];
        out.push_str(&format!(
            "| 0 | `{}` | {} (the good end) | - | - | - |\n",
            &good.commit[..12],
            md(&good.subject)
        ));
        let several = self.targets.len() > 1;
        for row in &self.rows {
            let c = &self.commits[row.number];
            let rounds = (row.vs_good.iter()).map(|c| c.rounds).min().unwrap_or(0);
            out.push_str(&format!(
                "| {} | `{}` | {} | {} | {} | {rounds} |\n",
                row.number,
                &c.commit[..12],
                md(&c.subject),
                changes_text(&row.vs_good, several),
                changes_text(&row.vs_previous, several)
            ));
        }
        out
    }
}

/// Where the adjacent pairs put the change, beside the first bad commit `first` (build
/// numbers).
fn adjacent_note(first: usize, adjacent: &[usize], half: f64) -> String {
    let list = |v: &[usize]| {
        v.iter()
            .map(|n| format!("#{n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match adjacent {
        [one] if *one == first => format!(
            "The adjacent pairs agree: only #{first} regressed against the commit before it."
        ),
        [] => format!(
            "No commit regressed against the commit before it beyond {half:.1}%: the change \
             came in smaller steps, or the adjacent pairs cannot tell."
        ),
        several if several.contains(&first) => format!(
            "Several commits regressed against the commit before them ({}): the regression \
             came in steps.",
            list(several)
        ),
        other => format!(
            "The adjacent pairs disagree: {} regressed against the commit before it, #{first} \
             did not: the regression came in steps too small to tell one by one.",
            list(other)
        ),
    }
}

/// The targets' changes: `+x% [lo, hi] verdict`, each named when there are several.
fn changes_text(changes: &[CellChange], named: bool) -> String {
    let parts: Vec<String> = (changes.iter())
        .map(|c| {
            let verdict = match c.verdict {
                Verdict::Regressed => "**regressed**".to_string(),
                v => v.to_string(),
            };
            let change = match (c.change_pct, c.ci_low_pct, c.ci_high_pct) {
                (Some(p), Some(lo), Some(hi)) => format!("{p:+.1}% [{lo:+.1}%, {hi:+.1}%]"),
                _ => "n/a".into(),
            };
            match named {
                true => format!("{} {}: {change} {verdict}", md(&c.cell), md(&c.metric)),
                false => format!("{change} {verdict}"),
            }
        })
        .collect();
    match parts.is_empty() {
        true => "-".into(),
        false => parts.join("; "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_adjacent_pairs_say_where_the_change_happened() {
        assert!(adjacent_note(3, &[3], 40.0).starts_with("The adjacent pairs agree: only #3"));
        assert!(adjacent_note(3, &[], 40.0).contains("smaller steps"));
        assert!(adjacent_note(2, &[2, 4], 40.0).contains("(#2, #4): the regression came in steps"));
        assert!(adjacent_note(2, &[4], 40.0).contains("disagree: #4 regressed"));
    }

    /// A commit's subject is untrusted: it neither breaks the table nor the bold line.
    #[test]
    fn a_subject_stays_text() {
        let c = super::super::tests::change(Verdict::Regressed, -60.0, 6);
        let build = |n: usize, subject: &str| Build {
            number: n,
            server: format!("r-{n}"),
            commit: format!("{n}123456789abcdef0123456789abcdef01234567"),
            subject: subject.into(),
            describe: "v1 | x".into(),
        };
        let r = Report {
            format_version: SCAN_FORMAT_VERSION,
            matrix: "m".into(),
            server: "r".into(),
            design: DESIGN,
            order: "shuffled",
            seed: 1,
            threshold_pct: 5.0,
            step_threshold_pct: Some(36.8),
            confidence: 0.95,
            commits: vec![build(0, "import"), build(1, "fix | <b>x</b>\n# h")],
            batches: Vec::new(),
            stopped: String::new(),
            ends: vec![c.clone()],
            targets: vec![c.clone()],
            rows: vec![Row {
                number: 1,
                step: Step::Bad,
                vs_good: vec![c.clone()],
                vs_previous: vec![c],
            }],
            outcome: Outcome::Found {
                first_bad: 1,
                adjacent_regressed: vec![1],
            },
        };
        let md = r.markdown();
        assert!(
            md.contains("**First bad commit: fix \\| &lt;b&gt;x&lt;/b&gt; # h `1123"),
            "{md}"
        );
        assert!(!md.contains("<b>") && !md.contains("\n# h"), "{md}");
        assert!(md.contains("| 1 | `112345678"), "{md}");
        assert!(md.contains("-60.0% [-65.0%, -55.0%] **regressed**"), "{md}");
        assert_eq!(r.outcome(), error::Outcome::Done);
        let mut r = r;
        let mut ends = |outcome| {
            r.outcome = outcome;
            r.outcome()
        };
        let undecided = |regressed| Outcome::Undecided {
            candidates: vec![1],
            regressed,
            adjacent_regressed: Vec::new(),
        };
        assert_eq!(
            [
                ends(Outcome::NoRegression),
                ends(Outcome::CannotTell),
                ends(undecided(Some(1))),
                ends(undecided(None)),
            ],
            [
                error::Outcome::NotReproduced,
                error::Outcome::CannotTell,
                error::Outcome::OnlySkipped,
                error::Outcome::CannotTell,
            ]
        );
    }
}
